// tpuc calibrate: per-tensor thresholds from the Top interpreter over
// samples — wiring only; the work is in compiler/Calibration/Calibrator.h.
#include "compiler/Calibration/Calibrator.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "support/ArgParser.h"
#include "tools/tpuc/Subcommand.h"

#include <iostream>

namespace {

int runCalibrate(int argc, char **argv) {
  tpu::ArgParser args("calibrate", "tpuc calibrate model.top.mlir --dataset DIR | --data a.npz,b.npz "
                                   "[--input-num N] [--method max|kl] -o model.cali");
  args.positionals(1, 1, "model");
  args.option("--dataset", "directory of .npz samples (one array per model input), taken in name order");
  args.option("--data", "comma-separated .npz samples");
  args.option("--input-num", "use the first N samples (default: all)");
  args.option("--method", "max (absolute maximum) or kl (KL-divergence histogram, 2048 bins); default kl");
  args.option("--output", "the calibration table to write", "-o");
  if (auto st = args.parse(argc, argv); !st) return tpuc::fail("calibrate", st.message());
  if (args.helpRequested()) {
    std::cout << args.help();
    return tpuc::kExitOk;
  }
  if (!args.has("--output")) return tpuc::fail("calibrate", "missing -o model.cali");
  auto num = args.getInt("--input-num", 0);
  if (!num) return tpuc::fail("calibrate", num.message());
  auto samples = tpu::calib::loadSamples(args.get("--dataset", ""), args.get("--data", ""), *num);
  if (!samples) return tpuc::fail("calibrate", samples.message());
  auto method = tpu::calib::parseMethod(args.get("--method", "kl"));
  if (!method) return tpuc::fail("calibrate", method.message());

  mlir::MLIRContext context;
  auto module = top::loadTopModule(context, args.args()[0]);
  if (!module) return tpuc::fail("calibrate", module.message());
  tpu::calib::CalibrationOptions opt;
  opt.method = *method;
  opt.progress = [](int done, int total) {
    std::cerr << "\rcalibrate: " << done << "/" << total << " interpreter runs" << (done == total ? "\n" : "")
              << std::flush;
  };
  auto table = tpu::calib::calibrate(**module, *samples, opt);
  if (!table) return tpuc::fail("calibrate", args.args()[0] + ": " + table.message());
  if (auto st = table->save(args.get("--output")); !st) return tpuc::fail("calibrate", st.message());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerCalibrate("calibrate", "per-tensor int8 thresholds from sample runs (max or KL)",
                                           runCalibrate);

} // namespace

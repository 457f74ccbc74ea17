// The acceptance run: torchvision ResNet-18 (models/out, brought by
// the setup's model export) imported, calibrated and deployed as INT8 with
// tpuc, then run by the unchanged example application on func and on sim:
// the same output bytes on both, and the output is the model's (close to
// torch's fp32 output).
#include "CApiSession.h"

#include "support/Npz.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>

using namespace capitest;

namespace {

const std::string kModels = MODELS_OUT_DIR;

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

int run(const std::string &cmd) {
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double cosine(const std::vector<float> &a, const std::vector<float> &b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

} // namespace

TEST(CApiResNet18, Int8ExampleApplicationSameBytesOnFuncAndSim) {
  const std::string onnx = kModels + "/resnet18.onnx", input = kModels + "/resnet18_in.npz",
                    torchOut = kModels + "/resnet18_torch_out.npz", cali = kModels + "/cali/resnet18";
  if (!exists(onnx) || !exists(input) || !exists(torchOut) || !exists(cali))
    GTEST_SKIP() << "models/out has no ResNet-18 export: run /usr/bin/python3 models/check_models.py --ensure";

  const std::string dir = tempPath("resnet18");
  ASSERT_EQ(run("mkdir -p " + dir), 0);
  const std::string top = dir + "/r18.top.mlir", table = dir + "/r18.cali", bmodel = dir + "/r18.bmodel";
  const std::string quiet = " > " + dir + "/log.txt 2>&1";
  ASSERT_EQ(run(TPUC " import " + onnx + " -o " + top + quiet), 0) << "tpuc import";
  // --int8-recipe none: the reference scheme, no timed search (deterministic).
  ASSERT_EQ(run(TPUC " calibrate " + top + " --dataset " + cali + " --int8-recipe none -o " + table + quiet), 0)
      << "tpuc calibrate";
  ASSERT_EQ(run(TPUC " deploy " + top + " --quantize INT8 --calibration-table " + table + " -o " +
                bmodel + quiet),
            0)
      << "tpuc deploy";

  // The example application takes raw inputs in the net's types: ResNet-18
  // as deployed takes float32 (its first op quantizes on the device).
  auto in = tpu::readNpz(input);
  ASSERT_TRUE(in) << in.message();
  ASSERT_EQ(in->size(), 1u);
  const tpu::NpyArray &x = in->begin()->second;
  ASSERT_TRUE(x.is<float>());
  writeAll(dir + "/in.bin", x.data);

  std::vector<uint8_t> outputs[2];
  const char *backends[2] = {"func", "sim"};
  for (int b = 0; b < 2; ++b) {
    const std::string out = dir + "/out_" + backends[b] + ".bin";
    ASSERT_EQ(run(std::string("TPU_BACKEND=") + backends[b] + " " BMRT_EXAMPLE " " + bmodel + " " + dir +
                  "/in.bin " + out + quiet),
              0)
        << backends[b];
    outputs[b] = readAll(out);
  }
  ASSERT_EQ(outputs[0].size(), 1000u * 4);
  EXPECT_EQ(outputs[0], outputs[1]);

  auto ref = tpu::readNpz(torchOut);
  ASSERT_TRUE(ref) << ref.message();
  std::vector<float> logits(1000);
  std::memcpy(logits.data(), outputs[0].data(), outputs[0].size());
  const std::vector<float> expected = ref->begin()->second.toFloat();
  ASSERT_EQ(expected.size(), 1000u);
  // INT8 with per-tensor scales from eight calibration samples: a loose
  // bound that still rejects an output unrelated to the model's.
  EXPECT_GT(cosine(logits, expected), 0.8);
  if (!::testing::Test::HasFailure()) run("rm -rf " + dir); // ~70 MB of weights and bmodel
}

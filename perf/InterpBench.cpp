// Speed of the fp32 reference path: GEMM and convolution kernels, and for the
// real models (models/out, made by scripts/models.sh) ONNX import time and
// Top-interpreter time per inference. Models that are absent are skipped.
#include "compiler/Import/OnnxImporter.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "kernels/Kernels.h"
#include "support/Parallel.h"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <random>

namespace k = tpu::kernels;

namespace {

std::vector<float> randomVector(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v) x = dist(rng);
  return v;
}

// args: M, N, K, threads
void BM_Gemm(benchmark::State &state) {
  int64_t m = state.range(0), n = state.range(1), kk = state.range(2);
  tpu::setNumThreads(static_cast<int>(state.range(3)));
  auto a = randomVector(m * kk, 1), b = randomVector(kk * n, 2);
  std::vector<float> c(m * n);
  for (auto _ : state) {
    k::gemm(m, n, kk, a.data(), kk, b.data(), n, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * n * kk * state.iterations(), benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Gemm)->Args({256, 3136, 576, 1})->Args({256, 3136, 576, 2})->Args({64, 12544, 147, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// A ResNet-50 3x3 convolution (stage 2): 1x64x56x56 -> 64, and a depthwise
// MobileNetV2 one: 1x144x56x56, groups 144.
void BM_Conv(benchmark::State &state) {
  bool depthwise = state.range(0);
  k::ConvParams p;
  p.ic = depthwise ? 144 : 64;
  p.oc = p.ic;
  p.groups = depthwise ? p.ic : 1;
  p.ih = p.iw = p.oh = p.ow = 56;
  p.kh = p.kw = 3;
  p.padTop = p.padLeft = p.padBottom = p.padRight = 1;
  tpu::setNumThreads(2);
  auto in = randomVector(p.ic * 56 * 56, 3), w = randomVector(p.oc * (p.ic / p.groups) * 9, 4);
  std::vector<float> out(p.oc * 56 * 56);
  for (auto _ : state) {
    k::conv2d(in.data(), w.data(), nullptr, out.data(), p);
    benchmark::DoNotOptimize(out.data());
  }
  double macs = double(p.oc) * 56 * 56 * (p.ic / p.groups) * 9;
  state.counters["GFLOP/s"] = benchmark::Counter(2 * macs * state.iterations(), benchmark::Counter::kIsRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Conv)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

std::string modelDir() { return std::string(TPU_SOURCE_DIR) + "/models/out/"; }

// args: model index
const char *kModels[] = {"resnet18", "resnet50", "mobilenet_v2", "ppocr_det"};

tpu::onnx::ImportOptions importOptions(const std::string &name) {
  tpu::onnx::ImportOptions o;
  if (name == "ppocr_det") o.inputShapes = {{1, 3, 640, 640}};
  return o;
}

void BM_Import(benchmark::State &state) {
  std::string name = kModels[state.range(0)];
  state.SetLabel(name);
  std::string path = modelDir() + name + ".onnx";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError((path + " missing: run scripts/models.sh").c_str());
    return;
  }
  for (auto _ : state) {
    auto model = tpu::onnx::loadModel(path);
    if (!model) {
      state.SkipWithError(model.message().c_str());
      return;
    }
    mlir::MLIRContext context;
    auto imported = tpu::onnx::importModel(context, *model, importOptions(name));
    if (!imported) {
      state.SkipWithError(imported.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(imported->module.get());
  }
}
BENCHMARK(BM_Import)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

void BM_Interpret(benchmark::State &state) {
  std::string name = kModels[state.range(0)];
  state.SetLabel(name + ", " + std::to_string(state.range(1)) + " thread(s)");
  std::string path = modelDir() + name + ".onnx";
  if (!std::filesystem::exists(path)) {
    state.SkipWithError((path + " missing: run scripts/models.sh").c_str());
    return;
  }
  tpu::setNumThreads(static_cast<int>(state.range(1)));
  auto model = tpu::onnx::loadModel(path);
  auto inputs = tpu::readNpz(modelDir() + name + "_in.npz");
  if (!model || !inputs) {
    state.SkipWithError("cannot read the model or its input");
    return;
  }
  mlir::MLIRContext context;
  auto imported = tpu::onnx::importModel(context, *model, importOptions(name));
  if (!imported) {
    state.SkipWithError(imported.message().c_str());
    return;
  }
  auto interp = top::TopInterpreter::create(*imported->module, imported->weights);
  if (!interp) {
    state.SkipWithError(interp.message().c_str());
    return;
  }
  for (auto _ : state) {
    auto out = (*interp)->run(*inputs);
    if (!out) {
      state.SkipWithError(out.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->size());
  }
}
BENCHMARK(BM_Interpret)
    ->ArgsProduct({{0, 1, 2, 3}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

} // namespace

BENCHMARK_MAIN();

// Robustness: byte-mutated ONNX models (fixed seed) never crash or hang the
// reader or the importer — they either import or return one error line.
#include "compiler/Import/OnnxImporter.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

using namespace tpu::onnx;

namespace {

std::vector<char> readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), {});
}

TEST(ImportFuzz, MutatedModelsFailCleanly) {
  const char *cases[] = {"test_conv_with_strides_padding", "test_resize_upsample_sizes_nearest",
                         "test_gemm_all_attributes", "test_slice_neg_steps", "test_batchnorm_example"};
  const std::string root = "/usr/share/libonnx-testdata/data/node/";
  std::mt19937 rng(1684);
  int imported = 0, rejected = 0;
  for (const char *name : cases) {
    std::vector<char> original = readFile(root + name + "/model.onnx");
    if (original.empty()) GTEST_SKIP() << "libonnx-testdata is not installed (" << root << ")";
    for (int round = 0; round < 300; ++round) {
      std::vector<char> bytes = original;
      int flips = 1 + int(rng() % 4);
      for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = char(rng());
      if (round % 10 == 0) bytes.resize(rng() % bytes.size());
      auto model = parseModel(bytes.data(), bytes.size(), "");
      if (!model) {
        EXPECT_EQ(model.message().find('\n'), std::string::npos);
        ++rejected;
        continue;
      }
      mlir::MLIRContext context;
      ImportOptions options;
      options.weightFile = "w.npz";
      auto result = importModel(context, *model, options);
      if (result) ++imported;
      else {
        EXPECT_FALSE(result.message().empty());
        ++rejected;
      }
    }
  }
  EXPECT_EQ(imported + rejected, 1500);
  std::printf("mutated models: %d imported, %d rejected with an error\n", imported, rejected);
}

// Structural mutations of decoded models: odd attribute values, dropped
// inputs, changed input shapes. The importer must reject what makes no sense
// (via verifiers and shape rules), never crash.
TEST(ImportFuzz, MutatedGraphsFailCleanly) {
  const char *cases[] = {"test_conv_with_strides_padding", "test_maxpool_2d_pads", "test_averagepool_2d_ceil",
                         "test_convtranspose_pads", "test_gemm_all_attributes", "test_split_equal_parts_1d",
                         "test_transpose_all_permutations_3", "test_reduce_mean_keepdims_example",
                         "test_softmax_axis_1", "test_concat_3d_axis_1", "test_depthtospace_example",
                         "test_resize_upsample_scales_linear_align_corners", "test_gather_1"};
  const std::string root = "/usr/share/libonnx-testdata/data/node/";
  std::mt19937 rng(4);
  int imported = 0, rejected = 0;
  for (const char *name : cases) {
    auto original = loadModel(root + name + "/model.onnx");
    if (!original) GTEST_SKIP() << "libonnx-testdata is not installed: " << original.message();
    for (int round = 0; round < 200; ++round) {
      Model m = *original;
      for (Node &n : m.nodes) {
        for (auto &[key, attr] : n.attrs) {
          if (rng() % 2) continue;
          if (attr.kind == Attribute::Int) attr.i = int64_t(rng() % 12) - 3;
          for (int64_t &v : attr.ints) v = int64_t(rng() % 12) - 3;
          if (rng() % 4 == 0 && !attr.ints.empty()) attr.ints.pop_back();
          if (attr.kind == Attribute::Float) attr.f = double(int(rng() % 7) - 3);
          if (attr.kind == Attribute::String && rng() % 3 == 0) attr.s = "bogus";
        }
        if (rng() % 6 == 0 && !n.inputs.empty()) n.inputs.pop_back();
      }
      for (ValueInfo &in : m.inputs)
        for (int64_t &d : in.dims)
          if (rng() % 3 == 0) d = int64_t(rng() % 5);
      for (auto &[iname, array] : m.initializers)
        if (rng() % 4 == 0 && !array.shape.empty()) { // keep the bytes consistent with the shape
          array.shape = {array.numel()};
        }
      mlir::MLIRContext context;
      ImportOptions options;
      options.weightFile = "w.npz";
      auto result = importModel(context, m, options);
      if (result) ++imported;
      else {
        EXPECT_EQ(result.message().find('\n'), std::string::npos) << result.message();
        ++rejected;
      }
    }
  }
  std::printf("mutated graphs: %d imported, %d rejected with an error\n", imported, rejected);
  EXPECT_EQ(imported + rejected, 13 * 200);
}

} // namespace

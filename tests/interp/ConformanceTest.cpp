// ONNX node conformance: every case under the libonnx test data whose ops the
// importer covers is imported, run by the Top interpreter and compared with
// its expected outputs (|got - want| <= 1e-5 + 1e-4 |want|). Cases that are
// covered but known not to work are listed, with a reason each, in
// conformance_excluded.txt beside this file; an excluded case that passes
// fails the test (remove it from the list). The counts of the run (cases,
// selected, passed, uncovered, excluded) must equal conformance_counts.txt, so
// an importer regression that turns selected cases into uncovered ones fails
// instead of shrinking the suite; update the file in the commit that changes
// a count, with the reason.
#include "compiler/Import/OnnxImporter.h"
#include "compiler/Interpreter/TopInterpreter.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace tpu;

namespace {

const char *kDataDir = "/usr/share/libonnx-testdata/data/node";

// Excluded case -> reason.
std::map<std::string, std::string> readExcluded(std::vector<std::string> &problems) {
  std::map<std::string, std::string> excluded;
  std::ifstream f(TPU_CONFORMANCE_EXCLUDED);
  if (!f) problems.push_back(std::string("cannot read ") + TPU_CONFORMANCE_EXCLUDED);
  std::string line;
  for (int lineNo = 1; std::getline(f, line); ++lineNo) {
    if (line.empty() || line[0] == '#') continue;
    size_t hash = line.find('#');
    std::string name = line.substr(0, line.find_first_of(" \t#"));
    std::string reason = hash == std::string::npos ? "" : line.substr(hash + 1);
    reason.erase(0, reason.find_first_not_of(" \t"));
    if (reason.empty()) problems.push_back("excluded list line " + std::to_string(lineNo) + ": '" + name + "' has no reason");
    excluded[name] = reason;
  }
  return excluded;
}

// Pinned count name -> value (lines `name value`, # comments).
std::map<std::string, size_t> readPinnedCounts(std::vector<std::string> &problems) {
  std::map<std::string, size_t> pinned;
  std::ifstream f(TPU_CONFORMANCE_COUNTS);
  if (!f) problems.push_back(std::string("cannot read ") + TPU_CONFORMANCE_COUNTS);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream fields(line.substr(0, line.find('#')));
    std::string name;
    size_t value;
    if (fields >> name >> value) pinned[name] = value;
  }
  return pinned;
}

// Decodes a TensorProto file with the importer's own decoder: the tensor is
// wrapped as the initializer of an empty model.
Result<NpyArray> readTensorFile(const fs::path &path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), {});
  ::onnx::TensorProto tensor;
  if (!tensor.ParseFromString(bytes)) return makeError(path.string(), ": not a TensorProto");
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  tensor.set_name("t");
  *model.mutable_graph()->add_initializer() = tensor;
  std::string wrapped = model.SerializeAsString();
  auto m = tpu::onnx::parseModel(wrapped.data(), wrapped.size(), path.parent_path().string());
  if (!m) return makeError(path.string(), ": ", m.message());
  auto it = m->initializers.find("t");
  if (it == m->initializers.end()) return makeError(path.string(), ": tensor not decoded");
  return it->second;
}

// Cases whose expected outputs the ONNX test data gives to 4 decimals only
// (typed by hand in onnx's RoiAlign cases, off by up to 8.4e-5 from the
// exact values, onnxruntime's included): compared within the chip harness's
// 1e-4 + 1e-3 |want|.
bool expectedToFourDecimals(const fs::path &dir) { return dir.filename().string().rfind("test_roialign_", 0) == 0; }

// Empty when the arrays match; otherwise what differs.
std::string mismatch(const NpyArray &got, const NpyArray &want, bool fourDecimals = false) {
  const float atol = fourDecimals ? 1e-4f : 1e-5f, rtol = fourDecimals ? 1e-3f : 1e-4f;
  if (got.shape != want.shape)
    return "shape " + shapeToString(got.shape) + " vs expected " + shapeToString(want.shape);
  std::vector<float> g = got.toFloat(), w = want.toFloat();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (g[i] == w[i]) continue;
    if (std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i])) continue;
    std::ostringstream os;
    os << "element " << i << ": " << g[i] << " vs expected " << w[i];
    return os.str();
  }
  return "";
}

size_t frozenCases = 0;

// Graph inputs that only feed attribute-like operands: any input position
// but the first, or every input of ConstantOfShape and Range.
std::set<std::string> attributeInputs(const tpu::onnx::Model &model) {
  std::set<std::string> graphInputs, data, attr;
  for (const auto &in : model.inputs) graphInputs.insert(in.name);
  for (const auto &n : model.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!graphInputs.count(n.inputs[i])) continue;
      bool attrLike = i > 0 || n.opType == "ConstantOfShape" || n.opType == "Range";
      (attrLike ? attr : data).insert(n.inputs[i]);
    }
  std::set<std::string> out;
  for (const auto &name : attr)
    if (!data.count(name)) out.insert(name);
  return out;
}

// Runs one case; empty on success, else the reason. `covered` is false when
// the importer has no handler for one of the model's ops.
std::string runCase(const fs::path &dir, bool &covered) {
  covered = true;
  auto model = tpu::onnx::loadModel((dir / "model.onnx").string());
  if (!model) return "load: " + model.message();
  {
    // The importer lists unsupported ops before any other check.
    mlir::MLIRContext context;
    auto probe = tpu::onnx::importModel(context, *model, {});
    if (!probe && probe.message().rfind("unsupported ONNX ops", 0) == 0) {
      covered = false;
      return probe.message();
    }
  }
  std::vector<fs::path> sets;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "no test_data_set_*";
  for (const fs::path &set : sets) {
    std::vector<NpyArray> inputs, outputs;
    for (size_t i = 0;; ++i) {
      fs::path p = set / ("input_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) break;
      auto t = readTensorFile(p);
      if (!t) return t.message();
      inputs.push_back(t.take());
    }
    for (size_t i = 0;; ++i) {
      fs::path p = set / ("output_" + std::to_string(i) + ".pb");
      if (!fs::exists(p)) break;
      auto t = readTensorFile(p);
      if (!t) return t.message();
      outputs.push_back(t.take());
    }
    if (inputs.size() != model->inputs.size())
      return set.filename().string() + ": " + std::to_string(inputs.size()) + " input files for " +
             std::to_string(model->inputs.size()) + " model inputs";
    if (outputs.size() != model->outputs.size())
      return set.filename().string() + ": " + std::to_string(outputs.size()) + " output files for " +
             std::to_string(model->outputs.size()) + " model outputs";
    // The Top dialect takes shapes, axes, pads, scales, bounds as attributes:
    // when the importer asks for a constant that this case feeds as a graph
    // input, the case is imported again with those inputs frozen to their
    // test values (data inputs stay inputs).
    std::set<std::string> frozen;
    mlir::MLIRContext context;
    auto import = [&]() {
      tpu::onnx::Model m = *model;
      tpu::onnx::ImportOptions options;
      m.inputs.clear();
      for (size_t i = 0; i < model->inputs.size(); ++i) {
        if (frozen.count(model->inputs[i].name)) {
          m.initializers[model->inputs[i].name] = inputs[i];
        } else {
          m.inputs.push_back(model->inputs[i]);
          options.inputShapes.push_back(inputs[i].shape);
        }
      }
      return tpu::onnx::importModel(context, m, options);
    };
    auto imported = import();
    auto wantsConstant = [](const std::string &msg) {
      return msg.find("must be a constant") != std::string::npos || msg.find("must be constants") != std::string::npos ||
             msg.rfind("--input-shapes: dim", 0) == 0;
    };
    if (!imported && wantsConstant(imported.message()) && !attributeInputs(*model).empty()) {
      frozen = attributeInputs(*model);
      ++frozenCases;
      imported = import();
    }
    if (!imported) {
      if (imported.message().rfind("unsupported ONNX ops", 0) == 0) covered = false;
      return "import: " + imported.message();
    }
    auto interp = top::TopInterpreter::create(*imported->module, imported->weights);
    if (!interp) return "interpreter: " + interp.message();
    NpzMap feed;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!frozen.count(model->inputs[i].name)) feed[model->inputs[i].name] = inputs[i];
    auto result = (*interp)->run(feed);
    if (!result) return "run: " + result.message();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string &name = model->outputs[i].name;
      auto it = result->find(name);
      if (it == result->end()) return "output '" + name + "' not produced";
      std::string diff = mismatch(it->second, outputs[i], expectedToFourDecimals(dir));
      if (!diff.empty()) return set.filename().string() + ": output '" + name + "': " + diff;
    }
  }
  return "";
}

} // namespace

TEST(OnnxConformance, EveryCoveredNodeCasePasses) {
  // Missing data fails: CI installs it, and a skip would pass a run that tested nothing.
  if (!fs::is_directory(kDataDir)) FAIL() << kDataDir << " is missing (Debian package libonnx-testdata)";
  std::vector<std::string> problems;
  auto excluded = readExcluded(problems);
  std::vector<fs::path> cases;
  for (const auto &e : fs::directory_iterator(kDataDir))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  size_t selected = 0, passed = 0, uncovered = 0, skipped = 0;
  std::vector<std::string> failures, nowPassing;
  for (const fs::path &dir : cases) {
    std::string name = dir.filename().string();
    bool covered = true;
    std::string why = runCase(dir, covered);
    if (excluded.count(name)) {
      ++skipped;
      if (why.empty()) nowPassing.push_back(name);
      continue;
    }
    if (!covered) {
      ++uncovered;
      continue;
    }
    ++selected;
    if (why.empty()) ++passed;
    else failures.push_back(name + ": " + why);
  }
  for (const auto &f : failures) std::cout << "FAIL " << f << "\n";
  for (const auto &n : nowPassing) std::cout << "FAIL excluded case " << n << " passes now: remove it from the list\n";
  for (const auto &[name, reason] : excluded)
    if (!fs::is_directory(fs::path(kDataDir) / name)) problems.push_back("excluded case '" + name + "' does not exist");
  std::cout << passed << " passed out of " << selected << " selected (" << uncovered
            << " use ops the importer does not cover, " << skipped << " excluded with a reason; " << frozenCases
            << " run with attribute-like inputs frozen to constants)\n";
  const std::map<std::string, size_t> counts = {{"cases", cases.size()},
                                                {"selected", selected},
                                                {"passed", passed},
                                                {"uncovered", uncovered},
                                                {"excluded", skipped}};
  auto pinned = readPinnedCounts(problems);
  for (const auto &[name, value] : counts) {
    auto it = pinned.find(name);
    if (it == pinned.end())
      problems.push_back(std::string(TPU_CONFORMANCE_COUNTS) + " pins no '" + name + "'");
    else
      EXPECT_EQ(value, it->second) << "count '" << name << "' differs from conformance_counts.txt (a deliberate "
                                   << "change: update the file and say why in the commit)";
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " selected case(s) failed";
  EXPECT_TRUE(nowPassing.empty()) << nowPassing.size() << " excluded case(s) pass now";
  EXPECT_TRUE(problems.empty()) << problems.front();
}

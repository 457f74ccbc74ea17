// An ONNX model read into plain C++ structures (no protobuf types leak out):
// nodes with their attributes, graph inputs/outputs, and every initializer
// and tensor attribute decoded into a tpu::NpyArray (float32, int64 or bool).
// Everything is validated here: sizes against shapes, external data files
// against the model directory and their length.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tpu::onnx {

struct Graph;

struct Attribute {
  enum Kind { Float, Int, String, Tensor, Floats, Ints, Strings, Graph, Other } kind = Other;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::optional<NpyArray> tensor;
  std::shared_ptr<const onnx::Graph> graph; // a subgraph (If's branches)
};

struct Node {
  std::string opType, domain, name;
  std::vector<std::string> inputs, outputs; // "" = optional input left out
  std::map<std::string, Attribute> attrs;

  const Attribute *attr(const std::string &key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? nullptr : &it->second;
  }
  int64_t getInt(const std::string &key, int64_t dflt) const;
  double getFloat(const std::string &key, double dflt) const;
  std::string getString(const std::string &key, const std::string &dflt) const;
  std::optional<std::vector<int64_t>> getInts(const std::string &key) const;
  std::optional<std::vector<double>> getFloats(const std::string &key) const;
  // "Conv 'conv1'" for messages.
  std::string describe() const;
};

// A subgraph (an If branch): its nodes, the names of its outputs and its own
// initializers; it reads the enclosing graph's values by name.
struct Graph {
  std::vector<Node> nodes;
  std::vector<std::string> outputs;
  std::map<std::string, NpyArray> initializers;
};

// A graph input or output. dims: -1 where the model leaves a dim open
// (dimParams then holds its symbolic name, if any).
struct ValueInfo {
  std::string name;
  std::string dtype; // numpy name; "" if the ONNX type is not supported
  int onnxType = 0;
  bool hasShape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dimParams;
};

struct Model {
  int64_t opset = 0; // of the default ("" / "ai.onnx") domain
  std::string producer;
  std::vector<ValueInfo> inputs; // without the ones that are initializers
  std::vector<ValueInfo> outputs;
  std::vector<Node> nodes;
  std::map<std::string, NpyArray> initializers;
};

// Reads and validates an .onnx file; errors name the file and what is wrong.
Result<Model> loadModel(const std::string &path);
// Parses a model from memory; external data resolves against baseDir.
Result<Model> parseModel(const void *data, size_t size, const std::string &baseDir);

// numpy dtype name of an ONNX TensorProto::DataType as the Top dialect holds
// it (float types -> float32, integer types -> int64, bool -> bool); "" if none.
std::string topDtypeOf(int onnxType);

} // namespace tpu::onnx

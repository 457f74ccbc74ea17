#include "compiler/Import/OnnxModel.h"

#include "onnx/onnx_pb.h"
#include "support/Float16.h"
#include "support/ReadFile.h"

#include <google/protobuf/io/coded_stream.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace tpu::onnx {

namespace pb = ::onnx;

int64_t Node::getInt(const std::string &key, int64_t dflt) const {
  const Attribute *a = attr(key);
  return a && a->kind == Attribute::Int ? a->i : dflt;
}
double Node::getFloat(const std::string &key, double dflt) const {
  const Attribute *a = attr(key);
  return a && a->kind == Attribute::Float ? a->f : dflt;
}
std::string Node::getString(const std::string &key, const std::string &dflt) const {
  const Attribute *a = attr(key);
  return a && a->kind == Attribute::String ? a->s : dflt;
}
std::optional<std::vector<int64_t>> Node::getInts(const std::string &key) const {
  const Attribute *a = attr(key);
  if (!a || (a->kind != Attribute::Ints && a->kind != Attribute::Int)) return std::nullopt;
  return a->kind == Attribute::Int ? std::vector<int64_t>{a->i} : a->ints;
}
std::optional<std::vector<double>> Node::getFloats(const std::string &key) const {
  const Attribute *a = attr(key);
  if (!a || (a->kind != Attribute::Floats && a->kind != Attribute::Float)) return std::nullopt;
  return a->kind == Attribute::Float ? std::vector<double>{a->f} : a->floats;
}
std::string Node::describe() const { return opType + " '" + name + "'"; }

std::string topDtypeOf(int t) {
  switch (t) {
  case pb::TensorProto::FLOAT:
  case pb::TensorProto::DOUBLE:
  case pb::TensorProto::FLOAT16:
    return "float32";
  case pb::TensorProto::INT8:
  case pb::TensorProto::UINT8:
  case pb::TensorProto::INT16:
  case pb::TensorProto::UINT16:
  case pb::TensorProto::INT32:
  case pb::TensorProto::UINT32:
  case pb::TensorProto::INT64:
    return "int64";
  case pb::TensorProto::BOOL:
    return "bool";
  default:
    return "";
  }
}

namespace {

// Bytes per element of the raw little-endian encoding, 0 if unsupported.
size_t rawElementSize(int t) {
  switch (t) {
  case pb::TensorProto::FLOAT: case pb::TensorProto::INT32: case pb::TensorProto::UINT32: return 4;
  case pb::TensorProto::DOUBLE: case pb::TensorProto::INT64: return 8;
  case pb::TensorProto::FLOAT16: case pb::TensorProto::INT16: case pb::TensorProto::UINT16: return 2;
  case pb::TensorProto::INT8: case pb::TensorProto::UINT8: case pb::TensorProto::BOOL: return 1;
  default: return 0;
  }
}

// Converts element i of a raw buffer of ONNX type t to double / int64.
template <typename T> T rawElement(const uint8_t *p, int t, size_t i) {
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  switch (t) {
  case pb::TensorProto::FLOAT: return T(load(float()));
  case pb::TensorProto::DOUBLE: return T(load(double()));
  case pb::TensorProto::FLOAT16:
    return T(f16ToFloat(load(uint16_t())));
  case pb::TensorProto::INT8: return T(load(int8_t()));
  case pb::TensorProto::UINT8: return T(load(uint8_t()));
  case pb::TensorProto::INT16: return T(load(int16_t()));
  case pb::TensorProto::UINT16: return T(load(uint16_t()));
  case pb::TensorProto::INT32: return T(load(int32_t()));
  case pb::TensorProto::UINT32: return T(load(uint32_t()));
  case pb::TensorProto::INT64: return T(load(int64_t()));
  case pb::TensorProto::BOOL: return T(load(uint8_t()) != 0);
  default: return T();
  }
}

Result<std::vector<uint8_t>> readExternal(const pb::TensorProto &t, const std::string &baseDir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset" || kv.key() == "length") {
      char *end = nullptr;
      long long v = std::strtoll(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end || v < 0)
        return makeError("tensor '", t.name(), "': bad external data ", kv.key(), " '", kv.value(), "'");
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty()) return makeError("tensor '", t.name(), "': external data without a location");
  if (location[0] == '/' || location.find("..") != std::string::npos)
    return makeError("tensor '", t.name(), "': external data location '", location,
                     "' must be a relative path inside the model directory");
  std::string path = baseDir.empty() ? location : baseDir + "/" + location;
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return makeError("tensor '", t.name(), "': cannot open external data file '", path, "'");
  int64_t fileSize = f.tellg();
  if (length < 0) length = fileSize - offset;
  if (offset > fileSize || length > fileSize - offset)
    return makeError("tensor '", t.name(), "': external data [", offset, ", ", offset + length, ") is beyond the ",
                     fileSize, "-byte file '", path, "'");
  std::vector<uint8_t> bytes(length);
  f.seekg(offset);
  if (length && !f.read(reinterpret_cast<char *>(bytes.data()), length))
    return makeError("tensor '", t.name(), "': cannot read external data file '", path, "'");
  return bytes;
}

Result<NpyArray> decodeTensor(const pb::TensorProto &t, const std::string &baseDir) {
  const std::string what = "tensor '" + t.name() + "'";
  int type = t.data_type();
  std::string dtype = topDtypeOf(type);
  if (dtype.empty()) return makeError(what, ": unsupported data type ", type);
  NpyArray a;
  a.dtype = dtype;
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d && numel > (int64_t(1) << 40) / d)) return makeError(what, ": bad dims");
    a.shape.push_back(d);
    numel *= d;
  }
  size_t out = dtypeSize(dtype);
  // Storage is allocated only once the data is known to fill the shape: dims
  // alone may claim 2^40 elements.
  auto fill = [&](auto getter, size_t count) -> Status {
    if (int64_t(count) != numel)
      return makeError(what, ": has ", count, " values but its shape ", shapeToString(a.shape), " needs ", numel);
    a.data.resize(numel * out);
    for (int64_t i = 0; i < numel; ++i) {
      if (dtype == "float32") a.as<float>()[i] = float(getter(i));
      else if (dtype == "int64") a.as<int64_t>()[i] = int64_t(getter(i));
      else a.data[i] = getter(i) != 0;
    }
    return Status::ok();
  };
  bool external = t.data_location() == pb::TensorProto::EXTERNAL;
  if (external || t.has_raw_data()) {
    std::vector<uint8_t> ext;
    if (external) {
      auto r = readExternal(t, baseDir);
      if (!r) return r.status();
      ext = r.take();
    }
    const uint8_t *raw = external ? ext.data() : reinterpret_cast<const uint8_t *>(t.raw_data().data());
    size_t bytes = external ? ext.size() : t.raw_data().size();
    size_t es = rawElementSize(type);
    if (bytes % es) return makeError(what, ": ", bytes, " data bytes is not a multiple of ", es);
    if (type == pb::TensorProto::FLOAT && bytes == numel * out) { // the common case, one copy
      a.data.resize(bytes);
      if (bytes) std::memcpy(a.data.data(), raw, bytes);
      return a;
    }
    if (dtype == "float32") TPU_RETURN_IF_ERROR(fill([&](size_t i) { return rawElement<double>(raw, type, i); }, bytes / es));
    else TPU_RETURN_IF_ERROR(fill([&](size_t i) { return rawElement<int64_t>(raw, type, i); }, bytes / es));
    return a;
  }
  switch (type) {
  case pb::TensorProto::FLOAT:
    TPU_RETURN_IF_ERROR(fill([&](int i) { return t.float_data(i); }, t.float_data_size()));
    break;
  case pb::TensorProto::DOUBLE:
    TPU_RETURN_IF_ERROR(fill([&](int i) { return t.double_data(i); }, t.double_data_size()));
    break;
  case pb::TensorProto::INT64:
    TPU_RETURN_IF_ERROR(fill([&](int i) { return t.int64_data(i); }, t.int64_data_size()));
    break;
  case pb::TensorProto::UINT32:
    TPU_RETURN_IF_ERROR(fill([&](int i) { return t.uint64_data(i); }, t.uint64_data_size()));
    break;
  case pb::TensorProto::FLOAT16:
    TPU_RETURN_IF_ERROR(fill([&](int i) { return f16ToFloat(uint16_t(t.int32_data(i))); }, t.int32_data_size()));
    break;
  default: // int8..int32, uint8, uint16, bool live in int32_data
    TPU_RETURN_IF_ERROR(fill([&](int i) { return t.int32_data(i); }, t.int32_data_size()));
  }
  return a;
}

ValueInfo decodeValueInfo(const pb::ValueInfoProto &v) {
  ValueInfo info;
  info.name = v.name();
  if (v.type().has_tensor_type()) {
    const auto &tt = v.type().tensor_type();
    info.onnxType = tt.elem_type();
    info.dtype = topDtypeOf(tt.elem_type());
    info.hasShape = tt.has_shape();
    for (const auto &d : tt.shape().dim()) {
      info.dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
      info.dimParams.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
  }
  return info;
}

Result<std::vector<Node>> decodeNodes(const google::protobuf::RepeatedPtrField<pb::NodeProto> &protos,
                                      const std::string &baseDir, int depth);

// Subgraphs nest (an If inside a branch); a bound keeps a crafted file from
// exhausting the stack.
constexpr int kMaxGraphDepth = 16;

Result<Graph> decodeGraph(const pb::GraphProto &g, const std::string &baseDir, int depth) {
  if (depth > kMaxGraphDepth) return makeError("subgraphs nested deeper than ", kMaxGraphDepth);
  Graph out;
  for (const auto &init : g.initializer()) {
    auto t = decodeTensor(init, baseDir);
    if (!t) return Status(t.status()).prefix("initializer");
    out.initializers[init.name()] = t.take();
  }
  for (const auto &o : g.output()) out.outputs.push_back(o.name());
  auto nodes = decodeNodes(g.node(), baseDir, depth);
  if (!nodes) return nodes.status();
  out.nodes = nodes.take();
  return out;
}

Result<Attribute> decodeAttribute(const pb::AttributeProto &p, const std::string &baseDir, int depth) {
  Attribute a;
  switch (p.type()) {
  case pb::AttributeProto::FLOAT: a.kind = Attribute::Float; a.f = p.f(); break;
  case pb::AttributeProto::INT: a.kind = Attribute::Int; a.i = p.i(); break;
  case pb::AttributeProto::STRING: a.kind = Attribute::String; a.s = p.s(); break;
  case pb::AttributeProto::FLOATS: a.kind = Attribute::Floats; a.floats.assign(p.floats().begin(), p.floats().end()); break;
  case pb::AttributeProto::INTS: a.kind = Attribute::Ints; a.ints.assign(p.ints().begin(), p.ints().end()); break;
  case pb::AttributeProto::STRINGS: a.kind = Attribute::Strings; a.strings.assign(p.strings().begin(), p.strings().end()); break;
  case pb::AttributeProto::TENSOR: {
    a.kind = Attribute::Tensor;
    auto t = decodeTensor(p.t(), baseDir);
    if (!t) return t.status();
    a.tensor = t.take();
    break;
  }
  case pb::AttributeProto::GRAPH: {
    auto g = decodeGraph(p.g(), baseDir, depth + 1);
    if (!g) return g.status();
    a.kind = Attribute::Graph;
    a.graph = std::make_shared<const Graph>(g.take());
    break;
  }
  default: a.kind = Attribute::Other;
  }
  return a;
}

Result<std::vector<Node>> decodeNodes(const google::protobuf::RepeatedPtrField<pb::NodeProto> &protos,
                                      const std::string &baseDir, int depth) {
  std::vector<Node> nodes;
  nodes.reserve(size_t(protos.size()));
  for (int i = 0; i < protos.size(); ++i) {
    const auto &pn = protos.Get(i);
    Node n;
    n.opType = pn.op_type();
    n.domain = pn.domain();
    n.name = pn.name().empty() ? "node" + std::to_string(i) : pn.name();
    n.inputs.assign(pn.input().begin(), pn.input().end());
    n.outputs.assign(pn.output().begin(), pn.output().end());
    for (const auto &pa : pn.attribute()) {
      auto a = decodeAttribute(pa, baseDir, depth);
      if (!a) return Status(a.status()).prefix("node " + n.describe() + " attribute '" + pa.name() + "'");
      n.attrs[pa.name()] = a.take();
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

} // namespace

Result<Model> parseModel(const void *data, size_t size, const std::string &baseDir) {
  pb::ModelProto proto;
  google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t *>(data), int(size));
  stream.SetTotalBytesLimit(INT32_MAX);
  if (size > size_t(INT32_MAX) || !proto.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return makeError("not a valid ONNX protobuf (corrupt or truncated)");
  if (!proto.has_graph()) return makeError("the ONNX model has no graph");
  Model m;
  m.producer = proto.producer_name();
  for (const auto &o : proto.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") m.opset = o.version();
  const auto &g = proto.graph();
  for (const auto &init : g.initializer()) {
    auto t = decodeTensor(init, baseDir);
    if (!t) return Status(t.status()).prefix("initializer");
    m.initializers[init.name()] = t.take();
  }
  for (const auto &in : g.input())
    if (!m.initializers.count(in.name())) m.inputs.push_back(decodeValueInfo(in));
  for (const auto &out : g.output()) m.outputs.push_back(decodeValueInfo(out));
  auto nodes = decodeNodes(g.node(), baseDir, 0);
  if (!nodes) return nodes.status();
  m.nodes = nodes.take();
  return m;
}

Result<Model> loadModel(const std::string &path) {
  auto size = fileSize(path);
  if (!size) return size.status();
  if (*size == 0) return makeError(path, ": empty file, not an ONNX model");
  if (*size > INT32_MAX) return makeError(path, ": larger than 2 GiB; store the weights as external data");
  auto bytes = readFile(path);
  if (!bytes) return bytes.status();
  std::string dir;
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos) dir = path.substr(0, slash);
  auto m = parseModel(bytes->data(), bytes->size(), dir);
  if (!m) return Status(m.status()).prefix(path);
  return m;
}

} // namespace tpu::onnx

// NumPy .npy arrays and .npz archives (a zip of .npy members), the tensor
// exchange format of every tool: model inputs, outputs, dumps, weights.
// Little-endian, C order only. Every header is validated against the bytes
// that are actually there before anything is allocated.
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace tpu {

// Element types, named like numpy: "float32", "float64", "int8", "uint8",
// "int16", "uint16", "int32", "int64", "bool".
// Size in bytes of one element, 0 if the dtype name is unknown.
size_t dtypeSize(const std::string &dtype);
// The numpy dtype name of a C++ element type.
template <typename T> constexpr const char *dtypeOf() {
  if constexpr (std::is_same_v<T, float>) return "float32";
  else if constexpr (std::is_same_v<T, double>) return "float64";
  else if constexpr (std::is_same_v<T, int8_t>) return "int8";
  else if constexpr (std::is_same_v<T, uint8_t>) return "uint8";
  else if constexpr (std::is_same_v<T, int16_t>) return "int16";
  else if constexpr (std::is_same_v<T, uint16_t>) return "uint16";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, bool>) return "bool";
  else static_assert(sizeof(T) == 0, "no numpy dtype for this type");
}

// One n-dimensional array; data holds numel() * dtypeSize(dtype) bytes.
struct NpyArray {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  size_t elementSize() const { return dtypeSize(dtype); }
  template <typename T> bool is() const { return dtype == dtypeOf<T>(); }
  // Typed views; the caller checks is<T>() first (asserted in debug builds).
  template <typename T> const T *as() const { return reinterpret_cast<const T *>(data.data()); }
  template <typename T> T *as() { return reinterpret_cast<T *>(data.data()); }
  // Copies the elements out as T (requires is<T>()).
  template <typename T> std::vector<T> values() const {
    std::vector<T> v(numel());
    if (!v.empty()) std::memcpy(v.data(), data.data(), v.size() * sizeof(T));
    return v;
  }
  // Any numeric dtype converted to float32 values.
  std::vector<float> toFloat() const;

  // An array of `dtype` holding a copy of `bytes`.
  static NpyArray fromBytes(std::string dtype, std::vector<int64_t> shape, const void *bytes,
                            size_t size);
  template <typename T>
  static NpyArray from(std::vector<int64_t> shape, const std::vector<T> &values) {
    return fromBytes(dtypeOf<T>(), std::move(shape), values.data(), values.size() * sizeof(T));
  }
  static NpyArray from(std::vector<int64_t> shape, const float *values, size_t count) {
    return fromBytes("float32", std::move(shape), values, count * sizeof(float));
  }
};

// "1x3x224x224" (or "scalar") for messages.
std::string shapeToString(const std::vector<int64_t> &shape);

// Members of an archive by name (without ".npy"), sorted: deterministic.
using NpzMap = std::map<std::string, NpyArray>;

// Largest array accepted (bytes): bigger headers are rejected as corrupt
// before any allocation.
constexpr uint64_t kMaxNpyBytes = 16ull << 30;

// Parses a whole .npy image; `where` names it in errors ("x.npz: member 'a'").
Result<NpyArray> parseNpy(const uint8_t *bytes, size_t size, const std::string &where);
// Serializes as .npy version 1.0 (2.0 if the header needs it).
std::vector<uint8_t> serializeNpy(const NpyArray &array);

Result<NpyArray> readNpy(const std::string &path);
Status writeNpy(const std::string &path, const NpyArray &array);

Result<NpzMap> readNpz(const std::string &path);
// Members are written in name order with a fixed timestamp, so equal
// contents give byte-identical files. `compress` deflates the members.
Status writeNpz(const std::string &path, const NpzMap &arrays, bool compress = false);

} // namespace tpu

#include "runtime/IoConvert.h"

#include "arith/IntArith.h"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace tpu::runtime {

std::string dataTypeName(DataType t) {
  switch (t) {
  case DataType::Float32: return "float32";
  case DataType::Float16: return "float16";
  case DataType::Int8: return "int8";
  case DataType::Uint8: return "uint8";
  case DataType::Int16: return "int16";
  case DataType::Uint16: return "uint16";
  case DataType::Int32: return "int32";
  case DataType::Uint32: return "uint32";
  }
  return "data_type " + std::to_string(uint32_t(t));
}

std::string storeModeName(StoreMode m) {
  switch (m) {
  case StoreMode::N1: return "1N";
  case StoreMode::N2: return "2N";
  case StoreMode::N4: return "4N";
  }
  return "gmem_stmode " + std::to_string(int32_t(m));
}

unsigned storeModeFactor(StoreMode m) {
  switch (m) {
  case StoreMode::N1: return 1;
  case StoreMode::N2: return 2;
  case StoreMode::N4: return 4;
  }
  return 0;
}

namespace {

// Largest tensor the runtime converts (elements); bigger is a corrupt model.
constexpr uint64_t kMaxElements = 1ull << 34;

bool isIntegerType(DataType t) { return t != DataType::Float32 && t != DataType::Float16; }

// Element e = (n, i) of an [N, inner] view lives at this element slot of the
// device buffer: k batch items share a 4-byte word, the word holding item n
// of position i is (n / k) * inner + i.
inline uint64_t deviceSlot(uint64_t n, uint64_t i, uint64_t inner, unsigned k) {
  return ((n / k) * inner + i) * k + n % k;
}

struct BatchView {
  uint64_t batch = 1, inner = 1;
};
BatchView batchView(const bmodel::Tensor &l) {
  BatchView v;
  if (l.shape.empty()) return v;
  v.batch = l.shape[0];
  for (size_t d = 1; d < l.shape.size(); ++d) v.inner *= l.shape[d];
  return v;
}

// The IntArith precision of an integer C++ element type.
template <typename T> constexpr isa::Prec precOf() {
  return sizeof(T) == 1 ? isa::Prec::Int8 : sizeof(T) == 2 ? isa::Prec::Int16 : isa::Prec::Int32;
}

// q = round(x / scale) + zeroPoint, saturated: IntArith's fp32 -> int rule
// (half to even), the same one GDMA's format convert uses.
template <typename T> T quantize(float x, float scale, int32_t zeroPoint) {
  int64_t q = sim::fp32ToInt(x / scale, isa::Prec::Int32, true) + zeroPoint;
  return T(sim::saturate(q, precOf<T>(), std::is_signed_v<T>));
}

template <typename T> void quantizeAll(const bmodel::Tensor &l, const float *in, uint8_t *out) {
  BatchView v = batchView(l);
  unsigned k = storeModeFactor(l.storeMode);
  T *dst = reinterpret_cast<T *>(out);
  for (uint64_t n = 0; n < v.batch; ++n)
    for (uint64_t i = 0; i < v.inner; ++i) {
      float x = in[n * v.inner + i];
      T q;
      if constexpr (std::is_same_v<T, float>) q = x;
      else q = quantize<T>(x, l.scale, l.zeroPoint);
      std::memcpy(dst + deviceSlot(n, i, v.inner, k), &q, sizeof(T));
    }
}

template <typename T> void dequantizeAll(const bmodel::Tensor &l, const uint8_t *in, float *out) {
  BatchView v = batchView(l);
  unsigned k = storeModeFactor(l.storeMode);
  const T *src = reinterpret_cast<const T *>(in);
  for (uint64_t n = 0; n < v.batch; ++n)
    for (uint64_t i = 0; i < v.inner; ++i) {
      T q;
      std::memcpy(&q, src + deviceSlot(n, i, v.inner, k), sizeof(T));
      if constexpr (std::is_same_v<T, float>) out[n * v.inner + i] = q;
      else out[n * v.inner + i] = float((double(q) - l.zeroPoint) * double(l.scale));
    }
}

// Calls F<T>(args...) with T the C++ type of the dtype.
template <template <typename> class F, typename... Args>
void dispatch(DataType t, Args &&...args) {
  switch (t) {
  case DataType::Float32: F<float>()(args...); break;
  case DataType::Int8: F<int8_t>()(args...); break;
  case DataType::Uint8: F<uint8_t>()(args...); break;
  case DataType::Int16: F<int16_t>()(args...); break;
  case DataType::Uint16: F<uint16_t>()(args...); break;
  case DataType::Int32: F<int32_t>()(args...); break;
  case DataType::Uint32: F<uint32_t>()(args...); break;
  case DataType::Float16: break; // rejected by checkLayout
  }
}
template <typename T> struct QuantizeFn {
  void operator()(const bmodel::Tensor &l, const float *in, uint8_t *out) { quantizeAll<T>(l, in, out); }
};
template <typename T> struct DequantizeFn {
  void operator()(const bmodel::Tensor &l, const uint8_t *in, float *out) { dequantizeAll<T>(l, in, out); }
};

} // namespace

Result<uint64_t> checkLayout(const bmodel::Tensor &l) {
  unsigned bytes = dataTypeBytes(l.dtype);
  if (bytes == 0) return makeError("unknown data_type code ", uint32_t(l.dtype));
  if (l.dtype == DataType::Float16)
    return makeError("data_type float16 is not supported: BM1684 has no fp16 arithmetic");
  unsigned k = storeModeFactor(l.storeMode);
  if (k == 0) return makeError("unknown gmem_stmode ", int32_t(l.storeMode));
  if (k != 1 && k * bytes != 4)
    return makeError("store mode ", storeModeName(l.storeMode), " needs a ", 4 / k,
                     "-byte type, not ", dataTypeName(l.dtype));
  uint64_t count = 1;
  for (uint64_t d : l.shape) {
    if (d != 0 && count > kMaxElements / d)
      return makeError("tensor has more than ", kMaxElements, " elements");
    count *= d;
  }
  if (isIntegerType(l.dtype) && !(std::isfinite(l.scale) && l.scale > 0))
    return makeError("quantization scale ", l.scale, " must be finite and positive");
  return count;
}

Result<uint64_t> deviceBytes(const bmodel::Tensor &l) {
  auto count = checkLayout(l);
  if (!count) return count.status();
  return l.storageBytes();
}

Result<std::vector<uint8_t>> toDevice(const bmodel::Tensor &l, const float *values, uint64_t count) {
  auto expected = checkLayout(l);
  if (!expected) return expected.status();
  if (count != *expected)
    return makeError(count, " values given for a tensor of ", *expected, " elements");
  auto bytes = deviceBytes(l);
  std::vector<uint8_t> out(*bytes, 0);
  dispatch<QuantizeFn>(l.dtype, l, values, out.data());
  return out;
}

Result<std::vector<float>> fromDevice(const bmodel::Tensor &l, const uint8_t *bytes, uint64_t size) {
  auto count = checkLayout(l);
  if (!count) return count.status();
  auto need = deviceBytes(l);
  if (size != *need)
    return makeError(size, " device bytes given for a tensor that occupies ", *need);
  std::vector<float> out(*count);
  dispatch<DequantizeFn>(l.dtype, l, bytes, out.data());
  return out;
}

Result<std::vector<uint8_t>> relayout(const bmodel::Tensor &from, const uint8_t *bytes,
                                      uint64_t size, StoreMode to) {
  bmodel::Tensor target = from;
  target.storeMode = to;
  auto need = deviceBytes(from);
  if (!need) return need.status();
  auto out = deviceBytes(target);
  if (!out) return out.status();
  if (size != *need)
    return makeError(size, " device bytes given for a tensor that occupies ", *need);
  std::vector<uint8_t> result(*out, 0);
  const BatchView v = batchView(from);
  const unsigned e = dataTypeBytes(from.dtype);
  const unsigned kFrom = storeModeFactor(from.storeMode), kTo = storeModeFactor(to);
  for (uint64_t n = 0; n < v.batch; ++n)
    for (uint64_t i = 0; i < v.inner; ++i)
      std::memcpy(result.data() + deviceSlot(n, i, v.inner, kTo) * e,
                  bytes + deviceSlot(n, i, v.inner, kFrom) * e, e);
  return result;
}

} // namespace tpu::runtime

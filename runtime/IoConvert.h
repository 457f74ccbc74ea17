// Conversion between the user's fp32 tensors and a device tensor's bytes in
// global memory: dtype (the bmodel's data_type code), store mode (1N/2N/4N
// batch interleave) and the symmetric quantization scale.
#pragma once

#include "isa/bmodel/Model.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::runtime {

// The bmodel's data_type and gmem_stmode codes (isa/bmodel/Model.h).
using bmodel::DataType;
using bmodel::StoreMode;
using bmodel::dataTypeBytes;

std::string dataTypeName(DataType t);      // "float32", "int8", ... (numpy names)
std::string storeModeName(StoreMode m);    // "1N", "2N", "4N"
// Batch items interleaved per word: 1, 2 or 4.
unsigned storeModeFactor(StoreMode m);

// A tensor's layout is its dtype, store mode, shape (dim 0 = batch; a scalar
// has no dims), scale and zero point: real = (q - zeroPoint) * scale.
//
// Checks the combination (known dtype, 2N only for 16-bit and 4N only for
// 8-bit types, element count within limits, finite positive scale for
// integer types) and returns the number of elements.
Result<uint64_t> checkLayout(const bmodel::Tensor &layout);
// Bytes the tensor occupies in global memory (Tensor::storageBytes, i.e.
// ceil(N/k)*C*H*W*k*elem for kN), after checkLayout.
Result<uint64_t> deviceBytes(const bmodel::Tensor &layout);

// User fp32 values (C order, layout.shape) -> device bytes. Integer types
// are quantized: round(x / scale) + zeroPoint, saturated (IntArith's rule);
// padding slots of a partial 4N/2N word are zero.
Result<std::vector<uint8_t>> toDevice(const bmodel::Tensor &layout, const float *values, uint64_t count);
// Device bytes -> fp32 values in C order, dequantized: (q - zeroPoint) * scale.
Result<std::vector<float>> fromDevice(const bmodel::Tensor &layout, const uint8_t *bytes, uint64_t size);

// The same values in another store mode (1N <-> 2N/4N, same dtype and
// shape): element slots are permuted, bytes unchanged, padding zero.
Result<std::vector<uint8_t>> relayout(const bmodel::Tensor &from, const uint8_t *bytes,
                                      uint64_t size, StoreMode to);

} // namespace tpu::runtime

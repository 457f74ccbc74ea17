// Where the BM1684X's memories sit in the address space its commands use, and how local memory is cut
// into lanes and banks. Facts from TPU-MLIR's debugger (python/debugger/opparam_1684x.py, whose comment
// cites the chip's memmap.h) and its BM1684X backend (BM1684X.h: 64 lanes, 256 KiB per lane, 16 banks).
#pragma once

#include <cstdint>

namespace tpu::isa::bm1684x {

constexpr unsigned kLanes = 64;
constexpr uint64_t kBankBytes = 16 * 1024;
constexpr uint64_t kBanksPerLane = 16;
constexpr uint64_t kLaneBytes = kBankBytes * kBanksPerLane; // 256 KiB
constexpr uint64_t kLmemBytes = kLaneBytes * kLanes;        // 16 MiB
// The EU vector of one lane is 64 bytes: 16 fp32, 32 fp16, 64 int8 elements.
constexpr unsigned kEuBytes = 64;

// Address ranges [start, end) as commands write them. A TIU or DMA address below kLmemBytes is local memory
// too (an offset from kLmemStart).
constexpr uint64_t kLmemStart = 0x8000000, kLmemEnd = 0x9000000;
constexpr uint64_t kStaticStart = 0x9000000, kStaticEnd = 0x9004000; // 16 KiB of tables (SFU coefficients)
constexpr uint64_t kL2Start = 0x10000000, kL2End = 0x10200000;       // L2 SRAM
constexpr uint64_t kGlobalStart = 0x100000000, kGlobalEnd = 0x300000000;

} // namespace tpu::isa::bm1684x

// Task types, execution-unit types, precision codes and GDMA enumerations,
// with their names. The reference (BM1684.md §2) gives the task and eu type
// numbers; the precision codes are this project's own (docs/isa.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tpu::isa {

// tsk_typ of a TIU command.
enum class TiuTask : uint8_t {
  Conv = 0, Pord = 1, MatMul = 2, Arith = 3, MatMul2 = 4, ConvCorr = 5, Lut = 6,
  MdSum = 7, MdScalar = 8, MdSfu = 9, MdLinear = 10, Lma = 11, Decompress = 12,
  MdCmp = 13, VecCorr = 14,
};
constexpr unsigned kTiuTaskCount = 15;

// tsk_eu_typ: one numbering shared by every task type.
enum class EuOp : uint8_t {
  Mul = 0, Mac = 1, Add = 2, Sub = 3, Max = 4, Min = 5, Shift = 6, And = 7, Or = 8,
  Xor = 9, SelectGt = 10, SelectEq = 11, Divide = 12, Taylor = 13, Fp32ToInt = 14,
  IntNormalize = 15, Fp32Normalize = 16, Rsqrt = 17, AddTree = 18, Copy = 19,
  SquareSum = 20, SquareDiff = 21, Cmp = 22, Select = 23, CmpSelect = 24,
};
constexpr unsigned kEuOpCount = 25;

std::string_view tiuTaskName(TiuTask t);   // "conv", "pord", "ar", ...
std::string_view euOpName(EuOp e);         // "mul", "mac", "add_tree", ...
// Is (tsk_typ, tsk_eu_typ) a combination the hardware defines?
bool isValidTiuOp(uint64_t tskTyp, uint64_t euTyp);
// Assembler mnemonic "<task>.<eu>", e.g. "conv.mac", "pord.max", "ar.add".
std::string tiuMnemonic(TiuTask t, EuOp e);
// Parses a mnemonic back; nullopt if unknown or not a valid combination.
std::optional<std::pair<TiuTask, EuOp>> parseTiuMnemonic(std::string_view m);

// Operand precision (opt_*_prec, 3 bits), the chip's codes: Sophgo's BM1684
// profiler definitions (TPU-MLIR python/profile_helper/bm1684_defs.py,
// BDFormat), and what TPU-MLIR's own BM1684 bmodels carry (fp32 = 2, int32 = 4;
// tests/data/bm1684). Signedness is the separate opt_*_sign bit. The BM1684's
// TIU computes no fp16: the code exists, no command here uses it.
enum class Prec : uint8_t { Int8 = 0, Fp16 = 1, Fp32 = 2, Int16 = 3, Int32 = 4 };
constexpr unsigned kPrecCodeCount = 5;
unsigned precBytes(Prec p);
std::string_view precName(Prec p); // "int8", "fp16", "fp32", "int16", "int32"
// A code a command may carry: int8, fp32, int16 or int32.
bool isValidPrec(uint64_t code);

// GDMA enumerations (published numbering).
enum class GdmaDirection : uint8_t { S2L = 0, L2S = 1, S2S = 2, L2L = 3 };
enum class GdmaSpecialFunc : uint8_t {
  None = 0, Transpose = 1, LrnShift = 2, FormatConvert = 3, ConstantFill = 4,
  CwTranspose = 5, Winograd = 6, Filter = 7,
};
enum class GdmaFormat : uint8_t { Fp32 = 0, Int16 = 1, Uint8 = 2, Int8 = 3, Fp16 = 4 };
constexpr unsigned kGdmaFormatCount = 5;
std::string_view gdmaDirectionName(GdmaDirection d); // "s2l", ...
std::string_view gdmaSpecialFuncName(GdmaSpecialFunc f);
std::string_view gdmaFormatName(GdmaFormat f);
unsigned gdmaFormatBytes(GdmaFormat f);

} // namespace tpu::isa

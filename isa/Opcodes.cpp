#include "isa/Opcodes.h"

namespace tpu::isa {

namespace {

constexpr std::string_view kTaskNames[kTiuTaskCount] = {
    "conv", "pord", "mm", "ar", "mm2", "cc", "lut", "md_sum",
    "md_scalar", "md_sfu", "md_linear", "lma", "decompress", "md_cmp", "vc"};

constexpr std::string_view kEuNames[kEuOpCount] = {
    "mul", "mac", "add", "sub", "max", "min", "shift", "and", "or",
    "xor", "select_gt", "select_eq", "divide", "taylor", "fp32_to_int",
    "int_normalize", "fp32_normalize", "rsqrt", "add_tree", "copy",
    "square_sum", "square_diff", "cmp", "select", "cmp_select"};

// Bit i set: eu type i is valid for the task (BM1684.md §2 table).
constexpr uint32_t bits(std::initializer_list<unsigned> eus) {
  uint32_t m = 0;
  for (unsigned e : eus) m |= 1u << e;
  return m;
}
constexpr uint32_t kAllAr = (1u << 25) - 1;   // 0..24
constexpr uint32_t kAr0To20 = (1u << 21) - 1; // 0..20
constexpr uint32_t kValidEu[kTiuTaskCount] = {
    bits({0, 1}),        // conv
    bits({1, 4}),        // pord: 1 depthwise/avgpool, 4 maxpool
    bits({0, 1}),        // mm
    kAllAr,              // ar
    bits({18}),          // mm2
    kAllAr,              // cc
    bits({0, 19}),       // lut
    bits({18}),          // md_sum
    kAr0To20,            // md_scalar
    kAllAr,              // md_sfu
    bits({1, 20, 21}),   // md_linear
    bits({19}),          // lma
    bits({19}),          // decompress
    bits({22, 23, 24}),  // md_cmp
    kAr0To20,            // vc
};

constexpr std::string_view kPrecNames[kPrecCodeCount] = {"int8", "fp16", "fp32", "int16", "int32"};
constexpr unsigned kPrecBytes[kPrecCodeCount] = {1, 2, 4, 2, 4};
constexpr std::string_view kDirNames[] = {"s2l", "l2s", "s2s", "l2l"};
constexpr std::string_view kSfuncNames[] = {"copy", "transpose", "lrn_shift", "convert",
                                            "fill", "cw_transpose", "winograd", "filter"};
constexpr std::string_view kFormatNames[kGdmaFormatCount] = {"fp32", "int16", "uint8", "int8", "fp16"};
constexpr unsigned kFormatBytes[kGdmaFormatCount] = {4, 2, 1, 1, 2};

} // namespace

std::string_view tiuTaskName(TiuTask t) { return kTaskNames[unsigned(t)]; }
std::string_view euOpName(EuOp e) { return kEuNames[unsigned(e)]; }

bool isValidTiuOp(uint64_t tskTyp, uint64_t euTyp) {
  return tskTyp < kTiuTaskCount && euTyp < kEuOpCount && (kValidEu[tskTyp] >> euTyp & 1);
}

std::string tiuMnemonic(TiuTask t, EuOp e) {
  return std::string(tiuTaskName(t)) + "." + std::string(euOpName(e));
}

std::optional<std::pair<TiuTask, EuOp>> parseTiuMnemonic(std::string_view m) {
  auto dot = m.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view task = m.substr(0, dot), eu = m.substr(dot + 1);
  for (unsigned t = 0; t < kTiuTaskCount; ++t) {
    if (kTaskNames[t] != task) continue;
    for (unsigned e = 0; e < kEuOpCount; ++e)
      if (kEuNames[e] == eu && isValidTiuOp(t, e)) return std::make_pair(TiuTask(t), EuOp(e));
  }
  return std::nullopt;
}

unsigned precBytes(Prec p) { return kPrecBytes[unsigned(p)]; }
std::string_view precName(Prec p) { return kPrecNames[unsigned(p)]; }
bool isValidPrec(uint64_t code) { return code < kPrecCodeCount && Prec(code) != Prec::Fp16; }

std::string_view gdmaDirectionName(GdmaDirection d) { return kDirNames[unsigned(d)]; }
std::string_view gdmaSpecialFuncName(GdmaSpecialFunc f) { return kSfuncNames[unsigned(f)]; }
std::string_view gdmaFormatName(GdmaFormat f) { return kFormatNames[unsigned(f)]; }
unsigned gdmaFormatBytes(GdmaFormat f) { return kFormatBytes[unsigned(f)]; }

} // namespace tpu::isa

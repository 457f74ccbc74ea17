#include "compiler/Backend/BM1684X/Commands.h"

#include "isa/bm1684x/Layouts.h"

#include <string_view>
namespace tpu::backend::bm1684x {

Result<Command> tiuCommand(const char *mnemonic, Fields fields) {
  TPU_ASSIGN_OR_RETURN(Command c, Command::make(*isa::bm1684x::findOp(mnemonic), true));
  TPU_RETURN_IF_ERROR(setFields(c, fields));
  return c;
}

Result<Command> arithCommand(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a,
                             std::optional<uint64_t> bTile, float bConstant, TileTypes types) {
  const bool unary = std::string_view(mnemonic) == "arith.copy";
  TPU_ASSIGN_OR_RETURN(Command c, tiuCommand(mnemonic, {{"tsk_opd_num", unary ? 1 : 2},
                                                        {"res0_prec", precOf(types.out)},
                                                        {"opd0_prec", precOf(types.a)},
                                                        {"opd1_prec", bTile ? precOf(types.b) : kPrecF32},
                                                        {"res0_n", shape[0]},
                                                        {"res0_c", shape[1]},
                                                        {"res0_h", shape[2]},
                                                        {"res0_w", shape[3]},
                                                        {"res0_addr", out},
                                                        {"opd0_addr", a}}));
  TPU_RETURN_IF_ERROR(c.set("opd1_const", bTile ? 0 : 1));
  TPU_RETURN_IF_ERROR(c.set("opd1_addr", bTile ? *bTile : floatBits(bConstant)));
  // Integer tiles say their sign (float commands keep the fields 0).
  if (signOf(types.a)) TPU_RETURN_IF_ERROR(c.set("opd0_sign", 1));
  if (bTile && signOf(types.b)) TPU_RETURN_IF_ERROR(c.set("opd1_sign", 1));
  return c;
}

Result<Command> intArithCommand(const char *mnemonic, const Dims &shape, uint64_t out, uint64_t a,
                                std::optional<uint64_t> bTile, int64_t bConstant, TileTypes types) {
  TPU_ASSIGN_OR_RETURN(Command c, arithCommand(mnemonic, shape, out, a, bTile, 0.0f, types));
  if (bTile) return c;
  TPU_RETURN_IF_ERROR(setFields(c, {{"opd1_prec", precOf(types.b)},
                                    {"opd1_sign", signOf(types.b)},
                                    {"opd1_addr", integerBits(bConstant, types.b)}}));
  return c;
}

Result<Command> castCommand(const Dims &shape, uint64_t out, DType outType, uint64_t a, DType aType) {
  TPU_ASSIGN_OR_RETURN(Command c, arithCommand("arith.cast", shape, out, a, std::nullopt, 0.0f, {outType, aType}));
  // A cast's result sign is opd2_sign; round mode 0 (opd2_n_str): half to even.
  TPU_RETURN_IF_ERROR(setFields(c, {{"tsk_opd_num", 1}, {"opd1_const", 0}, {"opd1_addr", 0}}));
  if (signOf(outType)) TPU_RETURN_IF_ERROR(c.set("opd2_sign", 1));
  return c;
}

Result<Command> requantCommand(const Dims &shape, uint64_t out, DType outType, uint64_t a, DType aType,
                               int32_t multiplier, uint32_t rshift) {
  if (rshift > 127) return makeError("a right shift of ", rshift, " (an int8 field)");
  // Constant form: the multiplier in opd1_addr, the shift (negative: right) in opd2_addr's low byte, the
  // zero point (0) above it; round mode 5 (opd2_n_str): half up, the BM1684's rounding shift.
  return tiuCommand("quant.rq1", {{"opd1_const", 1},
                                  {"opd0_prec", precOf(aType)},
                                  {"opd0_sign", signOf(aType)},
                                  {"res0_prec", precOf(outType)},
                                  {"opd2_sign", signOf(outType)},
                                  {"opd2_n_str", 5},
                                  {"res0_n", shape[0]},
                                  {"res0_c", shape[1]},
                                  {"res0_h", shape[2]},
                                  {"res0_w", shape[3]},
                                  {"res0_addr", out},
                                  {"opd0_addr", a},
                                  {"opd1_addr", integerBits(multiplier, DType::I32)},
                                  {"opd2_addr", integerBits(-int64_t(rshift), DType::I8)}});
}

Result<Command> lookupCommand(const Dims &shape, uint64_t out, uint64_t table, uint64_t entries, uint64_t index,
                              DType type) {
  return tiuCommand("sg.pe_s_gather_d1coor", {{"res0_prec", precOf(type)},
                                              {"opd0_prec", precOf(type)},
                                              {"opd1_prec", precOf(DType::U8)},
                                              {"res0_n", shape[0]},
                                              {"res0_c", shape[1]},
                                              {"res0_h", shape[2]},
                                              {"res0_w", shape[3]},
                                              {"opd0_h", 1},
                                              {"opd0_w", entries},
                                              {"opd1_c", shape[1]},
                                              {"opd1_w", shape[3]},
                                              {"res0_addr", out},
                                              {"opd0_addr", table},
                                              {"opd1_addr", index}});
}

Result<Command> windowCommand(const char *mnemonic, const Dims &out, const std::array<uint64_t, 2> &in,
                              const WindowParams &p, const std::array<uint64_t, 2> &padRows, uint32_t padValue,
                              uint64_t inOffset, uint64_t outOffset, DType inType, DType outType) {
  return tiuCommand(mnemonic, {{"res0_prec", precOf(outType)},
                               {"opd0_prec", precOf(inType)},
                               {"res0_n", out[0]},
                               {"res0_c", out[1]},
                               {"res0_h", out[2]},
                               {"res0_w", out[3]},
                               {"opd0_h", in[0]},
                               {"opd0_w", in[1]},
                               {"opd1_h", uint64_t(p.kh)},
                               {"opd1_w", uint64_t(p.kw)},
                               {"opd0_up_pad", padRows[0]},
                               {"opd0_dn_pad", padRows[1]},
                               {"opd0_lf_pad", uint64_t(p.padLeft)},
                               {"opd0_rt_pad", uint64_t(p.padRight)},
                               {"res_op_y_str", uint64_t(p.strideH)},
                               {"res_op_x_str", uint64_t(p.strideW)},
                               {"opd1_y_ins0", uint64_t(p.dilationH - 1)},
                               {"opd1_x_ins0", uint64_t(p.dilationW - 1)},
                               {"opd3_const", 1},
                               {"opd3_addr", padValue},
                               {"res0_addr", outOffset},
                               {"opd0_addr", inOffset},
                               {"opd0_sign", signOf(inType)}});
}

Result<Command> rsqrtCommand(uint64_t offset, uint64_t cs) {
  return tiuCommand("sfu.rsqrt", {{"res0_prec", kPrecF32},
                                  {"opd0_prec", kPrecF32},
                                  {"res0_n", 1},
                                  {"res0_c", cs},
                                  {"res0_h", 1},
                                  {"res0_w", 1},
                                  {"res0_addr", offset},
                                  {"opd0_addr", offset}});
}

Status setMultiplier(Command &c, float multiplier) {
  TPU_RETURN_IF_ERROR(c.set("opd1_const", 1));
  return c.set("opd1_addr", floatBits(multiplier));
}

} // namespace tpu::backend::bm1684x

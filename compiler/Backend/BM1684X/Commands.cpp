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
  return c;
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
                               {"opd0_addr", inOffset}});
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

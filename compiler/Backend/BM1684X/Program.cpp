#include "compiler/Backend/BM1684X/Program.h"

#include "support/Float16.h"

#include <algorithm>
#include <string>

namespace tpu::backend::bm1684x {

uint32_t constantBits(float v, DType t) {
  return t == DType::F16 ? floatToF16(v) : t == DType::BF16 ? floatToBf16(v) : floatBits(v);
}

Status setFields(Command &c, Fields fields) {
  for (auto [name, value] : fields)
    if (Status st = c.set(name, value); !st) return st.prefix(std::string(c.op().mnemonic) + " field " + name);
  return Status::ok();
}

Result<bmodel::CmdGroup> Program::finish() {
  TPU_ASSIGN_OR_RETURN(Command end, Command::make(*isa::bm1684x::findOp("sys.end"), false));
  TPU_RETURN_IF_ERROR(add(std::move(end), true));
  TPU_ASSIGN_OR_RETURN(Command sys, Command::make(*isa::bm1684x::findOp("dma.sys"), true));
  TPU_RETURN_IF_ERROR(add(std::move(sys), false));
  bmodel::CmdGroup g;
  g.tiuStream = isa::bm1684x::encodeBuffer(tiu_);
  g.gdmaStream = isa::bm1684x::encodeBuffer(dma_);
  g.tiuStreamCount = uint32_t(tiu_.size());
  g.gdmaStreamCount = uint32_t(dma_.size());
  return g;
}

Status Program::tensorDma(const Region &src, const Region &dst, std::optional<uint32_t> fillBits) {
  TPU_ASSIGN_OR_RETURN(Command c, Command::make(*isa::bm1684x::findOp("dma.tensor"), false));
  if (fillBits) {
    TPU_RETURN_IF_ERROR(c.set("fill_constant_en", 1));
    TPU_RETURN_IF_ERROR(c.set("constant_value", *fillBits));
  }
  const char *dims = "nchw";
  for (size_t i = 0; i < 4; ++i) {
    std::string d(1, dims[i]);
    TPU_RETURN_IF_ERROR(c.set("src_" + d + "size", src.shape[i]));
    TPU_RETURN_IF_ERROR(c.set("dst_" + d + "size", dst.shape[i]));
    TPU_RETURN_IF_ERROR(c.set("src_" + d + "stride", src.stride[i]));
    TPU_RETURN_IF_ERROR(c.set("dst_" + d + "stride", dst.stride[i]));
  }
  for (auto [prefix, address] :
       {std::pair{"src_start_addr_", src.address}, std::pair{"dst_start_addr_", dst.address}}) {
    TPU_RETURN_IF_ERROR(c.set(std::string(prefix) + "l32", address & 0xffffffffu));
    TPU_RETURN_IF_ERROR(c.set(std::string(prefix) + "h8", address >> 32));
  }
  TPU_RETURN_IF_ERROR(setFields(c, {{"stride_enable", 1},
                                    {"nchw_copy", 1},
                                    {"src_data_format", precOf(src.dtype)},
                                    {"localmem_mask_l32", 0xffffffffu},
                                    {"localmem_mask_h32", 0xffffffffu}}));
  return add(std::move(c), false);
}

Status Program::add(Command c, bool isTiu) {
  auto &queue = isTiu ? tiu_ : dma_;
  const auto &other = isTiu ? dma_ : tiu_;
  constexpr uint64_t kMaxId = (1u << 20) - 1;
  if (queue.size() >= kMaxId) return makeError("more than ", kMaxId, " commands on one engine");
  TPU_RETURN_IF_ERROR(c.set("cmd_id", queue.size() + 1));
  TPU_RETURN_IF_ERROR(c.set("cmd_id_dep", other.size()));
  TPU_RETURN_IF_ERROR(c.set("cmd_id_en", 1));
  queue.push_back(std::move(c));
  return Status::ok();
}

bool LmemPlan::place(const std::vector<uint64_t> &bytes) {
  offsets.clear();
  uint64_t at = 0;
  for (uint64_t b : bytes) {
    offsets.push_back(at);
    at += alignUp(std::max<uint64_t>(b, 1), map::kBankBytes);
  }
  return at <= map::kLaneBytes;
}

} // namespace tpu::backend::bm1684x

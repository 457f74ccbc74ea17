#include "compiler/Backend/BM1684X/Program.h"

#include "support/Float16.h"

#include <algorithm>
#include <string>

namespace tpu::backend::bm1684x {

uint32_t constantBits(float v, DType t) {
  if (isInteger(t)) return integerBits(int64_t(v), t);
  return t == DType::F16 ? floatToF16(v) : t == DType::BF16 ? floatToBf16(v) : floatBits(v);
}
uint32_t integerBits(int64_t v, DType t) {
  const uint64_t bits = 8 * bytesOf(t);
  return uint32_t(uint64_t(v) & (bits >= 32 ? 0xffffffffull : (1ull << bits) - 1));
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

bool Program::Access::conflicts(const Access &o) const {
  if (all || o.all) return true;
  auto any = [](const std::vector<memory::bm1684x::Span> &a, const std::vector<memory::bm1684x::Span> &b) {
    for (const auto &x : a)
      for (const auto &y : b)
        if (x.overlaps(y)) return true;
    return false;
  };
  return any(writes, o.reads) || any(writes, o.writes) || any(reads, o.writes);
}

Status Program::add(Command c, bool isTiu) {
  auto &queue = isTiu ? tiu_ : dma_;
  const auto &other = isTiu ? dma_ : tiu_;
  auto &accesses = isTiu ? tiuAccess_ : dmaAccess_;
  const auto &otherAccesses = isTiu ? dmaAccess_ : tiuAccess_;
  constexpr uint64_t kMaxId = (1u << 20) - 1;
  if (queue.size() >= kMaxId) return makeError("more than ", kMaxId, " commands on one engine");
  Access access;
  if (auto ops = memory::bm1684x::operandsOf(c); ops) {
    for (const auto &v : ops->results) access.writes.push_back(memory::bm1684x::spanOf(v));
    for (const auto &v : ops->operands) access.reads.push_back(memory::bm1684x::spanOf(v));
  } else {
    access.all = true;
  }
  // The engines run in order: what the command before it waited for is done.
  uint64_t wait = queue.empty() ? 0 : queue.back().waitId();
  for (uint64_t j = other.size(); j > wait; --j)
    if (access.conflicts(otherAccesses[j - 1])) {
      wait = j;
      break;
    }
  TPU_RETURN_IF_ERROR(c.set("cmd_id", queue.size() + 1));
  TPU_RETURN_IF_ERROR(c.set("cmd_id_dep", wait));
  TPU_RETURN_IF_ERROR(c.set("cmd_id_en", 1));
  queue.push_back(std::move(c));
  accesses.push_back(std::move(access));
  return Status::ok();
}

bool LmemPlan::place(const std::vector<uint64_t> &bytes) {
  offsets.clear();
  uint64_t at = 0;
  for (uint64_t b : bytes) { // an empty buffer takes no bank
    offsets.push_back(at);
    at += alignUp(b, map::kBankBytes);
  }
  return at <= map::kLaneBytes;
}

} // namespace tpu::backend::bm1684x

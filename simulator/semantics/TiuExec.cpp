// executeTiu: checks the command, then hands it to its class (tiu/TiuClasses.h).
#include "simulator/semantics/TiuExec.h"

#include "simulator/semantics/tiu/TiuClasses.h"

#include <string>
#include <type_traits>
#include <variant>

namespace tpu::sim {

using namespace isa;

Status executeTiu(const HwConfig &cfg, LocalMemory &mem, const TiuCommand &cmd) {
  if (mem.lanes() != cfg.npuLanes || mem.laneBytes() != cfg.lmemBytesPerLane)
    return makeError("local memory geometry ", mem.lanes(), "x", mem.laneBytes(),
                     " does not match the hardware config ", cfg.npuLanes, "x", cfg.lmemBytesPerLane);
  TPU_RETURN_IF_ERROR(validateTiu(cmd));
  const TiuTask task = cmd.task();
  Status st = std::visit(
      [&](const auto &s) -> Status {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, Conv>) return tiu::execConv(cfg, mem, s);
        else if constexpr (std::is_same_v<T, Pord>) return tiu::execPord(cfg, mem, s);
        else if constexpr (std::is_same_v<T, MatMul>) return tiu::execMatMul(cfg, mem, s);
        else if constexpr (std::is_same_v<T, MatMul2>) return tiu::execMatMul2(cfg, mem, s);
        else if constexpr (std::is_same_v<T, MdSum>) return tiu::execMdSum(cfg, mem, s);
        else if constexpr (std::is_same_v<T, Lut>) return tiu::execLut(cfg, mem, s);
        else if constexpr (std::is_same_v<T, Lma>) return tiu::execLma(cfg, mem, s);
        else if constexpr (std::is_same_v<T, ConvCorr> || std::is_same_v<T, Decompress>)
          return makeError("tsk_typ = ", unsigned(task), ": the semantics library does not execute ",
                           tiuTaskName(task), " (docs/isa.md)");
        else return tiu::execElementwise(cfg, mem, s, task);
      },
      cmd.op);
  if (!st.isOk()) st.prefix(tiuMnemonic(task, cmd.eu()) + " (cmd_id_tpu " + std::to_string(cmd.cmdIdTpu) + ")");
  return st;
}

} // namespace tpu::sim

#include "simulator/systemc/bm1684x/ProgramBuilder.h"

#include "timing/Schedule.h"
#include "timing/bm1684x/CommandCost.h"

#include <string>

namespace tpu::sysc::bm1684x {

Result<SimProgram> buildProgram(const isa::HwConfig &hw, sim::bm1684x::Memories &memories,
                                const std::vector<isa::bm1684x::CommandGroup> &groups) {
  SimProgram program;
  for (size_t g = 0; g < groups.size(); ++g) {
    SimGroup &group = program.groups.emplace_back();
    for (Engine engine : {Engine::Tiu, Engine::Gdma}) {
      const auto &commands = engine == Engine::Tiu ? groups[g].tiu : groups[g].dma;
      auto &queue = group.queue[unsigned(engine)];
      for (size_t i = 0; i < commands.size(); ++i) {
        const isa::bm1684x::Command &cmd = commands[i];
        auto where = [&] {
          return "command group " + std::to_string(g) + ": " + engineName(engine) + " command #" + std::to_string(i) +
                 " (" + std::string(cmd.op().mnemonic) + ")";
        };
        if (!cmd.hasIds()) return makeError(where(), ": a command without ids is not timed yet");
        auto cost = timing::bm1684x::commandCost(cmd, hw);
        if (!cost) return Status(cost.status()).prefix(where());
        SimCommand c;
        c.id = cmd.id();
        c.waitId = cmd.waitId();
        c.name = std::string(cmd.op().mnemonic);
        c.latencyCycles = timing::syncCost(c.waitId, queue.empty() ? 0 : queue.back().waitId, hw) + cost->latencyCycles;
        c.dataCycles = cost->dataCycles;
        c.ddrBytes = cost->ddrBytes;
        c.payloadBytes = cost->payloadBytes;
        c.execute = [&memories, cmd](sim::LocalMemory &, sim::GlobalMemory &) {
          return sim::bm1684x::execute(memories, cmd);
        };
        queue.push_back(std::move(c));
      }
    }
  }
  return program;
}

} // namespace tpu::sysc::bm1684x

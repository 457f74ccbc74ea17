// Rebuilds one program order from a command group's two queues by the cmd_id
// rule (BM1684.md §2, docs/isa.md): a TIU command waits until the GDMA engine
// has completed the id in its cmd_id_gdma, a GDMA command until the TIU engine
// has completed the id in its eng0_sync_id. Ids are 16 bits on the BM1684
// (20 on the BM1684X), restart in each group, and strictly increase along each
// queue; 0 means "waits for nothing".
#pragma once

#include "isa/Fields.h"
#include "support/Status.h"

#include <cstdint>
#include <vector>

namespace tpu::isa {

enum class Engine : uint8_t { Tiu = 0, Gdma = 1 };

// The synchronisation fields of one command: its own id and the id of the
// other engine's command it waits for.
struct SyncIds {
  uint32_t id = 0;
  uint32_t waitId = 0;
};
SyncIds tiuSyncIds(const CommandBytes &cmd);
SyncIds gdmaSyncIds(const CommandBytes &cmd);

// The rule itself, shared with the SystemC engines: may a command that waits
// for `waitId` start once the other engine has completed `completedId`
// (0 = nothing completed yet)?
inline bool syncSatisfied(uint32_t waitId, uint32_t completedId) { return waitId <= completedId; }

struct OrderedCommand {
  Engine engine;
  uint32_t index; // position in that engine's queue
  bool operator==(const OrderedCommand &o) const { return engine == o.engine && index == o.index; }
};

// Merges the queues. When both engines' next commands may start, the GDMA
// command goes first (a load usually feeds the compute after it); the result
// is therefore unique for a given pair of queues. Errors: ids not strictly
// increasing along a queue, or a deadlock (both queues blocked, or one queue
// blocked on an id the other never reaches), naming the commands and ids.
Result<std::vector<OrderedCommand>> programOrder(const std::vector<SyncIds> &tiu,
                                                 const std::vector<SyncIds> &gdma);
Result<std::vector<OrderedCommand>> programOrder(const std::vector<CommandBytes> &tiu,
                                                 const std::vector<CommandBytes> &gdma);

} // namespace tpu::isa

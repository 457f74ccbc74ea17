#include "isa/ProgramOrder.h"

namespace tpu::isa {

SyncIds tiuSyncIds(const CommandBytes &cmd) {
  auto raw = TiuRaw::decode(cmd.data());
  return {uint16_t(raw[TiuField::cmd_id_tpu]), uint16_t(raw[TiuField::cmd_id_gdma])};
}

SyncIds gdmaSyncIds(const CommandBytes &cmd) {
  auto raw = GdmaRaw::decode(cmd.data());
  return {uint16_t(raw[GdmaField::cmd_id]), uint16_t(raw[GdmaField::eng0_sync_id])};
}

namespace {

const char *engineName(Engine e) { return e == Engine::Tiu ? "TIU" : "GDMA"; }
const char *idPrefix(Engine e) { return e == Engine::Tiu ? "%B" : "%D"; }

Status checkIncreasing(const std::vector<SyncIds> &q, Engine e) {
  for (size_t i = 0; i < q.size(); ++i) {
    uint32_t prev = i ? q[i - 1].id : 0;
    if (q[i].id <= prev)
      return makeError(engineName(e), " command ", i, " has id ", q[i].id,
                       i ? " not greater than the previous id " : " (ids start at 1)",
                       i ? std::to_string(prev) : std::string());
  }
  return Status::ok();
}

std::string describe(Engine e, size_t index, const SyncIds &s) {
  Engine other = e == Engine::Tiu ? Engine::Gdma : Engine::Tiu;
  return std::string(engineName(e)) + " command " + std::to_string(index) + " (" + idPrefix(e) +
         std::to_string(s.id) + ") waits for " + idPrefix(other) + std::to_string(s.waitId);
}

} // namespace

Result<std::vector<OrderedCommand>> programOrder(const std::vector<SyncIds> &tiu,
                                                 const std::vector<SyncIds> &gdma) {
  TPU_RETURN_IF_ERROR(checkIncreasing(tiu, Engine::Tiu));
  TPU_RETURN_IF_ERROR(checkIncreasing(gdma, Engine::Gdma));
  std::vector<OrderedCommand> order;
  order.reserve(tiu.size() + gdma.size());
  size_t t = 0, g = 0;
  uint32_t tiuDone = 0, gdmaDone = 0;
  while (t < tiu.size() || g < gdma.size()) {
    bool gdmaReady = g < gdma.size() && syncSatisfied(gdma[g].waitId, tiuDone);
    bool tiuReady = t < tiu.size() && syncSatisfied(tiu[t].waitId, gdmaDone);
    if (gdmaReady) {
      order.push_back({Engine::Gdma, uint32_t(g)});
      gdmaDone = gdma[g++].id;
    } else if (tiuReady) {
      order.push_back({Engine::Tiu, uint32_t(t)});
      tiuDone = tiu[t++].id;
    } else if (t < tiu.size() && g < gdma.size()) {
      return makeError("deadlock: ", describe(Engine::Tiu, t, tiu[t]), " and ",
                       describe(Engine::Gdma, g, gdma[g]));
    } else if (t < tiu.size()) {
      return makeError("deadlock: ", describe(Engine::Tiu, t, tiu[t]),
                       " but the GDMA queue ends at %D", gdmaDone);
    } else {
      return makeError("deadlock: ", describe(Engine::Gdma, g, gdma[g]),
                       " but the TIU queue ends at %B", tiuDone);
    }
  }
  return order;
}

Result<std::vector<OrderedCommand>> programOrder(const std::vector<CommandBytes> &tiu,
                                                 const std::vector<CommandBytes> &gdma) {
  std::vector<SyncIds> t, g;
  t.reserve(tiu.size());
  g.reserve(gdma.size());
  for (const auto &c : tiu) t.push_back(tiuSyncIds(c));
  for (const auto &c : gdma) g.push_back(gdmaSyncIds(c));
  return programOrder(t, g);
}

} // namespace tpu::isa

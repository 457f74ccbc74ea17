// tpuc combine (isa/bmodel/Bmodel.h): the stages of equally named nets of
// several bmodels joined into multi-stage nets (docs/bmodel.md, "Stages").
#include "isa/bmodel/Bmodel.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace tpu::bmodel {

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A net of the combined model: its stages and, for messages, where each came from.
struct CombinedNet {
  std::vector<Net> stages;
  std::vector<std::string> labels;
};

// Stages run one at a time on one copy of the weights: a net whose weights
// differ is another net, not another stage.
Status checkSameWeights(const Net &first, const std::string &firstLabel, const Net &stage, const std::string &label) {
  if (stage.coeffAddr != first.coeffAddr || stage.coeff.size() != first.coeff.size())
    return makeError("the weights of ", label, " [", hex(stage.coeffAddr), ", +", stage.coeff.size(),
                     " bytes) are not those of ", firstLabel, " [", hex(first.coeffAddr), ", +", first.coeff.size(),
                     " bytes): they are not stages of one net");
  if (stage.coeff != first.coeff)
    return makeError("the weights of ", label, " differ from ", firstLabel,
                     "'s (same address and size, other bytes): they are not stages of one net");
  return Status::ok();
}

} // namespace

Result<Model> combine(const std::vector<Model> &models, const std::vector<std::string> &origins) {
  if (models.empty()) return makeError("no bmodels to combine");
  if (origins.size() != models.size()) return makeError(models.size(), " bmodels but ", origins.size(), " names");
  std::vector<CombinedNet> nets; // in order of first appearance
  std::map<std::string, size_t> byName;
  for (size_t m = 0; m < models.size(); ++m)
    for (const StageRun &run : stageRuns(models[m].nets))
      for (size_t i = 0; i < run.count; ++i) {
        const Net &stage = models[m].nets[run.first + i];
        auto [at, fresh] = byName.emplace(stage.name, nets.size());
        if (fresh) nets.emplace_back();
        CombinedNet &net = nets[at->second];
        std::string label = origins[m] + (run.count == 1 ? "" : " stage " + std::to_string(i));
        if (!net.stages.empty()) {
          Status st = checkSameWeights(net.stages.front(), net.labels.front(), stage, label);
          if (!st) return st.prefix("net '" + stage.name + "'");
        }
        net.stages.push_back(stage);
        net.labels.push_back(std::move(label));
      }
  Model out = models.front();
  out.nets.clear();
  for (const Model &m : models) out.neuronSize = std::max(out.neuronSize, m.neuronSize);
  for (CombinedNet &net : nets) {
    std::vector<const Net *> stages;
    for (const Net &s : net.stages) stages.push_back(&s);
    Status st = checkStages(stages, net.labels);
    if (!st) return st.prefix("net '" + net.stages.front().name + "'");
    for (Net &s : net.stages) out.nets.push_back(std::move(s));
  }
  if (out.nets.size() > kMaxNets)
    return makeError("the combined model has ", out.nets.size(), " net stages (limit ", kMaxNets, ")");
  return out;
}

Result<std::vector<uint8_t>> combineFiles(const std::vector<std::string> &paths) {
  std::vector<Model> models;
  for (const std::string &path : paths) {
    auto model = readFile(path);
    if (!model) return model.status();
    models.push_back(model.take());
  }
  auto combined = combine(models, paths);
  if (!combined) return combined.status();
  return serialize(*combined);
}

} // namespace tpu::bmodel

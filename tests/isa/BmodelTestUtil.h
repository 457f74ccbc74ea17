// What the bmodel container tests build nets from: encoded TIU and GDMA
// commands of valid task types (the reader decodes every command) and
// tensors placed at a device address.
#pragma once

#include "isa/Fields.h"
#include "isa/bmodel/Model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::bmodel::testutil {

inline isa::CommandBytes tiuCmd(uint16_t id, uint16_t wait = 0, unsigned tsk = 0, unsigned eu = 1) {
  isa::TiuRaw r;
  r[isa::TiuField::cmd_id_tpu] = id;
  r[isa::TiuField::cmd_id_gdma] = wait;
  r[isa::TiuField::tsk_typ] = tsk;
  r[isa::TiuField::tsk_eu_typ] = eu;
  r[isa::TiuField::res0_c] = 64;
  return *r.encode();
}

inline isa::CommandBytes gdmaCmd(uint16_t id, uint16_t wait = 0) {
  isa::GdmaRaw r;
  r[isa::GdmaField::cmd_id] = id;
  r[isa::GdmaField::eng0_sync_id] = wait;
  r[isa::GdmaField::src_nsize] = 1;
  r[isa::GdmaField::src_start_addr_h8] = 1;
  return *r.encode();
}

inline Tensor tensor(const std::string &name, std::vector<uint64_t> shape, uint64_t addr,
                     DataType dt = DataType::Float32) {
  Tensor t;
  t.name = name;
  t.dtype = dt;
  t.shape = std::move(shape);
  t.deviceAddr = addr;
  t.size = t.storageBytes();
  return t;
}

} // namespace tpu::bmodel::testutil

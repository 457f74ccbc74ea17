// One function per TIU command class, each in the file named after its class
// (tiu/Window.cpp, MatMul.cpp, Elementwise.cpp, MdSum.cpp, Lut.cpp, Lma.cpp).
// executeTiu (TiuExec.cpp) has checked the geometry and the command with
// validateTiu and dispatches here; each resolves and checks its operands
// before it writes anything.
#pragma once

#include "isa/HwConfig.h"
#include "isa/TiuCommand.h"
#include "memory/Memory.h"
#include "support/Status.h"

namespace tpu::sim::tiu {

Status execConv(const isa::HwConfig &cfg, LocalMemory &mem, const isa::Conv &s);
Status execPord(const isa::HwConfig &cfg, LocalMemory &mem, const isa::Pord &s);
Status execMatMul(const isa::HwConfig &cfg, LocalMemory &mem, const isa::MatMul &s);
Status execMatMul2(const isa::HwConfig &cfg, LocalMemory &mem, const isa::MatMul2 &s);
// ar, md_scalar, md_sfu, md_linear, md_cmp, vc: `task` says which.
Status execElementwise(const isa::HwConfig &cfg, LocalMemory &mem, const isa::Elementwise &s, isa::TiuTask task);
Status execMdSum(const isa::HwConfig &cfg, LocalMemory &mem, const isa::MdSum &s);
Status execLut(const isa::HwConfig &cfg, LocalMemory &mem, const isa::Lut &s);
Status execLma(const isa::HwConfig &cfg, LocalMemory &mem, const isa::Lma &s);

} // namespace tpu::sim::tiu

// The BM1684X's hardware parameters (isa/HwConfig.h's fields): its published facts and its timing model's
// other values, as the chip registry hands them out (isa::chipInfo(Chip::BM1684X).hwConfig).
#pragma once

#include "isa/HwConfig.h"

namespace tpu::isa::bm1684x {

HwConfig hwConfig();

} // namespace tpu::isa::bm1684x

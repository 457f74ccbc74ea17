// CPU sub-nets on the host (docs/bmodel.md, "Sub-nets"): the steps a launch
// runs, planned at load time, and the run of one CPU sub-net between TPU
// steps against the device's DDR.
#pragma once

#include "isa/bmodel/Model.h"
#include "kernels/HostOps.h"
#include "runtime/Backend.h"
#include "runtime/Device.h"
#include "support/Status.h"

#include <map>
#include <string>
#include <vector>

namespace tpu::runtime {

// The steps of a launch of `net`, in order. Each CPU sub-net's host op is
// parsed from its parameters and checked against its tensors: a known op
// whose code is the sub-net's op_type, the op's input count, float32 or
// int32 tensors (1N), one output of the shape the op gives for the input
// shapes. Errors name the sub-net.
Result<std::vector<LoadedStep>> planSteps(const bmodel::Net &net);

// Tensors whose real shape in this launch is smaller than their own: a host
// op's result whose shape came from the data (its values first), by name.
using ShapesFromData = std::map<std::string, kernels::Shape>;

// A bmodel shape as signed dims.
kernels::Shape signedShape(const std::vector<uint64_t> &shape);
// Tensor t's shape in this launch: the one `shapes` records, else its own.
kernels::Shape realShape(const ShapesFromData &shapes, const bmodel::Tensor &t);

// Runs a CPU sub-net: reads its inputs from device memory as fp32 (an int32
// tensor holds exact integers) at their real shapes, runs the op and writes
// the result in the output's dtype (int32: the value must be an integer in
// range), recording its real shape in `shapes`.
Status runHostStep(SimDevice &device, const bmodel::Subnet &subnet, const kernels::HostCall &call,
                   ShapesFromData &shapes);

} // namespace tpu::runtime

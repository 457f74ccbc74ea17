// _tpusim: the runtime for Python. A Runtime owns a simulated BM1684 (HwConfig
// from JSON text), loads bmodels and runs nets on the sim or func backend
// with numpy arrays; every run returns its report (time, utilization, per
// layer, stats JSON). A bmodel of a chip that Runtime does not load (the
// BM1684X) runs through its chip's runner (runtime/ChipRunners.h), the JSON
// over that chip's preset. Errors become RuntimeError with the runtime's
// one-line message.
#include "isa/HwConfig.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"
#include "runtime/ChipRunners.h"
#include "runtime/Runtime.h"
#include "support/Npz.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

namespace py = pybind11;
using namespace tpu;

namespace {

template <typename T> T orThrow(Result<T> r) {
  if (!r) throw std::runtime_error(r.message());
  return r.take();
}
void orThrow(const Status &st) {
  if (!st) throw std::runtime_error(st.message());
}

NpyArray toNpy(const std::string &name, const py::array &a) {
  if (!(a.flags() & py::array::c_style))
    throw std::runtime_error("input '" + name + "': array is not C-contiguous (use numpy.ascontiguousarray)");
  std::string dtype = py::str(a.dtype());
  if (dtypeSize(dtype) == 0) throw std::runtime_error("input '" + name + "': unsupported dtype " + dtype);
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  return NpyArray::fromBytes(dtype, shape, a.data(), size_t(a.nbytes()));
}

py::array toNumpy(const NpyArray &v) {
  py::array out(py::dtype(v.dtype), std::vector<py::ssize_t>(v.shape.begin(), v.shape.end()));
  std::memcpy(out.mutable_data(), v.data.data(), v.data.size());
  return out;
}

py::dict reportDict(const runtime::RunReport &r) {
  py::dict d;
  d["backend"] = runtime::backendKindName(r.backend);
  d["groups"] = r.groups;
  d["tiu_commands"] = r.tiuCommands;
  d["gdma_commands"] = r.gdmaCommands;
  d["wall_seconds"] = r.wallSeconds;
  d["cpu_subnets"] = r.cpuSubnets;   // host ops run between TPU sub-nets
  d["host_seconds"] = r.hostSeconds; // their measured host time, apart from the TPU time
  d["timed"] = r.timed;
  if (r.timed) {
    d["clock_mhz"] = r.clockMhz;
    d["total_cycles"] = r.totalCycles;
    d["time_us"] = r.timeUs();
    d["tiu_utilization"] = r.tiuUtilization;
    d["gdma_utilization"] = r.gdmaUtilization;
  }
  py::list layers;
  for (const runtime::LayerTime &l : r.layers) {
    py::dict ld;
    ld["name"] = l.name;
    ld["tiu_busy_cycles"] = l.tiuBusyCycles;
    ld["gdma_busy_cycles"] = l.gdmaBusyCycles;
    ld["span_cycles"] = l.spanCycles;
    layers.append(ld);
  }
  d["layers"] = layers;
  d["stats_json"] = r.statsJson;
  d["trace_json"] = r.traceJson;
  return d;
}

py::list tensorList(const std::vector<bmodel::Tensor> &ts) {
  py::list out;
  for (const bmodel::Tensor &t : ts) {
    py::dict d;
    d["name"] = t.name;
    d["shape"] = std::vector<int64_t>(t.shape.begin(), t.shape.end());
    d["scale"] = t.scale;
    out.append(d);
  }
  return out;
}

class PyRuntime {
public:
  PyRuntime(const std::string &backend, const std::string &configJson)
      : backend_(orThrow(runtime::parseBackendKind(backend))), configJson_(configJson) {}
  void load(const std::string &path) {
    if (rt_ || other_) throw std::runtime_error("a Runtime loads one bmodel");
    if (runtime::runsOutsideRuntime(orThrow(bmodel::readChip(path)))) {
      other_ = std::make_unique<bmodel::Model>(orThrow(bmodel::readFile(path, nullptr, bmodel::ChipScope::AnyKnown)));
      otherConfig_ = orThrow(runtime::chipConfig(*other_, configJson_, "config"));
      return;
    }
    isa::HwConfig cfg;
    if (!configJson_.empty()) cfg = orThrow(isa::HwConfig::fromJson(configJson_, "config"));
    rt_ = orThrow(runtime::Runtime::create(cfg, backend_));
    orThrow(rt_->loadBmodel(path));
  }
  std::vector<std::string> netNames() const {
    if (!other_) return loaded().netNames();
    std::vector<std::string> names;
    for (const bmodel::Net &n : other_->nets) names.push_back(n.name);
    return names;
  }
  py::dict describe(const std::string &net) const {
    py::dict d;
    py::list stages;
    if (other_) {
      const bmodel::Net *n = nullptr;
      for (const bmodel::Net &candidate : other_->nets)
        if (candidate.name == net) n = &candidate;
      if (!n) throw std::runtime_error("no net '" + net + "' in the bmodel");
      d["inputs"] = tensorList(n->inputs);
      d["outputs"] = tensorList(n->outputs);
      stages.append(tensorList(n->inputs));
      d["stages"] = stages;
      return d;
    }
    const bmodel::Net *n = orThrow(loaded().net(net));
    d["inputs"] = tensorList(n->inputs);
    d["outputs"] = tensorList(n->outputs);
    // A multi-stage net (tpuc combine): each stage's inputs; run() picks one by shape.
    for (const bmodel::Net *stage : orThrow(loaded().stages(net))) stages.append(tensorList(stage->inputs));
    d["stages"] = stages;
    return d;
  }
  // The chip of the loaded bmodel, as --chip spells it.
  std::string chip() const {
    if (!other_) return std::string(isa::chipInfo(isa::Chip::BM1684).name);
    return std::string(isa::chipByBmodelName(other_->chip)->name);
  }
  py::tuple run(const std::string &net, const py::dict &inputs, bool trace) {
    NpzMap in;
    for (auto item : inputs) {
      std::string name = py::str(item.first);
      in[name] = toNpy(name, py::array::ensure(item.second));
    }
    runtime::RunOptions opts;
    opts.recordTrace = trace;
    runtime::RunReport report;
    Result<NpzMap> out = Status::error("not run");
    {
      py::gil_scoped_release release;
      out = other_ ? runtime::runOutsideRuntime(*other_, net, in, backend_, otherConfig_, trace, report)
                   : loaded().run(net, in, opts, report);
    }
    NpzMap outputs = orThrow(std::move(out));
    py::dict res;
    for (const auto &[name, value] : outputs) res[py::str(name)] = toNumpy(value);
    return py::make_tuple(res, reportDict(report));
  }
  std::string backend() const { return runtime::backendKindName(backend_); }

private:
  runtime::Runtime &loaded() const {
    if (!rt_) throw std::runtime_error("no bmodel loaded");
    return *rt_;
  }
  runtime::BackendKind backend_;
  std::string configJson_;
  std::unique_ptr<runtime::Runtime> rt_; // a BM1684 bmodel
  std::unique_ptr<bmodel::Model> other_; // a bmodel of a chip Runtime does not load
  isa::HwConfig otherConfig_;
};

} // namespace

PYBIND11_MODULE(_tpusim, m) {
  m.doc() = "BM1684 simulator runtime (see tpusim/__init__.py)";
  m.def("default_config_json", [] { return isa::HwConfig{}.toJson(); },
        "the BM1684 HwConfig as JSON (keys as in docs/timing.md)");
  m.def(
      "check_config_json",
      [](const std::string &text, const std::string &chip) {
        isa::HwConfig base = isa::chipInfo(orThrow(isa::parseChip(chip))).hwConfig();
        isa::HwConfig cfg = orThrow(isa::HwConfig::fromJson(text, "config", base));
        orThrow(cfg.validate());
        return cfg.toJson();
      },
      py::arg("text"), py::arg("chip") = "bm1684",
      "validates a HwConfig JSON and returns it completed with the chip's preset");
  py::class_<PyRuntime>(m, "Runtime")
      .def(py::init<const std::string &, const std::string &>(), py::arg("backend") = "sim",
           py::arg("config_json") = "")
      .def("load", &PyRuntime::load, py::arg("path"))
      .def("net_names", &PyRuntime::netNames)
      .def("describe", &PyRuntime::describe, py::arg("net"))
      .def("run", &PyRuntime::run, py::arg("net"), py::arg("inputs"), py::arg("trace") = false)
      .def_property_readonly("backend", &PyRuntime::backend)
      .def_property_readonly("chip", &PyRuntime::chip);
}

#include "runtime/Backend.h"

#include "runtime/DeviceBackend.h"
#include "runtime/FuncBackend.h"
#if TPU_HAVE_SIM_BACKEND
#include "runtime/SimBackend.h"
#endif

namespace tpu::runtime {

Result<BackendKind> parseBackendKind(const std::string &name) {
  if (name == "func") return BackendKind::Func;
  if (name == "sim") return BackendKind::Sim;
  if (name == "device") return BackendKind::Device;
  return makeError("unknown backend '", name, "' (choose sim, func or device)");
}

const char *backendKindName(BackendKind kind) {
  switch (kind) {
  case BackendKind::Func: return "func";
  case BackendKind::Sim: return "sim";
  case BackendKind::Device: return "device";
  }
  return "?";
}

bool backendAvailable(BackendKind kind) {
  return kind != BackendKind::Sim || TPU_HAVE_SIM_BACKEND;
}

Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind) {
  switch (kind) {
  case BackendKind::Func: return makeFuncBackend();
  case BackendKind::Device: return makeDeviceBackend();
  case BackendKind::Sim:
#if TPU_HAVE_SIM_BACKEND
    return makeSimBackend();
#else
    break;
#endif
  }
  return makeError("backend 'sim' is not available: this build has no SystemC model "
                   "(use --backend func)");
}

} // namespace tpu::runtime

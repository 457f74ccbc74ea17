#include "runtime/Backend.h"

#include "runtime/FuncBackend.h"
#if TPU_HAVE_SIM_BACKEND
#include "runtime/SimBackend.h"
#endif

namespace tpu::runtime {

Result<BackendKind> parseBackendKind(const std::string &name) {
  if (name == "func") return BackendKind::Func;
  if (name == "sim") return BackendKind::Sim;
  return makeError("unknown backend '", name, "' (choose sim or func)");
}

const char *backendKindName(BackendKind kind) {
  return kind == BackendKind::Func ? "func" : "sim";
}

bool backendAvailable(BackendKind kind) {
  return kind == BackendKind::Func || TPU_HAVE_SIM_BACKEND;
}

Result<std::unique_ptr<Backend>> makeBackend(BackendKind kind) {
  switch (kind) {
  case BackendKind::Func: return makeFuncBackend();
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

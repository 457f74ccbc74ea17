// The Tpu dialect and the back end's op table name the same set of chip ops:
// every registered tpu.* op becomes exactly one back-end kind (its
// BackendOpInterface), and every kind of compiler/Backend/OpKinds.def is what
// some tpu.* op becomes, with its implementation registered.
#include "compiler/Backend/OpRegistry.h"
#include "compiler/Dialect/Tpu/TpuOps.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace {

using tpu::backend::OpKind;

TEST(TpuOpKinds, EveryTpuOpHasOneBackendKindAndEveryKindATpuOp) {
  mlir::MLIRContext ctx;
  ctx.getOrLoadDialect<tpuir::TpuDialect>();
  std::map<size_t, std::vector<std::string>> opsOfKind;
  size_t tpuOps = 0;
  for (mlir::RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "tpu") continue;
    ++tpuOps;
    auto *iface = name.getInterface<tpuir::BackendOpInterface>();
    ASSERT_NE(iface, nullptr) << name.getStringRef().str() << " has no BackendOpInterface";
    OpKind kind = iface->getBackendKind();
    ASSERT_LT(size_t(kind), tpu::backend::kOpKindCount) << name.getStringRef().str();
    opsOfKind[size_t(kind)].push_back(name.getStringRef().str());
  }
  EXPECT_GE(tpuOps, tpu::backend::kOpKindCount);
  for (size_t k = 0; k < tpu::backend::kOpKindCount; ++k) {
    OpKind kind = OpKind(k);
    EXPECT_TRUE(opsOfKind.count(k)) << "back-end kind " << tpu::backend::opKindName(kind)
                                    << " is what no tpu.* op becomes";
    EXPECT_EQ(tpu::backend::opImpl(kind).kind, kind) << tpu::backend::opKindName(kind);
  }
}

} // namespace

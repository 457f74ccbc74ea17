// The tables generated from OpKinds.def. Referring to every ops::<Name>
// here links each kind's file in, and a kind without one fails to link.
#include "compiler/Backend/OpRegistry.h"

namespace tpu::backend {

namespace {

constexpr OpKindInfo kInfo[] = {
#define TPU_OP_KIND(Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes) {#Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes},
#include "compiler/Backend/OpKinds.def"
};

const OpImpl *const kImpl[] = {
#define TPU_OP_KIND(Name, MinInputs, MaxInputs, TakesWeights, SharesInputBytes) &ops::Name,
#include "compiler/Backend/OpKinds.def"
};

static_assert(sizeof kInfo / sizeof kInfo[0] == kOpKindCount && sizeof kImpl / sizeof kImpl[0] == kOpKindCount);

} // namespace

const OpKindInfo &opKindInfo(OpKind k) { return kInfo[size_t(k)]; }

const char *opKindName(OpKind k) { return size_t(k) < kOpKindCount ? kInfo[size_t(k)].name : "?"; }

const OpImpl &opImpl(OpKind k) { return *kImpl[size_t(k)]; }

bool pointwiseKind(OpKind k) {
  switch (k) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Pow:
  case OpKind::PRelu:
  case OpKind::Greater:
  case OpKind::Less:
  case OpKind::Equal:
  case OpKind::Where:
  case OpKind::Relu:
  case OpKind::LeakyRelu:
  case OpKind::Clip:
  case OpKind::Sigmoid:
  case OpKind::Unary:
  case OpKind::Affine:
  case OpKind::Cast:
  case OpKind::Requant:
  case OpKind::Lut:
    return true;
  default:
    return false;
  }
}

} // namespace tpu::backend

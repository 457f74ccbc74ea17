// The Top op traits of TopBase.td ("Traits"): properties shared passes ask an
// op for instead of listing op names. They carry no code.
#pragma once

#include "mlir/IR/OpDefinition.h"

namespace top::OpTrait {

template <typename Op> class Constant : public mlir::OpTrait::TraitBase<Op, Constant> {};
template <typename Op> class RankAgnosticMove : public mlir::OpTrait::TraitBase<Op, RankAgnosticMove> {};
template <typename Op> class JoinsOperands : public mlir::OpTrait::TraitBase<Op, JoinsOperands> {};
template <typename Op>
class CommutesWithChannelScale : public mlir::OpTrait::TraitBase<Op, CommutesWithChannelScale> {};
template <typename Op> class FusesIntoProducer : public mlir::OpTrait::TraitBase<Op, FusesIntoProducer> {};
template <typename Op> class Pointwise : public mlir::OpTrait::TraitBase<Op, Pointwise> {};

} // namespace top::OpTrait

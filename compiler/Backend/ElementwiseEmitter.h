// Internal to compiler/Backend: the emitter the element-wise kinds share
// (one output element from the same element of each input): the slicing,
// buffers, loads, stores, NumPy-broadcast inputs and per-channel weights. Each kind's file derives from it and writes its TIU commands
// (computeOn) and, when it needs them, scratch buffers and fixed buffers.
#pragma once

#include "compiler/Backend/Emit.h"

#include "isa/TiuCommand.h"

namespace tpu::backend::emit {

class ElementwiseOp : public SlicedOp, public LocalOp {
public:
  // perChannelWeights: a weight second input of one value per channel is
  // loaded once per channel slice (isChannelWeight: the second input of
  // Add/Mul/Max, the scale and bias of Affine), any other weight input like
  // an fp32 activation; else the kind loads its weights itself (loadFixed).
  // An input broadcast along N, H or W is loaded once along that dim and
  // read with stride 0; one broadcast along C is replicated into every lane.
  ElementwiseOp(Emitter &e, const Op &op, bool perChannelWeights = true) : SlicedOp(e, op) {
    const Tensor &y = e.g.tensors[op.output];
    y_ = e.ddr(op.output);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const int t = op.inputs[i];
      const Tensor &x = e.g.tensors[t];
      if (x.isWeight() && !perChannelWeights) continue;
      if (x.isWeight() && i >= 1 && isChannelWeight(x, y)) {
        chanWeights_.push_back({e.am.addr[t], x.dtype, i});
        continue;
      }
      weightIn_ |= x.isWeight();
      DTensor d = e.ddr(t);
      d.s = broadcastNchw(x, y);
      std::array<bool, 4> b{};
      for (size_t k = 0; k < 4; ++k) b[k] = d.s[k] == 1 && y_.s[k] > 1, bcast_ |= b[k];
      // A layer group holds a tensor by rows of its own 4-d shape, so it can
      // read an input broadcast along H and W (an SE block's channel scale),
      // not one broadcast along N or C or seen through a reshape.
      groupsBcast_ &= !b[0] && !b[1] && d.s == x.nchw();
      in_.push_back(d);
      inIds_.push_back(t);
      bcastDims_.push_back(b);
    }
    spreadOverLanes();
  }
  std::array<int64_t, 3> extents() const override { return {y_.s[0], y_.s[1], y_.s[2]}; }
  // Scratch buffers shaped like the output, and their type.
  virtual unsigned temps() const { return 0; }
  virtual DType tempType() const { return y_.dtype; }
  Shape4 shapeOf(const Tile &t) const { return {u32(t.ns), u32(t.cs), u32(t.hs), u32(y_.s[3])}; }
  std::vector<uint64_t> setBytes(int64_t ns, int64_t cs, int64_t hs) const override {
    Shape4 s{u32(ns), u32(cs), u32(hs), u32(y_.s[3])};
    std::vector<uint64_t> v;
    for (size_t i = 0; i < in_.size(); ++i) v.push_back(LocalTensor::activationBytes(in_[i], loadShape(i, s), lanes()));
    v.push_back(LocalTensor::activationBytes(y_, s, lanes()));
    for (unsigned i = 0; i < temps(); ++i) v.push_back(LocalTensor::bytes(tempType(), s, lanes()));
    return v;
  }
  std::vector<uint64_t> fixedBytes(int64_t cs) const override {
    std::vector<uint64_t> v;
    for (const ChannelWeight &w : chanWeights_) v.push_back(LocalTensor::perChannelBytes(w.dtype, cs, lanes()));
    return v;
  }
  uint16_t loadFixed(const Tile &t, uint16_t wait) override {
    uint16_t id = 0;
    for (size_t i = 0; i < chanWeights_.size(); ++i)
      id = e_.loadPerChannel(chanWeights_[i].addr, chanWeights_[i].dtype, t.c0, t.cs, fixed_[i], wait);
    return id;
  }
  uint16_t load(const Tile &t, unsigned set, uint16_t wait) override {
    uint16_t id = 0;
    for (size_t i = 0; i < in_.size(); ++i) {
      const std::array<bool, 4> &b = bcastDims_[i];
      id = e_.move(true, in_[i], b[0] ? 0 : t.n0, b[0] ? 1 : t.ns, b[1] ? 0 : t.c0, t.cs, b[2] ? 0 : t.h0, b[2] ? 1 : t.hs,
                   inputBuf(t, set, i), wait, b[1]);
    }
    return id;
  }
  LocalOp *local() override { return (bcast_ && !groupsBcast_) || weightIn_ ? nullptr : this; }
  std::array<bool, 4> broadcastDims(int tensor) const override {
    for (size_t i = 0; i < in_.size(); ++i)
      if (inIds_[i] == tensor) return bcastDims_[i];
    return {};
  }
  std::vector<DType> tempTypes() const override { return std::vector<DType>(temps(), tempType()); }
  uint16_t compute(const Tile &t, unsigned set, uint16_t wait) override {
    const size_t ni = in_.size();
    std::vector<LocalTensor> ins, tmps;
    for (size_t i = 0; i < ni; ++i) {
      // A broadcast dim is read with stride 0 (C: every lane holds a copy).
      LocalTensor b = inputBuf(t, set, i);
      b.shape = shapeOf(t);
      const std::array<bool, 4> &bc = bcastDims_[i];
      if (bc[0]) b.stride.n = 0;
      if (bc[2]) b.stride.h = 0;
      if (bc[3]) b.stride.w = 0;
      ins.push_back(b);
    }
    for (unsigned i = 0; i < temps(); ++i)
      tmps.push_back(LocalTensor::compact(bufOffset(set, ni + 1 + i), tempType(), shapeOf(t), lanes()));
    return computeOn(ins, outputBuf(t, set), tmps, 0, 0, wait);
  }
  uint16_t store(const Tile &t, unsigned set, uint16_t wait) override {
    return e_.move(false, y_, t.n0, t.ns, t.c0, t.cs, t.h0, t.hs, outputBuf(t, set), wait);
  }

protected:
  // One arith command: res = eu(a, b) (count 1: eu(a)), rshift, relu.
  uint16_t elementwise(isa::EuOp eu, const LocalTensor &res, LocalOperand a, LocalOperand b, uint32_t rshift, bool relu,
              uint16_t wait, uint8_t count = 2) {
    isa::Arith c;
    c.eu = eu, c.res0 = res.operand(hw_), c.opd0 = a, c.opd1 = b, c.opdCount = count;
    c.opd0.shape = res.shape;
    if (eu != isa::EuOp::Taylor) c.opd1.shape = res.shape; // taylor: opd1 w = the terms
    c.rshift = rshift, c.relu = relu;
    return e_.b->tiu(c, wait);
  }
  bool isFloat() const { return y_.dtype == DType::F32; }
  // Per-channel weight i as an operand of res0's shape: one element per channel.
  LocalTensor channelWeight(size_t i, const Shape4 &s) const { return LocalTensor::perChannel(fixed_[i], chanWeights_[i].dtype, s); }
  bool hasChannelWeights() const { return !chanWeights_.empty(); }
  // The operands of every input in op order, activations from `ins`, per-channel weights as channelWeight.
  std::vector<LocalTensor> operandsInOrder(const std::vector<LocalTensor> &ins, const Shape4 &s) const {
    std::vector<LocalTensor> v;
    size_t act = 0, w = 0;
    for (size_t i = 0; i < op_.inputs.size(); ++i)
      if (w < chanWeights_.size() && chanWeights_[w].input == i) v.push_back(channelWeight(w++, s));
      else if (act < ins.size()) v.push_back(ins[act++]);
    return v;
  }
  DType outType() const { return y_.dtype; }

private:
  // Every element-wise kind's result at an element depends only on its
  // inputs at that element, so without channel weights or broadcasts a
  // tensor of fewer channels than lanes is viewed, when the op runs alone,
  // as (N, lanes, H', W') with the same C*H*W: its loads, compute and stores
  // use every lane instead of C of them. The DDR order is unchanged by the
  // view (1N and 4N alike: c, h, w stay row-major inside an item / a 4N
  // group). In a layer group the op computes on the group's buffers (its
  // neighbours' shapes), and the segment search weighs the two. Why: a
  // 3-channel 640x640 input cast used 3 of 64 lanes (YOLOX-s INT8: 5.5 of
  // 24.9 ms); PP-OCR det's one-channel 640x640 sigmoid output, 1 of 64.
  void spreadOverLanes() {
    const int64_t C = y_.s[1], H = y_.s[2], W = y_.s[3], L = int64_t(lanes());
    if (bcast_ || hasChannelWeights() || C >= L || (C * H * W) % L) return;
    for (const DTensor &x : in_)
      if (x.s != y_.s) return;
    const int64_t plane = C * H * W / L, w = plane % W == 0 ? W : plane;
    if (w > 0xFFFF) return;
    for (DTensor *d : tensors()) d->s = {d->s[0], L, plane / w, w};
  }
  std::vector<DTensor *> tensors() {
    std::vector<DTensor *> v{&y_};
    for (DTensor &x : in_) v.push_back(&x);
    return v;
  }
  LocalTensor outputBuf(const Tile &t, unsigned set) const {
    return LocalTensor::activation(bufOffset(set, in_.size()), y_, shapeOf(t), lanes());
  }
  // What input i loads of an output slice of shape s: one item, row or
  // column along its broadcast dims.
  Shape4 loadShape(size_t i, Shape4 s) const {
    const std::array<bool, 4> &b = bcastDims_[i];
    return {b[0] ? 1 : s.n, s.c, b[2] ? 1 : s.h, b[3] ? 1 : s.w};
  }
  LocalTensor inputBuf(const Tile &t, unsigned set, size_t i) const {
    return LocalTensor::activation(bufOffset(set, i), in_[i], loadShape(i, shapeOf(t)), lanes());
  }

  std::vector<DTensor> in_;
  std::vector<int> inIds_;                     // per input: its tensor
  std::vector<std::array<bool, 4>> bcastDims_; // per input: N, C, H, W broadcast
  DTensor y_;
  bool bcast_ = false;       // some input is broadcast
  bool groupsBcast_ = true;  // ... and a layer group can read it (H, W only)
  // A weight read like an activation (ViT's position embedding): a layer
  // group loads only activations and per-channel weights, so the op runs alone.
  bool weightIn_ = false;
  struct ChannelWeight {
    uint64_t addr; // DDR
    DType dtype;
    size_t input;  // its index in op.inputs
  };
  std::vector<ChannelWeight> chanWeights_;
};

} // namespace tpu::backend::emit

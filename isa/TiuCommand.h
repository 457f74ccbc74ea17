// Typed TIU (compute engine) commands: one struct per command class, encoded
// to and decoded from the generic TiuRaw field vector (isa/Fields.h). The
// member <-> field correspondence of each struct is written once, in its
// `fields` visitor; encode and decode both walk it. What every operand field
// means is this project's definition: docs/isa.md, "TIU commands".
#pragma once

#include "isa/Fields.h"
#include "isa/Opcodes.h"
#include "support/Status.h"

#include <cstdint>
#include <variant>

namespace tpu::isa {

// How an LMEM operand's strides are found (short_*_str, 3 bits). (ours)
enum class StrideMode : uint8_t {
  Aligned = 0,    // w=1, h=W, c=align(H*W, EU), n=ceil((c+npu_offset)/lanes)*c_stride
  Compact = 1,    // as Aligned with c=H*W (no EU alignment)
  PerChannel = 2, // one element per channel: n=h=w=0, c=1 (bias, scale)
  Explicit = 3,   // the operand's *_n_str/_c_str/_h_str/_w_str fields
};
constexpr unsigned kStrideModeCount = 4;
std::string_view strideModeName(StrideMode m); // "aligned", "compact", "per_channel", "explicit"

struct Shape4 {
  uint32_t n = 1, c = 1, h = 1, w = 1;
  uint64_t count() const { return uint64_t(n) * c * h * w; }
  bool operator==(const Shape4 &o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
  bool operator!=(const Shape4 &o) const { return !(*this == o); }
};

// Strides in elements. The channel stride steps between the channels that
// share one lane: channel c sits at (npu_offset + c) / lanes * c_stride.
struct Strides4 {
  uint32_t n = 0, c = 0, h = 0, w = 0;
  bool operator==(const Strides4 &o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
};

// A tensor operand in local memory, or a constant broadcast to every element.
// Some operands have no field for some parts (opd2 has no shape, res0 no
// const flag): those members are then set by the command class (docs/isa.md).
struct LocalOperand {
  uint32_t addr = 0;          // LMEM address: lane * lmemBytesPerLane + byte offset
  Shape4 shape;
  Prec prec = Prec::Int8;
  bool isSigned = true;       // ignored for Fp32
  StrideMode strideMode = StrideMode::Aligned;
  Strides4 stride;            // used when strideMode == Explicit
  bool isConst = false;
  uint32_t constValue = 0;    // raw bits when isConst: fp32 bits, or the integer (sign-extended)
  bool operator==(const LocalOperand &o) const;
  bool operator!=(const LocalOperand &o) const { return !(*this == o); }
};

// Builders for code generators.
inline LocalOperand lmemTensor(uint32_t addr, Shape4 shape, Prec prec, bool isSigned = true,
                               StrideMode mode = StrideMode::Aligned) {
  LocalOperand o;
  o.addr = addr, o.shape = shape, o.prec = prec, o.isSigned = isSigned, o.strideMode = mode;
  return o;
}
inline LocalOperand lmemTensor(uint32_t addr, Shape4 shape, Prec prec, bool isSigned, Strides4 strides) {
  LocalOperand o = lmemTensor(addr, shape, prec, isSigned, StrideMode::Explicit);
  o.stride = strides;
  return o;
}
// An integer constant in an operand of precision `prec` (value truncated to 32 bits).
inline LocalOperand constOperand(int64_t value, Prec prec, bool isSigned = true) {
  LocalOperand o;
  o.isConst = true, o.prec = prec, o.isSigned = isSigned, o.constValue = uint32_t(value);
  return o;
}
LocalOperand constOperand(float value); // fp32 bits

// The field numbers of one operand slot; TiuField::Count = the slot has no such field.
struct OperandSlot {
  const char *name; // "res0", "opd0", ...
  TiuField addr, n, c, h, w, prec, sign, strideMode, nStr, cStr, hStr, wStr, isConst;
};
extern const OperandSlot kRes0Slot, kOpd0Slot, kOpd1Slot, kOpd2Slot;

// A member that is a whole operand slot (T = LocalOperand or const LocalOperand).
template <class T> struct OperandRef {
  T &op;
  const OperandSlot &slot;
};
inline OperandRef<LocalOperand> slot(LocalOperand &op, const OperandSlot &s) { return {op, s}; }
inline OperandRef<const LocalOperand> slot(const LocalOperand &op, const OperandSlot &s) {
  return {op, s};
}
// tsk_opd_num = base + present: how many input operands the command reads.
template <class B> struct OptionalOperandCount {
  B &present;
  uint8_t base;
};
inline OptionalOperandCount<bool> optionalCount(bool &p, uint8_t base) { return {p, base}; }
inline OptionalOperandCount<const bool> optionalCount(const bool &p, uint8_t base) {
  return {p, base};
}

// Visits a struct's members with the TiuField each one lives in. Structs
// implement `template <class Self, class V> static void fields(Self&, V&&)`
// once; the visitor sees (field, member) pairs, operand slots and counts.
#define TPU_TIU_FIELDS(Struct) template <class Self, class V> static void fields(Self &s, V &&v)

// The window of conv and pord: padding, stride, zero insertion (dilation,
// transposed conv), kernel rotation and the requantisation after the sum.
struct Window {
  uint32_t padTop = 0, padBottom = 0, padLeft = 0, padRight = 0;
  uint32_t strideH = 1, strideW = 1;       // res_op_y_str / res_op_x_str
  uint32_t kernelInsH = 0, kernelInsW = 0; // zeros between kernel taps: dilation - 1
  uint32_t inputInsH = 0, inputInsW = 0;   // zeros between input pixels (transposed conv)
  bool kernelRotate = false;               // use the kernel rotated by 180 degrees
  uint32_t rshift = 0;
  bool relu = false;
  template <class Self, class V> static void windowFields(Self &s, V &&v) {
    v(TiuField::opd0_up_pad, s.padTop), v(TiuField::opd0_dn_pad, s.padBottom);
    v(TiuField::opd0_lf_pad, s.padLeft), v(TiuField::opd0_rt_pad, s.padRight);
    v(TiuField::res_op_y_str, s.strideH), v(TiuField::res_op_x_str, s.strideW);
    v(TiuField::opd1_y_ins0, s.kernelInsH), v(TiuField::opd1_x_ins0, s.kernelInsW);
    v(TiuField::opd0_y_ins0, s.inputInsH), v(TiuField::opd0_x_ins0, s.inputInsW);
    v(TiuField::opt_kernel_rotate, s.kernelRotate);
    v(TiuField::opt_right_shift, s.rshift), v(TiuField::opt_relu, s.relu);
  }
};

// conv: NCHW convolution. input = opd0 (n, ic, ih, iw); weight = opd1 with
// n = ic, c = oc, h = kh, w = kw (channel oc in oc's lane); bias = opd2, one
// element per output channel; output = res0 (n, oc, oh, ow).
struct Conv : Window {
  EuOp eu = EuOp::Mac;
  LocalOperand input, weight, bias, output;
  bool hasBias = false;
  bool resAdd = false;
  TPU_TIU_FIELDS(Conv) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.input, kOpd0Slot)), v(slot(s.weight, kOpd1Slot));
    v(slot(s.bias, kOpd2Slot)), v(slot(s.output, kRes0Slot));
    v(optionalCount(s.hasBias, 2));
    windowFields(s, v);
    v(TiuField::opt_res_add, s.resAdd);
  }
};

// pord: per-channel window operations. eu Mac: depthwise conv (kernel = opd1,
// n = 1, c = C, h = kh, w = kw) or, when the kernel is a constant, average
// pooling (sum * constant); eu Max: max pooling (kernel size from opd1_h/w).
struct Pord : Window {
  EuOp eu = EuOp::Mac;
  LocalOperand input, kernel, bias, output;
  bool hasBias = false;
  enum class Kind { Depthwise, AvgPool, MaxPool };
  Kind kind() const {
    return eu == EuOp::Max ? Kind::MaxPool : kernel.isConst ? Kind::AvgPool : Kind::Depthwise;
  }
  TPU_TIU_FIELDS(Pord) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.input, kOpd0Slot)), v(slot(s.kernel, kOpd1Slot));
    v(slot(s.bias, kOpd2Slot)), v(slot(s.output, kRes0Slot));
    v(optionalCount(s.hasBias, 2));
    windowFields(s, v);
  }
};

// mm: fully connected, res0[M x N] = left[M x K] * right[K x N] (+ bias).
// A matrix row is a tensor n index; its columns are spread over (c, w):
// column j = c * w_size + w. left = opd0 (n = M, or n = K with leftTranspose),
// right = opd1 (n = K), bias = opd2 (one row, same (c, w) as res0),
// output = res0 (n = M). eu Mac adds the product to the existing res0.
struct MatMul {
  EuOp eu = EuOp::Mul;
  LocalOperand left, right, bias, output;
  bool hasBias = false;
  bool leftTranspose = false;
  uint32_t rshift = 0;
  bool relu = false;
  TPU_TIU_FIELDS(MatMul) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.left, kOpd0Slot)), v(slot(s.right, kOpd1Slot));
    v(slot(s.bias, kOpd2Slot)), v(slot(s.output, kRes0Slot));
    v(optionalCount(s.hasBias, 2));
    v(TiuField::opt_left_tran, s.leftTranspose);
    v(TiuField::opt_right_shift, s.rshift), v(TiuField::opt_relu, s.relu);
  }
};

// mm2: batched matrix product with rows in channels. left = opd0 (n = B,
// c = M, h = 1, w = K), right = opd1 (n = B, c = K, h = 1, w = N), output =
// res0 (n = B, c = M, h = 1, w = N); resAdd adds the existing res0.
struct MatMul2 {
  EuOp eu = EuOp::AddTree;
  LocalOperand left, right, output;
  uint32_t rshift = 0;
  bool relu = false, resAdd = false;
  TPU_TIU_FIELDS(MatMul2) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.left, kOpd0Slot)), v(slot(s.right, kOpd1Slot));
    v(slot(s.output, kRes0Slot));
    v(TiuField::opt_right_shift, s.rshift), v(TiuField::opt_relu, s.relu);
    v(TiuField::opt_res_add, s.resAdd);
  }
};

// Element-wise classes (ar, cc, md_scalar, md_sfu, md_linear, md_cmp, vc):
// res0 = eu(opd0, opd1, opd2, opd3) per element of res0's shape. opd2 and
// opd3 have no shape fields: they take res0's shape; opd3 shares opd2's
// precision, sign and strides (ours). res1 (cmp_select's second result)
// shares res0's shape, precision and strides.
struct Elementwise {
  EuOp eu = EuOp::Add;
  LocalOperand res0, opd0, opd1, opd2;
  uint32_t opd3Addr = 0;
  bool opd3Const = false;
  uint32_t res1Addr = 0;
  uint8_t opdCount = 2;      // tsk_opd_num: inputs read (1..3; 3 with opd3 for 4-input ops)
  uint32_t rshift = 0;
  bool relu = false;
  bool logicalShift = false; // opt_shift_typ for eu shift: 0 arithmetic, 1 logical
  TPU_TIU_FIELDS(Elementwise) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.res0, kRes0Slot)), v(slot(s.opd0, kOpd0Slot));
    v(slot(s.opd1, kOpd1Slot)), v(slot(s.opd2, kOpd2Slot));
    v(TiuField::opd3_addr, s.opd3Addr), v(TiuField::opt_opd3_const, s.opd3Const);
    v(TiuField::res1_addr, s.res1Addr), v(TiuField::tsk_opd_num, s.opdCount);
    v(TiuField::opt_right_shift, s.rshift), v(TiuField::opt_relu, s.relu);
    v(TiuField::opt_shift_typ, s.logicalShift);
  }
};
struct Arith : Elementwise {};
struct ConvCorr : Elementwise {}; // decodable; not executed (docs/isa.md)
struct MdScalar : Elementwise {}; // opd1 must be a constant
struct MdSfu : Elementwise {};    // same operations as ar
struct MdLinear : Elementwise {   // mac: opd0*opd1 + opd2; square_sum/diff: (opd0 +- opd1)^2
  MdLinear() { eu = EuOp::Mac; }
};
struct MdCmp : Elementwise {
  MdCmp() { eu = EuOp::Cmp; }
};
// vc: outer product: res0[n, c, h, w] = eu(opd0[n, c, h, 0], opd1[0, 0, 0, w]).
struct VecCorr : Elementwise {};

// lut: res0 = table[opd0], opd0 8-bit (index = value & 0xff); the 256-entry
// table (opd1's precision, converted to res0's as ar copy does) is the tensor
// opd1 (1, c, 1, 256): a copy in the lane of each channel.
struct Lut {
  EuOp eu = EuOp::Copy;
  LocalOperand output, index, table;
  TPU_TIU_FIELDS(Lut) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.output, kRes0Slot)), v(slot(s.index, kOpd0Slot));
    v(slot(s.table, kOpd1Slot));
  }
};

// md_sum: sums opd0 over h and/or w: res0 has h = 1 or opd0's h, w = 1 or opd0's w.
struct MdSum {
  EuOp eu = EuOp::AddTree;
  LocalOperand output, input;
  uint32_t rshift = 0;
  bool relu = false;
  TPU_TIU_FIELDS(MdSum) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.output, kRes0Slot)), v(slot(s.input, kOpd0Slot));
    v(TiuField::opt_right_shift, s.rshift), v(TiuField::opt_relu, s.relu);
  }
};

// lma: rearranging copy res0 <- opd0 (any strides, lane offsets, precision
// conversion as ar copy).
struct Lma {
  EuOp eu = EuOp::Copy;
  LocalOperand output, input;
  TPU_TIU_FIELDS(Lma) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.output, kRes0Slot)), v(slot(s.input, kOpd0Slot));
  }
};

// decompress: decodable; not executed (docs/isa.md).
struct Decompress {
  EuOp eu = EuOp::Copy;
  LocalOperand output, input;
  TPU_TIU_FIELDS(Decompress) {
    v(TiuField::tsk_eu_typ, s.eu);
    v(slot(s.output, kRes0Slot)), v(slot(s.input, kOpd0Slot));
  }
};

// Window geometry along one axis of conv / pord (docs/isa.md): the input
// after inserting `inputIns` zeros between pixels and padding, the kernel
// after dilation, the output size they give. Compilers size res0 with it.
struct WindowAxis {
  uint32_t input = 1, inputIns = 0, padBefore = 0, padAfter = 0, kernel = 1, kernelIns = 0, stride = 1;
  uint64_t paddedInput() const {
    return input == 0 ? 0 : (uint64_t(input) - 1) * (inputIns + 1) + 1 + padBefore + padAfter;
  }
  uint64_t dilatedKernel() const { return kernel == 0 ? 0 : (uint64_t(kernel) - 1) * (kernelIns + 1) + 1; }
  // 0 when nothing fits: empty input or kernel, stride 0, kernel beyond the padded input.
  uint64_t outputSize() const {
    uint64_t in = paddedInput(), k = dilatedKernel();
    return in == 0 || k == 0 || stride == 0 || k > in ? 0 : (in - k) / stride + 1;
  }
};
WindowAxis windowRows(const Conv &c);
WindowAxis windowCols(const Conv &c);
WindowAxis windowRows(const Pord &p);
WindowAxis windowCols(const Pord &p);

// Alternatives in tsk_typ order: variant index == tsk_typ.
using TiuOp = std::variant<Conv, Pord, MatMul, Arith, MatMul2, ConvCorr, Lut, MdSum, MdScalar,
                           MdSfu, MdLinear, Lma, Decompress, MdCmp, VecCorr>;

struct TiuCommand {
  uint16_t cmdIdTpu = 0;  // this command's id
  uint16_t cmdIdGdma = 0; // the GDMA command id it waits for
  bool cmdEnd = false;    // last command of its group
  bool interrupt = false; // cmd_intr_en
  TiuOp op;

  TiuTask task() const { return TiuTask(op.index()); }
  EuOp eu() const;
  template <class T> T *as() { return std::get_if<T>(&op); }
  template <class T> const T *as() const { return std::get_if<T>(&op); }
};

// Checks tsk_typ, tsk_eu_typ, precision codes and stride modes; an invalid
// one is an error naming the field and its value. Fields a class does not
// use are ignored.
Result<TiuCommand> decodeTiu(const TiuRaw &raw);
Result<TiuCommand> decodeTiu(const uint8_t *bytes); // 128 bytes
// cmd_en and cmd_id_en are set; unused fields are zero.
TiuRaw encode(const TiuCommand &cmd);
// Fails when a member does not fit its field, naming the field.
Result<CommandBytes> encodeBytes(const TiuCommand &cmd);

// Checks a typed command as decodeTiu checks words: eu valid for the class,
// precision and stride-mode codes, every member fits its field.
Status validateTiu(const TiuCommand &cmd);

bool operator==(const TiuCommand &a, const TiuCommand &b);

} // namespace tpu::isa

// executeGdma against a naive reference written straightforwardly from
// docs/isa.md ("GDMA commands"), on random shapes, strides, lane offsets and
// formats with fixed seeds; plus hand-checked layouts and every bad case.
#include "simulator/semantics/GdmaExec.h"
#include "memory/GdmaAccess.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

using namespace tpu;
using namespace tpu::isa;
using namespace tpu::sim;

namespace {

// A small chip so the reference can mirror every byte: 64 lanes x 16 KiB,
// 1 MiB of DDR.
HwConfig smallConfig() {
  HwConfig cfg;
  cfg.lmemBytesPerLane = 16 * 1024;
  cfg.globalMemBytes = 1 << 20;
  return cfg;
}

// ---- the reference ---------------------------------------------------------

struct RefMemory {
  const HwConfig &cfg;
  std::vector<uint8_t> local, global;
  explicit RefMemory(const HwConfig &c)
      : cfg(c), local(c.lmemBytes()), global(c.globalMemBytes) {}
};

std::array<uint64_t, 4> refStrides(const HwConfig &cfg, const GdmaCommand &cmd,
                                   const GdmaTensor &t, bool local) {
  if (cmd.strideEnable) return {t.stride[0], t.stride[1], t.stride[2], t.stride[3]};
  uint64_t n = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3];
  if (!local) return {c * h * w, h * w, w, 1};
  uint64_t eu = cfg.euBytes / gdmaFormatBytes(t.format);
  uint64_t cStride = (h * w + eu - 1) / eu * eu;
  uint64_t npu = t.addr / cfg.lmemBytesPerLane;
  (void)n;
  return {(npu + c + 63) / 64 * cStride, cStride, w, 1};
}

// Where element (n,c,h,w) of one side lives in the reference memory, and its lane.
uint8_t *refElement(RefMemory &m, const GdmaCommand &cmd, const GdmaTensor &t, bool local,
                    uint64_t n, uint64_t c, uint64_t h, uint64_t w, uint32_t *lane = nullptr) {
  auto s = refStrides(m.cfg, cmd, t, local);
  uint64_t bytes = gdmaFormatBytes(t.format);
  if (!local)
    return &m.global[t.addr - m.cfg.globalMemBase + (n * s[0] + c * s[1] + h * s[2] + w * s[3]) * bytes];
  uint64_t npu = t.addr / m.cfg.lmemBytesPerLane, off = t.addr % m.cfg.lmemBytesPerLane;
  uint64_t l = (npu + c) % 64;
  if (lane) *lane = uint32_t(l);
  uint64_t o = off + (n * s[0] + (npu + c) / 64 * s[1] + h * s[2] + w * s[3]) * bytes;
  return &m.local[l * m.cfg.lmemBytesPerLane + o];
}

// Values as double: every format here converts exactly.
double refLoad(GdmaFormat f, const uint8_t *p) {
  switch (f) {
  case GdmaFormat::Fp32: { float v; std::memcpy(&v, p, 4); return v; }
  case GdmaFormat::Int16: { int16_t v; std::memcpy(&v, p, 2); return v; }
  case GdmaFormat::Uint8: return *p;
  default: return int8_t(*p);
  }
}
// fp32 -> int: round half to even, then saturate (docs/isa.md).
void refStore(GdmaFormat f, double v, uint8_t *p) {
  if (f == GdmaFormat::Fp32) { float x = float(v); std::memcpy(p, &x, 4); return; }
  if (std::isnan(v)) v = 0;
  v = std::nearbyint(v);
  double lo = f == GdmaFormat::Int16 ? -32768 : f == GdmaFormat::Uint8 ? 0 : -128;
  double hi = f == GdmaFormat::Int16 ? 32767 : f == GdmaFormat::Uint8 ? 255 : 127;
  v = std::min(std::max(v, lo), hi);
  if (f == GdmaFormat::Int16) { int16_t x = int16_t(v); std::memcpy(p, &x, 2); }
  else *p = uint8_t(int(v));
}

void refExecute(RefMemory &m, const GdmaCommand &cmd) {
  const auto &S = cmd.src.shape, &D = cmd.dst.shape;
  const bool srcLocal = cmd.srcIsLocal(), dstLocal = cmd.dstIsLocal();
  const unsigned sb = gdmaFormatBytes(cmd.src.format), db = gdmaFormatBytes(cmd.dst.format);
  // The whole source first, in n,c,h,w order.
  std::vector<std::vector<uint8_t>> src;
  if (cmd.specialFunc != GdmaSpecialFunc::ConstantFill)
    for (uint64_t n = 0; n < S[0]; ++n)
      for (uint64_t c = 0; c < S[1]; ++c)
        for (uint64_t h = 0; h < S[2]; ++h)
          for (uint64_t w = 0; w < S[3]; ++w) {
            uint8_t *p = refElement(m, cmd, cmd.src, srcLocal, n, c, h, w);
            src.emplace_back(p, p + sb);
          }
  uint64_t k = 0;
  for (uint64_t n = 0; n < D[0]; ++n)
    for (uint64_t c = 0; c < D[1]; ++c)
      for (uint64_t h = 0; h < D[2]; ++h)
        for (uint64_t w = 0; w < D[3]; ++w, ++k) {
          std::vector<uint8_t> value(db, 0);
          auto at = [&](uint64_t sn, uint64_t sc, uint64_t sh, uint64_t sw) {
            return src[((sn * S[1] + sc) * S[2] + sh) * S[3] + sw];
          };
          switch (cmd.specialFunc) {
          case GdmaSpecialFunc::ConstantFill:
            for (unsigned i = 0; i < db; ++i) value[i] = uint8_t(cmd.constantValue >> (8 * i));
            break;
          case GdmaSpecialFunc::Transpose: value = at(c, n, h, w); break;
          case GdmaSpecialFunc::CwTranspose: value = at(n, w, h, c); break;
          case GdmaSpecialFunc::LrnShift: {
            int64_t sc = cmd.lrnShiftDir ? int64_t(c) + cmd.lrnShiftNum : int64_t(c) - cmd.lrnShiftNum;
            if (sc >= 0 && sc < int64_t(S[1])) value = at(n, sc, h, w);
            break;
          }
          case GdmaSpecialFunc::FormatConvert:
            if (cmd.src.format == cmd.dst.format) value = src[k];
            else refStore(cmd.dst.format, refLoad(cmd.src.format, src[k].data()), value.data());
            break;
          default: value = src[k]; break;
          }
          uint32_t lane = 0;
          uint8_t *p = refElement(m, cmd, cmd.dst, dstLocal, n, c, h, w, &lane);
          if (dstLocal && !(cmd.laneMask >> lane & 1)) continue;
          std::memcpy(p, value.data(), db);
        }
}

// ---- the harness -------------------------------------------------------------

struct Harness {
  HwConfig cfg = smallConfig();
  LocalMemory lmem{cfg};
  GlobalMemory gmem{cfg};
  RefMemory ref{cfg};

  explicit Harness(uint32_t seed) {
    std::mt19937 rng(seed);
    for (auto &b : ref.local) b = uint8_t(rng());
    for (auto &b : ref.global) b = uint8_t(rng());
    sync();
  }
  void sync() {
    std::memcpy(lmem.lane(0), ref.local.data(), ref.local.size());
    EXPECT_TRUE(gmem.write(cfg.globalMemBase, ref.global.data(), ref.global.size()));
  }
  // Writes `value` (as double) into source element (n,c,h,w) on both sides.
  void setSource(const GdmaCommand &cmd, uint64_t n, uint64_t c, uint64_t h, uint64_t w, double v) {
    uint8_t *p = refElement(ref, cmd, cmd.src, cmd.srcIsLocal(), n, c, h, w);
    refStore(cmd.src.format, v, p);
  }
  void expectSame(const std::string &what) {
    std::vector<uint8_t> global(ref.global.size());
    ASSERT_TRUE(gmem.read(cfg.globalMemBase, global.data(), global.size()));
    size_t lmemDiff = std::mismatch(ref.local.begin(), ref.local.end(), lmem.lane(0)).first -
                      ref.local.begin();
    size_t gDiff = std::mismatch(ref.global.begin(), ref.global.end(), global.begin()).first -
                   ref.global.begin();
    EXPECT_EQ(lmemDiff, ref.local.size())
        << what << ": LMEM differs at lane " << lmemDiff / cfg.lmemBytesPerLane << " offset "
        << lmemDiff % cfg.lmemBytesPerLane;
    EXPECT_EQ(gDiff, ref.global.size()) << what << ": DDR differs at +" << gDiff;
  }
};

uint32_t pick(std::mt19937 &rng, uint32_t lo, uint32_t hi) {
  return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
}

// Strides for one side: compact, padded, or (rarely) broadcast along n.
std::array<uint32_t, 4> randomStrides(std::mt19937 &rng, const std::array<uint32_t, 4> &s,
                                      bool local) {
  uint32_t ws = pick(rng, 0, 3) == 0 ? pick(rng, 2, 3) : 1;
  uint32_t hs = s[3] * ws + pick(rng, 0, 2);
  uint32_t cs = s[2] * hs + pick(rng, 0, 3);
  uint32_t ns = (local ? cs * ((s[1] + 63) / 64 + 1) : s[1] * cs) + pick(rng, 0, 5);
  if (pick(rng, 0, 15) == 0) ns = 0;
  return {ns, cs, hs, ws};
}

// Extent in bytes of a side, as the model computes it (elements after start).
uint64_t extentBytes(const HwConfig &cfg, const GdmaCommand &cmd, const GdmaTensor &t,
                     bool local, uint32_t npu) {
  auto s = refStrides(cfg, cmd, t, local);
  uint64_t cSteps = local ? (npu + t.shape[1] - 1) / 64 : t.shape[1] - 1;
  uint64_t last = (t.shape[0] - 1) * s[0] + cSteps * s[1] + (t.shape[2] - 1) * s[2] +
                  (t.shape[3] - 1) * s[3];
  return (last + 1) * gdmaFormatBytes(t.format);
}

// Places a side at a random aligned address where it fits; false if it can't.
bool place(std::mt19937 &rng, const HwConfig &cfg, GdmaCommand &cmd, GdmaTensor &t, bool local) {
  uint32_t b = gdmaFormatBytes(t.format);
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint32_t npu = local ? pick(rng, 0, 63) : 0;
    t.addr = local ? uint64_t(npu) * cfg.lmemBytesPerLane : cfg.globalMemBase; // for refStrides
    uint64_t ext = extentBytes(cfg, cmd, t, local, npu);
    uint64_t room = local ? cfg.lmemBytesPerLane : cfg.globalMemBytes;
    if (ext > room) return false;
    uint64_t off = std::uniform_int_distribution<uint64_t>(0, (room - ext) / b)(rng) * b;
    t.addr += off;
    return true;
  }
  return false;
}

GdmaFormat randomFormat(std::mt19937 &rng) {
  static const GdmaFormat kFormats[] = {GdmaFormat::Fp32, GdmaFormat::Int16, GdmaFormat::Uint8,
                                        GdmaFormat::Int8};
  return kFormats[pick(rng, 0, 3)];
}

// A random valid command for `sf` and `dir`.
bool randomCommand(std::mt19937 &rng, const HwConfig &cfg, GdmaSpecialFunc sf, GdmaDirection dir,
                   GdmaCommand &cmd) {
  cmd = GdmaCommand{};
  cmd.direction = dir;
  cmd.specialFunc = sf;
  cmd.strideEnable = pick(rng, 0, 3) != 0;
  cmd.src.format = randomFormat(rng);
  cmd.dst.format = sf == GdmaSpecialFunc::FormatConvert || sf == GdmaSpecialFunc::ConstantFill
                       ? randomFormat(rng)
                       : cmd.src.format;
  auto &s = cmd.src.shape;
  s = {pick(rng, 1, 3), pick(rng, 1, 140), pick(rng, 1, 5), pick(rng, 1, 9)};
  switch (sf) {
  case GdmaSpecialFunc::Transpose: cmd.dst.shape = {s[1], s[0], s[2], s[3]}; break;
  case GdmaSpecialFunc::CwTranspose: cmd.dst.shape = {s[0], s[3], s[2], s[1]}; break;
  case GdmaSpecialFunc::None:
  case GdmaSpecialFunc::FormatConvert:
    // sometimes a reshaping copy: same count, c and h folded
    cmd.dst.shape = pick(rng, 0, 2) == 0 ? std::array<uint32_t, 4>{s[0], 1, s[1] * s[2], s[3]} : s;
    break;
  default: cmd.dst.shape = s; break;
  }
  if (sf == GdmaSpecialFunc::ConstantFill) {
    cmd.constantValue = uint32_t(rng());
    cmd.dst.shape = {pick(rng, 1, 3), pick(rng, 1, 140), pick(rng, 1, 5), pick(rng, 1, 9)};
  }
  cmd.lrnShiftNum = pick(rng, 0, 15);
  cmd.lrnShiftDir = pick(rng, 0, 1);
  cmd.laneMask = pick(rng, 0, 2) == 0 ? (uint64_t(rng()) << 32 | rng()) : ~0ull;
  cmd.src.stride = randomStrides(rng, cmd.src.shape, cmd.srcIsLocal());
  cmd.dst.stride = randomStrides(rng, cmd.dst.shape, cmd.dstIsLocal());
  return place(rng, cfg, cmd, cmd.src, cmd.srcIsLocal()) &&
         place(rng, cfg, cmd, cmd.dst, cmd.dstIsLocal());
}

std::string describe(const GdmaCommand &c) {
  std::ostringstream os;
  os << gdmaDirectionName(c.direction) << " " << gdmaSpecialFuncName(c.specialFunc) << " "
     << gdmaFormatName(c.src.format) << "->" << gdmaFormatName(c.dst.format) << " src "
     << c.src.shape[0] << "x" << c.src.shape[1] << "x" << c.src.shape[2] << "x" << c.src.shape[3]
     << " @0x" << std::hex << c.src.addr << " dst @0x" << c.dst.addr << std::dec
     << " strideEnable " << c.strideEnable;
  return os.str();
}

void runRandom(GdmaSpecialFunc sf, uint32_t seed, int cases) {
  Harness hx(seed);
  std::mt19937 rng(seed * 7 + 1);
  int ran = 0;
  for (int i = 0; i < cases; ++i) {
    GdmaCommand cmd;
    GdmaDirection dir = GdmaDirection(i % 4);
    if (!randomCommand(rng, hx.cfg, sf, dir, cmd)) continue;
    if (sf == GdmaSpecialFunc::FormatConvert) {
      // meaningful values: halves (rounding ties), and out-of-range magnitudes
      const auto &S = cmd.src.shape;
      for (uint32_t n = 0; n < S[0]; ++n)
        for (uint32_t c = 0; c < S[1]; ++c)
          for (uint32_t h = 0; h < S[2]; ++h)
            for (uint32_t w = 0; w < S[3]; ++w) {
              double v = pick(rng, 0, 9) == 0 ? (pick(rng, 0, 1) ? 1e9 : -1e9)
                                                : (int(pick(rng, 0, 140000)) - 70000) / 2.0;
              hx.setSource(cmd, n, c, h, w, v);
            }
      hx.sync();
    }
    refExecute(hx.ref, cmd);
    Status st = executeGdma(hx.cfg, hx.lmem, hx.gmem, cmd);
    ASSERT_TRUE(st) << describe(cmd) << ": " << st.message();
    hx.expectSame(describe(cmd));
    if (::testing::Test::HasFailure()) return;
    ++ran;
  }
  EXPECT_GT(ran, cases * 3 / 4);
}

} // namespace

TEST(GdmaExec, RandomCopiesInEveryDirectionMatchTheReference) {
  runRandom(GdmaSpecialFunc::None, 11, 120);
}
TEST(GdmaExec, RandomNCTransposesMatchTheReference) {
  runRandom(GdmaSpecialFunc::Transpose, 12, 80);
}
TEST(GdmaExec, RandomCWTransposesMatchTheReference) {
  runRandom(GdmaSpecialFunc::CwTranspose, 13, 80);
}
TEST(GdmaExec, RandomLrnShiftsMatchTheReference) {
  runRandom(GdmaSpecialFunc::LrnShift, 14, 80);
}
TEST(GdmaExec, RandomFormatConversionsMatchTheReference) {
  runRandom(GdmaSpecialFunc::FormatConvert, 15, 120);
}
TEST(GdmaExec, RandomConstantFillsMatchTheReference) {
  runRandom(GdmaSpecialFunc::ConstantFill, 16, 80);
}

// ---- hand-checked layouts ------------------------------------------------------

TEST(GdmaExec, ChannelsWrapAroundTheLanes) {
  HwConfig cfg = smallConfig();
  LocalMemory lmem(cfg);
  GlobalMemory gmem(cfg);
  // 10 channels of 1x2 fp32 starting in lane 60: channels 4..9 wrap to lanes 0..5
  std::vector<float> data(20);
  for (int i = 0; i < 20; ++i) data[i] = float(i);
  ASSERT_TRUE(gmem.write(cfg.globalMemBase, data.data(), 80));
  GdmaCommand cmd;
  cmd.direction = GdmaDirection::S2L;
  cmd.strideEnable = false; // compact DDR, aligned LMEM: c_stride = align(2, 32) = 32
  cmd.src = {cfg.globalMemBase, GdmaFormat::Fp32, {1, 10, 1, 2}, {}};
  cmd.dst = {60ull * cfg.lmemBytesPerLane + 256, GdmaFormat::Fp32, {1, 10, 1, 2}, {}};
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd));
  auto at = [&](uint32_t lane, uint32_t off) {
    float f;
    std::memcpy(&f, lmem.lane(lane) + off, 4);
    return f;
  };
  EXPECT_EQ(at(60, 256), 0.f);
  EXPECT_EQ(at(63, 260), 7.f);
  EXPECT_EQ(at(0, 256 + 32 * 4), 8.f);  // channel 4: lane 0, second round
  EXPECT_EQ(at(5, 256 + 32 * 4 + 4), 19.f); // channel 9, w 1
  EXPECT_EQ(at(0, 256), 0.f);           // nothing landed in round 0 of lane 0
}

TEST(GdmaExec, Int8FourNGroupBecomesOneNInLocalMemory) {
  HwConfig cfg = smallConfig();
  LocalMemory lmem(cfg);
  GlobalMemory gmem(cfg);
  // N=3, C=2, H=1, W=2 int8 in 4N: byte ((c*H + h)*W + w)*4 + n holds n*100 + c*10 + w.
  std::vector<int8_t> g(2 * 2 * 4, 0);
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 2; ++c)
      for (int w = 0; w < 2; ++w) g[(c * 2 + w) * 4 + n] = int8_t(n * 30 + c * 10 + w);
  ASSERT_TRUE(gmem.write(cfg.globalMemBase, g.data(), g.size()));
  GdmaCommand cmd;
  cmd.direction = GdmaDirection::S2L;
  cmd.src = {cfg.globalMemBase, GdmaFormat::Int8, {3, 2, 1, 2}, int8x4NStrides(1, 2)};
  // LMEM 1N: n stride 128 (c_stride = align(2, 128)), c stride 128
  cmd.dst = {0, GdmaFormat::Int8, {3, 2, 1, 2}, {128, 128, 2, 1}};
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd));
  for (int n = 0; n < 3; ++n)
    for (int c = 0; c < 2; ++c)
      for (int w = 0; w < 2; ++w)
        EXPECT_EQ(int8_t(lmem.lane(c)[n * 128 + w]), n * 30 + c * 10 + w) << n << c << w;
}

TEST(GdmaExec, LaneMaskLeavesDisabledLanesUntouched) {
  HwConfig cfg = smallConfig();
  LocalMemory lmem(cfg);
  GlobalMemory gmem(cfg);
  GdmaCommand cmd;
  cmd.direction = GdmaDirection::S2L;
  cmd.specialFunc = GdmaSpecialFunc::ConstantFill;
  cmd.constantValue = 0xab;
  cmd.dst = {0, GdmaFormat::Uint8, {1, 64, 1, 4}, {4, 4, 4, 1}};
  cmd.laneMask = 0x5555555555555555ull; // even lanes only
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd));
  for (uint32_t lane = 0; lane < 64; ++lane)
    EXPECT_EQ(lmem.lane(lane)[3], lane % 2 ? 0 : 0xab) << lane;
  auto access = gdmaAccess(cfg, cmd);
  ASSERT_TRUE(access);
  EXPECT_EQ(access->write.bytes, 32u * 4);
  EXPECT_EQ(access->read.bytes, 0u);
}

TEST(GdmaExec, ConversionsRoundAndSaturate) {
  HwConfig cfg = smallConfig();
  LocalMemory lmem(cfg);
  GlobalMemory gmem(cfg);
  const float in[] = {2.5f, -2.5f, 1.49f, 127.6f, -300.f, 1e20f, NAN, -0.5f};
  const int8_t want[] = {2, -2, 1, 127, -128, 127, 0, 0}; // ties to even
  ASSERT_TRUE(gmem.write(cfg.globalMemBase, in, sizeof in));
  GdmaCommand cmd;
  cmd.direction = GdmaDirection::S2S;
  cmd.specialFunc = GdmaSpecialFunc::FormatConvert;
  cmd.strideEnable = false;
  cmd.src = {cfg.globalMemBase, GdmaFormat::Fp32, {1, 1, 1, 8}, {}};
  cmd.dst = {cfg.globalMemBase + 4096, GdmaFormat::Int8, {1, 1, 1, 8}, {}};
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd));
  int8_t out[8];
  ASSERT_TRUE(gmem.read(cfg.globalMemBase + 4096, out, 8));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], want[i]) << in[i];
  // int16 -> uint8 saturates both ways, int8 -> fp32 is exact
  const int16_t wide[] = {300, -5, 200, 0};
  ASSERT_TRUE(gmem.write(cfg.globalMemBase, wide, sizeof wide));
  cmd.src = {cfg.globalMemBase, GdmaFormat::Int16, {1, 1, 1, 4}, {}};
  cmd.dst = {cfg.globalMemBase + 4096, GdmaFormat::Uint8, {1, 1, 1, 4}, {}};
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd));
  uint8_t narrow[4];
  ASSERT_TRUE(gmem.read(cfg.globalMemBase + 4096, narrow, 4));
  EXPECT_EQ(narrow[0], 255);
  EXPECT_EQ(narrow[1], 0);
  EXPECT_EQ(narrow[2], 200);
  EXPECT_EQ(narrow[3], 0);
}

TEST(GdmaExec, OverlappingSourceAndDestinationBehaveLikeABufferedCopy) {
  HwConfig cfg = smallConfig();
  LocalMemory lmem(cfg);
  GlobalMemory gmem(cfg);
  const int16_t data[] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::memcpy(lmem.lane(3) + 64, data, sizeof data);
  GdmaCommand cmd; // shift 7 elements of lane 3 one element up, in place
  cmd.direction = GdmaDirection::L2L;
  cmd.src = {3ull * cfg.lmemBytesPerLane + 64, GdmaFormat::Int16, {1, 1, 1, 7}, {7, 7, 7, 1}};
  cmd.dst = {3ull * cfg.lmemBytesPerLane + 66, GdmaFormat::Int16, {1, 1, 1, 7}, {7, 7, 7, 1}};
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd));
  int16_t out[8];
  std::memcpy(out, lmem.lane(3) + 64, sizeof out);
  const int16_t want[] = {1, 1, 2, 3, 4, 5, 6, 7};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], want[i]) << i;
}

// ---- access pattern ---------------------------------------------------------------

TEST(GdmaAccess, RunsFollowContiguity) {
  HwConfig cfg = smallConfig();
  GdmaCommand cmd;
  cmd.direction = GdmaDirection::S2L;
  cmd.strideEnable = false;
  cmd.src = {cfg.globalMemBase, GdmaFormat::Fp32, {2, 3, 4, 5}, {}};
  cmd.dst = {0, GdmaFormat::Fp32, {2, 3, 4, 5}, {}};
  auto a = gdmaAccess(cfg, cmd);
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->read.bytes, 2u * 3 * 4 * 5 * 4);
  EXPECT_EQ(a->read.runs, 1u); // compact DDR: one run
  EXPECT_EQ(a->write.runs, 6u); // one per (n, c): channels are in different lanes
  EXPECT_EQ(a->write.runBytes, 80u);
  cmd.strideEnable = true;
  cmd.src.stride = {120, 40, 10, 2}; // every other element
  cmd.dst.stride = {32, 32, 5, 1};
  a = gdmaAccess(cfg, cmd);
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->read.runs, 120u);
  EXPECT_EQ(a->read.runBytes, 4u);
}

// ---- bad commands -------------------------------------------------------------------

namespace {
GdmaCommand validCopy(const HwConfig &cfg) {
  GdmaCommand cmd;
  cmd.direction = GdmaDirection::S2L;
  cmd.strideEnable = false;
  cmd.src = {cfg.globalMemBase + 64, GdmaFormat::Fp32, {1, 4, 2, 2}, {}};
  cmd.dst = {128, GdmaFormat::Fp32, {1, 4, 2, 2}, {}};
  return cmd;
}
} // namespace

TEST(GdmaExec, BadCommandsAreRejectedNamingTheFieldAndTouchNothing) {
  HwConfig cfg = smallConfig();
  struct Case {
    const char *expect;
    void (*mutate)(GdmaCommand &, const HwConfig &);
  };
  const Case cases[] = {
      {"src_start_addr = 0x100000042 is not aligned",
       [](GdmaCommand &c, const HwConfig &) { c.src.addr += 2; }},
      {"dst_start_addr = 0x81 is not aligned", [](GdmaCommand &c, const HwConfig &) { c.dst.addr = 0x81; }},
      {"dst_start_addr = 0x100000 is beyond local memory",
       [](GdmaCommand &c, const HwConfig &h) { c.dst.addr = h.lmemBytes(); }},
      {"dst: local access", [](GdmaCommand &c, const HwConfig &h) { c.dst.addr = h.lmemBytesPerLane - 8; }},
      {"src: global access", [](GdmaCommand &c, const HwConfig &h) { c.src.addr = h.globalMemBase - 64; }},
      {"src: global access",
       [](GdmaCommand &c, const HwConfig &h) { c.src.addr = h.globalMemBase + h.globalMemBytes - 16; }},
      {"src_csize = 0", [](GdmaCommand &c, const HwConfig &) { c.src.shape[1] = 0; }},
      {"src has 16 elements", [](GdmaCommand &c, const HwConfig &) { c.dst.shape[3] = 3; }},
      {"src_data_format = fp32 differs from dst_data_format = int8",
       [](GdmaCommand &c, const HwConfig &) { c.dst.format = GdmaFormat::Int8; }},
      {"dst_data_format = fp16 is not supported",
       [](GdmaCommand &c, const HwConfig &) {
         c.specialFunc = GdmaSpecialFunc::FormatConvert;
         c.dst.format = GdmaFormat::Fp16;
       }},
      {"transpose: dst shape 1x4x2x2 must be 4x1x2x2",
       [](GdmaCommand &c, const HwConfig &) { c.specialFunc = GdmaSpecialFunc::Transpose; }},
      {"cw_transpose: dst shape", [](GdmaCommand &c, const HwConfig &) {
         c.specialFunc = GdmaSpecialFunc::CwTranspose;
         c.dst.shape = {1, 2, 2, 2};
       }},
      {"special_func = winograd is not supported",
       [](GdmaCommand &c, const HwConfig &) { c.specialFunc = GdmaSpecialFunc::Winograd; }},
      {"special_func = filter is not supported",
       [](GdmaCommand &c, const HwConfig &) { c.specialFunc = GdmaSpecialFunc::Filter; }},
      {"acc_write_enable = 1 is not supported",
       [](GdmaCommand &c, const HwConfig &) { c.accWriteEnable = true; }},
      {"dst: local access", [](GdmaCommand &c, const HwConfig &) {
         c.strideEnable = true;
         c.dst.stride = {0, 0xffffffffu, 1, 1};
         c.dst.shape = {1, 65, 1, 1}; // second round of lanes is 16 GiB away
         c.src.shape = {1, 65, 1, 1};
         c.src.stride = {65, 1, 1, 1};
       }},
      {"dst: 4294836225 elements exceed", [](GdmaCommand &c, const HwConfig &) {
         c.strideEnable = true;
         c.specialFunc = GdmaSpecialFunc::ConstantFill;
         c.dst.shape = {65535, 65535, 1, 1}; // stride 0: in range, but absurd work
         c.dst.stride = {0, 0, 0, 0};
       }},
  };
  for (const Case &k : cases) {
    LocalMemory lmem(cfg);
    GlobalMemory gmem(cfg);
    GdmaCommand cmd = validCopy(cfg);
    ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd)); // the unmutated command is fine
    lmem.clear();
    k.mutate(cmd, cfg);
    Status st = executeGdma(cfg, lmem, gmem, cmd);
    ASSERT_FALSE(st) << k.expect;
    EXPECT_NE(st.message().find(k.expect), std::string::npos) << st.message();
    EXPECT_EQ(st.message().find('\n'), std::string::npos);
    EXPECT_TRUE(std::all_of(lmem.lane(0), lmem.lane(0) + lmem.totalBytes(),
                            [](uint8_t b) { return b == 0; }))
        << k.expect;
  }
}

TEST(GdmaExec, MemoriesThatDoNotMatchTheConfigAreRejected) {
  HwConfig cfg = smallConfig();
  HwConfig other = cfg;
  other.lmemBytesPerLane = 8 * 1024;
  LocalMemory lmem(other);
  GlobalMemory gmem(cfg);
  Status st = executeGdma(cfg, lmem, gmem, validCopy(cfg));
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("does not match the hardware config"), std::string::npos);
}

// The 4N byte moves in blocks of 16 items: rows of 37 (two blocks and a tail),
// in and out; writing back changes only byte 0 of each word.
TEST(GdmaExec, Int8FourNRoundTripOfLongRowsTouchesOnlyItsBytes) {
  HwConfig cfg = smallConfig();
  LocalMemory lmem(cfg);
  GlobalMemory gmem(cfg);
  const uint32_t C = 2, H = 3, W = 37;
  std::vector<uint8_t> g(C * H * W * 4);
  for (size_t i = 0; i < g.size(); ++i) g[i] = uint8_t(i * 7 + 3);
  ASSERT_TRUE(gmem.write(cfg.globalMemBase, g.data(), g.size()));
  GdmaCommand cmd;
  cmd.direction = GdmaDirection::S2L;
  cmd.src = {cfg.globalMemBase, GdmaFormat::Int8, {1, C, H, W}, int8x4NStrides(H, W)};
  cmd.dst = {0, GdmaFormat::Int8, {1, C, H, W}, {256, 256, W, 1}};
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, cmd));
  for (uint32_t c = 0; c < C; ++c)
    for (uint32_t h = 0; h < H; ++h)
      for (uint32_t w = 0; w < W; ++w)
        ASSERT_EQ(lmem.lane(c)[h * W + w], g[((c * H + h) * W + w) * 4]) << c << " " << h << " " << w;
  // Back to DDR at another address whose words hold other bytes: only byte 0 of each word changes.
  const uint64_t out = cfg.globalMemBase + 0x10000;
  std::vector<uint8_t> o(g.size());
  for (size_t i = 0; i < o.size(); ++i) o[i] = uint8_t(i * 13 + 1);
  ASSERT_TRUE(gmem.write(out, o.data(), o.size()));
  for (uint32_t c = 0; c < C; ++c)
    for (uint32_t i = 0; i < H * W; ++i) lmem.lane(c)[i] = uint8_t(200 + c * 50 + i);
  GdmaCommand back;
  back.direction = GdmaDirection::L2S;
  back.src = cmd.dst;
  back.dst = {out, GdmaFormat::Int8, {1, C, H, W}, int8x4NStrides(H, W)};
  ASSERT_TRUE(executeGdma(cfg, lmem, gmem, back));
  std::vector<uint8_t> r(o.size());
  ASSERT_TRUE(gmem.read(out, r.data(), r.size()));
  for (uint32_t c = 0; c < C; ++c)
    for (uint32_t i = 0; i < H * W; ++i)
      for (uint32_t b = 0; b < 4; ++b) {
        size_t at = (c * H * W + i) * 4 + b;
        ASSERT_EQ(r[at], b == 0 ? uint8_t(200 + c * 50 + i) : o[at]) << c << " " << i << " " << b;
      }
}

// Global planes far apart (a range too sparse to stage whole) move one plane
// at a time; a plane whose own extent is too large for that takes the
// element path. Both ways every element lands and the gaps keep their bytes.
TEST(GdmaExec, SparseGlobalPlanesFarApartTouchOnlyTheirElements) {
  HwConfig cfg;
  cfg.lmemBytesPerLane = 16 * 1024;
  cfg.globalMemBytes = 64 << 20;
  const uint32_t C = 3, H = 5, W = 7;
  for (uint32_t hStride : {16u, 300000u}) { // plane extent 77 bytes, then 1.2 MB
    SCOPED_TRACE(hStride);
    LocalMemory lmem(cfg);
    GlobalMemory gmem(cfg);
    const std::array<uint32_t, 4> sparse{4 * C << 20, 4 << 20, hStride, 2};
    auto at = [&](uint64_t base, uint32_t c, uint32_t h, uint32_t w) {
      return base + c * uint64_t(sparse[1]) + h * uint64_t(sparse[2]) + w * sparse[3];
    };
    const uint64_t in = cfg.globalMemBase, out = cfg.globalMemBase + (16 << 20);
    for (uint32_t c = 0; c < C; ++c)
      for (uint32_t h = 0; h < H; ++h)
        for (uint32_t w = 0; w < W; ++w) {
          const uint8_t v = uint8_t(c * 50 + h * 9 + w), gap = 0xee;
          ASSERT_TRUE(gmem.write(at(in, c, h, w), &v, 1));
          ASSERT_TRUE(gmem.write(at(out, c, h, w) + 1, &gap, 1));
        }
    GdmaCommand load;
    load.direction = GdmaDirection::S2L;
    load.strideEnable = true;
    load.src = {in, GdmaFormat::Int8, {1, C, H, W}, sparse};
    load.dst = {0, GdmaFormat::Int8, {1, C, H, W}, {64, 64, W, 1}};
    ASSERT_TRUE(executeGdma(cfg, lmem, gmem, load));
    for (uint32_t c = 0; c < C; ++c)
      for (uint32_t i = 0; i < H * W; ++i)
        ASSERT_EQ(lmem.lane(c)[i], uint8_t(c * 50 + i / W * 9 + i % W)) << c << " " << i;
    GdmaCommand store;
    store.direction = GdmaDirection::L2S;
    store.strideEnable = true;
    store.src = load.dst;
    store.dst = {out, GdmaFormat::Int8, {1, C, H, W}, sparse};
    ASSERT_TRUE(executeGdma(cfg, lmem, gmem, store));
    for (uint32_t c = 0; c < C; ++c)
      for (uint32_t h = 0; h < H; ++h)
        for (uint32_t w = 0; w < W; ++w) {
          uint8_t v[2];
          ASSERT_TRUE(gmem.read(at(out, c, h, w), v, 2));
          EXPECT_EQ(v[0], uint8_t(c * 50 + h * 9 + w)) << c << " " << h << " " << w;
          EXPECT_EQ(v[1], w + 1 < W ? 0xee : v[1]) << c << " " << h << " " << w; // the gap after it
        }
  }
}

// A destination whose elements overlap (h stride 1, w stride 2) is written
// in n, c, h, w order, the last write winning, in every direction.
TEST(GdmaExec, OverlappingDestinationElementsKeepTheElementOrder) {
  for (GdmaDirection dir : {GdmaDirection::S2L, GdmaDirection::L2S, GdmaDirection::S2S, GdmaDirection::L2L}) {
    Harness hx(21);
    GdmaCommand cmd;
    cmd.direction = dir;
    cmd.strideEnable = true;
    cmd.src = {0, GdmaFormat::Int8, {1, 3, 5, 4}, {64, 64, 1, 5}}; // column-major: moved by columns
    cmd.dst = {0x100, GdmaFormat::Int8, {1, 3, 5, 4}, {64, 64, 1, 2}};
    if (!cmd.srcIsLocal()) cmd.src.addr += hx.cfg.globalMemBase;
    if (!cmd.dstIsLocal()) cmd.dst.addr += hx.cfg.globalMemBase;
    refExecute(hx.ref, cmd);
    ASSERT_TRUE(executeGdma(hx.cfg, hx.lmem, hx.gmem, cmd));
    hx.expectSame(std::string(gdmaDirectionName(dir)));
  }
}

// The compiler's int8 activation store: four batch items held as separate
// runs in local memory, interleaved into 4N words in DDR (sixteen words at a
// time, then a tail).
TEST(GdmaExec, FourLocalRunsInterleaveInto4NWords) {
  for (uint32_t H : {16u, 37u, 5u}) {
    Harness hx(31 + H);
    GdmaCommand cmd;
    cmd.direction = GdmaDirection::L2S;
    cmd.strideEnable = true;
    cmd.src = {0x40, GdmaFormat::Int8, {1, 3, H, 4}, {4 * 64, 4 * 64, 1, 64}};
    cmd.dst = {hx.cfg.globalMemBase + 0x1000, GdmaFormat::Int8, {1, 3, H, 4}, {3 * 4 * H, 4 * H, 4, 1}};
    refExecute(hx.ref, cmd);
    ASSERT_TRUE(executeGdma(hx.cfg, hx.lmem, hx.gmem, cmd));
    hx.expectSame("H = " + std::to_string(H));
  }
}

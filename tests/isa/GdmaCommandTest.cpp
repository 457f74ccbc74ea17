#include "isa/GdmaCommand.h"

#include <gtest/gtest.h>

#include <random>

using namespace tpu::isa;

namespace {

// A raw command with every field random within its width and the enumerated
// fields restricted to defined codes.
GdmaRaw randomRaw(std::mt19937_64 &rng) {
  GdmaRaw raw;
  for (size_t i = 0; i < GdmaRaw::kFieldCount; ++i) {
    GdmaField f = GdmaField(i);
    raw[f] = rng() & fieldInfo(f).maxValue();
  }
  raw[GdmaField::src_data_format] = rng() % kGdmaFormatCount;
  raw[GdmaField::dst_data_format] = rng() % kGdmaFormatCount;
  return raw;
}

} // namespace

TEST(GdmaCommand, RandomRawRoundTripsThroughTheTypedStruct) {
  std::mt19937_64 rng(1684);
  for (int i = 0; i < 2000; ++i) {
    GdmaRaw raw = randomRaw(rng);
    auto cmd = decodeGdma(raw);
    ASSERT_TRUE(cmd) << cmd.message();
    EXPECT_EQ(encode(*cmd), raw) << "iteration " << i;
    // and through the 128 bytes
    auto bytes = encode(*cmd).encode();
    ASSERT_TRUE(bytes) << bytes.message();
    auto again = decodeGdma(GdmaRaw::decode(bytes->data()));
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *cmd);
  }
}

TEST(GdmaCommand, SplitFieldsAssembleWideMembers) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    GdmaRaw raw = randomRaw(rng);
    auto cmd = decodeGdma(raw);
    ASSERT_TRUE(cmd);
    EXPECT_EQ(cmd->src.addr, raw[GdmaField::src_start_addr_l32] |
                                 raw[GdmaField::src_start_addr_h8] << 32);
    EXPECT_EQ(cmd->dst.addr, raw[GdmaField::dst_start_addr_l32] |
                                 raw[GdmaField::dst_start_addr_h8] << 32);
    EXPECT_EQ(cmd->laneMask, raw[GdmaField::localmem_mask_l32] |
                                 raw[GdmaField::localmem_mask_h32] << 32);
    EXPECT_EQ(unsigned(cmd->direction), raw[GdmaField::direction]);
    EXPECT_EQ(unsigned(cmd->specialFunc), raw[GdmaField::special_func]);
    EXPECT_EQ(cmd->src.shape[1], raw[GdmaField::src_csize]);
    EXPECT_EQ(cmd->dst.stride[2], raw[GdmaField::dst_hstride]);
    EXPECT_EQ(cmd->eng0SyncId, raw[GdmaField::eng0_sync_id]);
    EXPECT_EQ(cmd->cmdId, raw[GdmaField::cmd_id]);
  }
}

TEST(GdmaCommand, TypedStructRoundTripsAndLandsOnReferenceBits) {
  GdmaCommand c;
  c.direction = GdmaDirection::L2S;
  c.specialFunc = GdmaSpecialFunc::CwTranspose;
  c.src = {0x0123456789ull, GdmaFormat::Int8, {2, 3, 4, 5}, {60, 20, 5, 1}};
  c.dst = {0xfe00000000ull, GdmaFormat::Int8, {2, 5, 4, 3}, {60, 12, 3, 1}};
  c.laneMask = 0x8000000000000001ull;
  c.cmdId = 0xbeef;
  c.eng0SyncId = 17;
  auto bytes = encode(c).encode();
  ASSERT_TRUE(bytes) << bytes.message();
  const uint8_t *b = bytes->data();
  // bit positions from shared/reference/bm1684_gdma_fields.tsv
  EXPECT_EQ(getBits(b, 6, 2), 1u);                 // direction
  EXPECT_EQ(getBits(b, 32, 3), 5u);                // special_func
  EXPECT_EQ(getBits(b, 16, 16), 0xbeefu);          // cmd_id
  EXPECT_EQ(getBits(b, 48, 16), 17u);              // eng0_sync_id
  EXPECT_EQ(getBits(b, 512, 32), 0x23456789u);     // src_start_addr_l32
  EXPECT_EQ(getBits(b, 576, 8), 0x01u);            // src_start_addr_h8
  EXPECT_EQ(getBits(b, 584, 8), 0xfeu);            // dst_start_addr_h8
  EXPECT_EQ(getBits(b, 640, 32), 1u);              // localmem_mask_l32
  EXPECT_EQ(getBits(b, 672, 32), 0x80000000u);     // localmem_mask_h32
  EXPECT_EQ(getBits(b, 400, 16), 3u);              // src_csize
  EXPECT_EQ(getBits(b, 288, 32), 12u);             // dst_cstride
  auto back = decodeGdma(GdmaRaw::decode(b));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, c);
  EXPECT_EQ(back->dst.shape, (std::array<uint32_t, 4>{2, 5, 4, 3}));
}

TEST(GdmaCommand, UndefinedFormatCodesAreRejectedNamingTheField) {
  std::mt19937_64 rng(3);
  GdmaRaw raw = randomRaw(rng);
  for (uint64_t code = kGdmaFormatCount; code < 8; ++code) {
    GdmaRaw bad = raw;
    bad[GdmaField::src_data_format] = code;
    auto r = decodeGdma(bad);
    ASSERT_FALSE(r);
    EXPECT_NE(r.message().find("src_data_format = " + std::to_string(code)), std::string::npos)
        << r.message();
    bad = raw;
    bad[GdmaField::dst_data_format] = code;
    r = decodeGdma(bad);
    ASSERT_FALSE(r);
    EXPECT_NE(r.message().find("dst_data_format"), std::string::npos) << r.message();
  }
  // A raw vector built in code can hold more than the field's bits.
  GdmaRaw bad = raw;
  bad[GdmaField::direction] = 4;
  auto r = decodeGdma(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("direction = 4"), std::string::npos) << r.message();
  bad = raw;
  bad[GdmaField::special_func] = 9;
  r = decodeGdma(bad);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("special_func = 9"), std::string::npos) << r.message();
}

TEST(GdmaCommand, OversizedValuesFailEncodingNamingTheField) {
  GdmaCommand c;
  c.src.addr = 1ull << 40; // 41-bit address
  auto r = encode(c).encode();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("src_start_addr_h8"), std::string::npos) << r.message();
  c = GdmaCommand{};
  c.dst.shape[3] = 1u << 16;
  r = encode(c).encode();
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("dst_wsize"), std::string::npos) << r.message();
}

TEST(GdmaCommand, Int8x4NStridesInterleaveFourBatchItemsPerWord) {
  EXPECT_EQ(int8x4NStrides(3, 5), (std::array<uint32_t, 4>{1, 60, 20, 4}));
}

// The .def tables must match the reference field tables bit for bit.
#include "isa/Fields.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace tpu::isa;

template <typename FieldT> void checkAgainstTsv(const std::string &file) {
  std::ifstream in(std::string(TPU_TEST_DATA_DIR) + "/" + file);
  ASSERT_TRUE(in) << file;
  std::string line;
  std::getline(in, line); // header
  size_t i = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name;
    unsigned offset, width;
    ls >> name >> offset >> width;
    ASSERT_LT(i, size_t(FieldT::Count));
    const FieldInfo &fi = fieldInfo(FieldT(i));
    EXPECT_EQ(fi.name, name);
    EXPECT_EQ(fi.offset, offset) << name;
    EXPECT_EQ(fi.width, width) << name;
    ++i;
  }
  EXPECT_EQ(i, size_t(FieldT::Count));
}

TEST(FieldTable, TiuMatchesReference) { checkAgainstTsv<TiuField>("bm1684_tiu_fields.tsv"); }
TEST(FieldTable, GdmaMatchesReference) { checkAgainstTsv<GdmaField>("bm1684_gdma_fields.tsv"); }

TEST(FieldTable, SpotOffsets) {
  EXPECT_EQ(fieldInfo(TiuField::tsk_typ).offset, 37);
  EXPECT_EQ(fieldInfo(TiuField::tsk_lane_num).width, 64);
  EXPECT_EQ(fieldInfo(TiuField::opd3_addr).offset, 992);
  EXPECT_EQ(fieldInfo(GdmaField::eng0_sync_id).offset, 48);
  EXPECT_EQ(fieldInfo(GdmaField::debug_mode).offset, 705);
}

TEST(FieldTable, BitPackingIsLsbFirst) {
  CommandBytes b{};
  setBits(b.data(), 3, 16, 0xABCD);
  EXPECT_EQ(getBits(b.data(), 3, 16), 0xABCDu);
  EXPECT_EQ(b[0], uint8_t((0xABCD << 3) & 0xFF));
  setBits(b.data(), 134, 64, ~0ull);
  EXPECT_EQ(getBits(b.data(), 134, 64), ~0ull);
  EXPECT_EQ(getBits(b.data(), 3, 16), 0xABCDu);
}

TEST(FieldTable, EncodeRejectsOverwideValue) {
  TiuRaw raw;
  raw.set(TiuField::tsk_typ, 16); // 4-bit field
  auto r = raw.encode();
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.message().find("tsk_typ"), std::string::npos);
}

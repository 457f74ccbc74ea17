// Replays the inputs that once crashed a fuzz target (tests/data/regress/<target>/)
// through that target's own LLVMFuzzerTestOneInput, compiled into this test
// with the normal compiler: the harness aborts on a broken invariant, and the
// sanitizer run (scripts/sanitize.sh) catches memory errors and UB again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

TEST(FuzzRegress, EveryRecordedCrashInputRunsCleanly) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (const auto &e : fs::directory_iterator(TPU_REGRESS_DIR))
    if (e.is_regular_file()) inputs.push_back(e.path());
  std::sort(inputs.begin(), inputs.end());
  ASSERT_FALSE(inputs.empty()) << "no inputs in " << TPU_REGRESS_DIR;
  for (const auto &path : inputs) {
    SCOPED_TRACE(path.string());
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_TRUE(in.eof() || in.good());
    // 0: processed (accepted or rejected cleanly); -1: not an input of this target.
    EXPECT_EQ(LLVMFuzzerTestOneInput(bytes.data(), bytes.size()), 0);
  }
}

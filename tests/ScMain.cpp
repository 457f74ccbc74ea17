// sc_main for SystemC gtest executables: elaboration happens once per process,
// so gtest_discover_tests runs each test in its own process.
#include <gtest/gtest.h>
#include <systemc>

int sc_main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

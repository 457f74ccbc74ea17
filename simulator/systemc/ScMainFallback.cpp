// libsystemc.so references sc_main; programs that use the model through
// simulate() (tpuc, the runtime's tests) have their own main and no sc_main.
// Weak, so a test's own sc_main (tests/ScMain.cpp) takes precedence.
#include <systemc>

extern "C" __attribute__((weak)) int sc_main(int, char **) { return 0; }

"""Compares two tpuc sim stats files of the same program at two clocks: whether
the total and the TIU busy cycles are equal, the clocks, and
time_us(slow) / time_us(fast), which is exactly the clock ratio when the
cycles are the same."""
import json
import sys

fast, slow = (json.load(open(p)) for p in sys.argv[1:3])
print("total cycles equal", fast["total_cycles"] == slow["total_cycles"],
      "tiu busy cycles equal", fast["engines"]["tiu"]["busy_cycles"] == slow["engines"]["tiu"]["busy_cycles"])
print(f"clock {fast['clock_mhz']:g} -> {slow['clock_mhz']:g} MHz, time x{slow['time_us'] / fast['time_us']:.6f}")

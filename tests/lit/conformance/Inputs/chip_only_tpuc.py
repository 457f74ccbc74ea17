# A tpuc whose deploys refuse CPU sub-nets (the tpuc on PATH with
# --no-cpu-subnets added): host ops stop with `no lowering`, which the
# harness's exclusion list must name with a reason.
import subprocess
import sys

args = sys.argv[1:]
if args[:1] == ["deploy"]:
    args.append("--no-cpu-subnets")
sys.exit(subprocess.call(["tpuc"] + args))

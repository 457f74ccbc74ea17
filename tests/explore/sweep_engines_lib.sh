# Shared by sweep_parallel.sh and sweep_slurm.sh (sourced): the 3-model x
# 4-bandwidth sweep both engines run, its reference run on the local pool,
# and the row comparison. Expects TPUC, SRC and the current directory set.
fail() { echo "FAIL: $*" >&2; exit 1; }

# conv_add (a given bmodel) and two ONNX models the tasks compile themselves.
make_engine_sweep() {
  "$TPUC" asm "$SRC/tests/data/asm/conv_add.s" -o conv_add.bmodel > /dev/null
  /usr/bin/python3 "$SRC/tests/explore/tiny_models.py" .
  cat > sweep.json <<'JSON'
{"models": [{"bmodel": "conv_add.bmodel"}, {"name": "tiny", "onnx": "tiny.onnx"},
            {"name": "tiny_pool", "onnx": "tiny_pool.onnx"}],
 "hardware": {"ddrBandwidthGBs": [4, 8, 16, 32]}}
JSON
  "$TPUC" sweep sweep.json --out-dir local -j 2 --quiet > /dev/null || fail "local sweep"
  [ "$(wc -l < local/sweep.csv)" = 13 ] || fail "local: expected 12 rows"
}

# Rows of two out-dirs: the same columns and values, in any order. The wall
# times (compile_s, sim_wall_s) differ from run to run; the bmodel paths
# differ by the out-dir only.
same_rows() { # dir-a dir-b
  local a b
  a=$(head -1 "$1/sweep.csv") b=$(head -1 "$2/sweep.csv")
  [ "$a" = "$b" ] || fail "columns differ: $a vs $b"
  [ "$a" = "point,model,quantize,layer_group,ddrBandwidthGBs,latency_us,total_cycles,tiu_utilization,gdma_utilization,ddr_bytes,lmem_peak_bytes,compile_s,sim_wall_s,chip,bmodel,error" ] \
    || fail "header: $a"
  diff <(tail -n +2 "$1/sweep.csv" | cut -d, -f1-11,14-16 | sed "s#$(cd "$1" && pwd)/#OUT/#" | sort) \
       <(tail -n +2 "$2/sweep.csv" | cut -d, -f1-11,14-16 | sed "s#$(cd "$2" && pwd)/#OUT/#" | sort) \
    || fail "rows of $2 differ from $1"
  awk -F, 'NR>1 && !($6 > 0 && $16 == "") {exit 1}' "$2/sweep.csv" || fail "$2 has failed rows: $(cat "$2/sweep.csv")"
}

# The tasks compiled each ONNX build once: under the build's lock the other
# tasks that need it waited and found it in the cache; no temporary
# directory is left.
compiled_once() { # out-dir task-log...
  local out=$1 build name n
  shift
  for name in tiny tiny_pool; do
    build=$(ls -d "$out"/cache/${name}_F32_lg_*) || fail "no $name build"
    [ -s "$build/model.bmodel" ] && [ -s "$build/compile.log" ] || fail "$build incomplete"
    n=$(cat "$@" | grep -c "^compiled $name (F32_lg) in ") || true
    [ "$n" = 1 ] || fail "$name compiled by $n tasks: $(cat "$@" | grep "^compiled")"
  done
  ! ls -d "$out"/cache/*/tmp.* > /dev/null 2>&1 || fail "temporary build directories left: $(ls -d "$out"/cache/*/tmp.*)"
}

# A private single-node Slurm cluster for tests (sourced): munged with its
# own key and socket, slurmctld and slurmd with a generated slurm.conf for
# this host (one node, 2 CPUs, free ports), everything under one directory.
#   slurm_start DIR   -> 0 when the node is idle; 77 (and why) when Slurm
#                        cannot start here. Exports SLURM_CONF.
#   slurm_stop        -> cancels the jobs, stops the daemons it started.
slurm_pids=()

slurm_skip() { echo "SKIP: $*"; return 77; }

slurm_start() {
  local dir=$1 prog host user ports
  for prog in munged slurmctld slurmd sbatch squeue scancel sinfo; do
    command -v $prog > /dev/null || { slurm_skip "$prog is not installed (Debian packages slurm-wlm, munge)"; return; }
  done
  SLURM_DIR=$dir
  mkdir -p "$dir"/{munge,state,spool,log}
  chmod 700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  if ! munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
       --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" \
       > "$dir/log/munged.out" 2>&1; then
    slurm_skip "munged cannot start: $(tail -1 "$dir/log/munged.out")"; return
  fi
  host=$(hostname -s) user=$(id -un)
  ports=$(/usr/bin/python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
  read -r ctld_port d_port <<< "$ports"
  cat > "$dir/slurm.conf" <<CONF
ClusterName=tpuctest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MaxArraySize=10001
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -D -f "$SLURM_CONF" > "$dir/log/slurmctld.out" 2>&1 &
  slurm_pids+=($!)
  slurmd -D -f "$SLURM_CONF" -N "$host" > "$dir/log/slurmd.out" 2>&1 &
  slurm_pids+=($!)
  local waited
  for waited in $(seq 60); do
    [ "$(sinfo -h -n "$host" -o %t 2>/dev/null)" = idle ] && return 0
    sleep 0.5
  done
  slurm_skip "the Slurm node did not become idle in 30 s: slurmctld: $(tail -1 "$dir/log/slurmctld.out"); slurmd: $(tail -1 "$dir/log/slurmd.out")"
}

slurm_stop() {
  local pid i
  if [ -n "${SLURM_CONF:-}" ] && ((${#slurm_pids[@]})); then
    scancel --quiet --user "$(id -un)" 2>/dev/null || true
    for i in $(seq 40); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.25; done
  fi
  for pid in "${slurm_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${slurm_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  slurm_pids=()
  if [ -n "${SLURM_DIR:-}" ] && [ -s "$SLURM_DIR/munge/munged.pid" ]; then
    kill "$(cat "$SLURM_DIR/munge/munged.pid")" 2>/dev/null || true
    rm -f "$SLURM_DIR/munge/munged.pid"
  fi
}

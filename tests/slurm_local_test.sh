#!/usr/bin/env bash
# scripts/slurm.sh end to end: a private Slurm cluster on non-default ports, used from this host
# and, the way the SlurmJob submitter pod uses it, from a client in its own network namespace
# (veth 10.251.77.0/30, ADDR = the host side) with its own munged (a copy of the key, socket at
# /run/munge/munge.socket.2 on a tmpfs in a private mount namespace) and a chroot holding only the
# files in CLIENT_BINS and CLIENT_PLUGINS (the client binaries, munged, libslurmfull, the plugins
# they dlopen) and the shared libraries of all of them: what the submitter image needs.
# Checks: COMPLETED/FAILED exit codes, sbatch refusals (time limit over the partition's, unknown
# partition), scancel -> CANCELLED, --time=1 -> TIMEOUT; on a second cluster GPU gres with fake
# devices, --cpus, `up` again after a crash (SIGKILLed daemons, a job left running), down with a
# job running. ~90 s, most of it waiting for the TIMEOUT (slurmctld checks limits every 30 s; the
# smallest limit is a minute). SLURM_TEST_SKIP_TIMEOUT=1 leaves that check out (~15 s).
# Needs root, slurmctld slurmd slurm-client munge (scripts/setup.sh), iproute2, util-linux.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SLURM_SH=$ROOT/scripts/slurm.sh

missing=()
for b in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/squeue \
  /usr/bin/scontrol /usr/bin/scancel /usr/bin/sinfo /usr/bin/munge; do
  [[ -x $b ]] || missing+=("$b")
done
if ((${#missing[@]})); then
  if [[ ${CI:-} == true ]]; then
    echo "!!!!!!!! FAILED: slurm/munge missing (${missing[*]}): run scripts/setup.sh !!!!!!!!" >&2
    exit 1
  fi
  echo "!!!!!!!! SKIPPED slurm_local_test: slurm/munge missing (${missing[*]}); apt-get install slurmctld slurmd slurm-client munge !!!!!!!!"
  exit 0
fi
[[ $(id -u) == 0 ]] || { echo "FAILED: needs root (network namespace, daemons)" >&2; exit 1; }

FAILS=0
T0=$(date +%s.%N)
ok() { echo "  ok   $*"; }
bad() { echo "  FAIL $*" >&2; FAILS=$((FAILS + 1)); }
step() { printf '== [%5.1fs] %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*"; }
expect_eq() { [[ $1 == "$2" ]] && ok "$3" || bad "$3: got '$1', want '$2'"; }
expect_contains() { [[ $1 == *"$2"* ]] && ok "$3" || bad "$3: '$2' not in: $1"; }
secs_since() { echo "$(date +%s.%N) - $1" | bc; }

T=$(mktemp -d /tmp/slurmt.XXXXXX)
chmod 755 "$T"
D=$T/cluster
NS=slurmt-$$
VH=slth$$ VN=sltn$$
HOST_IP=10.251.77.1 NS_IP=10.251.77.2
CLIENT_MUNGED_PID=$T/client-munged.pid
R=$T/root
cleanup() {
  local p
  # The clients' munged run chrooted in $T/root (one of them holds the network namespace).
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$T/root"* && $(cat "$p/comm" 2>/dev/null) == munged ]] &&
      kill "${p#/proc/}" 2>/dev/null
  done
  "$SLURM_SH" down "$D" >/dev/null 2>&1
  "$SLURM_SH" down "$T/gpu" >/dev/null 2>&1
  ip netns del "$NS" 2>/dev/null
  ip link del "$VH" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    [[ -z $(ss -Hltn "sport = :$p") && " ${USED_PORTS:-} " != *" $p "* ]] && break
  done
  USED_PORTS+=" $p"
  echo "$p"
}
CTLD_PORT=$(free_port); USED_PORTS=" $CTLD_PORT"; SLURMD_PORT=$(free_port)

export SLURM_CONF=$D/slurm.conf
jstate() { scontrol show job -o "$1" 2>/dev/null | grep -oE 'JobState=[A-Z_]+' | cut -d= -f2; }
jfield() { scontrol show job -o "$1" 2>/dev/null | grep -oE "(^| )$2=[^ ]*" | cut -d= -f2-; }
wait_state() {  # job state timeout_s
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    [[ $(jstate "$1") == "$2" ]] && return 0
    sleep 0.1
  done
  return 1
}

step "network namespace $NS: $VH $HOST_IP/30 <-> $VN $NS_IP/30"
if [[ $(ip -o addr show) == *"inet 10.251.77."* ]]; then
  echo "FAILED: 10.251.77.0/30 is already in use here (another slurm_local_test running?)" >&2
  ip -o addr show | grep 'inet 10\.251\.77\.' >&2
  exit 1
fi
ip netns add "$NS" && ip link add "$VH" type veth peer name "$VN" && ip link set "$VN" netns "$NS" &&
  ip addr add "$HOST_IP/30" dev "$VH" && ip link set "$VH" up &&
  ip -n "$NS" addr add "$NS_IP/30" dev "$VN" && ip -n "$NS" link set "$VN" up &&
  ip -n "$NS" link set lo up || { echo "FAILED: network namespace setup" >&2; exit 1; }

RUN_MUNGE_BEFORE=$(ls -la --time-style=+ /run/munge 2>&1)
step "slurm.sh up $D --address $HOST_IP --ctld-port $CTLD_PORT --slurmd-port $SLURMD_PORT"
t=$(date +%s.%N)
out=$("$SLURM_SH" up "$D" --address "$HOST_IP" --ctld-port "$CTLD_PORT" --slurmd-port "$SLURMD_PORT" 2>&1)
rc=$?
UP_S=$(secs_since "$t")
echo "$out"
[[ $rc == 0 ]] || { echo "FAILED: up" >&2; exit 1; }
expect_eq "$(stat -c %a "$D/munge.key")" "400" "munge key is 0400"
[[ -S $D/munge/munge.socket.2 ]] && ok "own munge socket in DIR" || bad "no socket $D/munge/munge.socket.2"
expect_eq "$(ls -la --time-style=+ /run/munge 2>&1)" "$RUN_MUNGE_BEFORE" "/run/munge untouched"
expect_contains "$(ss -Hltn "sport = :$CTLD_PORT")" ":$CTLD_PORT" "slurmctld listens on $CTLD_PORT"
expect_contains "$(sinfo -h -o '%P %a %l %T')" "debug* up 1:00:00 idle" "debug partition, default, 1 h, idle"

# Submitted first: slurmctld tests time limits every 30 s, so this takes 60-90 s.
if [[ ${SLURM_TEST_SKIP_TIMEOUT:-} != 1 ]]; then
  JT=$(sbatch --parsable -D "$D/shared" --time=1 --wrap 'sleep 300')
  JT_T0=$(date +%s.%N)
fi

step "jobs from this host"
t=$(date +%s.%N)
j=$(sbatch --parsable -D "$D/shared" --wrap 'echo hi')
wait_state "$j" COMPLETED 20 && ok "echo hi COMPLETED in $(secs_since "$t")s" || bad "echo hi: $(jstate "$j")"
expect_eq "$(jfield "$j" ExitCode)" "0:0" "ExitCode=0:0"
expect_eq "$(cat "$D/shared/slurm-$j.out" 2>/dev/null)" "hi" "output file in the submit dir"
j=$(sbatch --parsable -D "$D/shared" --wrap 'exit 3')
wait_state "$j" FAILED 20 && ok "exit 3 FAILED" || bad "exit 3: $(jstate "$j")"
expect_eq "$(jfield "$j" ExitCode)" "3:0" "ExitCode=3:0"
out=$(sbatch -D "$D/shared" --time=2:00:00 --wrap true 2>&1); rc=$?
expect_eq "$rc" "1" "--time=2:00:00 refused at submit"
expect_contains "$out" "Requested time limit is invalid" "with Slurm's message"
out=$(sbatch -D "$D/shared" -p nosuch --wrap true 2>&1); rc=$?
expect_eq "$rc" "1" "-p nosuch refused at submit"
expect_contains "$out" "Invalid partition name specified" "with Slurm's message"
t=$(date +%s.%N)
j=$(sbatch --parsable -D "$D/shared" --wrap 'sleep 60')
wait_state "$j" RUNNING 20 && START_S=$(secs_since "$t") && ok "sleep 60 RUNNING after ${START_S}s" ||
  bad "sleep 60: $(jstate "$j")"
t=$(date +%s.%N)
scancel "$j"
wait_state "$j" CANCELLED 10 && CANCEL_S=$(secs_since "$t") && ok "scancel: CANCELLED after ${CANCEL_S}s" ||
  bad "scancel: $(jstate "$j")"

step "minik8s slurm-submitter --file: a SlurmJob from a file, no minik8s cluster"
MINIK8S_BIN=${MINIK8S_BIN:-$ROOT/build/bin/minik8s}
if [[ -x $MINIK8S_BIN ]]; then
  mkdir -p "$T/src"
  printf '#!/bin/sh\necho "sum $(($1 + $2))"\n' >"$T/src/add.sh"
  cat >"$T/ok.yaml" <<'YAML'
apiVersion: slurm.minik8s.io/v1
kind: SlurmJob
metadata: {name: add}
spec:
  slurm: {time: "00:02:00"}
  build: chmod +x add.sh
  run: ./add.sh 2 3
YAML
  out=$("$MINIK8S_BIN" slurm-submitter --file "$T/ok.yaml" --shared-dir "$D/shared" \
    --source-dir "$T/src" --status-file "$T/ok.json" 2>"$T/ok.err"); rc=$?
  expect_eq "$rc" "0" "exit 0 when the job Succeeded"
  expect_contains "$out" "sum 5" "the job's output on stdout"
  st=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["status"]; print(s["phase"], s["slurmState"], s["exitCode"], bool(s["jobId"]))' "$T/ok.json" 2>&1)
  expect_eq "$st" "Succeeded COMPLETED 0 True" "--status-file: phase, Slurm state, exit code, job id"
  sed 's/name: add/name: add-fails/; s|run: ./add.sh 2 3|run: exit 7|' "$T/ok.yaml" >"$T/bad.yaml"
  "$MINIK8S_BIN" slurm-submitter --file "$T/bad.yaml" --shared-dir "$D/shared" \
    --source-dir "$T/src" --status-file "$T/bad.json" >/dev/null 2>"$T/bad.err"; rc=$?
  expect_eq "$rc" "1" "exit 1 when the job Failed"
  st=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["status"]; print(s["phase"], s["exitCode"])' "$T/bad.json" 2>&1)
  expect_eq "$st" "Failed 7" "--status-file: Failed, exit code 7"
  out=$("$MINIK8S_BIN" slurm-submitter --file "$T/src/add.sh" --shared-dir "$D/shared" 2>&1); rc=$?
  [[ $rc != 0 && $out == *"want SlurmJob"* ]] && ok "a file that is no SlurmJob: refused ($rc)" ||
    bad "a file that is no SlurmJob: rc $rc: $out"
elif [[ ${CI:-} == true ]]; then
  bad "no minik8s binary at $MINIK8S_BIN (CI builds it before the tests)"
else
  echo "!!!!!!!! SKIPPED the --file checks: no minik8s binary at $MINIK8S_BIN !!!!!!!!"
fi

step "a client in $NS: own munged, chroot with only the client files"
P=/usr/lib/x86_64-linux-gnu/slurm-wlm
# What the submitter image needs. Plugins: found with strace -f -e openat on each command, then
# each one proven necessary by leaving it out (see scripts/slurm.sh).
CLIENT_BINS=(/usr/bin/sbatch /usr/bin/squeue /usr/bin/scontrol /usr/bin/scancel /usr/bin/sinfo
  /usr/sbin/munged)
CLIENT_PLUGINS=("$P/libslurmfull.so" "$P/auth_munge.so" "$P/hash_k12.so" "$P/select_cons_tres.so")
copy_in() { local f; for f; do mkdir -p "$R$(dirname "$f")" && cp -L "$f" "$R$f"; done; }
copy_in "${CLIENT_BINS[@]}" "${CLIENT_PLUGINS[@]}"
mapfile -t libs < <(for f in "${CLIENT_BINS[@]}" "${CLIENT_PLUGINS[@]}"; do ldd "$f"; done |
  grep -oE '/[^ ]+\.so[^ ]*' | grep -v "^$P/" | sort -u)
copy_in "${libs[@]}" "$(readlink -f /lib64/ld-linux-x86-64.so.2)"
echo "  chroot: ${CLIENT_BINS[*]##*/} + ${CLIENT_PLUGINS[*]##*/} + ${libs[*]##*/}"
mkdir -p "$R/dev" "$R/run" "$R/etc/munge" "$R$D/shared" "$R$D/client"
mknod -m 666 "$R/dev/null" c 1 3  # munged opens /dev/null (a pod has /dev)
cp "$D/munge.key" "$R/etc/munge/munge.key" && chmod 400 "$R/etc/munge/munge.key"
cp "$D/client/slurm.conf" "$R$D/client/slurm.conf"
echo "  client conf: $(grep -v '^#' "$D/client/slurm.conf" | tr '\n' ' ')"

# Runs in the namespace and a private mount namespace; prints "ok ..."/"FAIL ..." lines.
cat >"$T/client.sh" <<EOF
R=$R D=$D
export SLURM_CONF=\$D/client/slurm.conf PATH=/usr/bin:/usr/sbin
mount -t tmpfs -o mode=755 tmpfs \$R/run && mkdir -m 755 \$R/run/munge || { echo "FAIL tmpfs"; exit 1; }
mount --bind \$D/shared \$R\$D/shared || { echo "FAIL bind"; exit 1; }
c() { chroot \$R "\$@"; }
# The flags a pod's munged needs: the defaults' /var/log/munge and /var/lib/munge are not there.
chroot \$R /usr/sbin/munged -F --key-file=/etc/munge/munge.key --socket=/run/munge/munge.socket.2 \
  --pid-file=/run/munge/munged.pid --log-file=/run/munge/munged.log \
  --seed-file=/run/munge/munged.seed >/dev/null 2>\$R/run/munged.err &
echo \$! >$CLIENT_MUNGED_PID  # chroot execs munged: this is munged's pid
for i in \$(seq 50); do [[ -S \$R/run/munge/munge.socket.2 ]] && break; sleep 0.1; done
[[ -S \$R/run/munge/munge.socket.2 ]] || { echo "FAIL client munged: \$(cat \$R/run/munged.err \$R/run/munge/munged.log)"; exit 1; }
timeout 3 bash -c "echo > /dev/tcp/127.0.0.1/$CTLD_PORT" 2>/dev/null &&
  echo "FAIL the host's loopback is reachable: not a separate namespace" || echo "ok host loopback unreachable from the namespace"
j=\$(c sbatch --parsable -D \$D/shared --wrap 'echo from-client') && echo "ok sbatch: job \$j" || echo "FAIL sbatch: \$j"
q=\$(c squeue -h -t all -j \$j -o '%i %P %j %u' 2>&1); [[ \$q == *"\$j debug wrap root"* ]] && echo "ok squeue" || echo "FAIL squeue: \$q"
for i in \$(seq 100); do s=\$(c scontrol show job -o \$j 2>&1); [[ \$s == *JobState=COMPLETED* ]] && break; sleep 0.1; done
[[ \$s == *"JobState=COMPLETED"*"ExitCode=0:0"* ]] && echo "ok scontrol show job: COMPLETED 0:0" || echo "FAIL scontrol show job: \$s"
[[ \$(cat \$D/shared/slurm-\$j.out 2>&1) == from-client ]] && echo "ok output in the shared dir" || echo "FAIL output: \$(cat \$D/shared/slurm-\$j.out 2>&1)"
o=\$(c sbatch -D \$D/shared --time=2:00:00 --wrap true 2>&1) && echo "FAIL --time=2:00:00 accepted" ||
  { [[ \$o == *"Requested time limit is invalid"* ]] && echo "ok --time=2:00:00 refused" || echo "FAIL refusal: \$o"; }
j=\$(c sbatch --parsable -D \$D/shared --wrap 'sleep 60')
for i in \$(seq 100); do [[ \$(c scontrol show job -o \$j) == *JobState=RUNNING* ]] && break; sleep 0.1; done
c scancel \$j && echo "ok scancel" || echo "FAIL scancel"
for i in \$(seq 100); do s=\$(c scontrol show job -o \$j 2>&1); [[ \$s == *JobState=CANCELLED* ]] && break; sleep 0.1; done
[[ \$s == *JobState=CANCELLED* ]] && echo "ok CANCELLED" || echo "FAIL after scancel: \$s"
o=\$(c sinfo -h -o '%P %a %N' 2>&1); [[ \$o == "debug* up \$(hostname -s)" ]] && echo "ok sinfo" || echo "FAIL sinfo: \$o"
kill \$(cat $CLIENT_MUNGED_PID)
EOF
out=$(ip netns exec "$NS" unshare -m --propagation private bash "$T/client.sh" 2>&1)
while IFS= read -r line; do
  case $line in
    ok\ *) ok "client: ${line#ok }" ;;
    FAIL\ *) bad "client: ${line#FAIL }" ;;
    *) echo "  client: $line" ;;
  esac
done <<<"$out"
[[ $out == *"ok sinfo"* ]] || bad "the client script did not get to the end"
p=$(cat "$CLIENT_MUNGED_PID" 2>/dev/null)
for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
kill -0 "$p" 2>/dev/null && bad "the client's munged ($p) still runs" || ok "the client's munged stopped"

# Processes of a cluster dir: working directory or an open file under it, or it in the command line.
procs_of() {  # dir
  {
    find /proc/[0-9]*/cwd -maxdepth 0 -lname "$1/*" 2>/dev/null
    find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -lname "$1/*" 2>/dev/null
    grep -lF "$1/" /proc/[0-9]*/cmdline 2>/dev/null
  } | cut -d/ -f3 | sort -un | while read -r p; do
    # Not this script, nor the finished find/grep above (grep's own command line has the dir).
    [[ $p != "$$" && $p != "$BASHPID" && -d /proc/$p ]] && echo "$p"
  done
}

step "a second cluster: GPUs (fake devices, SLURM_SH_GPU_FILES), --cpus, down/up after a crash"
G=$T/gpu
mkdir -p "$G" && mknod "$G/nvidia0" c 195 0 && mknod "$G/nvidia1" c 195 1
GP1=$(free_port) GP2=$(free_port)
gup() {
  SLURM_SH_GPU_FILES="$G/nvidia0 $G/nvidia1" "$SLURM_SH" up "$G" --address 127.0.0.1 \
    --ctld-port "$GP1" --slurmd-port "$GP2" --cpus 4
}
if gup >/dev/null; then (
  export SLURM_CONF=$G/slurm.conf
  expect_contains "$(sinfo -h -o '%P %G %c')" "gpu gpu:2 4" "gpu partition, gpu:2, --cpus 4"
  j=$(sbatch --parsable -D "$G/shared" -p gpu --gres=gpu:1 --wrap 'echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES')
  wait_state "$j" COMPLETED 20
  expect_eq "$(cat "$G/shared/slurm-$j.out" 2>&1)" "CUDA_VISIBLE_DEVICES=0" "a --gres=gpu:1 job sees one GPU"
  out=$(sbatch -p gpu --gres=gpu:3 --wrap true 2>&1)
  expect_contains "$out" "Requested node configuration is not available" "--gres=gpu:3 refused"

  # The client chroot (host network namespace here) submitting a GPU job.
  mkdir -p "$R$G/shared" "$R$G/client"
  cp "$G/client/slurm.conf" "$R$G/client/slurm.conf"
  cp "$G/munge.key" "$R/etc/munge/gpu.key" && chmod 400 "$R/etc/munge/gpu.key"
  out=$(unshare -m --propagation private bash -c '
    R=$1 G=$2; c() { chroot "$R" "$@"; }
    mount -t tmpfs -o mode=755 tmpfs "$R/run" && mkdir -m 755 "$R/run/munge" &&
      mount --bind "$G/shared" "$R$G/shared" || exit 1
    c /usr/sbin/munged --key-file=/etc/munge/gpu.key --log-file=/run/munge/munged.log \
      --seed-file=/run/munge/munged.seed 2>/dev/null || exit 1
    export SLURM_CONF=$G/client/slurm.conf
    j=$(c /usr/bin/sbatch --parsable -D "$G/shared" -p gpu --gres=gpu:1 --wrap "echo GPUS=\$CUDA_VISIBLE_DEVICES" 2>&1)
    for i in $(seq 100); do [[ $(c /usr/bin/scontrol show job -o "$j") == *JobState=COMPLETED* ]] && break; sleep 0.1; done
    c /usr/bin/scontrol show job -o "$j" | grep -oE "TresPerNode=[^ ]+"
    cat "$G/shared/slurm-$j.out"
    kill $(cat "$R/run/munge/munged.pid")' _ "$R" "$G" 2>&1)
  expect_eq "$(echo $out)" "TresPerNode=gres:gpu:1 GPUS=0" "client chroot: sbatch --gres=gpu:1 (client conf has GresTypes=gpu)"
  j=$(sbatch --parsable -D "$G/shared" --wrap 'sleep 120')
  wait_state "$j" RUNNING 20 || bad "sleep 120: $(jstate "$j")"
  job_pid=""
  for i in $(seq 50); do
    job_pid=$(pgrep -x sleep -P "$(pgrep -d, -f "$G/spool/job0*$j/slurm_script")" 2>/dev/null | head -1)
    [[ -n $job_pid ]] && break; sleep 0.1
  done
  [[ -n $job_pid ]] && ok "job $j runs as pid $job_pid" || bad "no process for job $j"
  sleep 6  # slurmctld saves job state in the background (1 s after the start was too soon)
  kill -KILL "$(cat "$G/slurmctld.pid")" "$(cat "$G/slurmd.pid")" "$(cat "$G/munge/munged.pid")"
  t=$(date +%s.%N)
  out=$(gup 2>&1)
  expect_eq "$?" "0" "up over a crashed run (SIGKILLed daemons, a job left running): $(secs_since "$t")s"
  expect_contains "$out" "jobs $j were running" "up says which jobs were lost"
  kill -0 "$job_pid" 2>/dev/null && bad "the crashed run's job $job_pid survived up" || ok "the crashed run's job process is gone"
  expect_eq "$(jstate "$j")" "NODE_FAIL" "the crashed run's job ends NODE_FAIL"
  j2=$(sbatch --parsable -D "$G/shared" --wrap 'echo again')
  wait_state "$j2" COMPLETED 20 && ok "a job after the restart (id $j2 > $j) COMPLETED" || bad "after restart: $(jstate "$j2")"
  j=$(sbatch --parsable -D "$G/shared" --wrap 'sleep 120')
  wait_state "$j" RUNNING 20 || bad "sleep 120: $(jstate "$j")"
  t=$(date +%s.%N)
  "$SLURM_SH" down "$G" >/dev/null
  expect_eq "$(procs_of "$G")" "" "down with a job running ($(secs_since "$t")s) leaves no process"
  exit $FAILS
) || FAILS=$((FAILS + $?)); else
  bad "up with fake GPUs"
fi

step "status, TIMEOUT, down"
out=$("$SLURM_SH" status "$D" 2>&1); rc=$?
expect_eq "$rc" "0" "status: all running"
expect_contains "$out" "slurmctld  running" "status names slurmctld"
if [[ ${SLURM_TEST_SKIP_TIMEOUT:-} != 1 ]]; then
  left=$(echo "110 - $(secs_since "$JT_T0")" | bc | cut -d. -f1)
  wait_state "$JT" TIMEOUT "$((left > 5 ? left : 5))" && TIMEOUT_S=$(secs_since "$JT_T0") &&
    ok "--time=1 job TIMEOUT ${TIMEOUT_S}s after submit" || bad "--time=1 job: $(jstate "$JT")"
  expect_eq "$(jfield "$JT" ExitCode)" "0:15" "TIMEOUT ExitCode=0:15"
fi
"$SLURM_SH" down "$D" >/dev/null
expect_eq "$(procs_of "$D")" "" "down leaves no process of $D"
out=$("$SLURM_SH" down "$D" 2>&1); expect_eq "$?" "0" "down again is fine"
out=$("$SLURM_SH" status "$D" 2>&1); expect_eq "$?" "1" "status after down exits 1"

step "timings: up ${UP_S}s, job start ${START_S:-?}s, cancel ${CANCEL_S:-?}s, timeout ${TIMEOUT_S:-skipped}s after submit"
if ((FAILS)); then
  echo "!!!!!!!! $FAILS check(s) FAILED; logs:" >&2
  tail -n 15 "$D"/log/*.log >&2
  exit 1
fi
echo "all checks passed"

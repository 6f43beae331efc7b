#!/usr/bin/env bash
# A private one-node Slurm cluster on this machine: a stand-in for a university's HPC cluster that
# minik8s pods (the SlurmJob submitter) submit batch jobs to. Debian 12 packages: slurmctld,
# slurmd, slurm-client, munge (Slurm 22.05.8, munge 0.5.15). Run as root; no systemd needed.
#
#   scripts/slurm.sh up DIR --address ADDR [--ctld-port P] [--slurmd-port P] [--cpus N]
#   scripts/slurm.sh down DIR
#   scripts/slurm.sh status DIR
#
# up runs `down DIR` first (the leftovers of a crashed run), then starts, with every file in DIR
# (nothing in /etc/slurm, /etc/munge, /run/munge, /var/log or /var/lib):
#   munged     key DIR/munge.key (0400; made with mungekey when DIR has none, kept when it has one,
#              so pods holding a copy still work after down/up), socket DIR/munge/munge.socket.2,
#              pid and seed files in DIR/munge, log DIR/log/munged.log.
#   slurmctld  on --ctld-port (default 6817). It listens on all addresses; clients use ADDR:port,
#              so ADDR must be an address of this host that they reach (127.0.0.1, or the bridge
#              gateway for pods; it must stay while the cluster runs: slurmd reaches slurmctld
#              there too). State in DIR/state: kept across down/up, job ids go on.
#   slurmd     node `hostname -s` (NodeAddr=127.0.0.1) on --slurmd-port (default 6818), spool
#              DIR/spool. CPUs from nproc (or --cpus, SlurmdParameters=config_overrides),
#              RealMemory 90% of MemTotal, GPUs: `nvidia-smi -L` with the /dev/nvidiaN files
#              (GresTypes=gpu, DIR/gres.conf with AutoDetect=off and File= lines).
# then waits (30 s at most, SLURM_SH_WAIT_S) until sinfo shows the node idle. If it fails it prints
# the log tails, stops what it started and exits 1. Files:
#   DIR/slurm.conf         the daemons' configuration; commands on this host use it through
#                          SLURM_CONF=DIR/slurm.conf (AuthInfo points them at DIR's munged).
#   DIR/shared/            job files. Jobs run as root on this host; the submitter must see this
#                          at the same absolute path (mount it into pods at DIR/shared).
#   DIR/client/slurm.conf  for a client in another network namespace (a pod). Keys: ClusterName,
#                          SlurmctldHost=<host>(ADDR), SlurmctldPort, AuthType=auth/munge,
#                          AuthInfo=socket=/run/munge/munge.socket.2, SelectType=select/cons_tres,
#                          and with GPUs GresTypes=gpu (else sbatch --gres=gpu:1 fails: "Invalid
#                          generic resource (gres) specification"; no gres_gpu.so needed then).
#                          No NodeName or PartitionName lines (the commands ask slurmctld).
# Partitions: debug (Default, MaxTime=1:00:00), and with GPUs gpu (the same node, 1:00:00).
# EnforcePartLimits=ALL: sbatch refuses a job over a partition's limits or for an unknown one.
# MinJobAge=3600: finished jobs stay in `scontrol show job` for an hour (no accounting: no sacct).
# KillWait=2, OverTimeLimit=0, SchedulerParameters=sched_interval=1,bf_interval=1, JobRequeue=0.
# Jobs that were running when the cluster went down have no processes after `down`; the next `up`
# sets the node DOWN before slurmd registers, which ends them NODE_FAIL (not run again), and says so.
#
# down: TERM (KILL after 10 s) slurmctld and slurmd, then the jobs and slurmstepds they left behind
# (TERM, KILL after 3 s; slurmstepd ignores TERM once slurmd is gone), then munged. DIR's processes
# are found by their pid files and by /proc: slurmctld/slurmscriptd/slurmd/slurmstepd/munged whose
# command line, working directory or an open file is under DIR/ (slurmstepd overwrites its
# environment with its title, but its cwd is DIR/log), the descendants of those slurmstepds, and
# processes whose environment has SLURM_JOB_ID and SLURM_CONF=DIR/slurm.conf (slurmd sets that for
# every job). Idempotent; removes the pid files and socket, keeps logs, state and key.
# status: whether each daemon runs, then sinfo and squeue; exit 0 when all three run.
# `up` on a running DIR restarts it. Testing aid: SLURM_SH_GPU_FILES="F1 F2" replaces nvidia-smi
# detection by these device files (empty: no GPUs).
#
# Verified here (Debian 12 VM, 2 CPUs, no GPU; tests/slurm_local_test.sh checks all of it):
# - up: 0.1-1.1 s to an idle node (2-4 s when it has to end lost jobs). munged runs as root
#   without --force when its socket directory is 0755; with a 0700 one it refuses ("Socket is
#   inaccessible: execute permissions for all required"); --force is passed anyway.
# - sbatch --wrap 'echo hi': RUNNING 0.5-1 s after sbatch, COMPLETED ExitCode=0:0, slurm-ID.out in
#   the submit dir. `exit 3`: FAILED ExitCode=3:0 Reason=NonZeroExitCode.
# - sbatch --time=2:00:00: rc 1, "sbatch: error: Batch job submission failed: Requested time limit
#   is invalid (missing or exceeds some limit)". sbatch -p nosuch: rc 1, "sbatch: error: invalid
#   partition specified: nosuch" and "... Batch job submission failed: Invalid partition name
#   specified". --gres=gpu:3 on 2 GPUs: "Requested node configuration is not available".
# - scancel of a running job: CANCELLED ExitCode=0:15 in ~0.15 s.
# - TIMEOUT: the smallest limit is --time=1 (one minute; seconds round up) and slurmctld tests
#   limits every 30 s (PERIODIC_TIMEOUT, not configurable), so a --time=1 job ends TIMEOUT
#   ExitCode=0:15 60-90 s after it starts (measured 88-89 s after sbatch right after up).
# - slurmctld killed with SIGKILL loses what it had not saved yet (it saves in the background;
#   1 s after a job started was too soon, 6 s was enough): such a job may be unknown or pending
#   after the next up.
# - Client in its own network namespace (veth 10.251.77.0/30, ADDR = host side), private mount
#   namespace with a tmpfs on /run, chroot holding only the files below, own munged, SLURM_CONF=
#   DIR/client/slurm.conf: sbatch, squeue, scontrol show job, scancel and sinfo all work.
#   Without SLURM_CONF the commands read /etc/slurm/slurm.conf. The client needs:
#     binaries  /usr/bin/{sbatch,squeue,scontrol,scancel} (sinfo optional), /usr/sbin/munged
#     plugins   /usr/lib/x86_64-linux-gnu/slurm-wlm/: libslurmfull.so (RUNPATH of the binaries),
#               auth_munge.so, hash_k12.so, select_cons_tres.so (each proven needed: without
#               hash_k12 "cannot find hash plugin for hash/k12"; without a select plugin sbatch
#               dies "Can't find plugin for select/linear" unless SelectType=select/cons_tres is
#               set, and without cons_tres squeue/scontrol/sinfo fail "select plugin cons_tres
#               not found"); cred_munge, mpi, gres plugins are not needed.
#     libraries /lib/x86_64-linux-gnu/: libc.so.6 libm.so.6 libresolv.so.2 (libslurmfull),
#               libreadline.so.8 libtinfo.so.6 (scontrol), libmunge.so.2 (auth_munge, munged),
#               libgcrypt.so.20 libgpg-error.so.0 libbz2.so.1.0 libz.so.1 (munged), and
#               /lib64/ld-linux-x86-64.so.2.
#     other     /dev/null (munged opens it), /run/munge (0755) for the socket, the key (0400,
#               owned by root). /etc/passwd, /etc/group, /etc/hosts and /proc are not needed.
#   munged flags: --key-file=KEY --socket=/run/munge/munge.socket.2 --pid-file=... --log-file=...
#   --seed-file=... (the default log dir /var/log/munge must exist or munged exits: "Failed to check
#   logfile dir"), -F to stay in the foreground; no --force needed. Without the pod's hostname in
#   its /etc/hosts munged warns "Failed to lookup origin" and uses 0.0.0.0, and slurmctld logs
#   "auth_p_get_host: Lookup failed for 0.0.0.0" per request: harmless.
#   Jobs see SLURM_CONF=DIR/slurm.conf (slurmd sets it), not the submitter's.
# Verified on a GPU machine (2026-11-26: Ubuntu 24.04 Firecracker VM, one H200, cgroup v2, no
# systemd, these Debian binaries unpacked by bench/gpu_slurmjob.sh): without cgroup.conf slurmd
# exits ("cgroup_dbus_attach_to_scope: cannot connect to dbus system daemon", "slurmd
# initialization failed"); with IgnoreSystemdOnFailure=yes it wants system.slice to exist
# ("Could not create scope directory /sys/fs/cgroup/system.slice/vm_slurmstepd.scope"); with both
# it runs (logging "Controller cpuset is not enabled", harmless), the GPU is gres gpu:1 from
# nvidia-smi, and a --gres=gpu:1 job builds with nvcc and runs CUDA (JOB_GRES=gpu:1).
set -euo pipefail
trap 'echo "slurm.sh: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

SBIN=/usr/sbin
WAIT_IDLE_S=${SLURM_SH_WAIT_S:-30}
STOP_WAIT_S=10  # daemons: TERM, then KILL after this long
KILL_WAIT_S=3   # job steps and jobs

die() { echo "slurm.sh: $*" >&2; exit 1; }
usage() {
  sed -n '6,8p' "$0" | sed 's/^# *//' >&2
  exit 2
}

# --- processes -------------------------------------------------------------------------------

# Is the process DIR's? Its command line, working directory or an open file is under DIR/, or its
# environment has MINIK8S_SLURM_DIR=DIR (up starts the daemons with it; slurmstepd and
# slurmscriptd overwrite their environment with their process title, but their working directory
# is DIR/log and they hold DIR/log/slurmd.log or DIR/log/slurmctld.log open).
in_dir() {  # pid
  local p=$1 l f
  grep -qzx "MINIK8S_SLURM_DIR=$DIR" "/proc/$p/environ" 2>/dev/null && return 0
  [[ $(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null) == *"$DIR/"* ]] && return 0
  l=$(readlink "/proc/$p/cwd" 2>/dev/null) && l=${l% (deleted)} &&
    [[ $l == "$DIR" || $l == "$DIR/"* ]] && return 0
  for f in "/proc/$p/fd/"*; do
    l=$(readlink "$f" 2>/dev/null) || continue
    l=${l% (deleted)}
    [[ $l == "$DIR/"* ]] && return 0
  done
  return 1
}

# DIR's processes with one of the given commands (comm).
dir_pids() {  # comm...
  local p c want
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $p == "$$" ]] && continue
    { read -r c <"/proc/$p/comm"; } 2>/dev/null || continue
    for want; do
      if [[ $c == "$want" ]]; then in_dir "$p" && echo "$p"; break; fi
    done
  done
  return 0
}

# Job processes: slurmd gives every job SLURM_CONF=DIR/slurm.conf (whatever the submitter had)
# and SLURM_JOB_ID. This also finds a job's processes that left the slurmstepd's tree.
job_pids() {
  local f p
  while IFS= read -r f; do
    p=${f#/proc/}; p=${p%/environ}
    [[ $p == "$$" ]] && continue
    grep -qz '^SLURM_JOB_ID=' "$f" 2>/dev/null && echo "$p"
  done < <(grep -lzx "SLURM_CONF=$DIR/slurm.conf" /proc/[0-9]*/environ 2>/dev/null)
  return 0
}

# The pid in a pid file when that process is alive, has the given comm and is DIR's (a recycled
# pid is not ours).
pidfile_pid() {  # file comm
  local p
  p=$(cat "$1" 2>/dev/null) || return 0
  [[ $p =~ ^[0-9]+$ ]] || return 0
  local c=""
  { read -r c <"/proc/$p/comm"; } 2>/dev/null
  [[ $c == "$2" ]] || return 0
  in_dir "$p" && echo "$p"
  return 0
}

daemon_pids() {  # comm pidfile
  { pidfile_pid "$2" "$1"; dir_pids "$1"; } | sort -un
}

descendants() {  # pid...
  local -A kids=()
  local pid ppid
  while read -r pid ppid; do kids[$ppid]+="$pid "; done < <(ps -eo pid=,ppid=)
  local queue=("$@") out=()
  while ((${#queue[@]})); do
    pid=${queue[0]}; queue=("${queue[@]:1}")
    for k in ${kids[$pid]:-}; do out+=("$k"); queue+=("$k"); done
  done
  ((${#out[@]} == 0)) || printf '%s\n' "${out[@]}"
}

# Any of the pids still running (a zombie is not).
alive() {
  local p st
  for p in "$@"; do
    st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    [[ -n $st && $st != Z ]] && return 0
  done
  return 1
}

# TERM, wait up to `wait` seconds, then KILL. Never this shell or its ancestors.
stop_pids() {  # what wait pid...
  local what=$1 wait=$2; shift 2
  local safe=() p a
  local -A mine=([$$]=1)
  a=$$
  while [[ $a =~ ^[0-9]+$ && $a -gt 1 ]]; do
    mine[$a]=1
    a=$(awk '{print $4}' "/proc/$a/stat" 2>/dev/null || echo 0)
  done
  for p in "$@"; do [[ -n $p && -z ${mine[$p]:-} ]] && safe+=("$p"); done
  ((${#safe[@]})) || return 0
  kill -TERM "${safe[@]}" 2>/dev/null || true
  local i
  for ((i = 0; i < wait * 10; i++)); do
    alive "${safe[@]}" || { echo "  stopped $what (${safe[*]})"; return 0; }
    sleep 0.1
  done
  kill -KILL "${safe[@]}" 2>/dev/null || true
  echo "  killed $what (${safe[*]}) after ${wait}s"
}

# --- commands --------------------------------------------------------------------------------

cmd_down() {
  [[ -d $DIR ]] || { echo "slurm: $DIR does not exist, nothing to stop"; return 0; }
  local ctld slurmd steps jobs munged others
  ctld=$(daemon_pids slurmctld "$DIR/slurmctld.pid"; dir_pids slurmscriptd)
  slurmd=$(daemon_pids slurmd "$DIR/slurmd.pid")
  munged=$(daemon_pids munged "$DIR/munge/munged.pid")
  echo "slurm: stopping $DIR"
  # shellcheck disable=SC2086
  {
    stop_pids slurmctld "$STOP_WAIT_S" $ctld
    stop_pids slurmd "$STOP_WAIT_S" $slurmd
    # Left behind by slurmd: the jobs, then their slurmstepd (which ignores TERM while it cannot
    # report to slurmd, hence the short wait before KILL).
    steps=$(dir_pids slurmstepd)
    jobs=$({ [[ -z $steps ]] || descendants $steps; job_pids; } | sort -un)
    stop_pids jobs "$KILL_WAIT_S" $jobs
    stop_pids "job steps" 1 $steps
    stop_pids munged "$STOP_WAIT_S" $munged
    others=$(dir_pids slurmctld slurmscriptd slurmd slurmstepd munged; job_pids)
    stop_pids "other processes of $DIR" "$KILL_WAIT_S" $others
  }
  rm -f "$DIR/slurmctld.pid" "$DIR/slurmd.pid" "$DIR/munge/munged.pid" \
    "$DIR/munge/munge.socket.2" "$DIR/munge/munge.socket.2.lock"
  if [[ -f $DIR/cgroup-made ]]; then
    local made
    made=$(cat "$DIR/cgroup-made")
    # slurmstepd's scope and what it made inside, deepest first; a cgroup with processes stays.
    [[ -d $made ]] && find "$made" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
    rmdir "$made" 2>/dev/null && rm -f "$DIR/cgroup-made"
  fi
  echo "slurm: down"
}

cmd_status() {
  [[ -d $DIR ]] || { echo "slurm: $DIR does not exist"; return 1; }
  local rc=0 name file p ctld=""
  for name in munged slurmctld slurmd; do
    case $name in
      munged) file=$DIR/munge/munged.pid ;;
      *) file=$DIR/$name.pid ;;
    esac
    p=$(daemon_pids "$name" "$file" | head -1 || true)
    if [[ -n $p ]]; then
      printf '%-10s running (pid %s)\n' "$name" "$p"
      [[ $name == slurmctld ]] && ctld=$p
    else
      printf '%-10s not running\n' "$name"; rc=1
    fi
  done
  # The commands wait for an absent slurmctld for MessageTimeout: ask only a running one.
  if [[ -n $ctld && -f $DIR/slurm.conf ]]; then
    SLURM_CONF=$DIR/slurm.conf timeout 10 /usr/bin/sinfo 2>&1 || rc=1
    echo "jobs:"
    SLURM_CONF=$DIR/slurm.conf timeout 10 /usr/bin/squeue 2>&1 || true
  fi
  return $rc
}

port_busy() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }

log_tails() {
  local f
  for f in "$DIR"/log/*.log; do
    [[ -f $f ]] || continue
    echo "--- tail of $f" >&2
    tail -n 25 "$f" >&2
  done
}

fail_up() {
  echo "slurm.sh: up failed: $*" >&2
  log_tails
  cmd_down >&2 || true
  exit 1
}

cmd_up() {
  local addr="" ctld_port=6817 slurmd_port=6818 cpus=""
  while (($#)); do
    case $1 in
      --address) addr=${2:?}; shift 2 ;;
      --ctld-port) ctld_port=${2:?}; shift 2 ;;
      --slurmd-port) slurmd_port=${2:?}; shift 2 ;;
      --cpus) cpus=${2:?}; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ -n $addr ]] || die "up needs --address ADDR (an address of this host that clients reach)"
  [[ $ctld_port =~ ^[0-9]+$ && $slurmd_port =~ ^[0-9]+$ && $ctld_port != "$slurmd_port" ]] ||
    die "--ctld-port and --slurmd-port must be two different port numbers"
  [[ -z $cpus || $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus must be a positive number"
  [[ $(id -u) == 0 ]] || die "run as root (jobs run as root; SlurmUser=root)"
  local b
  for b in $SBIN/munged $SBIN/slurmctld $SBIN/slurmd /usr/bin/sinfo /usr/bin/sbatch /usr/bin/munge; do
    [[ -x $b ]] || die "$b is missing: apt-get install slurmctld slurmd slurm-client munge"
  done
  # No `| grep -q` under pipefail: grep leaving at the first match can kill ip with SIGPIPE when
  # the host has many addresses (clusters running side by side), and the pipeline then fails.
  [[ $(ip -o addr show 2>/dev/null) == *"inet $addr/"* || $addr == 127.* ]] ||
    die "$addr is not an address of this host"
  local t0; t0=$(date +%s.%N)

  cmd_down >/dev/null
  local p
  for p in "$ctld_port" "$slurmd_port"; do
    port_busy "$p" && die "port $p is in use (ss -ltnp 'sport = :$p')"
  done

  mkdir -p "$DIR"/{munge,state,spool,log,shared,client}
  # munged wants its socket directory (and the ones above) searchable by all.
  chmod 755 "$DIR" "$DIR/munge"
  if [[ ! -s $DIR/munge.key ]]; then
    rm -f "$DIR/munge.key"
    if [[ -x $SBIN/mungekey ]]; then
      $SBIN/mungekey --create --keyfile="$DIR/munge.key" --bits=1024
    else
      dd if=/dev/urandom of="$DIR/munge.key" bs=128 count=1 status=none
    fi
  fi
  chmod 400 "$DIR/munge.key"

  local host node_cpus mem_mb gpu_files=() n
  host=$(hostname -s)
  node_cpus=${cpus:-$(nproc)}
  mem_mb=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
  if [[ -n ${SLURM_SH_GPU_FILES+x} ]]; then
    read -ra gpu_files <<<"$SLURM_SH_GPU_FILES"
    for f in "${gpu_files[@]}"; do [[ -e $f ]] || die "GPU device file $f does not exist"; done
  elif command -v nvidia-smi >/dev/null 2>&1; then
    n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    for ((i = 0; i < n; i++)); do
      [[ -c /dev/nvidia$i ]] && gpu_files+=("/dev/nvidia$i")
    done
  fi

  local sock=$DIR/munge/munge.socket.2 node_line
  node_line="NodeName=$host NodeAddr=127.0.0.1 CPUs=$node_cpus RealMemory=$mem_mb State=UNKNOWN"
  ((${#gpu_files[@]})) && node_line+=" Gres=gpu:${#gpu_files[@]}"
  {
    echo "# Written by scripts/slurm.sh up; the daemons' configuration for $DIR."
    echo "ClusterName=minik8s"
    echo "SlurmctldHost=$host($addr)"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmdPort=$slurmd_port"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$sock"
    echo "StateSaveLocation=$DIR/state"
    echo "SlurmdSpoolDir=$DIR/spool"
    echo "SlurmctldPidFile=$DIR/slurmctld.pid"
    echo "SlurmdPidFile=$DIR/slurmd.pid"
    echo "SlurmctldLogFile=$DIR/log/slurmctld.log"
    echo "SlurmdLogFile=$DIR/log/slurmd.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "MpiDefault=none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "MailProg=/bin/true"
    echo "EnforcePartLimits=ALL"
    echo "MinJobAge=3600"
    echo "KillWait=2"
    echo "OverTimeLimit=0"
    echo "JobRequeue=0"
    echo "SchedulerParameters=sched_interval=1,bf_interval=1"
    ((${#gpu_files[@]})) && echo "GresTypes=gpu"
    echo "$node_line"
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=1:00:00 State=UP"
    ((${#gpu_files[@]})) && echo "PartitionName=gpu Nodes=ALL MaxTime=1:00:00 State=UP"
    true
  } >"$DIR/slurm.conf"
  # slurmd sets up its cgroup plugin even with proctrack/linuxproc and task/none. On cgroup v2 it
  # asks systemd (D-Bus) for a scope and fails where none runs (a container, a small VM):
  # "cgroup_dbus_attach_to_scope: cannot connect to dbus", "slurmd initialization failed". Then it
  # may make the scope itself (cgroup.conf next to slurm.conf; cgroup v1 needs none).
  rm -f "$DIR/cgroup.conf"
  if [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then
    echo "IgnoreSystemdOnFailure=yes" >"$DIR/cgroup.conf"
    # It makes <host>_slurmstepd.scope under system.slice but not system.slice itself; with no
    # systemd there is none. Made here, and removed by down when empty.
    if [[ ! -d /sys/fs/cgroup/system.slice ]]; then
      mkdir /sys/fs/cgroup/system.slice && echo /sys/fs/cgroup/system.slice >"$DIR/cgroup-made"
    fi
  fi
  rm -f "$DIR/gres.conf"
  if ((${#gpu_files[@]})); then
    {
      echo "AutoDetect=off"
      for f in "${gpu_files[@]}"; do echo "NodeName=$host Name=gpu File=$f"; done
    } >"$DIR/gres.conf"
  fi
  {
    echo "# Written by scripts/slurm.sh up: a client's configuration (a pod's sbatch, squeue,"
    echo "# scontrol, scancel) for the cluster in $DIR. The client runs its own munged with a copy"
    echo "# of $DIR/munge.key on the socket below."
    echo "ClusterName=minik8s"
    echo "SlurmctldHost=$host($addr)"
    echo "SlurmctldPort=$ctld_port"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=/run/munge/munge.socket.2"
    echo "SelectType=select/cons_tres"
    # Without it sbatch --gres=gpu:N says "Invalid generic resource (gres) specification".
    ((${#gpu_files[@]})) && echo "GresTypes=gpu"
    true
  } >"$DIR/client/slurm.conf"

  export MINIK8S_SLURM_DIR=$DIR SLURM_CONF=$DIR/slurm.conf
  $SBIN/munged --force --key-file="$DIR/munge.key" --socket="$sock" \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" \
    --seed-file="$DIR/munge/munged.seed" || fail_up "munged did not start"
  /usr/bin/munge -S "$sock" -n </dev/null | /usr/bin/unmunge -S "$sock" >/dev/null ||
    fail_up "munge credential round trip through $sock failed"
  (cd "$DIR" && $SBIN/slurmctld -f "$DIR/slurm.conf") || fail_up "slurmctld did not start"
  # Jobs that were running when the cluster went down (state in DIR/state) have no processes any
  # more (down killed them) but slurmctld would keep them RUNNING on the node for ever: set the
  # node DOWN before slurmd registers, which ends them NODE_FAIL (JobRequeue=0: not run again);
  # slurmd's registration brings the node back (ReturnToService=2). Pending jobs stay pending.
  local lost="" i
  for ((i = 0; i < WAIT_IDLE_S * 5; i++)); do
    lost=$(timeout 5 /usr/bin/squeue -h -t RUNNING,COMPLETING,SUSPENDED,CONFIGURING -o %i 2>/dev/null) && break
    lost=""
    sleep 0.2
  done
  ((i < WAIT_IDLE_S * 5)) || fail_up "slurmctld does not answer after ${WAIT_IDLE_S}s"
  local busy_ok
  busy_ok="$lost$(timeout 5 /usr/bin/squeue -h -t PENDING -o %i 2>/dev/null || true)"
  if [[ -n $lost ]]; then
    lost=$(echo "$lost" | paste -sd, -)
    /usr/bin/scontrol update NodeName="$host" State=DOWN \
      Reason="slurm.sh up: its jobs were lost when the cluster went down" ||
      fail_up "could not end the lost jobs $lost"
    echo "slurm: jobs $lost were running when $DIR went down: they end NODE_FAIL"
  fi
  (cd "$DIR" && $SBIN/slurmd -f "$DIR/slurm.conf") || fail_up "slurmd did not start"
  # Ready: the node answers and takes jobs (mix/alloc when recovered pending jobs start at once;
  # before slurmd registers the node is unk or down).
  local state=""
  for ((i = 0; i < WAIT_IDLE_S * 5; i++)); do
    state=$(timeout 5 /usr/bin/sinfo -h -N -n "$host" -o %t 2>/dev/null | head -1 || true)
    [[ $state == idle || -n $busy_ok && $state =~ ^(mix|alloc)$ ]] && break
    sleep 0.2
  done
  [[ $state == idle || -n $busy_ok && $state =~ ^(mix|alloc)$ ]] ||
    fail_up "node $host is '${state:-unknown}', not idle, after ${WAIT_IDLE_S}s"

  local dt; dt=$(echo "$(date +%s.%N) - $t0" | bc)
  printf 'slurm: up in %.1fs (%s)\n' "$dt" "$DIR"
  printf '  munged     pid %-7s socket %s, key %s\n' "$(cat "$DIR/munge/munged.pid")" "$sock" "$DIR/munge.key"
  printf '  slurmctld  pid %-7s %s:%s\n' "$(cat "$DIR/slurmctld.pid")" "$addr" "$ctld_port"
  printf '  slurmd     pid %-7s node %s (CPUs=%s RealMemory=%sM GPUs=%s), port %s\n' \
    "$(cat "$DIR/slurmd.pid")" "$host" "$node_cpus" "$mem_mb" "${#gpu_files[@]}" "$slurmd_port"
  printf '  partitions debug (default, MaxTime 1:00:00)%s\n' "$( ((${#gpu_files[@]})) && echo ', gpu' || true)"
  echo "  on this host: export SLURM_CONF=$DIR/slurm.conf"
  echo "  clients:      $DIR/client/slurm.conf (munged with a copy of the key at /run/munge/munge.socket.2)"
  echo "  job files:    $DIR/shared"
}

(($# >= 2)) || usage
cmd=$1
DIR=$(realpath -m -- "$2")
shift 2
[[ $DIR != / ]] || die "DIR must not be /"
[[ $DIR != *[[:space:]]* ]] || die "DIR must not contain white space (it goes into slurm.conf)"
case $cmd in
  up) cmd_up "$@" ;;
  down) (($# == 0)) || usage; cmd_down ;;
  status) (($# == 0)) || usage; cmd_status || exit $? ;;
  *) usage ;;
esac

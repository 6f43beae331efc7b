#!/usr/bin/env bash
# SlurmJob overhead on a real Slurm (scripts/slurm.sh) and a 2-node cluster: for N jobs that run
# `true`, the time from `kubectl apply` to sbatch accepting the job (status.jobId set), from
# Slurm's completion (scontrol says COMPLETED) to phase Succeeded, and apply -> Succeeded in all.
# Baseline in the same run: the same script submitted with sbatch on the host, to COMPLETED.
# The first SlurmJob pulls the submitter image on its node; it is reported apart.
#   MINIK8S_BIN=build/bin/minik8s bash bench/slurm_overhead_bench.sh [N]
source "$(dirname "$0")/lib.sh"
N=${1:-10}
SUBNET=${BENCH_SUBNET:-172.29.128}
SL_DIR=/tmp/minik8s-bench-slurm-hpc
bash "$SOURCE_DIR/scripts/slurm.sh" down "$SL_DIR" >/dev/null 2>&1
rm -rf "$SL_DIR"
bench_load start
bench_cluster bslurm "$SUBNET" 2 || exit 1
trap 'rc=$?; bash "$SOURCE_DIR/scripts/slurm.sh" down "$SL_DIR" >/dev/null 2>&1; rm -rf "$SL_DIR"; cluster_down_quiet; (exit $rc); cleanup' EXIT
bash "$SOURCE_DIR/scripts/slurm.sh" up "$SL_DIR" --address "$SUBNET.1" \
  --ctld-port "$(free_port)" --slurmd-port "$(free_port)" >/dev/null || exit 1
export SLURM_CONF=$SL_DIR/slurm.conf
kubectl create secret generic slurm --from-file=munge.key="$SL_DIR/munge.key" \
  --from-file=slurm.conf="$SL_DIR/client/slurm.conf" --from-literal=shared-dir="$SL_DIR/shared" >/dev/null
wait_for 30 kubectl get crd slurmjobs.slurm.minik8s.io || exit 1

slurm_state() { scontrol show job -o "$1" 2>/dev/null | grep -o 'JobState=[A-Z]*' | cut -d= -f2; }
declare -a accept done_lag total raw
for i in $(seq 0 "$N"); do
  t0=$(now_s)
  kubectl apply -f - >/dev/null <<YAML
apiVersion: slurm.minik8s.io/v1
kind: SlurmJob
metadata: {name: b$i}
spec: {slurm: {time: "5"}, run: "true"}
YAML
  until id=$(kubectl get sj "b$i" -o jsonpath='{.status.jobId}') && [[ -n $id ]]; do sleep 0.05; done
  t1=$(now_s)
  until [[ $(slurm_state "$id") == COMPLETED ]]; do sleep 0.02; done
  t2=$(now_s)
  until [[ $(kubectl get sj "b$i" -o jsonpath='{.status.phase}') == Succeeded ]]; do sleep 0.02; done
  t3=$(now_s)
  if ((i == 0)); then
    echo "first job (image pull): apply->sbatch $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}') s, apply->Succeeded $(awk -v a="$t0" -v b="$t3" 'BEGIN{printf "%.2f", b-a}') s"
    continue
  fi
  accept+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')")
  done_lag+=("$(awk -v a="$t2" -v b="$t3" 'BEGIN{print b-a}')")
  total+=("$(awk -v a="$t0" -v b="$t3" 'BEGIN{print b-a}')")
  kubectl delete sj "b$i" --wait=false >/dev/null
done
mkdir -p "$SL_DIR/shared/raw"
for i in $(seq 1 "$N"); do
  t0=$(now_s)
  id=$(sbatch --parsable -D "$SL_DIR/shared/raw" --time=5 --wrap true)
  until [[ $(slurm_state "$id") == COMPLETED ]]; do sleep 0.02; done
  raw+=("$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN{print b-a}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "N=$N jobs of \`true\` (medians, s):"
echo "  kubectl apply -> sbatch accepted (status.jobId): $(median "${accept[@]}")"
echo "  Slurm COMPLETED -> phase Succeeded:              $(median "${done_lag[@]}")"
echo "  kubectl apply -> Succeeded:                      $(median "${total[@]}")"
echo "  baseline: sbatch on the host -> COMPLETED:       $(median "${raw[@]}")"
bench_load end

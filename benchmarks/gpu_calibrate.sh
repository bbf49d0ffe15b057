#!/usr/bin/env bash
# Calibrate costmodel on this machine's GPUs in about 5 minutes: the compute of one GPU (matrix
# products, memory bandwidth, kernel launch), then α and β with NCCL over every GPU it shows.
#
#   benchmarks/gpu_calibrate.sh                 # writes ./calibration/
#   OUT=/data/run1 benchmarks/gpu_calibrate.sh  # writes $OUT/
#
# Writes, in $OUT (default ./calibration):
#   compute.toml       the compute profile of GPU 0 (costmodel calibrate compute): use it with
#                      costmodel step --gpu-profile $OUT/compute.toml
#   compute.txt        what it measured and fitted, product by product
#   with 2 GPUs or more (NCCL needs them; with fewer that part is skipped, with a message):
#   measurements.csv   every size of every collective, appended as measured (costmodel's CSV)
#   profile.toml       the fitted profile (load it with --profile $OUT/profile.toml)
#   report-allreduce.txt, report-pt2pt.txt   measured against modelled; .json the same with --json
#   when nccl-tests' all_reduce_perf is on PATH (or ALL_REDUCE_PERF names it), for the same sizes:
#   nccl-tests-allreduce.txt (its log), fit-nccl-tests-allreduce.txt (costmodel's fit of it) and
#   compare-allreduce.txt (both times size by size: costmodel's batched timing against nccl-tests' in-place
#   column, since torch.distributed runs all-reduce in place)
#
# Environment: OUT, SIZES (default 8B..256MiB), GPUS (default: the GPUs torch sees, which honours
# CUDA_VISIBLE_DEVICES; else nvidia-smi -L), LIMIT_S (default 300: the time of both measurements; the
# compute part measures for COMPUTE_LIMIT_S of it (default a fifth), the NCCL run gets what is left and
# is interrupted after it, keeping the sizes already measured), COMPUTE_ARGS (more options for
# calibrate compute, e.g. "--base h100-sxm" for a GPU whose name matches no preset, or "--dtype fp16"),
# COSTMODEL (default "costmodel"; e.g. "python -m costmodel"), PYTHON (default python3), ALL_REDUCE_PERF
# (default: all_reduce_perf on PATH; "none" to skip it).  Needs costmodel with PyTorch (pip install
# 'costmodel-collectives[calibrate]').  For several nodes use torchrun instead (see
# costmodel/calibration/bench.py).  Exit status: the compute part's when it failed, else the NCCL part's.
set -euo pipefail

OUT="${OUT:-./calibration}"
SIZES="${SIZES:-8B..256MiB}"
LIMIT_S="${LIMIT_S:-300}"
PYTHON="${PYTHON:-python3}"
read -r -a COSTMODEL_CMD <<< "${COSTMODEL:-costmodel}"
read -r -a COMPUTE_EXTRA <<< "${COMPUTE_ARGS:-}"
if ! [[ "$LIMIT_S" =~ ^[0-9]+$ ]] || (( LIMIT_S < 10 )); then
  echo "error: LIMIT_S=$LIMIT_S is not a whole number of seconds >= 10" >&2
  exit 2
fi
COMPUTE_LIMIT_S="${COMPUTE_LIMIT_S:-$(( LIMIT_S / 5 ))}"
if ! [[ "$COMPUTE_LIMIT_S" =~ ^[0-9]+$ ]] || (( COMPUTE_LIMIT_S < 1 || COMPUTE_LIMIT_S >= LIMIT_S )); then
  echo "error: COMPUTE_LIMIT_S=$COMPUTE_LIMIT_S is not a whole number of seconds in [1, LIMIT_S)" >&2
  exit 2
fi

if [[ -z "${GPUS:-}" ]]; then
  GPUS="$("$PYTHON" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || true)"
  if [[ -z "$GPUS" || "$GPUS" == 0 ]] && command -v nvidia-smi >/dev/null 2>&1; then
    GPUS="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
  fi
fi
GPUS="${GPUS:-0}"
if ! [[ "$GPUS" =~ ^[0-9]+$ ]]; then
  echo "error: GPUS=$GPUS is not a count of GPUs" >&2
  exit 2
fi

mkdir -p "$OUT"
start=$(date +%s)

# 1. the compute of one GPU: what step prices each operation with (interrupted with SIGINT as a
# backstop only: --limit stops it between two products and it fits what it measured)
echo "measuring the compute of one GPU for at most ${COMPUTE_LIMIT_S} s; writing $OUT/compute.toml" >&2
compute_status=0
timeout --signal=INT --kill-after=30 "$(( COMPUTE_LIMIT_S + 60 ))" \
  "${COSTMODEL_CMD[@]}" calibrate compute --limit "${COMPUTE_LIMIT_S}s" --out "$OUT/compute.toml" \
  ${COMPUTE_EXTRA[@]+"${COMPUTE_EXTRA[@]}"} > "$OUT/compute.txt" || compute_status=$?
cat "$OUT/compute.txt"
echo "compute calibration finished in $(( $(date +%s) - start )) s with status $compute_status" >&2
if (( compute_status != 0 )); then
  echo "warning: the compute calibration failed (status $compute_status); see the error above" >&2
fi

# 2. α and β with NCCL over every GPU, in the time left
if (( GPUS < 2 )); then
  echo "skipping the NCCL calibration: it needs at least 2 GPUs and ${GPUS} are visible" \
       "(on CPUs, run 'costmodel calibrate run --backend gloo')" >&2
  ls -l "$OUT" >&2
  exit "$compute_status"
fi
CSV="$OUT/measurements.csv"
PROFILE="$OUT/profile.toml"
left=$(( LIMIT_S - ($(date +%s) - start) ))
(( left < 30 )) && left=30
echo "calibrating NCCL on $GPUS GPUs, sizes $SIZES, at most ${left} s; writing $OUT/" >&2
nccl_start=$(date +%s)

# SIGINT (not SIGTERM) on the time limit: the benchmark then stops its ranks and keeps the CSV so far.
status=0
timeout --signal=INT --kill-after=30 "$left" \
  "${COSTMODEL_CMD[@]}" calibrate run --backend nccl --ranks "$GPUS" --sizes "$SIZES" \
  --csv "$CSV" --out "$PROFILE" || status=$?
echo "benchmark finished in $(( $(date +%s) - nccl_start )) s with status $status" >&2

if [[ ! -s "$CSV" ]]; then
  echo "error: no measurements were written to $CSV" >&2
  exit "$(( status == 0 ? 1 : status ))"
fi
for c in allreduce pt2pt; do  # all-reduce is what training runs (and the profile); the ping-pong the raw link
  "${COSTMODEL_CMD[@]}" calibrate report "$CSV" --collective "$c" | tee "$OUT/report-$c.txt"
  "${COSTMODEL_CMD[@]}" calibrate report "$CSV" --collective "$c" --json > "$OUT/report-$c.json"
done

# nccl-tests for the same sizes, when it is installed: the reference the fit is compared with
PERF="${ALL_REDUCE_PERF:-$(command -v all_reduce_perf || true)}"
if [[ -n "$PERF" && "$PERF" != none ]]; then
  read -r LO HI < <("$PYTHON" -c 'import sys; from costmodel.calibration import parse_sizes
print(*parse_sizes(sys.argv[1]))' "$SIZES")
  echo "running nccl-tests: $PERF -b $LO -e $HI -f 2 -g $GPUS" >&2
  if timeout --kill-after=30 "$LIMIT_S" "$PERF" -b "$LO" -e "$HI" -f 2 -g "$GPUS" -w 5 -n 20 \
       > "$OUT/nccl-tests-allreduce.txt"; then
    "${COSTMODEL_CMD[@]}" calibrate fit "$OUT/nccl-tests-allreduce.txt" | tee "$OUT/fit-nccl-tests-allreduce.txt"
    "$PYTHON" - "$CSV" "$OUT/nccl-tests-allreduce.txt" > "$OUT/compare-allreduce.txt" <<'PY' || true
import sys
from costmodel.calibration import read_csv, read_log
ours = {r.n_bytes: float(r.time_s) for r in read_csv(sys.argv[1], collective="allreduce").rows}
theirs = {r.n_bytes: float(r.time_s) for r in read_log(sys.argv[2]).select(in_place=True)}
print(f"{'n (B)':>12} {'costmodel (us)':>15} {'nccl-tests (us)':>16} {'ratio':>7}")
for n in sorted(set(ours) & set(theirs)):
    print(f"{n:>12} {ours[n] * 1e6:>15.2f} {theirs[n] * 1e6:>16.2f} {ours[n] / theirs[n]:>7.3f}")
PY
    cat "$OUT/compare-allreduce.txt" >&2
  else
    echo "warning: all_reduce_perf failed or timed out; see $OUT/nccl-tests-allreduce.txt" >&2
  fi
fi
if (( status != 0 )); then
  echo "warning: the run stopped early (status $status); the report covers the sizes measured" >&2
fi
ls -l "$OUT" >&2
exit "$(( compute_status != 0 ? compute_status : status ))"

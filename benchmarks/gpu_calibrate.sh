#!/usr/bin/env bash
# Calibrate costmodel's α and β with NCCL over every GPU this machine shows, in under 5 minutes.
#
#   benchmarks/gpu_calibrate.sh                 # writes ./calibration/
#   OUT=/data/run1 benchmarks/gpu_calibrate.sh  # writes $OUT/
#
# Writes, in $OUT (default ./calibration):
#   measurements.csv   every size of every collective, appended as measured (costmodel's CSV)
#   profile.toml       the fitted profile (load it with --profile $OUT/profile.toml)
#   report-allreduce.txt, report-pt2pt.txt   measured against modelled; .json the same with --json
#   when nccl-tests' all_reduce_perf is on PATH (or ALL_REDUCE_PERF names it), for the same sizes:
#   nccl-tests-allreduce.txt (its log), fit-nccl-tests-allreduce.txt (costmodel's fit of it) and
#   compare-allreduce.txt (both times size by size: costmodel's batched timing against nccl-tests')
#
# Environment: OUT, SIZES (default 8B..256MiB), GPUS (default: the GPUs torch sees, which honours
# CUDA_VISIBLE_DEVICES; else nvidia-smi -L), LIMIT_S (default 300: the run is interrupted after it,
# keeping the sizes already measured), COSTMODEL (default "costmodel"; e.g. "python -m costmodel"),
# PYTHON (default python3), ALL_REDUCE_PERF (default: all_reduce_perf on PATH; "none" to skip it).  Needs costmodel with PyTorch (pip install 'costmodel-collectives[calibrate]') and
# at least 2 GPUs.  For several nodes use torchrun instead (see costmodel/calibration/bench.py).
set -euo pipefail

OUT="${OUT:-./calibration}"
SIZES="${SIZES:-8B..256MiB}"
LIMIT_S="${LIMIT_S:-300}"
PYTHON="${PYTHON:-python3}"
read -r -a COSTMODEL_CMD <<< "${COSTMODEL:-costmodel}"

if [[ -z "${GPUS:-}" ]]; then
  GPUS="$("$PYTHON" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || true)"
  if [[ -z "$GPUS" || "$GPUS" == 0 ]] && command -v nvidia-smi >/dev/null 2>&1; then
    GPUS="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
  fi
fi
GPUS="${GPUS:-0}"
if ! [[ "$GPUS" =~ ^[0-9]+$ ]] || (( GPUS < 2 )); then
  echo "error: NCCL calibration needs at least 2 GPUs but ${GPUS} are visible;" \
       "with fewer, run 'costmodel calibrate run --backend gloo' on the CPUs" >&2
  exit 2
fi

mkdir -p "$OUT"
CSV="$OUT/measurements.csv"
PROFILE="$OUT/profile.toml"
echo "calibrating NCCL on $GPUS GPUs, sizes $SIZES, at most ${LIMIT_S} s; writing $OUT/" >&2
start=$(date +%s)

# SIGINT (not SIGTERM) on the time limit: the benchmark then stops its ranks and keeps the CSV so far.
status=0
timeout --signal=INT --kill-after=30 "$LIMIT_S" \
  "${COSTMODEL_CMD[@]}" calibrate run --backend nccl --ranks "$GPUS" --sizes "$SIZES" \
  --csv "$CSV" --out "$PROFILE" || status=$?
echo "benchmark finished in $(( $(date +%s) - start )) s with status $status" >&2

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
theirs = {r.n_bytes: float(r.time_s) for r in read_log(sys.argv[2]).rows}
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
exit "$status"

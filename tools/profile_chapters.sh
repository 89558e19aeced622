#!/usr/bin/env bash
# Nsight Compute over every chapter: one profiled launch per variant (the harness's NVTX
# "profile" range), at a moderate size, with the counters that prove the lessons' points:
#   dram__bytes_read.sum / dram__bytes_write.sum   bytes moved to and from DRAM
#   l1tex__t_bytes.sum                             bytes through L1/TEX (0-ish with .cg / TMA)
#   lts__t_bytes.sum                               bytes through L2
#   sm__cycles_active.avg                          SM busy cycles
#   the WarpStateStats section                     stall reasons (long scoreboard = waiting on
#                                                  loads, barrier, wait = DEPBAR on cp.async ...)
# Usage: tools/profile_chapters.sh <bin dir> <out dir> [chapter regex]
set -uo pipefail
BIN=$1; OUT=$2; ONLY=${3:-.}
mkdir -p "$OUT"
METRICS=launch__grid_size,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__t_bytes.sum,lts__t_bytes.sum,sm__cycles_active.avg
for exe in $(ls "$BIN"/ch[0-9][0-9]_* | grep -v _exercise | grep -E "$ONLY"); do
  name=$(basename "$exe")
  case $name in
    ch15_*) size=2048 ;;          # matrix dimension
    ch16_*) size="4096 --sweep=0" ;;  # matrix dimension; no size sweep under the profiler
    ch12_*) size=8192 ;;          # matrix dimension
    ch10_*) size=192M ;;          # a multiple of its 96-byte record group
    *)      size=256M ;;          # bytes per buffer
  esac
  timeout 300 ncu --clock-control none --nvtx --nvtx-include "profile/" \
    --metrics "$METRICS" --section WarpStateStats --csv --page raw \
    "$exe" --size=$size --warmup=1 --repeats=1 --seed=1 > "$OUT/ncu.$name.csv" 2> "$OUT/ncu.$name.err"
  echo "ncu $name: exit $? ($(grep -c '^"[0-9]' "$OUT/ncu.$name.csv") kernels)"
done

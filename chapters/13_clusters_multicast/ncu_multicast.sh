#!/usr/bin/env bash
# Chapter 13: how many bytes does L2 hand to the SMs, with and without the cluster sharing?
#
# Runs Nsight Compute once per variant (v0 and every DSMEM / st.async / multicast variant) and
# profiles exactly ONE launch of its kernel: the harness's untimed launch inside the NVTX range
# "profile" (common/harness.cuh), at the main size, after the checks. (A fixed `-s N` launch
# skip would depend on how many of the chapter's check sizes fit under --size.)
#
# Usage:   chapters/13_clusters_multicast/ncu_multicast.sh <path/to/ch13_clusters_multicast> [size]
#          size: bytes per buffer, default 64M (1024 rows = 1024 blocks = 256 clusters of 4).
# Needs:   ncu on PATH (or $NCU), an sm_90 GPU, python3 for the table (raw CSV otherwise).
# Runtime: about 5 s per variant (ncu start-up dominates), ~30-40 s in all.
# Output:  one line per variant, the counters in MiB (2^20 bytes), plus the expected values.
#
# The counters (Hopper names):
#   lts__t_sectors_op_read.sum              L2 read sectors (32 B), all requesters
#   lts__t_sectors_srcunit_tex_op_read.sum  ... of those, requested by the SMs' L1/TEX/TMA side
#   l1tex__m_xbar2l1tex_read_bytes.sum      bytes the crossbar delivered into the SMs
#   lts__t_bytes.sum                        every byte through L2 (reads, writes, DRAM fills)
#   dram__bytes_read.sum / _write.sum       HBM traffic (rows in, rows out; the table is
#                                           L2-resident after the first touch)
#   gpu__time_duration.sum                  the profiled launch's time (clocks not locked)
set -uo pipefail
EXE=${1:?usage: ncu_multicast.sh <ch13_clusters_multicast binary> [size]}
SIZE=${2:-64M}
NCU=${NCU:-ncu}
command -v "$NCU" > /dev/null || { echo "ncu_multicast.sh: '$NCU' not found" >&2; exit 77; }
[ -x "$EXE" ] || { echo "ncu_multicast.sh: '$EXE' is not an executable" >&2; exit 2; }

METRICS=lts__t_sectors_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
VARIANTS="v0_bulk v1_dsmem_pull v2_st_async v3_multicast_ptx v4_multicast_cccl v5_dsmem_push"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

status=0
for v in $VARIANTS; do
  # -k: only this chapter's kernels (not the memcpy ceiling); NVTX: only the "profile" launch.
  timeout 120 "$NCU" --clock-control none --metrics "$METRICS" --csv --page raw --print-units base \
      -k regex:broadcast_v --nvtx --nvtx-include "profile/" -c 1 \
      "$EXE" --variant="$v" --size="$SIZE" --warmup=1 --repeats=1 --seed=1 \
      > "$TMP/$v.csv" 2> "$TMP/$v.err"
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "ncu_multicast.sh: $v: ncu exit $rc (last lines of its stderr follow)" >&2
    tail -5 "$TMP/$v.err" >&2
    status=1
  fi
done

if ! command -v python3 > /dev/null; then
  for v in $VARIANTS; do echo "== $v"; grep -v '^==' "$TMP/$v.csv"; done
  exit $status
fi

python3 - "$TMP" "$SIZE" $VARIANTS <<'EOF' || status=1
import csv, io, sys
tmp, size_text, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
size = int(size_text[:-1]) * mult[size_text[-1].upper()] if size_text[-1].isalpha() else int(size_text)
MiB = float(1 << 20)
cols = [("L2 rd", "lts__t_sectors_op_read.sum", 32),
        ("L2 rd tex", "lts__t_sectors_srcunit_tex_op_read.sum", 32),
        ("xbar->SM", "l1tex__m_xbar2l1tex_read_bytes.sum", 1),
        ("L2 all", "lts__t_bytes.sum", 1),
        ("DRAM rd", "dram__bytes_read.sum", 1),
        ("DRAM wr", "dram__bytes_write.sum", 1)]
unit_scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "sector": 1, "": 1,
              "ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3}
print(f"ch13 L2 -> SM traffic, one launch per variant, {size_text} per buffer "
      f"({size // 65536} rows / blocks); MiB = 2^20 bytes")
print(f"{'variant':20s}" + "".join(f"{c[0]:>11s}" for c in cols) + f"{'time us':>10s}")
for v in variants:
    text = open(f"{tmp}/{v}.csv").read()
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if len(lines) < 3:
        print(f"{v:20s}   (no profiled kernel; see ncu's stderr)")
        continue
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    head, units, vals = rows[0], rows[1], rows[2]
    def get(name):
        i = head.index(name)
        x = float(vals[i].replace(",", ""))
        return x * unit_scale.get(units[i], 1)
    out = f"{v:20s}"
    for _, name, per in cols:
        try:
            out += f"{get(name) * per / MiB:11.1f}"
        except (ValueError, IndexError):
            out += f"{'n/a':>11s}"
    try:
        out += f"{get('gpu__time_duration.sum'):10.1f}"
    except (ValueError, IndexError):
        out += f"{'n/a':>10s}"
    print(out)
rows_mib = size / MiB
print(f"expected L2 reads: rows {rows_mib:.1f} MiB + table: v0 {rows_mib:.1f} MiB "
      f"(every block reads 64 KiB), cluster variants {rows_mib / 4:.1f} MiB (once per cluster "
      f"of 4); DRAM rd ~{rows_mib:.1f} MiB and DRAM wr ~{rows_mib:.1f} MiB in every variant")
EOF
exit $status

#!/usr/bin/env python3
"""Summarise tools/profile_chapters.sh output (ncu --csv --page raw) as markdown tables.

    tools/summarize_ncu.py <dir with ncu.<chapter>.csv files> > profile.md

One table per chapter, one row per profiled launch (the variants, in registry order):
kernel, grid, DRAM read/write MB, L1/TEX MB, L2 MB, SM active cycles, and the three largest
stall reasons (warp-cycles per issued instruction, from the WarpStateStats section).
"""
import csv
import glob
import os
import re
import sys


def short(name):
    name = re.sub(r"\((?:unsigned )?(?:int|long|bool|char)\)", "", name)  # (int)8 -> 8
    name = re.sub(r"\(.*", "", name)           # drop the parameter list
    name = re.sub(r"^void ", "", name)
    depth, cut = 0, 0  # drop the namespaces before the function name, not inside <...>
    for i, c in enumerate(name):
        depth += (c == "<") - (c == ">")
        if depth == 0 and name.startswith("::", i):
            cut = i + 2
    return name[cut:].replace("tut::", "")[:48]


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main():
    folder = sys.argv[1]
    # A title of its own: without one, a Markdown reader (the Doxygen site's page list) names
    # the page after its first section, a chapter.
    print("# Nsight Compute counters of the run, chapter by chapter\n")
    for path in sorted(glob.glob(os.path.join(folder, "ncu.*.csv"))):
        chapter = os.path.basename(path)[4:-4]
        with open(path) as f:
            lines = [l for l in f if l.startswith('"')]
        if len(lines) < 3:
            print(f"## {chapter}\n\nno profile data (see ncu.{chapter}.err)\n")
            continue
        rows = list(csv.reader(lines))
        header, units, data = rows[0], rows[1], rows[2:]
        col = {h: i for i, h in enumerate(header)}
        stalls = [h for h in header if re.search(r"issue_stalled_\w+_per_warp_active|warp_latency_issue_stalled_\w+\.ratio|issue_stalled_\w+_per_issue_active", h)]
        print(f"## {chapter}\n")
        print("| # | kernel | grid | DRAM rd MB | DRAM wr MB | L1/TEX MB | L2 MB | SM active cycles | top stalls |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for i, r in enumerate(data):
            def get(metric, scale=1.0):
                if metric not in col:
                    return "-"
                v = number(r[col[metric]])
                unit = units[col[metric]]
                if v is None:
                    return "-"
                factor = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3}.get(unit, scale)
                return f"{v * factor:.1f}" if unit in ("byte", "Kbyte", "Mbyte", "Gbyte") else f"{v:.0f}"
            top = sorted(((number(r[col[s]]) or 0.0, s) for s in stalls), reverse=True)[:3]
            stall_name = re.compile(r"stalled_(\w+?)(_per|\.ratio)")
            top_text = ", ".join(f"{stall_name.search(s).group(1)} {v:.1f}" for v, s in top if v > 0)
            print(f"| {i} | `{short(r[col.get('Kernel Name', 0)])}` | {get('launch__grid_size')} | "
                  f"{get('dram__bytes_read.sum')} | {get('dram__bytes_write.sum')} | {get('l1tex__t_bytes.sum')} | "
                  f"{get('lts__t_bytes.sum')} | {get('sm__cycles_active.avg')} | {top_text} |")
        print()


if __name__ == "__main__":
    main()

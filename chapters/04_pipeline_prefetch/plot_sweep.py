#!/usr/bin/env python3
"""Plot chapter 04's sweeps from the JSON that `ch04_pipeline_prefetch --json=F` writes to
F.sweep.json, into a PNG (default: ch04_sweep.png in the current directory; the committed
figure is docs/results/h200/plots/ch04_sweep.png, drawn by tools/refresh_results.sh).

    python3 chapters/04_pipeline_prefetch/plot_sweep.py run.json.sweep.json [-o out.png]

Left panel:  GB/s against pipeline stages, one line per blocks-per-SM (stages 0 = chapter 01's
             synchronous kernel), with the memcpy ceiling measured in the same run.
Right panel: GB/s against compute rounds per word, one line per stage count, at the blocks
             per SM the run used for its intensity sweep.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display on the GPU machine
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_json", help="the <--json>.sweep.json file written by the chapter")
    ap.add_argument("-o", "--output", default="ch04_sweep.png")
    args = ap.parse_args(argv)
    with open(args.sweep_json) as f:
        data = json.load(f)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5))
    gib = data["bytes_per_buffer"] / 2**30
    fig.suptitle(f"Chapter 04 on {data['device']} ({data['sm_count']} SMs), "
                 f"{gib:g} GiB per buffer, 4 KiB tiles, 256 threads per block")

    # Sweep 1: stages x blocks per SM.
    by_blocks = {}
    for p in data["occupancy"]:
        by_blocks.setdefault(p["blocks_per_sm"], []).append((p["stages"], p["gbs"]))
    for blocks in sorted(by_blocks):
        pts = sorted(by_blocks[blocks])
        sync = [g for s, g in pts if s == 0]
        pipe = [(s, g) for s, g in pts if s > 0]
        line, = ax1.plot([s for s, _ in pipe], [g for _, g in pipe], marker="o",
                         label=f"{blocks} block{'s' if blocks > 1 else ''}/SM")
        if sync:
            ax1.scatter([0], sync, marker="x", s=60, color=line.get_color())
    ax1.axhline(data["memcpy_gbs"], color="black", linestyle="--", linewidth=1,
                label=f"cudaMemcpy D2D ({data['memcpy_gbs']:.0f} GB/s)")
    ax1.set_xlabel("pipeline stages (x at 0: chapter 01 synchronous kernel)")
    ax1.set_ylabel("GB/s (bytes read + written)")
    ax1.set_title("Bytes in flight: stages x blocks per SM (no compute)")
    ax1.set_xticks(sorted({s for pts in by_blocks.values() for s, _ in pts}))
    ax1.set_ylim(bottom=0)
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=8)

    # Sweep 2: stages x rounds.
    by_stages = {}
    for p in data["intensity"]:
        by_stages.setdefault(p["stages"], []).append((p["rounds"], p["gbs"]))
    for stages in sorted(by_stages):
        pts = sorted(by_stages[stages])
        ax2.plot([r for r, _ in pts], [g for _, g in pts], marker="o", label=f"{stages} stage(s)")
    ax2.axhline(data["memcpy_gbs"], color="black", linestyle="--", linewidth=1, label="memcpy")
    ax2.set_xscale("symlog", linthresh=1)
    rounds = sorted({p["rounds"] for p in data["intensity"]})
    ax2.set_xlim(left=-0.2, right=max(rounds) * 1.3)  # symlog would otherwise show negatives
    ax2.set_xticks(rounds)
    ax2.set_xticklabels([str(r) for r in rounds])
    ax2.set_xlabel("rounds: dependent integer multiply-adds per 32-bit word")
    ax2.set_ylabel("GB/s (bytes read + written)")
    b = data["intensity_blocks_per_sm"]
    ax2.set_title(f"Where overlap pays: stages x compute, {b} block{'s' if b > 1 else ''}/SM")
    ax2.set_ylim(bottom=0)
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=8)

    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

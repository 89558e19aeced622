#!/usr/bin/env python3
"""Plots from a run's JSON (the tour's build/results/, or docs/results/<run>/json/).

    tools/plot_results.py <json dir> <output dir> [--title "<GPU, date, command>"]

Writes, for whichever chapters' JSON is present:
  ch00_size_sweep.png      chapter 00: cudaMemcpyAsync and the v3 kernel by buffer size
  cp_async_rings.png       chapter 06: each cp.async variant, % of the ceiling
  stages_x_occupancy.png   chapter 04: GB/s by pipeline stages and blocks per SM
  alignment.png            chapter 09: GB/s of each alignment case
  tma_vs_cp_async.png      chapters 11 and 12: TMA and cp.async variants, % of the ceiling
  gemm_ladder.png          chapter 15: GFLOP/s of each step by size, with cuBLAS
  tensor_core_gemm.png     chapter 16: the same for the tensor-core GEMM steps
(the GEMM figures read <chapter>.json.sweep.json: {"sweep": [{"variant", "size", "gflops"}]})
matplotlib is optional: without it the script says so and exits 0.
"""
import argparse
import glob
import json
import os
import sys


def load(folder, pattern):
    paths = sorted(glob.glob(os.path.join(folder, pattern)))
    if not paths:
        return None
    with open(paths[0]) as f:
        return json.load(f)


def footer(fig, text):
    if text:
        fig.text(0.01, 0.005, text, fontsize=7, color="0.35")


def stages_x_occupancy(plt, folder, out, note):
    doc = load(folder, "ch04_*.json.sweep.json")
    if not doc or "occupancy" not in doc:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    by_stage = {}
    for p in doc["occupancy"]:
        by_stage.setdefault(p["stages"], []).append((p["blocks_per_sm"], p["gbs"]))
    for stages, pts in sorted(by_stage.items()):
        pts.sort()
        label = "synchronous (ch01)" if stages == 0 else f"{stages} stage{'s' if stages > 1 else ''}"
        ax.plot([b for b, _ in pts], [g for _, g in pts], marker="o",
                linestyle="--" if stages == 0 else "-", label=label)
    ax.axhline(doc["memcpy_gbs"], color="black", linewidth=0.8)
    ax.text(1, doc["memcpy_gbs"] * 1.01, "cudaMemcpyAsync D2D (same run)", fontsize=8)
    ax.set_ylim(0, doc["memcpy_gbs"] * 1.08)
    ax.set_xlabel("blocks of 256 threads per SM")
    ax.set_ylabel("GB/s (read + write)")
    ax.set_title("Chapter 04: cuda::pipeline stages x occupancy, 4 KiB tiles")
    ax.legend(fontsize=7, ncol=2)
    footer(fig, note)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = os.path.join(out, "stages_x_occupancy.png")
    fig.savefig(path, dpi=120)
    return path


def bars(plt, doc_list, title, path, note, value="rate", ylabel="GB/s"):
    names, values, colors = [], [], []
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for k, doc in enumerate(doc_list):
        for r in doc["rows"]:
            if r["timed"] and not r["negative"]:
                names.append(f"{doc['chapter'][:4]} {r['name']}")
                values.append(r[value])
                colors.append(palette[k % len(palette)])
    if not names:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(names) + 1.6))
    ax.barh(range(len(names)), values, color=colors)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(ylabel)
    if value == "pct_of_ceiling":
        ax.axvline(100, color="black", linewidth=0.8)
    ax.set_title(title)
    footer(fig, note)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=120)
    return path


def gemm_ladder(plt, folder, out, note, chapter="ch15", file_name="gemm_ladder.png",
                title="Chapter 15: the SGEMM ladder against cuBLAS (TF32 off)",
                ylabel="TFLOP/s (fp32)"):
    doc = load(folder, f"{chapter}_*.json.sweep.json")
    if not doc or "sweep" not in doc:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    series = {}
    for p in doc["sweep"]:
        series.setdefault(p["variant"], []).append((p["size"], p["gflops"]))
    for variant, pts in series.items():
        pts.sort()
        ax.plot([s for s, _ in pts], [g / 1000 for _, g in pts], marker="o", label=variant,
                linestyle="--" if "cublas" in variant else "-")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("M = N = K")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7)
    footer(fig, note)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = os.path.join(out, file_name)
    fig.savefig(path, dpi=120)
    return path


def size_sweep_ch00(plt, folder, out, note):
    doc = load(folder, "ch00_*.json.sweep.json")
    if not doc or "sweep" not in doc:
        return None
    pts = sorted(doc["sweep"], key=lambda p: p["bytes_per_buffer"])
    x = [p["bytes_per_buffer"] / 2**20 for p in pts]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(x, [p["memcpy_gbs"] for p in pts], marker="o", label="v0 cudaMemcpyAsync D2D")
    ax.plot(x, [p["v3_gbs"] for p in pts], marker="s", label="v3 LDG->STG 16 B x4/thread")
    table = load(folder, "ch00_*[!p].json")
    if table:  # input + output fit in L2 left of this line: repeats are served partly from L2
        half_l2 = table["device"]["l2_bytes"] / 2 / 2**20
        ax.axvline(half_l2, color="0.5", linestyle=":", linewidth=1)
        ax.text(half_l2, ax.get_ylim()[0], " input + output = L2", fontsize=7, color="0.35",
                rotation=90, va="bottom")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("MiB per buffer (input + output = twice this)")
    ax.set_ylabel("GB/s (bytes read + written)")
    ax.set_title("Chapter 00: copy bandwidth by buffer size")
    ax.legend(fontsize=8)
    footer(fig, note)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path = os.path.join(out, "ch00_size_sweep.png")
    fig.savefig(path, dpi=120)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plots (pip install matplotlib)")
        return 0
    os.makedirs(args.out_dir, exist_ok=True)
    made = [stages_x_occupancy(plt, args.json_dir, args.out_dir, args.title)]
    made.append(size_sweep_ch00(plt, args.json_dir, args.out_dir, args.title))
    ch06 = load(args.json_dir, "ch06_*[!p].json")
    if ch06:
        made.append(bars(plt, [ch06], "Chapter 06: cp.async rings, commit groups and mbarriers",
                         os.path.join(args.out_dir, "cp_async_rings.png"), args.title,
                         value="pct_of_ceiling", ylabel="% of cudaMemcpyAsync D2D (same run)"))
    ch09 = load(args.json_dir, "ch09_*[!p].json")
    if ch09:
        made.append(bars(plt, [ch09], "Chapter 09: alignment promise and offsets -> bandwidth",
                         os.path.join(args.out_dir, "alignment.png"), args.title))
    tma = [d for d in (load(args.json_dir, "ch11_*[!p].json"), load(args.json_dir, "ch12_*[!p].json")) if d]
    if tma:
        made.append(bars(plt, tma, "TMA vs cp.async (chapters 11 and 12)",
                         os.path.join(args.out_dir, "tma_vs_cp_async.png"), args.title,
                         value="pct_of_ceiling", ylabel="% of cudaMemcpyAsync D2D (same run)"))
    made.append(gemm_ladder(plt, args.json_dir, args.out_dir, args.title))
    made.append(gemm_ladder(plt, args.json_dir, args.out_dir, args.title, chapter="ch16",
                            file_name="tensor_core_gemm.png",
                            title="Chapter 16: tensor-core GEMM steps against cuBLAS",
                            ylabel="TFLOP/s"))
    for path in made:
        if path:
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

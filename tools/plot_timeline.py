#!/usr/bin/env python3
"""Draw in-kernel timelines (the Chrome trace JSON of --timeline=PATH) as Gantt charts.

    plot_timeline.py TRACE.json -o timeline.png            every kernel in the file, stacked
    plot_timeline.py TRACE.json --per-variant DIR          one PNG per kernel: DIR/<variant>.png
    plot_timeline.py A.json:v1_sync B.json:v2_stages4 C.json:v1_ws -o side.png
                                                           several kernels (from several files)
                                                           on one figure, one shared time axis

One row per track: a lane (a warp or a role: "consumer", "producer") with its compute phases,
and, under it, one row per ring slot with the copies in flight (issued .. landed). Copies and
compute have two colours; the tile number is written on each bar wide enough to hold it.
Waits are thin marks (begun: grey, done: black) and slot releases small ticks on the lane
row. The title names the chapter, the variant and the GPU; the footer the command that wrote
the trace, with every path in it cut to its file name (the folders were the recording
machine's, and mean nothing to a reader). --blocks N keeps the first N traced blocks of each kernel (default 2), --until-us T
cuts the time axis. matplotlib is needed (pip install matplotlib).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_timeline import events_of, load  # noqa: E402

COPY_COLOUR = "#4C72B0"
COMPUTE_COLOUR = "#DD8452"


def shown_command(command):
    """The trace's command as a footer shows it: `--timeline=/some/machine/dir/ch04.json`
    becomes `--timeline=ch04.json`, and a program path its name."""
    words = []
    for word in command.split():
        flag, eq, value = word.partition("=")
        if eq and "/" in value:
            word = f"{flag}={os.path.basename(value.rstrip('/'))}"
        elif not eq and "/" in word:
            word = os.path.basename(word.rstrip("/"))
        words.append(word)
    return " ".join(words)


def kernels_in(trace):
    """Variant keys in file order."""
    keys = [k.get("variant") for k in trace.get("otherData", {}).get("kernels", [])]
    if not keys:  # a file without the metadata: take them from the events
        for e in events_of(trace):
            v = e.get("args", {}).get("variant") if isinstance(e, dict) else None
            if v is not None and v not in keys:
                keys.append(v)
    return keys


def panel_data(trace, variant, max_blocks):
    """Rows (top to bottom) and the bars and marks on them for one kernel."""
    events = events_of(trace)
    names, titles = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        if e.get("name") == "thread_name":
            names[(e["pid"], e.get("tid"))] = e["args"]["name"]
        elif e.get("name") == "process_name":
            titles[e["pid"]] = e["args"]["name"]
    mine = [e for e in events
            if e.get("ph") != "M" and e.get("args", {}).get("variant") == variant]
    blocks = sorted({e["args"]["block"] for e in mine if "block" in e.get("args", {})})
    blocks = blocks[:max_blocks]
    rows = {}  # (pid, tid) -> {"label", "bars": [(start, dur, colour, text)], "marks": [...]}
    kernel_end = 0.0
    for e in mine:
        if e.get("cat") == "kernel":
            kernel_end = max(kernel_end, float(e["ts"]) + float(e["dur"]))
            continue
        if e["args"].get("block") not in blocks:
            continue
        key = (e["pid"], e["tid"])
        sm = titles.get(e["pid"], "").rsplit("|", 1)[-1].strip()
        row = rows.setdefault(key, {"label": f"{sm} {names.get(key, key)}".strip(),
                                    "block": e["args"]["block"], "bars": [], "marks": []})
        ts = float(e["ts"])
        tile = e["args"].get("tile")
        if e.get("ph") == "X":
            colour = COPY_COLOUR if e.get("cat") == "copy" else COMPUTE_COLOUR
            row["bars"].append((ts, float(e["dur"]), colour, str(tile)))
        else:
            row["marks"].append((ts, e.get("cat"), e.get("name", "")))
    # order: by block, then the lane rows (small tid) before the slot rows
    order = sorted(rows, key=lambda k: (rows[k]["block"], k[0], k[1]))
    return [rows[k] for k in order], kernel_end


def title_of(trace, variant, path):
    other = trace.get("otherData", {})
    kernel_title = variant
    for k in other.get("kernels", []):
        if k.get("variant") == variant:
            kernel_title = k.get("title") or variant
            if k.get("traced_ms") and k.get("untraced_ms"):
                kernel_title += (f"  (traced {k['traced_ms']:.3f} ms vs untraced "
                                 f"{k['untraced_ms']:.3f} ms)")
    chapter = other.get("chapter", os.path.basename(path))
    gpu = other.get("gpu", "")
    return f"{chapter}: {kernel_title}" + (f" | {gpu}" if gpu else "")


def draw_panel(ax, rows, title, until_us):
    ax.set_title(title, fontsize=9, loc="left")
    for y, row in enumerate(rows):
        for start, dur, colour, text in row["bars"]:
            if until_us is not None and start > until_us:
                continue
            ax.broken_barh([(start, max(dur, 0.01))], (y - 0.38, 0.76), facecolors=colour,
                           edgecolors="white", linewidth=0.4)
            ax.text(start + dur / 2, y, text, ha="center", va="center", fontsize=6,
                    color="white", clip_on=True)
        for ts, cat, name in row["marks"]:
            if until_us is not None and ts > until_us:
                continue
            if cat == "wait":
                colour = "black" if "done" in name else "0.55"
                ax.plot([ts, ts], [y - 0.45, y + 0.45], color=colour, linewidth=0.6)
            elif cat == "release":
                ax.plot([ts], [y + 0.42], marker="v", markersize=2.5, color="0.3")
            else:  # a copy whose landing was not recorded
                ax.plot([ts], [y], marker="x", markersize=3, color=COPY_COLOUR)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["label"] for r in rows], fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="x", linewidth=0.3, alpha=0.6)


def plot(panels, out, until_us, footer):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    heights = [max(len(rows), 1) * 0.28 + 0.7 for rows, _, _ in panels]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                             figsize=(12, sum(heights) + 0.8),
                             gridspec_kw={"height_ratios": heights})
    end = 0.0
    for ax, (rows, kernel_end, title) in zip(axes[:, 0], panels):
        draw_panel(ax, rows, title, until_us)
        end = max(end, kernel_end)
    axes[-1, 0].set_xlim(0, until_us if until_us is not None else end * 1.01 or 1)
    axes[-1, 0].set_xlabel("time since the kernel's first traced event (us)")
    fig.legend(handles=[Patch(color=COPY_COLOUR, label="copy in flight (issued .. landed)"),
                        Patch(color=COMPUTE_COLOUR, label="compute"),
                        Patch(color="black", label="wait done (grey: wait begun)")],
               loc="upper right", fontsize=7, ncol=3, frameon=False)
    if footer:
        fig.text(0.01, 0.005, footer, fontsize=6, color="0.35")
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    # the footer's text also goes into the PNG (a tEXt "Description"), where the docs check
    # (tools/check_docs_html.py) can read what the picture says
    fig.savefig(out, dpi=150, metadata={"Description": footer} if footer else None)
    plt.close(fig)
    print(f"wrote {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="TRACE.json or TRACE.json:variant")
    ap.add_argument("-o", "--out", help="one PNG with every selected kernel, shared time axis")
    ap.add_argument("--per-variant", metavar="DIR", help="one PNG per kernel in DIR")
    ap.add_argument("--blocks", type=int, default=2, help="traced blocks shown per kernel")
    ap.add_argument("--until-us", type=float, help="cut the time axis here")
    a = ap.parse_args()
    if not a.out and not a.per_variant:
        ap.error("give -o OUT.png and/or --per-variant DIR")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed: no plots (pip install matplotlib)")
        return 0

    panels, footers = [], []
    for spec in a.traces:
        path, _, variant = spec.partition(":") if not os.path.exists(spec) else (spec, "", "")
        trace = load(path)
        variants = [variant] if variant else kernels_in(trace)
        if variant and variant not in kernels_in(trace):
            sys.exit(f"error: {path} has no kernel '{variant}' (it has: "
                     f"{', '.join(kernels_in(trace))})")
        command = shown_command(trace.get("otherData", {}).get("command", ""))
        if command and command not in footers:
            footers.append(command)
        for v in variants:
            rows, end = panel_data(trace, v, a.blocks)
            panels.append((rows, end, title_of(trace, v, path), v))
    if not panels:
        sys.exit("error: no kernels in the trace(s)")
    footer = "; ".join(footers)
    if a.out:
        plot([p[:3] for p in panels], a.out, a.until_us, footer)
    if a.per_variant:
        os.makedirs(a.per_variant, exist_ok=True)
        for p in panels:
            plot([p[:3]], os.path.join(a.per_variant, f"{p[3]}.png"), a.until_us, footer)
    return 0


if __name__ == "__main__":
    sys.exit(main())

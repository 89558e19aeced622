#!/usr/bin/env python3
"""Turn the chapters' JSON results into the markdown tables the READMEs show.

    tools/results_to_md.py --results docs/results/h200 [--apply] [--only ch11,ch12]

<run>/json/<chapter>.json are the files written by `<chapter> --json=...` (tools/gpu_check.sh
collects them, tools/import_gpu_results.sh puts them here). <run>/RUN.md names the GPU, date,
commit and command of the run. tools/refresh_results.sh runs this with --apply. With --apply, each
chapters/NN_topic/README.md gets its table between the markers
    <!-- RESULTS:chNN -->  ...  <!-- /RESULTS:chNN -->
(the closing marker is added if missing), and chapter 00's README its size sweep between
    <!-- SWEEP:ch00 -->  ...  <!-- /SWEEP:ch00 -->
from <chapter>.json.sweep.json. Without --apply the tables are printed. --only limits
both to the named chapters. A `table_command:` line in RUN.md, when present, is what the
tables name as the command (e.g. the tour, where the run's own command line is long).
"""
import argparse
import glob
import json
import os
import re


def table(doc, run):
    metric = doc["metric"]
    dev = doc["device"]
    exe = doc["chapter"]
    # The commit and the call of the GPU job that produced this table: from the JSON (written
    # by the chapter binary: tut::build_commit, TUTORIAL_RUN_CALL), or RUN.md's for older JSON.
    json_commit = doc.get("commit") or run.get("commit")
    json_call = doc.get("call") or run.get("call")
    commit = f", commit {json_commit[:12] + ('-dirty' if json_commit.endswith('-dirty') else '')}" if json_commit else ""
    call = (f", {json_call}" if json_call.startswith("call") else f", call {json_call}") if json_call else ""
    baseline = doc["rows"][0]["name"] if doc["rows"] else "-"
    lines = [
        f"GPU: {dev['name']} (CC {dev['cc']}, {dev['sms']} SMs, L2 {dev['l2_bytes'] / 2**20:.0f} MiB, "
        f"driver supports CUDA {dev['driver'] // 1000}.{dev['driver'] % 1000 // 10}). Date: {run.get('date', '?')}{commit}{call}. "
        f"Command: `{exe} --json=...` run by `{run.get('command', '?')}`; "
        f"size {doc['size']}, seed {doc['seed']} (rerun with `--seed={doc['seed']}`). "
        f"Raw output: [docs/results/{run['name']}](../../docs/results/{run['name']}/RUN.md).",
        "",
        f"Ceiling, same run: {doc['ceiling']['name']} = {doc['ceiling']['rate']:.0f} {metric}. "
        f"\"vs v0\" is the speed relative to the first row, {baseline}, this table's baseline; "
        "blocks/SM is the resident blocks per SM of the timed grid." + method_sentence(doc),
        "",
        f"| variant | blocks/SM | median ms | min ms | {metric} | % of ceiling | vs v0 | check |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    batched = 0
    for r in doc["rows"]:
        blocks = r.get("blocks_per_sm") or "-"
        if not r["timed"]:
            lines.append(f"| {r['name']} | {blocks} | - | - | - | - | - | {r['check']} |")
            continue
        vs = f"{r['vs_v0']:.2f}x" if r["vs_v0"] > 0 else "-"
        if r.get("launches_per_sample", 1) > 1:
            batched = max(batched, r["launches_per_sample"])
        pct = f"{r['pct_of_ceiling']:.1f}%"
        if r.get("pairs", 0) > 0:  # the quartiles of the alternating pairs
            pct += f" ({r['pct_p25']:.1f}-{r['pct_p75']:.1f})"
        lines.append(f"| {r['name']} | {blocks} | {r['median_ms']:.4f} | {r['min_ms']:.4f} | "
                     f"{r['rate']:.0f} | {pct} | {vs} | {r['check']} |")
    if batched:
        lines += ["", f"Times are per launch; launches shorter than 1 ms were timed up to {batched} "
                      "back to back between one pair of events."]
    return "\n".join(lines) + "\n"


def method_sentence(doc):
    """How "% of ceiling" was measured (the alternating pairs) and the GPU's state meanwhile."""
    pairs = max((r.get("pairs", 0) for r in doc["rows"]), default=0)
    text = ""
    if pairs:
        idle = doc.get("idle_before_timing_ms", 0)
        after = f", after the GPU has idled for {idle} ms and the warm-ups," if idle else ""
        text += (f" Each row is timed{after} in alternation with the ceiling (the row, then the ceiling: "
                 f"A, B, A, B, ..., {pairs} pairs); its % of ceiling is the median of the pairs' "
                 "ratios, with their quartiles in brackets, and the ceiling's time is the median "
                 "of all its samples.")
    if doc.get("gpu_state"):
        text += f" {doc['gpu_state']}."
    return text


def size_sweep_ch00(sweep, run):
    """Chapter 00's size sweep: cudaMemcpyAsync and the v3 kernel at each buffer size."""
    def size(b):
        return f"{b >> 30} GiB" if b >= 1 << 30 else f"{b >> 20} MiB"
    lines = [
        f"From the reference run ([RUN.md](../../docs/results/{run['name']}/RUN.md): "
        f"{run.get('gpu', '?').split(' (')[0]}, {run.get('date', '?')}, `{run.get('command', '?')}`), "
        "the same invocation as the table above; each point is checked once, then the kernel "
        "and the memcpy are timed in alternation (3 warm-ups each, then kernel, memcpy, kernel, "
        "memcpy, ...: 20 pairs; each rate from its median, the % from the median of the pairs' "
        "ratios).",
        "",
        "| bytes per buffer | cudaMemcpyAsync GB/s | v3 kernel GB/s | v3 % of memcpy | check |",
        "|---:|---:|---:|---:|---|",
    ]
    for p in sweep["sweep"]:
        pct = f"{p['v3_pct_of_memcpy']:.1f}%" if "v3_pct_of_memcpy" in p else "-"
        lines.append(f"| {size(p['bytes_per_buffer'])} | {p['memcpy_gbs']:.0f} | {p['v3_gbs']:.0f} | "
                     f"{pct} | {'PASS' if p['passed'] else 'FAIL'} |")
    return "\n".join(lines) + "\n"


def replace_block(body, start, end, text):
    if end in body:
        return re.sub(re.escape(start) + r".*?" + re.escape(end),
                      lambda _: f"{start}\n{text}{end}", body, flags=re.S)
    return body.replace(start, f"{start}\n{text}{end}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--apply", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated chapter prefixes, e.g. ch11,ch12")
    args = ap.parse_args()
    only = [c for c in args.only.split(",") if c]
    run_md = os.path.join(args.results, "RUN.md")
    run = {"name": os.path.basename(os.path.normpath(args.results))}
    if os.path.exists(run_md):
        with open(run_md) as f:
            for key, value in re.findall(r"^(gpu|date|commit|call|command|table_command): (.*)$", f.read(), re.M):
                run[key] = value
    run["command"] = run.get("table_command", run.get("command", "?"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in sorted(glob.glob(os.path.join(args.results, "json", "ch[0-9][0-9]_*.json"))):
        if path.endswith(".sweep.json") or ".json." in os.path.basename(path):
            continue
        with open(path) as f:
            doc = json.load(f)
        chapter = doc["chapter"]                     # ch01_sync_shared_loads
        if only and not any(chapter.startswith(c) for c in only):
            continue
        number = chapter[2:4]
        text = table(doc, run)
        if not args.apply:
            print(f"## {chapter}\n\n{text}")
            continue
        readme = os.path.join(root, "chapters", chapter[2:], "README.md")
        if not os.path.exists(readme):
            print(f"skip {chapter}: no {readme}")
            continue
        with open(readme) as f:
            body = f.read()
        start, end = f"<!-- RESULTS:ch{number} -->", f"<!-- /RESULTS:ch{number} -->"
        if start not in body:
            print(f"skip {chapter}: no {start} marker")
            continue
        body = replace_block(body, start, end, text)
        sweep_path = path + ".sweep.json"
        if number == "00" and os.path.exists(sweep_path):
            with open(sweep_path) as f:
                sweep = json.load(f)
            body = replace_block(body, "<!-- SWEEP:ch00 -->", "<!-- /SWEEP:ch00 -->",
                                 size_sweep_ch00(sweep, run))
        with open(readme, "w") as f:
            f.write(body)
        print(f"updated {readme}")


if __name__ == "__main__":
    main()

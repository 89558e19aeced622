#!/usr/bin/env python3
"""The tour's summary: each chapter's point, from the chapters' JSON.

    tools/tour_summary.py <json dir> [--out tour.json] [--markdown]

<json dir> holds <chapter>.json as written by `<chapter> --json=...` (the tour's
build/results/, or docs/results/h200/json/), and optionally tour_status.txt (written by
cmake/tour.cmake: one line per chapter, "<chapter><TAB><exit code><TAB><reason>"), so that a
chapter that skipped or failed, and therefore wrote no JSON, still gets its line.

Each chapter names its point in its JSON: `tour_lesson` is the key of the variant that shows
what the chapter teaches, in the regime it teaches it (for example at 1 block per SM, or at the
stage count that matters), and `tour_baseline` the variant it is measured against in that same
regime. The summary shows both rows, their rates and % of the ceiling measured in the same
run, and the ratio lesson / baseline. It prints a text table (or, with --markdown, a markdown
table) and, with --out, writes tour.json: {"summary": [one entry per chapter], "chapters":
[every chapter's JSON]}.
"""
import argparse
import glob
import json
import os
import sys


def load_results(folder):
    docs = {}
    for path in sorted(glob.glob(os.path.join(folder, "ch[0-9][0-9]_*.json"))):
        name = os.path.basename(path)
        if name.count(".json") != 1 or not name.endswith(".json"):
            continue  # <chapter>.json.sweep.json and the like
        with open(path) as f:
            doc = json.load(f)
        docs[doc["chapter"]] = doc
    return docs


def load_status(folder):
    status = {}
    path = os.path.join(folder, "tour_status.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 2:
                    status[parts[0]] = (int(parts[1]), parts[2] if len(parts) > 2 else "")
    return status


def row(doc, key):
    for r in doc["rows"]:
        if r["key"] == key:
            return r
    return None


def summarize(chapter, doc, status):
    """One chapter's summary entry (a dict)."""
    entry = {"chapter": chapter}
    code, reason = status.get(chapter, (0 if doc else None, ""))
    if doc is None:
        entry["check"] = ("SKIP" if code == 77 else f"FAIL (exit {code})") + (
            f": {reason}" if reason else "")
        return entry
    entry["metric"] = doc["metric"]
    entry["check"] = "PASS" if all(r["passed"] != r["negative"] or r["skipped"]
                                   for r in doc["rows"]) else "FAIL"
    for side in ("lesson", "baseline"):
        key = doc.get("tour_" + side, "")
        r = row(doc, key) if key else None
        if r is None or not r["timed"]:
            entry[side] = {"key": key or None, "name": None}
            continue
        entry[side] = {"key": key, "name": r["name"], "rate": r["rate"],
                       "pct_of_ceiling": r["pct_of_ceiling"], "blocks_per_sm": r.get("blocks_per_sm")}
    lesson, baseline = entry["lesson"], entry["baseline"]
    if lesson.get("rate") and baseline.get("rate"):
        entry["ratio"] = lesson["rate"] / baseline["rate"]
    return entry


def cells(entry):
    """The table row; a skip's reason goes below the table (skip_lines), not into its row."""
    def side(s):
        if not s or not s.get("name"):
            return ["-", "-", "-"]
        return [s["name"], f"{s['rate']:.0f} {entry['metric']}", f"{s['pct_of_ceiling']:.1f}%"]
    ratio = f"{entry['ratio']:.2f}x" if "ratio" in entry else "-"
    check = entry["check"].split(":", 1)[0] if entry["check"].startswith("SKIP") else entry["check"]
    return [entry["chapter"]] + side(entry.get("lesson")) + side(entry.get("baseline")) + [
        ratio, check]


REFERENCE = ("reference results: docs/results/h200/ (summary: README.md, \"The tour on the "
             "reference GPU\")")


def skip_lines(entries):
    """One line per distinct skip reason, naming the chapters it stopped."""
    reasons = {}
    for e in entries:
        if e["check"].startswith("SKIP"):
            reason = e["check"].partition(": ")[2] or "no reason given"
            if reason.startswith(e["chapter"] + " "):  # "chNN_topic needs ...": one line for all
                reason = reason[len(e["chapter"]) + 1:]
            reasons.setdefault(reason, []).append(e["chapter"][:4])
    return [f"skipped ({', '.join(chs)}): {reason}" for reason, chs in reasons.items()]


HEADER = ["chapter", "lesson", "rate", "% ceil", "baseline", "rate", "% ceil",
          "lesson/baseline", "check"]


def text_table(entries):
    rows = [HEADER] + [cells(e) for e in entries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    out = []
    for k, r in enumerate(rows):
        out.append(" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            out.append("-+-".join("-" * w for w in widths))
    return "\n".join(out)


def markdown_table(entries):
    out = ["| " + " | ".join(HEADER) + " |",
           "|---|---|---:|---:|---|---:|---:|---:|---|"]
    out += ["| " + " | ".join(cells(e)) + " |" for e in entries]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json_dir")
    ap.add_argument("--out", help="write tour.json here")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = ap.parse_args()
    docs = load_results(args.json_dir)
    status = load_status(args.json_dir)
    chapters = sorted(set(docs) | set(status))
    if not chapters:
        print(f"no chapter results in {args.json_dir}", file=sys.stderr)
        return 1
    entries = [summarize(c, docs.get(c), status) for c in chapters]
    if not docs:
        # Nothing ran (no GPU, typically): no table of dashes, one line and where to look.
        print(f"nothing was measured: none of the {len(chapters)} chapters ran; " + REFERENCE)
        for line in skip_lines(entries):
            print(line)
    else:
        print("each chapter's point: its lesson variant against its baseline, in the same "
              "regime and the same run")
        print(markdown_table(entries) if args.markdown else text_table(entries))
        for line in skip_lines(entries):
            print(line)
    if args.out:
        with open(args.out + ".tmp", "w") as f:
            json.dump({"summary": entries, "chapters": [docs[c] for c in chapters if c in docs]},
                      f, indent=1)
        os.replace(args.out + ".tmp", args.out)
        print(f"all results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Write README.md's two verbatim outputs from the committed reference run, or check them.

    tools/readme_verbatim.py [--results DIR] [--readme FILE] [--apply]

README.md quotes two outputs of the reference run word for word: one chapter's console output
(chapter 01, from <results>/logs/tour.log, its block from the line that names the chapter to
its RESULT line) and the tour's summary table (<results>/logs/tour-summary.txt). Each stands
in a fenced block between the markers

    <!-- VERBATIM:ch01 -->   ...   <!-- /VERBATIM:ch01 -->
    <!-- VERBATIM:tour -->   ...   <!-- /VERBATIM:tour -->

Without --apply it compares the README's blocks with the run and exits 1 on a difference
(CTest readme_verbatim, label prose); with --apply it rewrites them (tools/refresh_results.sh).
Exit 2 when a marker or a source is missing.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chapter_block(log_text, chapter):
    """The console output of `chapter` in the tour log: its first line to its RESULT line."""
    lines = log_text.split("\n")
    for i, line in enumerate(lines):
        if line.strip() == chapter:
            for j in range(i, len(lines)):
                if lines[j].startswith("RESULT:"):
                    return "\n".join(lines[i:j + 1])
    return None


def sources(results):
    out = {}
    log = os.path.join(results, "logs", "tour.log")
    summary = os.path.join(results, "logs", "tour-summary.txt")
    if os.path.exists(log):
        with open(log) as f:
            out["ch01"] = chapter_block(f.read(), "ch01_sync_shared_loads")
    if os.path.exists(summary):
        with open(summary) as f:
            # the last line names where the summary's JSON went on the machine that wrote it
            out["tour"] = "\n".join(l for l in f.read().rstrip("\n").split("\n")
                                    if not l.startswith("all results:"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", default=os.path.join(ROOT, "docs", "results", "h200"))
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--apply", action="store_true")
    args = ap.parse_args()
    with open(args.readme) as f:
        text = f.read()
    src = sources(args.results)
    new = text
    for name in ("ch01", "tour"):
        body = src.get(name)
        if not body:
            print(f"error: the reference run in {args.results} has no output for '{name}'")
            return 2
        pattern = re.compile(rf"(<!-- VERBATIM:{name} -->\n```\n)(.*?)(\n```\n<!-- /VERBATIM:{name} -->)", re.S)
        if not pattern.search(new):
            print(f"error: {args.readme} lacks the markers <!-- VERBATIM:{name} --> ... "
                  f"<!-- /VERBATIM:{name} --> around a fenced block")
            return 2
        new = pattern.sub(lambda m: m.group(1) + body + m.group(3), new)
    if new == text:
        print(f"{os.path.relpath(args.readme, ROOT)}: both verbatim outputs match the run")
        return 0
    if args.apply:
        with open(args.readme, "w") as f:
            f.write(new)
        print(f"{os.path.relpath(args.readme, ROOT)}: verbatim outputs rewritten from {args.results}")
        return 0
    print(f"FAIL {os.path.relpath(args.readme, ROOT)}: a verbatim output differs from the run; "
          "run tools/refresh_results.sh (or tools/readme_verbatim.py --apply)")
    return 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Put each chapter's Nsight Compute table (from a run's profile.md) into its README.

    tools/profile_to_md.py --results docs/results/<run> [--apply]

The table goes between <!-- PROFILE:chNN --> and <!-- /PROFILE:chNN -->; a README without the
markers gets a "Hardware counters" section appended. How to read the columns is explained once,
in docs/counters.md.
"""
import argparse
import os
import re

SIZES = {"ch12": "an 8192 x 8192 matrix", "ch15": "M = N = K = 2048", "ch16": "M = N = K = 4096",
         "ch10": "192 MiB per buffer"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--apply", action="store_true")
    args = ap.parse_args()
    run = os.path.basename(os.path.normpath(args.results))
    with open(os.path.join(args.results, "profile.md")) as f:
        sections = re.split(r"^## ", f.read(), flags=re.M)[1:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for section in sections:
        chapter, _, table = section.partition("\n")
        number = chapter[2:4]
        size = SIZES.get(chapter[:4], "256 MiB per buffer")
        body = (f"Nsight Compute, one launch per variant (registry order; the harness's NVTX `profile` "
                f"range) at {size}, run [{run}](../../docs/results/{run}/RUN.md) "
                f"(`tools/profile_chapters.sh`). How to read the columns: "
                f"[docs/counters.md](../../docs/counters.md).\n{table.rstrip()}\n")
        if not args.apply:
            print(f"## {chapter}\n{body}")
            continue
        readme = os.path.join(root, "chapters", chapter[2:], "README.md")
        if not os.path.exists(readme):
            continue
        with open(readme) as f:
            text = f.read()
        start, end = f"<!-- PROFILE:ch{number} -->", f"<!-- /PROFILE:ch{number} -->"
        block = f"{start}\n{body}{end}"
        if start in text and end in text:
            text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
        else:
            text = text.rstrip() + f"\n\n## Hardware counters\n\n{block}\n"
        with open(readme, "w") as f:
            f.write(text)
        print(f"updated {readme}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Assert which instructions a chapter's kernels compile to (PTX or SASS).

Each chapter keeps its assertions in chapters/NN_topic/asm_expect.txt, one per line:

    <ptx|sass>  <arch|*>  <kernel-regex|*>  <require|forbid>  <instruction-regex>

  arch            sm_80, sm_90, ... or * for every architecture the chapter is built for
  kernel-regex    searched in the (mangled) kernel name; * means the whole file. A regex that
                  names no kernel is an error, so a renamed kernel cannot silently pass.
  require/forbid  the instruction regex must / must not occur in that kernel's code
  Lines starting with # are comments.

Example (chapter 01: synchronous loads, and no cp.async anywhere):
    ptx  *  stream_v1  require  ld\\.global
    ptx  *  *          forbid   cp\\.async
    sass sm_90 stream_v1 require LDG\\.E
"""
import argparse
import re
import subprocess
import sys


def split_ptx(text):
    """PTX text -> {kernel name: body} for each .entry."""
    kernels = {}
    for m in re.finditer(r"\.entry\s+([\w$]+)\s*\(", text):
        start = m.start()
        nxt = text.find(".entry", m.end())
        kernels[m.group(1)] = text[start: nxt if nxt != -1 else len(text)]
    return kernels


def ptx_arch(path):
    m = re.search(r"\.sm_(\d+a?)\.ptx$", path)
    return "sm_" + m.group(1) if m else "?"


def split_sass(text):
    """cuobjdump --dump-sass output -> {arch: {function name: body}}."""
    result = {}
    arch = "?"
    current = None
    for line in text.splitlines():
        m = re.search(r"arch = (sm_\d+a?)", line)
        if m:
            arch = m.group(1)
            current = None
            continue
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = m.group(1)
            result.setdefault(arch, {})[current] = ""
            continue
        if current is not None:
            result[arch][current] += line + "\n"
    return result


def parse_expectations(path, kind):
    rules = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 4)
            if len(parts) != 5 or parts[0] not in ("ptx", "sass") or parts[3] not in ("require", "forbid"):
                sys.exit(f"{path}:{number}: malformed line: {line}")
            if parts[0] == kind:
                rules.append((number, parts[1], parts[2], parts[3], parts[4]))
    return rules


def check(per_arch, rules, label):
    failures = 0
    checked = 0
    for number, arch, kernel_re, mode, pattern in rules:
        archs = sorted(per_arch) if arch == "*" else [arch]
        for a in archs:
            if a not in per_arch:
                # An architecture this build does not produce: nothing to check here.
                print(f"  skip line {number}: {a} not built")
                continue
            kernels = per_arch[a]
            if kernel_re == "*":
                bodies = {"<all>": "".join(kernels.values())}
            else:
                bodies = {k: v for k, v in kernels.items() if re.search(kernel_re, k)}
                if not bodies:
                    print(f"FAIL line {number}: no kernel matches '{kernel_re}' in {label} {a}; "
                          f"kernels: {', '.join(sorted(kernels)) or '(none)'}")
                    failures += 1
                    continue
            for name, body in bodies.items():
                found = re.search(pattern, body) is not None
                ok = found if mode == "require" else not found
                checked += 1
                status = "ok  " if ok else "FAIL"
                print(f"{status} {label} {a} {name}: {mode} /{pattern}/")
                failures += 0 if ok else 1
    return checked, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=["ptx", "sass"], required=True)
    ap.add_argument("--expect", required=True)
    ap.add_argument("--ptx", nargs="*", default=[])
    ap.add_argument("--binary")
    ap.add_argument("--cuobjdump", default="cuobjdump")
    ap.add_argument("--dump", help="also write the disassembly here")
    args = ap.parse_args()

    rules = parse_expectations(args.expect, args.kind)
    if not rules:
        print(f"no '{args.kind}' assertions in {args.expect}")
        sys.exit(1)
    if args.kind == "ptx":
        per_arch = {}
        for path in args.ptx:
            with open(path) as f:
                per_arch[ptx_arch(path)] = split_ptx(f.read())
    else:
        proc = subprocess.run([args.cuobjdump, "--dump-sass", args.binary],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"cuobjdump failed: {proc.stderr}")
        if args.dump:
            with open(args.dump, "w") as f:
                f.write(proc.stdout)
        per_arch = split_sass(proc.stdout)
    checked, failures = check(per_arch, rules, args.kind)
    print(f"assertions: {checked - failures} ok, {failures} wrong")
    sys.exit(1 if failures or checked == 0 else 0)


if __name__ == "__main__":
    main()

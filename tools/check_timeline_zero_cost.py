#!/usr/bin/env python3
"""Check that tracing compiles away: compare the SASS of traced-when-on kernels, instantiated
with tut::TraceOff, against the same kernels with the trace calls deleted.

    check_timeline_zero_cost.py --nvcc NVCC --cuobjdump CUOBJDUMP --include ROOT
                                --arch sm_80 --arch sm_90 SAMPLE.cu

SAMPLE.cu defines, for each kernel NAME, a template NAME<..., Tracing> and NAME_plain<...>.
For every architecture, every TraceOff instance of NAME must have exactly the instructions of
the NAME_plain instance with the same template arguments (same opcodes, same operands, same
parameter offsets), and the TraceOn instance must read %globaltimer and %smid and store
16-byte records. Exit 0 pass, 1 fail, 77 when cuobjdump is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def sass_functions(text):
    funcs, current = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = m.group(1)
            funcs[current] = []
            continue
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if current and m:
            funcs[current].append(m.group(1))
    return funcs


def pairs(funcs):
    """(traceoff name, plain name, template args) for each instance with a plain twin. Names
    are mangled: <len><name>I<args>N3tut8TraceOffEE... for NAME<args..., tut::TraceOff>."""
    out = []
    for name in funcs:
        for m in re.finditer(r"\d+", name):
            base = name[m.end():m.end() + int(m.group())]
            rest = name[m.end() + int(m.group()):]
            t = re.match(r"I((?:L[ij]-?\d+E)*)N3tut8TraceOffE", rest)
            if not t or not re.fullmatch(r"[A-Za-z_]\w*", base):
                continue
            plain = f"{len(base) + 6}{base}_plainI{t.group(1)}E"
            out += [(name, other, t.group(1)) for other in funcs if plain in other]
            break
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--cuobjdump", default="")
    ap.add_argument("--include", required=True)
    ap.add_argument("--arch", action="append", required=True)
    ap.add_argument("sample")
    a = ap.parse_args()
    cuobjdump = a.cuobjdump if a.cuobjdump and os.path.exists(a.cuobjdump) else shutil.which("cuobjdump")
    if not cuobjdump:
        print("SKIP: cuobjdump not found (see .ci/run for how CI installs it)")
        return 77
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for arch in a.arch:
            cubin = os.path.join(tmp, f"sample.{arch}.cubin")
            subprocess.run([a.nvcc, "-std=c++17", "-O3", f"-arch={arch}", "-cubin",
                            "-I", a.include, "-o", cubin, a.sample], check=True)
            env = dict(os.environ, PATH=os.path.dirname(cuobjdump) + os.pathsep + os.environ.get("PATH", ""))
            text = subprocess.run([cuobjdump, "-sass", cubin], check=True, capture_output=True,
                                  text=True, env=env).stdout
            funcs = sass_functions(text)
            found = pairs(funcs)
            if not found:
                print(f"FAIL {arch}: no TraceOff/plain kernel pairs in {a.sample}")
                failures += 1
            for off, plain, args in found:
                same = funcs[off] == funcs[plain]
                print(f"{'ok  ' if same else 'FAIL'} {arch}: {off} == {plain} "
                      f"({len(funcs[off])} vs {len(funcs[plain])} instructions)")
                if not same:
                    for i, (x, y) in enumerate(zip(funcs[off], funcs[plain])):
                        if x != y:
                            print(f"     first difference at instruction {i}: {x!r} vs {y!r}")
                            break
                    failures += 1
            on = [n for n in funcs if "N3tut7TraceOnE" in n]
            for n in on:
                body = "\n".join(funcs[n])
                missing = [p for p in ("SR_GLOBALTIMER", "SR_VIRTUALSMID", "STG.E.128")
                           if p not in body]
                print(f"{'ok  ' if not missing else 'FAIL'} {arch}: {n} records"
                      + (f" (missing {', '.join(missing)})" if missing else ""))
                failures += bool(missing)
            if not on:
                print(f"FAIL {arch}: no TraceOn instance")
                failures += 1
    print("zero cost:", "PASS" if not failures else f"FAIL ({failures})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

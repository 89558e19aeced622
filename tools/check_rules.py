#!/usr/bin/env python3
"""Every asm_expect rule can fail: build each counterexample and require the rule to reject it.

    tools/check_rules.py --chapter chapters/11_tma_bulk_copies --ptx-archs 90 --sass-archs 90
        [--ptx build/ptx/ch11_tma_bulk_copies.sm_90.ptx ...] [--binary build/bin/ch11_...]
        [--nvcc nvcc] [--cuobjdump cuobjdump] [--work DIR] [--jobs N] [--root DIR]

CTest runs it as chNN_topic_rules (label rules; cmake/TutorialChapter.cmake). For the chapter's
asm_expect.txt (format: tools/check_asm.py):

1. Coverage. Every `require` rule needs at least one `mutate` line. A `forbid` rule needs one
   too, unless its regex matches some kernel of the unmodified build that the rule does not
   select (the kernel regex is not '*'), which shows that the regex can match at all. A rule
   left uncovered fails the test, named by its line.
2. Counterexamples. For each distinct mutation (file, substring, delete/replace): the chapter
   folder is copied to <work>/m<N>/chapters/NN_topic/ (the copy is searched before the source
   tree, so both short includes and root-relative includes of the chapter's files see the
   copy; a mutation of a file named `common/...` copies common/ to <work>/m<N>/common/ and
   changes it there, for the fences and waits the chapter takes from common/), the one line
   is changed (an error if the substring is on zero or several lines),
   main.cu is compiled to PTX (nvcc -ptx -std=c++17 -lineinfo -O3 -arch=compute_XX, as the
   chapter's PTX rule does) for the architectures the mutation's rules need, and, for sass
   rules, the PTX is assembled by ptxas for sm_XX and disassembled with cuobjdump. Every rule
   of those kinds and architectures is checked on the result; the rules the mutation belongs
   to must FAIL; the other rules that fail are listed (for information).

--ptx / --binary are the unmodified build's PTX files and executable (for step 1; without
them step 1 compiles the unmodified chapter itself). Exit status 0 when every rule is covered
and every counterexample is rejected; 1 otherwise; 2 on a malformed mutation.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_asm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def arch_num(a):
    """'90a-real' / 'sm_90a' / '90' -> '90a'."""
    m = re.search(r"(\d+a?)", a)
    if not m:
        sys.exit(f"bad architecture {a!r}")
    return m.group(1)


class Builder:
    def __init__(self, args, chapter_dir):
        self.args = args
        self.chapter_dir = chapter_dir
        self.topic = os.path.basename(chapter_dir)
        self.work = args.work
        self.ptxas = os.path.join(os.path.dirname(shutil.which(args.nvcc) or args.nvcc), "ptxas")
        if not os.path.exists(self.ptxas):
            self.ptxas = shutil.which("ptxas") or "ptxas"

    def run(self, cmd):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            return proc.stdout + proc.stderr
        return None

    def build(self, tag, mutation, ptx_archs, sass_archs):
        """Copy, mutate, build. Returns (per_arch_ptx, per_arch_sass, error text)."""
        top = os.path.join(self.work, tag)
        copy = os.path.join(top, "chapters", self.topic)
        shutil.rmtree(top, ignore_errors=True)
        shutil.copytree(self.chapter_dir, copy)
        if mutation is not None:
            _, file, sub, op, new = mutation
            if file.startswith("common/"):
                # A fence or wait that lives in common/ (shared by several chapters): the whole
                # folder is copied beside the chapter's copy, so every include of a common/
                # header, root-relative or short, reads the copy (-I<top> comes before the
                # source tree), and the one line is changed there.
                shutil.copytree(os.path.join(self.args.root, "common"), os.path.join(top, "common"))
                path = os.path.join(top, file)
            else:
                path = os.path.join(copy, file)
            if not os.path.exists(path):
                return None, None, f"no file {file} in {self.topic} or common/"
            with open(path) as f:
                lines = f.read().split("\n")
            hits = [i for i, l in enumerate(lines) if sub in l]
            if len(hits) != 1:
                where = ", ".join(str(i + 1) for i in hits) or "none"
                return None, None, (f"the substring {sub!r} must be on exactly one line of {file}; "
                                    f"lines: {where}")
            i = hits[0]
            if op == "delete":
                del lines[i]
            else:
                lines[i] = lines[i].replace(sub, new)
            with open(path, "w") as f:
                f.write("\n".join(lines))
        per_ptx, per_sass = {}, {}
        for a in sorted(set(ptx_archs) | set(sass_archs)):
            out = os.path.join(top, f"main.sm_{a}.ptx")
            err = self.run([self.args.nvcc, "-ptx", "-std=c++17", "-lineinfo", "-O3", f"-arch=compute_{a}",
                            f"-I{top}", f"-I{self.args.root}", f"-I{copy}", os.path.join(copy, "main.cu"),
                            "-o", out])
            if err:
                return None, None, f"nvcc -ptx (compute_{a}) failed:\n{err[-3000:]}"
            with open(out) as f:
                text = f.read()
            if a in ptx_archs:
                per_ptx[f"sm_{a}"] = check_asm.split_ptx(text)
            if a in sass_archs:
                cubin = os.path.join(top, f"main.sm_{a}.cubin")
                err = self.run([self.ptxas, f"-arch=sm_{a}", "-O3", "-lineinfo", out, "-o", cubin])
                if err:
                    return None, None, f"ptxas (sm_{a}) failed:\n{err[-3000:]}"
                proc = subprocess.run([self.args.cuobjdump, "--dump-sass", cubin], capture_output=True, text=True)
                if proc.returncode != 0:
                    return None, None, f"cuobjdump failed: {proc.stderr}"
                sass = check_asm.split_sass(proc.stdout)
                per_sass[f"sm_{a}"] = {k: v for d in sass.values() for k, v in d.items()}
        if not self.args.keep:
            shutil.rmtree(top, ignore_errors=True)
        return per_ptx, per_sass, None


def archs_of(rule, ptx_archs, sass_archs):
    pool = ptx_archs if rule.kind == "ptx" else sass_archs
    if rule.arch == "*":
        return list(pool)
    a = arch_num(rule.arch)
    return [a] if a in pool else []


def quiet(_):
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chapter", required=True, help="the chapter folder")
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--ptx-archs", nargs="+", required=True, help="e.g. 80 90 (the PTX listings)")
    ap.add_argument("--sass-archs", nargs="*", default=[], help="the binary's, e.g. 80 90 or 90a")
    ap.add_argument("--ptx", nargs="*", default=[], help="the unmodified build's PTX files")
    ap.add_argument("--binary", help="the unmodified build's executable")
    ap.add_argument("--nvcc", default="nvcc")
    ap.add_argument("--cuobjdump", default="", help="without it the sass rules are not checked")
    ap.add_argument("--work", help="scratch folder (default: a temporary one)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the mutated copies")
    args = ap.parse_args()
    args.root = os.path.abspath(args.root)
    chapter_dir = os.path.abspath(args.chapter)
    if not args.work:
        import tempfile
        args.work = tempfile.mkdtemp(prefix="rules-")
    os.makedirs(args.work, exist_ok=True)
    ptx_archs = [arch_num(a) for a in args.ptx_archs]
    sass_archs = [arch_num(a) for a in args.sass_archs] if args.cuobjdump else []
    expect = os.path.join(chapter_dir, "asm_expect.txt")
    rules = check_asm.parse_rules(expect)
    rel = os.path.relpath(expect, args.root)
    if not args.cuobjdump:
        print("note: no cuobjdump, so the sass rules' counterexamples are not built (listed as skipped)")
    builder = Builder(args, chapter_dir)
    problems = []
    started = time.time()

    # 1. Coverage.
    base_ptx, base_sass = {}, {}
    for path in args.ptx:
        with open(path) as f:
            base_ptx[check_asm.ptx_arch(path)] = check_asm.split_ptx(f.read())
    if args.binary and sass_archs:
        base_sass = check_asm.split_sass(check_asm.disassemble(args.cuobjdump, args.binary))
    if not base_ptx or (sass_archs and not base_sass):
        p, s, err = builder.build("base", None, ptx_archs if not base_ptx else [],
                                  sass_archs if not base_sass else [])
        if err:
            print(f"FAIL the unmodified chapter does not build: {err}")
            sys.exit(1)
        base_ptx = base_ptx or p
        base_sass = base_sass or s
    for r in rules:
        if r.mutations:
            continue
        if r.kind == "sass" and not sass_archs:
            continue
        if r.mode == "require":
            problems.append(f"{rel}:{r.number}: require rule without a mutate line (nothing shows it "
                            f"can fail): {r.kind} {r.arch} {r.kernel_re} require {r.pattern}")
            continue
        base = base_ptx if r.kind == "ptx" else base_sass
        shown = []
        if r.kernel_re != "*":
            for a in archs_of(r, ptx_archs, sass_archs):
                for name, body in base.get(f"sm_{a}", {}).items():
                    if not re.search(r.kernel_re, name) and re.search(r.pattern, body):
                        shown.append(name)
        if shown:
            print(f"ok   line {r.number}: forbid /{r.pattern}/ matches another kernel ({shown[0]})")
        else:
            problems.append(f"{rel}:{r.number}: forbid rule whose regex matches no other kernel of the "
                            f"build and that has no mutate line: {r.kind} {r.arch} {r.kernel_re} "
                            f"forbid {r.pattern}")

    # 2. Counterexamples: one build per distinct mutation, for the archs its rules need.
    owners = {}
    for r in rules:
        for m in r.mutations:
            key = m[1:]
            owners.setdefault(key, {"rules": [], "lines": []})
            owners[key]["rules"].append(r)
            owners[key]["lines"].append(m[0])
    jobs = []
    for k, (key, info) in enumerate(owners.items()):
        need_ptx = sorted({a for r in info["rules"] if r.kind == "ptx" for a in archs_of(r, ptx_archs, sass_archs)})
        need_sass = sorted({a for r in info["rules"] if r.kind == "sass" for a in archs_of(r, ptx_archs, sass_archs)})
        if not need_ptx and not need_sass:
            for r in info["rules"]:
                print(f"skip line {info['lines'][0]}: rule {r.number}'s architectures are not built here")
            continue
        jobs.append((k, key, info, need_ptx, need_sass))

    def rules_failing(p, s):
        """The rules (by line number) that the mutated build's PTX p and SASS s break."""
        failed = {}
        for kind, per in (("ptx", p), ("sass", s)):
            if per:
                kind_rules = [r for r in rules if r.kind == kind and
                              set(archs_of(r, ptx_archs, sass_archs)) & {arch_num(a) for a in per}]
                _, _, f = check_asm.evaluate(per, kind_rules, kind, out=quiet)
                failed.update(f)
        return failed

    def one(job):
        # The newest architecture first: a counterexample that its own rules already reject
        # there has made its point, and CI saves the other build (most rules are '*', checked
        # on every architecture). Only when a rule survives are the other architectures built.
        k, key, info, need_ptx, need_sass = job
        t0 = time.time()
        mutation = (info["lines"][0],) + key
        newest = max(set(need_ptx) | set(need_sass), key=lambda a: int(re.sub(r"\D", "", a)))
        first_ptx = [a for a in need_ptx if a == newest]
        first_sass = [a for a in need_sass if a == newest]
        p, s, err = builder.build(f"m{k}", mutation, first_ptx, first_sass)
        if not err and (first_ptx != need_ptx or first_sass != need_sass):
            failed = rules_failing(p, s)
            if any(r.number not in failed for r in info["rules"]):
                rest_ptx = [a for a in need_ptx if a != newest]
                rest_sass = [a for a in need_sass if a != newest]
                p2, s2, err = builder.build(f"m{k}b", mutation, rest_ptx, rest_sass)
                p, s = {**p, **(p2 or {})}, {**s, **(s2 or {})}
        return job, p, s, err, time.time() - t0

    print(f"{len(jobs)} counterexample(s) to build, {args.jobs} at a time", flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(one, j) for j in jobs]
        results = []
        for f in concurrent.futures.as_completed(futures):
            results.append(f.result())
            print(f"  built {len(results)} of {len(jobs)} ({results[-1][4]:.0f} s)", flush=True)
    results.sort(key=lambda r: r[0][0])
    for (k, key, info, need_ptx, need_sass), p, s, err, secs in results:
        file, sub, op, new = key
        what = f'{file} "{sub}" ' + ("delete" if op == "delete" else f'replace "{new}"')
        lines = ", ".join(str(n) for n in info["lines"])
        if err:
            problems.append(f"{rel}:{lines}: mutate {what}: {err}")
            print(f"FAIL mutate {what} (line {lines}): {err.splitlines()[0]}")
            continue
        failed = rules_failing(p, s)
        caught = [r for r in info["rules"] if r.number in failed]
        missed = [r for r in info["rules"] if r.number not in failed]
        others = sorted(n for n in failed if n not in {r.number for r in info["rules"]})
        status = "ok  " if not missed else "FAIL"
        print(f"{status} mutate {what} ({secs:.0f} s): rejected by line(s) "
              f"{', '.join(str(r.number) for r in caught) or 'none'}"
              + (f"; also failing: {', '.join(map(str, others))}" if others else ""))
        for r in missed:
            problems.append(f"{rel}:{r.number}: the counterexample (mutate line {lines}: {what}) "
                            f"still passes this rule: {r.kind} {r.arch} {r.kernel_re} {r.mode} {r.pattern}")
    for prob in problems:
        print("FAIL " + prob)
    n_rules = sum(1 for r in rules if r.kind == "ptx" or sass_archs)
    print(f"rules: {n_rules} checked, {len(jobs)} counterexample build(s), {len(problems)} problem(s), "
          f"{time.time() - started:.0f} s")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Assert which instructions a chapter's kernels compile to (PTX or SASS).

Each chapter keeps its assertions in chapters/NN_topic/asm_expect.txt, one per line:

    <ptx|sass>  <arch|*>  <kernel-regex|*>  <require|forbid>  <instruction-regex>

  arch            sm_80, sm_90, ... or * for every architecture the chapter is built for
  kernel-regex    searched in the (mangled) kernel name; * means the whole file. A regex that
                  names no kernel is an error, so a renamed kernel cannot silently pass.
  require/forbid  the instruction regex must / must not occur in that kernel's code
  Lines starting with # are comments.

A rule may be followed by optional lines, in this order (they belong to the rule above them):

    mutate <file> "<substring>" delete
    mutate <file> "<substring>" replace "<new text>"
    say "<the protocol step, in words>"

  mutate  a counterexample: a one-line change of <file> (a file of the chapter folder) that
          must make this rule FAIL. The substring must occur on exactly one line of the file;
          delete removes that line, replace replaces the substring on it. tools/check_rules.py
          (CTest chNN_topic_rules, label rules) builds each counterexample and asserts that the
          rule rejects it. Quoting as in a POSIX shell: inside "...", write \" and \\.
  say     printed instead of the regex when the rule fails (what the student got wrong).

Example (chapter 01: synchronous loads, and no cp.async anywhere):
    ptx  *  stream_v1  require  ld\\.global
    ptx  *  *          forbid   cp\\.async
    sass sm_90 stream_v1 require LDG\\.E
"""
import argparse
import re
import shlex
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


class Rule:
    """One assertion line of asm_expect.txt and its optional mutate / say lines."""

    def __init__(self, number, kind, arch, kernel_re, mode, pattern):
        self.number, self.kind, self.arch = number, kind, arch
        self.kernel_re, self.mode, self.pattern = kernel_re, mode, pattern
        self.mutations = []  # (line number, file, substring, "delete" | "replace", new text)
        self.say = None

    def describe(self):
        return self.say if self.say else f"{self.mode} /{self.pattern}/"


def parse_rules(path):
    """Every rule of the file (ptx and sass), with its mutate and say lines."""
    rules = []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            word = line.split(None, 1)[0]
            if word in ("mutate", "say"):
                if not rules:
                    sys.exit(f"{path}:{number}: '{word}' before any rule")
                rule = rules[-1]
                try:
                    args = shlex.split(line)
                except ValueError as e:
                    sys.exit(f"{path}:{number}: {e}: {line}")
                if word == "say":
                    if len(args) != 2 or rule.say is not None:
                        sys.exit(f"{path}:{number}: expected one say \"<sentence>\" per rule: {line}")
                    rule.say = args[1]
                    continue
                if rule.say is not None:
                    sys.exit(f"{path}:{number}: mutate lines come before the say line")
                if len(args) == 4 and args[3] == "delete":
                    rule.mutations.append((number, args[1], args[2], "delete", None))
                elif len(args) == 5 and args[3] == "replace":
                    rule.mutations.append((number, args[1], args[2], "replace", args[4]))
                else:
                    sys.exit(f'{path}:{number}: expected mutate <file> "<substring>" delete | '
                             f'replace "<new>": {line}')
                if not args[2]:
                    sys.exit(f"{path}:{number}: empty substring")
                continue
            parts = line.split(None, 4)
            if len(parts) != 5 or parts[0] not in ("ptx", "sass") or parts[3] not in ("require", "forbid"):
                sys.exit(f"{path}:{number}: malformed line: {line}")
            rules.append(Rule(number, *parts))
    return rules


def parse_expectations(path, kind):
    return [r for r in parse_rules(path) if r.kind == kind]


def evaluate(per_arch, rules, label, out=print):
    """Check the rules; returns (checked, failures, {rule line: [failure texts]})."""
    failures = 0
    checked = 0
    failed = {}
    for rule in rules:
        archs = sorted(per_arch) if rule.arch == "*" else [rule.arch]
        for a in archs:
            if a not in per_arch:
                # An architecture this build does not produce: nothing to check here.
                out(f"  skip line {rule.number}: {a} not built")
                continue
            kernels = per_arch[a]
            if rule.kernel_re == "*":
                bodies = {"<all>": "".join(kernels.values())}
            else:
                bodies = {k: v for k, v in kernels.items() if re.search(rule.kernel_re, k)}
                if not bodies:
                    text = (f"FAIL line {rule.number}: no kernel matches '{rule.kernel_re}' in {label} {a}; "
                            f"kernels: {', '.join(sorted(kernels)) or '(none)'}")
                    out(text)
                    failed.setdefault(rule.number, []).append(text)
                    failures += 1
                    continue
            for name, body in bodies.items():
                found = re.search(rule.pattern, body) is not None
                ok = found if rule.mode == "require" else not found
                checked += 1
                status = "ok  " if ok else "FAIL"
                text = f"{status} {label} {a} {name}: {rule.describe() if not ok else rule.mode + ' /' + rule.pattern + '/'}"
                if not ok:
                    text += f" (line {rule.number})"
                    failed.setdefault(rule.number, []).append(text)
                out(text)
                failures += 0 if ok else 1
    return checked, failures, failed


def check(per_arch, rules, label):
    checked, failures, _ = evaluate(per_arch, rules, label)
    return checked, failures


def disassemble(cuobjdump, binary):
    proc = subprocess.run([cuobjdump, "--dump-sass", binary], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"cuobjdump failed: {proc.stderr}")
    return proc.stdout


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
        text = disassemble(args.cuobjdump, args.binary)
        if args.dump:
            with open(args.dump, "w") as f:
                f.write(text)
        per_arch = split_sass(text)
    checked, failures = check(per_arch, rules, args.kind)
    print(f"assertions: {checked - failures} ok, {failures} wrong")
    sys.exit(1 if failures or checked == 0 else 0)


if __name__ == "__main__":
    main()

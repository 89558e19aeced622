#!/usr/bin/env python3
"""A student's copy of a chapter's exercise, made from the chapter's own solution.

    tools/exercise.py new NN               write exercises/NN_topic/ (never over an existing copy)
    tools/exercise.py new NN --into DIR    write DIR/NN_topic/ instead (CI's scratch folder)
    tools/exercise.py list                 the chapters that have an exercise
    tools/exercise.py check NN             check your copy exercises/NN_topic/ (no GPU needed)
    tools/exercise.py check NN --unsolved  the same checks on the copy as `new` makes it (fails)
    tools/exercise.py check NN --solution  ... and on the chapter itself (passes)

The copy holds every source file of chapters/NN_topic/. In the files that have exercise
regions, each region is replaced by a TODO for the student; the other files (main.cu, the
host side) are plain copies. `#include "kernels.cuh"` looks in the including file's own
folder first, so the copy builds against its own kernels, and CMake builds any
exercises/NN_topic/ it finds as the target chNN_topic_exercise (run `cmake -S . -B build`
again after making one). The exercise fails its check until the gaps are filled:

    cmake --build build --target chNN_topic_exercise && build/bin/chNN_topic_exercise --check-only

exercises/ is not tracked by git: a copy is the student's own work, and nothing regenerates
or tests it behind the student's back.

In the solution, each gap is a marked region:

    // EXERCISE-BEGIN: <hint for the student>
    ...the solution lines...
    // EXERCISE-STUB: <a line that keeps the exercise compiling>   (optional, repeatable)
    // EXERCISE-END

The exercise gets, in place of the region (same indentation):

    // TODO(exercise): <hint for the student>
    <the stub lines, if any>

An unclosed or nested region is an error, as is a chapter without any region.

`check` needs no GPU. It compiles the copy the way the build does (nvcc to PTX, then ptxas to
a cubin, for the chapter's architectures), and holds the PTX and the SASS (cuobjdump) to the
chapter's rules, chapters/NN_topic/asm_expect.txt: the instructions the lesson's protocol must
compile to (the copy, the commit, the wait, the arrive, the fence). Each rule the copy breaks
is printed as the protocol step it stands for (the rule's `say` sentence when it has one).
Without cuobjdump only the PTX rules run, and it says so. When a GPU is present and the build
folder is configured, it then builds the copy's target and runs it with --check-only: only
that run checks the results. Exit 0: every rule holds (and the run, if made, passed); 1: a
step is missing, the copy does not compile, or the run failed; 2: bad usage.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import check_asm  # noqa: E402  (split_ptx, split_sass: the same reading as the CTest rules)
BEGIN = re.compile(r"^(\s*)// EXERCISE-BEGIN: (.*)$")
STUB = re.compile(r"^\s*// EXERCISE-STUB: (.*)$")
END = re.compile(r"^\s*// EXERCISE-END\s*$")
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp")


def convert(lines, source):
    """The exercise text of one solution file, and the number of gaps in it."""
    out, regions, inside = [], 0, None
    for number, line in enumerate(lines, 1):
        if (m := BEGIN.match(line)):
            if inside:
                sys.exit(f"{source}:{number}: nested EXERCISE-BEGIN")
            inside = (m.group(1), number)
            regions += 1
            out.append(f"{m.group(1)}// TODO(exercise): {m.group(2)}\n")
        elif END.match(line):
            if not inside:
                sys.exit(f"{source}:{number}: EXERCISE-END without BEGIN")
            inside = None
        elif inside:
            if (m := STUB.match(line)):
                out.append(f"{inside[0]}{m.group(1)}\n")
        else:
            out.append(line)
    if inside:
        sys.exit(f"{source}:{inside[1]}: EXERCISE-BEGIN never closed")
    return out, regions


def chapter_dir(spec):
    """chapters/NN_topic for 'NN', 'N' or 'NN_topic'."""
    chapters = os.path.join(ROOT, "chapters")
    names = sorted(d for d in os.listdir(chapters) if re.match(r"^\d\d_", d))
    wanted = spec if not spec.isdigit() else f"{int(spec):02d}_"
    hits = [d for d in names if d == wanted or d.startswith(wanted)]
    if len(hits) != 1:
        sys.exit(f"error: no chapter '{spec}'; chapters: {', '.join(names)}")
    return os.path.join(chapters, hits[0])


def exercise_files(chapter):
    """{file name: exercise text} for every source file of the chapter; exits when the chapter
    has no exercise region at all."""
    files, gaps = {}, 0
    name = os.path.basename(chapter)
    for entry in sorted(os.listdir(chapter)):
        path = os.path.join(chapter, entry)
        if not os.path.isfile(path) or not entry.endswith(SOURCE_SUFFIXES):
            continue
        with open(path) as f:
            lines = f.readlines()
        converted, regions = convert(lines, path)
        if regions:
            head = (f"// EXERCISE: chapters/{name}/{entry} with {regions} gap(s) to fill, each "
                    "marked TODO(exercise).\n")
        else:
            head = f"// Copy of chapters/{name}/{entry}; the gaps are in the files marked EXERCISE.\n"
        files[entry] = head + "".join(converted)
        gaps += regions
    if gaps == 0:
        sys.exit(f"error: chapters/{name} has no EXERCISE-BEGIN regions")
    return files, gaps


def new(spec, into):
    chapter = chapter_dir(spec)
    name = os.path.basename(chapter)
    target = os.path.join(into, name)
    if os.path.exists(target):
        sys.exit(f"error: {os.path.relpath(target)} already exists and is left as it is (your "
                 "work may be in it); delete or rename it to start over")
    files, gaps = exercise_files(chapter)
    os.makedirs(target)
    for entry, text in files.items():
        with open(os.path.join(target, entry), "w") as f:
            f.write(text)
    exe = "ch" + name + "_exercise"
    print(f"wrote {os.path.relpath(target)}/ ({gaps} gaps, in the files that start with "
          f"'// EXERCISE:')\nbuild and check it:\n  cmake -S . -B build && cmake --build build "
          f"--target {exe}\n  build/bin/{exe} --check-only")


def list_chapters():
    chapters = os.path.join(ROOT, "chapters")
    for d in sorted(os.listdir(chapters)):
        path = os.path.join(chapters, d)
        if re.match(r"^\d\d_", d) and os.path.isdir(path):
            files, gaps = exercise_files(path)
            print(f"{d[:2]}  {d}  ({gaps} gaps)")


# --- check: a copy against the chapter's PTX/SASS rules (no GPU needed) --------------------

RULE = re.compile(r"^(ptx|sass)\s+(\S+)\s+(\S+)\s+(require|forbid)\s+(.+)$")
SAY = re.compile(r'^say\s+"((?:[^"\\]|\\.)*)"\s*$')
CMAKE_KEYWORDS = ("MIN_ARCH", "MIN_CUDA", "ARCHS", "SOURCES", "LIBRARIES")
DEFAULT_ARCHS = ("80", "90")  # the top CMakeLists.txt's default: sm_80 and sm_90


def read_rules(path):
    """The rules of asm_expect.txt, each with the `say` sentences that follow it (the
    `mutate` lines are for tools/check_rules.py, not for a student)."""
    rules = []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if (m := RULE.match(line)):
                rules.append({"line": number, "kind": m.group(1), "arch": m.group(2),
                              "kernel": m.group(3), "mode": m.group(4),
                              "pattern": m.group(5).strip(), "say": []})
            elif line.startswith("say"):
                s = SAY.match(line)
                if not s or not rules:
                    sys.exit(f"{path}:{number}: a say line is say \"<sentence>\" after a rule")
                rules[-1]["say"].append(re.sub(r'\\(.)', r"\1", s.group(1)))
            elif not line.startswith("mutate"):
                sys.exit(f"{path}:{number}: malformed line: {line}")
    return rules


def chapter_archs(chapter):
    """The architectures the chapter's binary is built for (tutorial_add_chapter's ARCHS, or
    the default list cut at MIN_ARCH), as nvcc spells them after compute_/sm_: 80, 90, 90a."""
    with open(os.path.join(chapter, "CMakeLists.txt")) as f:
        text = re.sub(r"#.*", "", f.read())
    m = re.search(r"tutorial_add_chapter\(([^)]*)\)", text)
    args = m.group(1).split()[1:] if m else []
    values, key = {}, None
    for a in args:
        if a in CMAKE_KEYWORDS:
            key = a
            values[key] = []
        elif key:
            values[key].append(a)
    if values.get("ARCHS"):
        return [re.match(r"\d+a?", a).group(0) for a in values["ARCHS"]]
    floor = int(values["MIN_ARCH"][0]) if values.get("MIN_ARCH") else 0
    return [a for a in DEFAULT_ARCHS if int(a) >= floor] or [str(floor)]


def cmake_cache(build):
    cache = {}
    path = os.path.join(build, "CMakeCache.txt")
    if os.path.isfile(path):
        with open(path) as f:
            for line in f:
                if (m := re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))):
                    cache[m.group(1)] = m.group(2)
    return cache


def find_tools(cache, cuobjdump):
    nvcc = cache.get("CMAKE_CUDA_COMPILER") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.isfile(nvcc):
        sys.exit("error: nvcc not found (put the CUDA Toolkit's bin/ on PATH)")
    ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
    if cuobjdump is None:
        for candidate in (cache.get("TUTORIAL_CUOBJDUMP", ""), shutil.which("cuobjdump") or "",
                          os.path.join(ROOT, ".tools", "bin", "cuobjdump")):
            if candidate and not candidate.endswith("NOTFOUND") and os.path.isfile(candidate):
                cuobjdump = candidate
                break
    elif cuobjdump == "":
        cuobjdump = None
    return nvcc, ptxas, cuobjdump


def run_tool(cmd):
    env = dict(os.environ)  # cuobjdump runs the nvdisasm it finds on PATH: the one beside it
    if os.sep in cmd[0]:
        env["PATH"] = os.path.dirname(os.path.abspath(cmd[0])) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return proc.returncode, proc.stdout + proc.stderr


def readable(pattern):
    """A rule's regex as a reader can take it in: `cp.async.wait_group 3;`, and a
    `A[\s\S]*B` order as `A ... then ... B`."""
    p = pattern.replace("(?s)", "")
    p = re.sub(r"\[\\s\\S\]\*|\.\*\??", " ... ", p)
    p = p.replace(r"\d+", "N").replace(r"\s+", " ").replace(r"\s*", "").replace(r"\s", " ")
    p = re.sub(r"\\([^A-Za-z0-9])", r"\1", p)
    return re.sub(r"\s+", " ", p).strip()


def kernel_name(regex):
    """A rule's kernel regex as a name: stream_v2_pipeline_kernelILi8EN3tut -> ..._kernel<8>."""
    name = re.sub(r"I(?:Li|Lj|Lm)?(\d+)E.*$", r"<\1>", regex)
    name = re.sub(r"I.*$", "", name) if "<" not in name else name
    return readable(name)


def step_sentence(rule):
    """What a failing rule means, in words: its `say` sentences, or a rendering of the rule."""
    if rule["say"]:
        return " / ".join(rule["say"])
    what = "PTX" if rule["kind"] == "ptx" else "SASS"
    kernel = "every kernel" if rule["kernel"] == "*" else f"kernel {kernel_name(rule['kernel'])}"
    if rule["mode"] == "require":
        return f"{kernel}: its {what} lacks `{readable(rule['pattern'])}`"
    return f"{kernel}: its {what} must not contain `{readable(rule['pattern'])}`, and it does"


def evaluate(rules, kind, per_arch):
    """[(rule, arch, problem or None)] for every rule of this kind and every built arch it
    applies to; problem is a short text when the rule fails."""
    out = []
    for rule in (r for r in rules if r["kind"] == kind):
        archs = sorted(per_arch) if rule["arch"] == "*" else [rule["arch"]]
        for a in archs:
            if a not in per_arch:
                continue  # an architecture this check did not build
            kernels = per_arch[a]
            if rule["kernel"] == "*":
                bodies = {"<all>": "".join(kernels.values())}
            else:
                bodies = {k: v for k, v in kernels.items() if re.search(rule["kernel"], k)}
                if not bodies:
                    out.append((rule, a, "no kernel of that name was compiled (did a gap leave "
                                         "its only launch out, or was it renamed?)"))
                    continue
            wrong = [k for k, body in bodies.items()
                     if (re.search(rule["pattern"], body) is None) == (rule["mode"] == "require")]
            if not wrong:
                out.append((rule, a, None))
            elif rule["kernel"] == "*":
                out.append((rule, a, "in the whole file"))
            else:
                out.append((rule, a, f"{len(wrong)} of {len(bodies)} matching kernel(s)"))
    return out


def gpu_present():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    rc, text = run_tool([smi, "-L"])
    return rc == 0 and "GPU" in text


def run_on_gpu(build, target):
    """Build the target in the build folder and run it with --check-only: 0, 1 or 77."""
    print(f"\nGPU found: building {target} and running it with --check-only")
    rc, text = run_tool(["cmake", "--build", build, "--target", target])
    if rc != 0 and re.search(r"No rule to make target|unknown target", text):
        run_tool(["cmake", "-S", ROOT, "-B", build])  # a copy made after the last configure
        rc, text = run_tool(["cmake", "--build", build, "--target", target])
    if rc != 0:
        print(text[-4000:])
        print(f"error: {target} does not build")
        return 1
    rc = subprocess.run([os.path.join(build, "bin", target), "--check-only"]).returncode
    return rc


def check(args):
    chapter = chapter_dir(args.chapter)
    name = os.path.basename(chapter)
    exe = "ch" + name
    build = os.path.abspath(args.build)
    cache = cmake_cache(build)
    nvcc, ptxas, cuobjdump = find_tools(cache, args.cuobjdump)
    rules = read_rules(os.path.join(chapter, "asm_expect.txt"))
    archs = args.arch or chapter_archs(chapter)
    if args.ptx and len(archs) != 1:
        sys.exit("error: --ptx needs exactly one --arch")
    work_parent = tempfile.TemporaryDirectory(prefix="exercise-check-")
    work = work_parent.name
    target = None
    if args.solution:
        copy, what = chapter, f"the chapter's own solution, chapters/{name}/"
        target = exe
    elif args.unsolved:
        files, gaps = exercise_files(chapter)
        copy = os.path.join(work, name)
        os.makedirs(copy)
        for entry, text in files.items():
            with open(os.path.join(copy, entry), "w") as f:
                f.write(text)
        what = f"the unsolved exercise ({gaps} gaps, as `exercise.py new {name[:2]}` writes it)"
    else:
        copy = os.path.abspath(args.copy or os.path.join(ROOT, "exercises", name))
        if not os.path.isfile(os.path.join(copy, "main.cu")):
            print(f"error: no copy at {os.path.relpath(copy)}/; make one with `python3 "
                  f"tools/exercise.py new {name[:2]}` (or check the unsolved exercise: --unsolved)",
                  file=sys.stderr)
            return 2
        what = f"your copy, {os.path.relpath(copy)}/"
        target = exe + "_exercise"
    print(f"check {name}: {what}")

    ptx_arch, sass_arch = {}, {}
    for arch in archs:
        ptx = os.path.join(work, f"{name}.sm_{arch}.ptx")
        started = time.monotonic()
        if args.ptx:
            ptx = args.ptx
        else:
            rc, text = run_tool([nvcc, "-ptx", "-std=c++17", "-lineinfo", "-O3",
                                 f"-arch=compute_{arch}", f"-I{ROOT}", f"-I{copy}",
                                 os.path.join(copy, "main.cu"), "-o", ptx])
            if rc != 0:
                print(text[-6000:])
                print(f"FAIL: the copy does not compile (nvcc, compute_{arch}); the errors are "
                      "above. Fix them first: no rule can be checked before it compiles.")
                return 1
        with open(ptx) as f:
            ptx_arch[f"sm_{arch}"] = check_asm.split_ptx(f.read())
        if cuobjdump:
            cubin = os.path.join(work, f"{name}.sm_{arch}.cubin")
            rc, text = run_tool([ptxas, f"-arch=sm_{arch}", "-O3", ptx, "-o", cubin])
            if rc != 0:
                print(text[-6000:])
                print(f"FAIL: ptxas rejects the copy's PTX for sm_{arch}; its errors are above.")
                return 1
            rc, text = run_tool([cuobjdump, "--dump-sass", cubin])
            if rc != 0:
                sys.exit(f"error: cuobjdump failed on {cubin}: {text}")
            kernels = {}
            for per in check_asm.split_sass(text).values():  # a cubin holds one architecture
                kernels.update(per)
            sass_arch[f"sm_{arch}"] = kernels
        print(f"  compiled for sm_{arch} in {time.monotonic() - started:.1f} s"
              + ("" if cuobjdump else " (PTX only)"))

    results = evaluate(rules, "ptx", ptx_arch)
    if cuobjdump:
        results += evaluate(rules, "sass", sass_arch)
    failed = [(r, a, why) for r, a, why in results if why]
    shown = set()
    for rule, arch, why in failed:
        sentence = step_sentence(rule)
        if sentence in shown:
            continue
        shown.add(sentence)
        print(f"MISSING: {sentence}\n         (asm_expect.txt line {rule['line']}, "
              f"{rule['kind'].upper()} {arch}: {why})")
    passed = len(results) - len(failed)
    print(f"rules: {passed} hold, {len(failed)} broken"
          + ("" if cuobjdump else "; the SASS rules were not checked: cuobjdump not found "
             "(README.md, Two commands, says how to get it)"))
    if failed:
        print(f"result: FAIL: {len(shown)} protocol step(s) above are missing or wrong in "
              f"{what}")
        return 1

    if args.no_run or target is None:
        print("result: every rule holds (the program was not run)")
        return 0
    if not gpu_present() or not cache:
        print("result: every rule holds. No GPU here, so the code was NOT run: the rules "
              "check the instructions it compiles to, not its results. On a GPU, "
              f"{os.path.relpath(build)}/bin/{target} --check-only (or this command again) "
              "checks the results.")
        return 0
    rc = run_on_gpu(build, target)
    if rc == 77:
        print("result: every rule holds; the GPU run was skipped (the reason is above), so the "
              "results are not checked")
        return 0
    print("result: " + ("PASS: every rule holds and the run checks out" if rc == 0 else
                        "FAIL: the rules hold, but the run's results are wrong (above)"))
    return 0 if rc == 0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_new = sub.add_parser("new", help="write a student's copy of chapter NN's exercise")
    p_new.add_argument("chapter", help="chapter number (04) or directory name (04_pipeline_prefetch)")
    p_new.add_argument("--into", default=os.path.join(ROOT, "exercises"),
                       help="parent folder of the copy (default: exercises/ in the repository)")
    sub.add_parser("list", help="list the chapters and their number of gaps")
    p_check = sub.add_parser("check", help="hold a copy to the chapter's PTX/SASS rules "
                             "(no GPU needed); with a GPU, also run it with --check-only")
    p_check.add_argument("chapter", help="chapter number (04) or directory name")
    which = p_check.add_mutually_exclusive_group()
    which.add_argument("--copy", help="the copy's folder (default: exercises/NN_topic/)")
    which.add_argument("--unsolved", action="store_true",
                       help="check the exercise as `new` writes it (CI: it must fail)")
    which.add_argument("--solution", action="store_true",
                       help="check the chapter's own files (CI: they must pass)")
    p_check.add_argument("--arch", action="append",
                         help="compile for this architecture only (90, 80, 90a; repeatable; "
                              "default: the chapter's)")
    p_check.add_argument("--ptx", help="use this PTX instead of compiling (one --arch)")
    p_check.add_argument("--build", default=os.path.join(ROOT, "build"),
                         help="the configured build folder (default: build/)")
    p_check.add_argument("--cuobjdump", help="the cuobjdump to use ('' for none: PTX rules only)")
    p_check.add_argument("--no-run", action="store_true", help="do not run it, even on a GPU")
    args = parser.parse_args()
    if args.command == "new":
        new(args.chapter, args.into)
    elif args.command == "check":
        sys.exit(check(args))
    else:
        list_chapters()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Which GPU runs what: build docs/arch-matrix.md from one tree, and check it.

Three steps, each mechanical:

  compile   every chapter's main.cu, for every target architecture, the way a build for that
            target alone would compile it: nvcc's device front end to PTX
            (-gencode arch=compute_T,code=compute_T), then ptxas for sm_T. Device code only
            (no host compiler, no link), warnings off. One PTX file and one result (ok, or the
            first error message) per chapter and target, in --work.
  gates     each chapter binary's `--gates=<targets>`: for every variant, what the binary's own
            architecture gates (common/harness.cuh) decide when it is compiled for a target and
            runs on a GPU of that architecture: "runs", or the skip message it prints.
  features  which asynchronous-copy features each variant's kernels use on each target, read
            from that target's PTX (FEATURES below), kernels found by name (kernels_of()).

  --write PATH   writes the page; --check PATH fails when PATH differs from what it would write
  --consistency  fails when a gate lets a variant run on a target whose compile lost one of
                 the variant's features (the kernel was compiled out there), or lets a chapter
                 run on a target it does not compile for.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

TARGETS = ["80", "86", "89", "90a", "100a", "120a"]

# GPUs a learner may have, and the target that runs natively on each.
GPUS = [
    ("A100", "80"), ("RTX 3090", "86"), ("RTX 4090", "89"), ("H100 / H200", "90a"),
    ("B200", "100a"), ("RTX 5090", "120a"),
]

# Feature: (short name, PTX regex). The PTX instruction each one is spelled with; the SASS it
# becomes on sm_90 is in docs/reading-sass.md (LDGSTS, UBLKCP, UTMALDG, UCGABAR, ...).
FEATURES = [
    ("cp.async", r"\bcp\.async\.(?:ca|cg)\.shared"),
    ("bulk copy", r"\bcp\.(?:reduce\.)?async\.bulk\.(?!tensor)(?:shared|global)"),
    ("tensor map", r"\bcp\.(?:reduce\.)?async\.bulk\.tensor\."),
    ("cluster", r"\bbarrier\.cluster\.|\bmapa\.|%cluster_ctarank|%cluster_nctarank|%clusterid"
                r"|\bst\.async\."),
    ("multicast", r"\.multicast::cluster"),
    ("wgmma", r"\bwgmma\."),
    ("setmaxnreg", r"\bsetmaxnreg\."),
]
FEATURE_NAMES = [name for name, _ in FEATURES]

# cuda::memcpy_async lowers to cp.async below sm_90 and to a bulk copy on sm_90 and newer when
# the copy allows it: the one substitution between targets (either way) that is not a lost
# feature.
SUBSTITUTES = {"bulk copy": "cp.async", "cp.async": "bulk copy"}


def target_label(t):
    return "sm_" + t


# ------------------------------------------------------------------------------------------
# compile
# ------------------------------------------------------------------------------------------
def first_error(text):
    """The compiler's first error, without file names and line numbers, plus a count."""
    errors = []
    for line in text.splitlines():
        m = re.search(r"\b(?:error|fatal)\b\s*:?\s*(.*)", line)
        if not m:
            continue
        msg = m.group(1).strip()
        msg = re.sub(r"^:\s*", "", msg)
        msg = re.sub(r"/[^\s'\"]*/", "", msg)  # directories
        if msg and msg not in errors:
            errors.append(msg)
    if not errors:
        lines = [l for l in text.splitlines() if l.strip()]
        return lines[-1][:200] if lines else "failed (no message)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return errors[0] + more


def compile_one(nvcc, ptxas, root, chapter_dir, target, work, resume=False):
    name = chapter_dir.name
    ptx = work / f"{name}.sm_{target}.ptx"
    result_file = work / f"{name}.sm_{target}.json"
    if resume and result_file.exists():  # another run finished it meanwhile
        return name, target, json.loads(result_file.read_text())
    start = time.monotonic()
    cmd = [nvcc, "-ptx", "-std=c++17", "-O3", "-w",
           f"-gencode=arch=compute_{target},code=compute_{target}",
           f"-I{root}", f"-I{chapter_dir}", str(chapter_dir / "main.cu"), "-o", str(ptx)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        result = {"ok": False, "stage": "nvcc", "message": first_error(r.stderr + r.stdout)}
    else:
        r = subprocess.run([ptxas, f"-arch=sm_{target}", "-w", str(ptx), "-o", os.devnull],
                           capture_output=True, text=True)
        if r.returncode != 0:
            result = {"ok": False, "stage": "ptxas", "message": first_error(r.stderr + r.stdout)}
        else:
            result = {"ok": True, "stage": "ptxas", "message": ""}
    result["seconds"] = round(time.monotonic() - start, 1)
    result_file.write_text(json.dumps(result) + "\n")
    return name, target, result


def chapter_dirs(root, only):
    dirs = sorted(p for p in (root / "chapters").iterdir()
                  if p.is_dir() and re.match(r"\d\d_", p.name) and (p / "main.cu").exists())
    return [d for d in dirs if not only or re.search(only, d.name)]


def run_compile(args):
    root = pathlib.Path(args.root).resolve()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    nvcc = args.nvcc
    ptxas = args.ptxas or str(pathlib.Path(nvcc).resolve().parent / "ptxas")
    jobs = [(d, t) for d in chapter_dirs(root, args.only) for t in TARGETS
            if not (args.resume and (work / f"{d.name}.sm_{t}.json").exists())]
    start = time.monotonic()
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(compile_one, nvcc, ptxas, root, d, t, work, args.resume)
                   for d, t in jobs]
        for f in concurrent.futures.as_completed(futures):
            name, target, result = f.result()
            state = "ok" if result["ok"] else f"{result['stage']}: {result['message']}"
            print(f"{name:32s} sm_{target:5s} {result['seconds']:6.1f} s  {state}", flush=True)
            failures += 0 if result["ok"] else 1
    import resource
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"compiled {len(jobs)} chapter/target pairs in {time.monotonic() - start:.0f} s "
          f"with {args.jobs} jobs ({usage.ru_utime + usage.ru_stime:.0f} CPU seconds); "
          f"{failures} do not compile (listed in the page)")
    return 0


# ------------------------------------------------------------------------------------------
# PTX: kernels and their features
# ------------------------------------------------------------------------------------------
FUNC_START = re.compile(r"^(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+"
                        r"(?:\([^)]*\)\s*)?([\w$]+)", re.M)
CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?([\w$]+)")


def ptx_functions(text):
    """{name: (is_entry, body)} for every function defined in a PTX file."""
    starts = list(FUNC_START.finditer(text))
    funcs = {}
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[m.start():end]
        if "{" not in body:  # a declaration
            continue
        funcs[m.group(2)] = (m.group(1) == "entry", body)
    return funcs


def entry_features(funcs):
    """{entry name: set of features}, following calls into .func bodies."""
    direct = {n: {f for f, rx in FEATURES if re.search(rx, body)} for n, (_, body) in funcs.items()}
    calls = {n: set(CALL.findall(body)) & funcs.keys() for n, (_, body) in funcs.items()}
    out = {}
    for name, (is_entry, _) in funcs.items():
        if not is_entry:
            continue
        seen, todo, feats = set(), [name], set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            feats |= direct[n]
            todo.extend(calls[n])
        out[name] = feats
    return out


def demangle(names):
    if not names:
        return {}
    tool = shutil.which("c++filt")
    if not tool:
        sys.exit("arch_matrix.py: c++filt (binutils) is needed to read the kernel names")
    r = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, check=True)
    return dict(zip(names, r.stdout.splitlines()))


def base_name(demangled):
    """'void ch04::stream_v2_pipeline_kernel<1, tut::TraceOff>(uint4 const*, ...)' ->
    'stream_v2_pipeline_kernel'."""
    s = demangled
    depth, cut = 0, len(s)
    for i, c in enumerate(s):  # drop the parameter list: the first '(' outside <>
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            cut = i
            break
    s = s[:cut]
    while "<" in s:  # template arguments, innermost first
        s = re.sub(r"<[^<>]*>", "", s)
    s = s.split()[-1] if s.split() else s
    return s.split("::")[-1]


def kernels_of(key, bases):
    """The kernels (base names) a variant key names: the longest leading run of the key's
    words that appears as a word run in a kernel name ("v3_multicast_ptx" ->
    broadcast_v3_multicast_ptx_kernel; "v1_cg16_s4" -> stream_v1_cp_async_kernel by "v1"), a
    single leading word only when it is a version tag (v3, step2); failing that, the same
    with the tag dropped ("v9_early_release" -> ws_early_release_kernel). Empty when no
    kernel carries the key (a library call such as cuBLAS, or cudaMemcpyAsync)."""
    words = key.split("_")

    def find(ws, allow_single):
        for n in range(len(ws), 0, -1):
            if n == 1 and not (allow_single and re.fullmatch(r"(v|step)\d+", ws[0])):
                break
            run = "_".join(ws[:n])
            hit = sorted(b for b in bases if f"_{run}_" in f"_{b}_")
            if hit:
                return hit
        return []

    hit = find(words, True)
    if not hit and len(words) > 1 and re.fullmatch(r"(v|step|neg)\d*", words[0]):
        hit = find(words[1:], False)
    return hit


def kernels_in_registration(key, sources, bases):
    """Fallback when no kernel carries the key: the statement of the chapter's source that
    registers it (from the string literal that starts the key to the next ';') names its
    kernel (`tut::stencil_stream::stencil_sync_kernel`) or a launcher with a version tag
    (`run_v4<128, 1, 4>`: the v4 kernel)."""
    for text in sources:
        for m in re.finditer(r'"(v\d+[\w]*|step\d+[\w]*)"', text):
            literal = m.group(1)
            if not key.startswith(literal) or len(literal) < 3:
                continue
            statement = text[m.end():text.find(";", m.end())]
            named = sorted({n for n in re.findall(r"(\w+_kernel)\b", statement) if n in bases})
            if named:
                return named
            tags = set(re.findall(r"\b(?:run|launch)_(v\d+|step\d+)\b", statement))
            hit = sorted(b for b in bases for t in tags if f"_{t}_" in f"_{b}_")
            if hit:
                return hit
    return []


# ------------------------------------------------------------------------------------------
# measured: the committed reference run
# ------------------------------------------------------------------------------------------
def h200_rows(root, chapter):
    path = root / "docs/results/h200/json" / f"{chapter}.json"
    if not path.exists():
        return None, {}
    doc = json.loads(path.read_text())
    return doc.get("metric", ""), {row["key"]: row for row in doc.get("rows", [])}


def arch80_rows(root, chapter):
    """Rows of the check-only table in logs/arch80.<chapter>.log, in registry order, as
    (name, check) pairs, and the skip lines by key; None when there is no log."""
    path = root / "docs/results/h200/logs" / f"arch80.{chapter}.log"
    if not path.exists():
        return None
    rows, skips, whole = [], {}, None
    for line in path.read_text().splitlines():
        m = re.match(r"skipping (\S+): (.*)", line)
        if m:
            skips[m.group(1)] = m.group(2)
        if line.startswith("SKIP:"):
            whole = line
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 8 and cells[-1] in ("PASS", "FAIL", "SKIP"):
            rows.append((cells[0], cells[-1]))
    return {"rows": rows, "skips": skips, "whole": whole}


# ------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------
def fmt_rate(rate, metric):
    return f"{rate:.0f} {metric}" if rate >= 100 else f"{rate:.1f} {metric}"


def collect(args):
    root = pathlib.Path(args.root).resolve()
    work = pathlib.Path(args.work)
    bindir = pathlib.Path(args.bin)
    chapters = []
    for d in chapter_dirs(root, args.only):
        exe_name = "ch" + d.name
        exe = bindir / exe_name
        if not exe.exists():
            sys.exit(f"arch_matrix.py: {exe} is missing: build the chapters first")
        r = subprocess.run([str(exe), "--gates=" + ",".join(TARGETS)], capture_output=True,
                           text=True)
        if r.returncode != 0:
            sys.exit(f"arch_matrix.py: {exe} --gates failed ({r.returncode}): {r.stderr}")
        gates = json.loads(r.stdout)
        compiled, feats = {}, {}
        for t in TARGETS:
            res = work / f"{d.name}.sm_{t}.json"
            if not res.exists():
                sys.exit(f"arch_matrix.py: {res} is missing: run the compile step first")
            compiled[t] = json.loads(res.read_text())
            ptx = work / f"{d.name}.sm_{t}.ptx"
            feats[t] = entry_features(ptx_functions(ptx.read_text())) if compiled[t]["ok"] \
                and ptx.exists() else None
        names = sorted({n for f in feats.values() if f for n in f})
        demangled = demangle(names)
        bases = {}
        for n in names:
            bases.setdefault(base_name(demangled[n]), set()).add(n)
        sources = [f.read_text() for f in sorted(d.iterdir())
                   if f.suffix in (".cu", ".cuh") and f.is_file()]
        variants = []
        for v in gates["variants"]:
            ks = kernels_of(v["key"], bases) or kernels_in_registration(v["key"], sources, bases)
            per_target = {}
            for t in TARGETS:
                if feats[t] is None:
                    per_target[t] = None
                    continue
                s = set()
                for k in ks:
                    for mangled in bases[k]:
                        s |= feats[t].get(mangled, set())
                per_target[t] = s
            variants.append({**v, "kernels": ks, "features": per_target})
        chapters.append({"dir": d.name, "exe": exe_name, "gates": gates, "compiled": compiled,
                         "variants": variants})
    return root, chapters


def ordered(feats):
    return [f for f in FEATURE_NAMES if f in feats]


def lost_features(v):
    """{target: features the variant's kernels have on some target but lost on this one}."""
    full = set()
    for s in v["features"].values():
        if s:
            full |= s
    out = {}
    for t, s in v["features"].items():
        if s is None:
            continue
        lost = {f for f in full - s if not (f in SUBSTITUTES and SUBSTITUTES[f] in s)}
        if lost:
            out[t] = lost
    return out


def consistency_errors(chapters):
    errors = []
    for ch in chapters:
        for v in ch["variants"]:
            lost = lost_features(v)
            for t in TARGETS:
                verdict = v["on"][t]
                if verdict != "runs":
                    continue
                if not ch["compiled"][t]["ok"]:
                    errors.append(f"{ch['exe']} {v['key']}: its gate lets it run on "
                                  f"{target_label(t)}, but the chapter does not compile for "
                                  f"{target_label(t)} ({ch['compiled'][t]['message']})")
                elif t in lost:
                    errors.append(f"{ch['exe']} {v['key']}: its gate lets it run on "
                                  f"{target_label(t)}, but compiled for {target_label(t)} its "
                                  f"kernels lack {', '.join(ordered(lost[t]))} (compiled out): "
                                  f"give the variant a min_cc or arch_specific gate")
    return errors


def escape(text):
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def render(root, chapters):
    out = []
    w = out.append
    w("# Which GPU runs what {#arch_matrix}")
    w("")
    w("<!-- Generated by tools/arch_matrix.py (CTest label `arch`); do not edit by hand. -->")
    w("")
    w("Every chapter compiled for six targets, " + ", ".join(f"`{target_label(t)}`" for t in
      TARGETS) + ", and what each chapter binary does on a GPU of that architecture. "
      "Nothing here was run on those GPUs except the H200: the compile columns are what "
      "nvcc and ptxas say, the run-time verdicts are what each binary's own architecture gates "
      "decide (`<binary> --gates=...`, the functions `run_chapter()` calls before it launches "
      "anything), and the measured columns come from the committed reference run "
      "(`docs/results/h200/`).")
    w("")
    w("## How the page is made")
    w("")
    w("- **Compiles**: `nvcc -ptx -gencode=arch=compute_T,code=compute_T chapters/NN_topic/main.cu`"
      ", then `ptxas -arch=sm_T` on that PTX, for each target T: the device code a build for T "
      "alone holds. The `a` targets (`sm_90a`, `sm_100a`, `sm_120a`) are the "
      "architecture-specific ones; wgmma and setmaxnreg exist only there. When a chapter does "
      "not compile for T, its cells give the first error. Chapters with `MIN_ARCH 90` in their "
      "CMakeLists.txt are never built for T below 90: a build configured for `sm_80` builds "
      "them for `sm_90`, and that binary skips on an sm_80 GPU, as the table says.")
    w("- **Features**: which asynchronous-copy mechanisms a variant's kernels use on that "
      "target, read from the target's PTX: " + "; ".join(
          f"{name} = `{rx}`" for name, rx in [
              ("cp.async", "cp.async.ca/cg"), ("bulk copy", "cp.async.bulk (not .tensor)"),
              ("tensor map", "cp.async.bulk.tensor"),
              ("cluster", "barrier.cluster, mapa, %cluster_ctarank, st.async"),
              ("multicast", ".multicast::cluster"), ("wgmma", "wgmma.*"),
              ("setmaxnreg", "setmaxnreg.*")]) +
      ". A variant's kernels are found by name: the longest leading run of the words of its "
      "key that a kernel's name contains (`v3_multicast_ptx` is "
      "`broadcast_v3_multicast_ptx_kernel`, `v1_cg16_s4` is `stream_v1_cp_async_kernel` by its "
      "tag `v1`), or else the kernel (or the `run_vN` launcher) named in the source statement "
      "that registers the key; the kernels are listed under each chapter. `none` means its kernels use none "
      "of these; `no kernel of its own` means no kernel carries its key (cuBLAS, "
      "cudaMemcpyAsync, or a launcher that picks its kernel at run time). The features column is the union "
      "over the targets; a cell that says `(without X)` is a target whose kernels lack X. "
      "`cuda::memcpy_async` becomes cp.async on one target and a bulk copy on another: that "
      "swap is the only loss the gate test accepts.")
    w("- **Runs**: the verdict of the binary compiled for T on a GPU of architecture T: "
      "`runs`, or `skips` with the message it prints (exit 77 when it skips everything). "
      "Negative variants (marked *neg*) run only when asked for, and must fail.")
    w("- **H200**: the variant's rate in the committed full-size run "
      "(`docs/results/h200/json/`). **H200 compute_80**: its check in the sm_80-only build "
      "run on the H200 (`docs/results/h200/logs/arch80.*.log`, `--check-only`): the driver "
      "JIT-compiles the compute_80 PTX, so the kernels take the Ampere code path; `no log` "
      "where the reference run's job did not run that build (its `arch80` step).")
    w("- The test `arch_matrix_gates` fails when a gate lets a variant run on a target whose "
      "compile lost one of the variant's features (its kernel was compiled out there, e.g. "
      "under `__CUDA_ARCH_FEAT_SM90_ALL`), or lets a chapter run on a target it does not "
      "compile for. `arch_matrix_page` fails when this page differs from what the tree "
      "generates, so changing a gate without regenerating the page fails too. Regenerate it "
      "with `cmake --build build --target arch_matrix`.")
    w("")

    # Summary.
    w("## Summary: variants that run, per chapter and GPU")
    w("")
    header = "| chapter | " + " | ".join(f"{g} ({target_label(t)})" for g, t in GPUS) + " |"
    w(header)
    w("|" + "---|" * (len(GPUS) + 1))
    for ch in chapters:
        lessons = [v for v in ch["variants"] if not v["negative"]]
        cells = []
        for _, t in GPUS:
            if not ch["compiled"][t]["ok"]:
                cells.append("does not compile")
                continue
            n = sum(1 for v in lessons if v["on"][t] == "runs")
            cells.append("all " + str(n) if n == len(lessons) else
                         ("none" if n == 0 else f"{n} of {len(lessons)}"))
        w(f"| {ch['exe']} | " + " | ".join(cells) + " |")
    w("")
    w("Counts are of the lesson variants (negatives left out).")
    w("")

    for ch in chapters:
        g = ch["gates"]
        metric, h200 = h200_rows(root, ch["exe"])
        a80 = arch80_rows(root, ch["exe"])
        w(f"## {ch['exe']}")
        w("")
        spec = ", ".join(target_label(f"{a}a") for a in g["arch_specific"])  # {90}: sm_90a
        w(f"Chapter gate: compute capability {g['min_cc'] // 10}.{g['min_cc'] % 10} or newer"
          + (f", code compiled for {spec}" if spec else "") + ".")
        built = [b for b in g.get("built_archs", "").split(",") if b]
        if built and all(re.match(r"\d+a", b) for b in built):
            w("")
            w(f"Its CMakeLists.txt builds it for {', '.join('`' + b + '`' for b in built)} only "
              "(`ARCHS`), whatever `CMAKE_CUDA_ARCHITECTURES` says: on a GPU of any other "
              "architecture that binary has no code to run and skips as a whole (\"this binary "
              "has no code this GPU can run\"). The other columns say what the chapter does "
              "when it is compiled for that target.")
        w("")
        notes = []

        def note(text, quoted=True):
            """A numbered note under the table; a program's message is shown as code."""
            if quoted:
                text = "`" + text.replace("`", "'") + "`"
            if text not in notes:
                notes.append(text)
            return f"[{notes.index(text) + 1}]"

        w("| variant | features | " + " | ".join(target_label(t) for t in TARGETS) +
          " | H200 | H200 compute_80 |")
        w("|" + "---|" * (len(TARGETS) + 4))
        lessons = [v for v in ch["variants"] if not v["negative"]]
        for v in ch["variants"]:
            union = set()
            for f in v["features"].values():
                union |= f or set()
            if not v["kernels"]:
                feats = "no kernel of its own"
            else:
                feats = ", ".join(ordered(union)) or "none"
            cells = []
            for t in TARGETS:
                c = ch["compiled"][t]
                if not c["ok"]:
                    msg = re.sub(r"^ptxas\s+(?:fatal|error)\s*:\s*", "", c["message"])
                    cells.append("does not compile " + note(f"{c['stage']}: {msg}"))
                    continue
                verdict = v["on"][t]
                cell = "runs" if verdict == "runs" else "skips " + note(verdict[len("skip: "):])
                here = v["features"][t] or set()
                if v["kernels"] and here != union:
                    diff = []
                    if here - union:
                        diff.append("also " + ", ".join(ordered(here - union)))
                    if union - here:
                        diff.append("without " + ", ".join(ordered(union - here)))
                    cell += " (" + "; ".join(diff) + ")"
                cells.append(cell)
            # H200 full run
            row = h200.get(v["key"])
            if v["negative"]:
                h = "neg: not timed"
            elif row is None:
                h = "not in the run"
            elif row.get("skipped"):
                h = "skipped " + note(row.get("detail", ""))
            elif row.get("timed"):
                h = fmt_rate(row["rate"], metric) + ("" if row.get("passed") else " FAIL")
            else:
                h = row.get("check", "-")
            # compute_80 path
            if v["negative"]:
                a = "neg: not run"
            elif a80 is None:
                a = "no log"
            elif a80["whole"]:
                a = "skipped " + note(a80["whole"])
            else:
                i = lessons.index(v)
                if i >= len(a80["rows"]):
                    a = "not in the log"
                else:
                    check = a80["rows"][i][1]
                    if check == "SKIP" and v["key"] in a80["skips"]:
                        a = "SKIP " + note(a80["skips"][v["key"]])
                    else:
                        a = check
                    if g["min_cc"] >= 90:
                        hopper = "sm_90a" if "90a" in g.get("built_archs", "") else "sm_90"
                        a += " " + note(f"MIN_ARCH 90: the sm_80-only build compiles this "
                                        f"chapter for {hopper} all the same, so this is its "
                                        f"Hopper code, not a compute_80 path", quoted=False)
            name = f"`{v['key']}`" + (" *neg*" if v["negative"] else "")
            w(f"| {name} | {feats} | " + " | ".join(escape(c) for c in cells) + f" | {escape(h)} | "
              f"{escape(a)} |")
        w("")
        kernels = sorted({k for v in ch["variants"] for k in v["kernels"]})
        w("Kernels: " + (", ".join(f"`{k}`" for k in kernels) if kernels else "none") + ".")
        if notes:
            w("")
            for i, n in enumerate(notes, 1):
                w(f"{i}. {n}")
        w("")
    return "\n".join(out)


README_BEGIN = "<!-- arch-matrix:begin (generated by tools/arch_matrix.py) -->"
README_END = "<!-- arch-matrix:end -->"


def chapter_numbers(chs):
    return ", ".join(c["dir"][:2] for c in chs) if chs else "none"


def render_readme_block(chapters):
    """The README's per-GPU summary: which chapters run whole, in part, or not at all."""
    out = [README_BEGIN,
           "| GPU | built for | chapters that run | in part (variants skipped) | skipped |",
           "|---|---|---|---|---|"]
    for gpu, t in GPUS:
        whole, part, none = [], [], []
        for ch in chapters:
            lessons = [v for v in ch["variants"] if not v["negative"]]
            n = sum(1 for v in lessons if v["on"][t] == "runs") if ch["compiled"][t]["ok"] else 0
            (whole if n == len(lessons) else part if n else none).append(ch)
        out.append(f"| {gpu} | `{target_label(t)}` | {chapter_numbers(whole)} | "
                   f"{chapter_numbers(part)} | {chapter_numbers(none)} |")
    out.append(README_END)
    return "\n".join(out)


def splice_readme(readme_text, block):
    """README text with its generated block replaced; None when the markers are missing."""
    i, j = readme_text.find(README_BEGIN), readme_text.find(README_END)
    if i < 0 or j < i:
        return None
    return readme_text[:i] + block + readme_text[j + len(README_END):]


def run_page(args):
    root, chapters = collect(args)
    text = render(root, chapters)
    readme = root / "README.md"
    readme_text = readme.read_text()
    new_readme = splice_readme(readme_text, render_readme_block(chapters))
    status = 0
    generated = pathlib.Path(args.work) / "arch-matrix.md"  # what CI keeps as an artifact
    generated.write_text(text)
    if args.write:
        pathlib.Path(args.write).write_text(text)
        print(f"wrote {args.write}")
        if new_readme is not None and not args.only:
            readme.write_text(new_readme)
            print(f"updated the generated block of {readme}")
    if args.check:
        committed = pathlib.Path(args.check)
        old = committed.read_text() if committed.exists() else ""
        if old != text:
            import difflib
            diff = list(difflib.unified_diff(old.splitlines(), text.splitlines(),
                                             str(committed), str(generated), lineterm="", n=1))
            print("\n".join(diff[:80]))
            print(f"FAIL: {committed} is not what the tree generates ({generated}); "
                  f"regenerate it: cmake --build <build> --target arch_matrix")
            status = 1
        else:
            print(f"{committed} matches the tree")
        if new_readme is None:
            print(f"FAIL: {readme} lacks the block between {README_BEGIN} and {README_END}")
            status = 1
        elif new_readme != readme_text:
            print(f"FAIL: the GPU table in {readme} is not what the tree generates:\n"
                  + render_readme_block(chapters)
                  + "\nregenerate it: cmake --build <build> --target arch_matrix")
            status = 1
        else:
            print(f"{readme}'s GPU table matches the tree")
    if args.consistency:
        errors = consistency_errors(chapters)
        for e in errors:
            print("FAIL: " + e)
        if errors:
            status = 1
        else:
            print("every gate agrees with the compile results of "
                  f"{sum(len(c['variants']) for c in chapters)} variants on {len(TARGETS)} targets")
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="step", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--root", required=True)
    c.add_argument("--work", required=True)
    c.add_argument("--nvcc", required=True)
    c.add_argument("--ptxas")
    c.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    c.add_argument("--only", default="")
    c.add_argument("--resume", action="store_true",
                   help="keep the results already in --work (after an interrupted run)")
    p = sub.add_parser("page")
    p.add_argument("--root", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--only", default="")
    p.add_argument("--write")
    p.add_argument("--check")
    p.add_argument("--consistency", action="store_true")
    args = ap.parse_args()
    return run_compile(args) if args.step == "compile" else run_page(args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check that every measured figure in the prose comes from the committed reference run.

    tools/check_prose.py [--root DIR] [--results DIR] [--apply] [--report] [FILE...]
    tools/check_prose.py --self-test     (CTest prose_figures_detects_drift)

Without FILE it reads README.md, chapters/*/README.md, docs/*.md, docs/results/h200/*.md and
docs/results/h200/notes/*.md under --root (default: this repository), except the pages the
pipeline writes whole (GENERATED_PAGES: their figures come from the run by construction, and
their own tests compare them with what the tree generates). --results is the run
(default: <root>/docs/results/h200). Exit status 0 when every figure agrees and none is
unannotated, 1 otherwise (every problem is listed as file:line).

Annotations
-----------
A measured figure carries, right after it (after its unit), an HTML comment

    1427 GB/s<!-- fig: rate('ch01', 'v1_stream_low') ; .0f -->
    +16.7%<!-- fig: timeline('ch01', 'overhead_pct') ; +.1f -->

The figure is the LAST number before the comment on the same line (after any earlier comment
on that line): an optional sign (+, -), digits (thousands may be grouped with commas), an
optional decimal part. Only a unit may sit between the number and the comment: at most 16
characters and no digit (`%`, `x`, ` GB/s`, ` µs)`). EXPR is a Python expression evaluated
with the accessors below (and abs, min, max, round, sum, len); FMT is a Python format spec.
The check is exact string equality: format(EXPR, FMT) must equal the number as written.
`--apply` rewrites each number to format(EXPR, FMT) in place (tools/refresh_results.sh runs it
after tools/results_to_md.py, so the prose follows a new run; a figure that no longer
evaluates stays as it is and is reported).

A figure that is not a measurement of this run (a datasheet number, a design constant, a
figure of an earlier run kept in the notes) is marked instead, right after it:

    4.8 TB/s<!-- not measured: the H200 datasheet's HBM3e bandwidth -->

A not-measured mark alone on a line covers the paragraph that follows it (up to the next
blank line), e.g. a table of an earlier run in a notes file:

    <!-- not measured: call 3 of the 2026-11-30 run, before the fix; kept for the record -->
    | variant | GB/s |

Keep that escape rare and honest.

Accessors (ch is 'ch00' ... 'ch16'; key a row key of the chapter's JSON)
---------------------------------------------------------------------
doc(ch)          the chapter's JSON, <results>/json/<chapter>.json, as a dict
row(ch, key)     the row dict of doc(ch)['rows'] whose 'key' is key
rate(ch, key)    row(ch, key)['rate'] (GB/s, or the chapter's 'metric')
ms(ch, key)      row(ch, key)['median_ms']
ceiling(ch)      doc(ch)['ceiling']['rate'] (the same run's cudaMemcpyAsync D2D)
sweep(ch)        <results>/json/<chapter>.json.sweep.json, as a dict
tour()           <results>/tour.json, as a dict
log(path, regex) float(first capture group of the first match of regex (re.M) in
                 <results>/<path>), e.g. log('logs/tour.log', r'total (\\d+\\.\\d+) s')

counter(ch, kernel_regex, metric, launch=None, grid=None)
    One launch's counter from the Nsight Compute export <results>/ncu/ncu.<chapter>.csv
    (`ncu --csv --page raw`, one row per profiled launch, the rows of the chapter's table in
    <results>/profile.md in the same order: the table's "#" column is the launch index).
    kernel_regex is re.search'ed in the CSV's "Kernel Name", the demangled signature, e.g.
    'void stream_v1_sync_kernel<tut::TraceOff>(const float4 *, float4 *, unsigned long, T1)'.
    It must select exactly one launch; when one kernel was profiled at several occupancies
    narrow it with grid= (the launch's grid size, profile.md's "grid" column) or launch= (the
    "#" column). metric is one of profile.md's column names, with its unit and rounding left to
    FMT:
        'grid'                launch__grid_size
        'DRAM rd MB'          dram__bytes_read.sum in MB (1e6 bytes)
        'DRAM wr MB'          dram__bytes_write.sum in MB
        'L1/TEX MB'           l1tex__t_bytes.sum in MB
        'L2 MB'               lts__t_bytes.sum in MB
        'SM active cycles'    sm__cycles_active.avg
        'stall:<reason>'      the "top stalls" value of that reason (warp cycles per issued
                              instruction), e.g. 'stall:long_scoreboard'
    or any other column name of the CSV (a raw ncu metric such as
    'smsp__inst_executed.sum'), as the number ncu wrote, in the unit of the CSV's unit row.
    Example: counter('ch01', r'stream_v1_sync', 'stall:long_scoreboard', grid=132) -> 29.7...

timeline(ch, field, variant=None)
    A value of the in-kernel timeline of chapter ch, <results>/timelines/<chNN>.json (written
    by `<chapter> --timeline=...` in the timeline step of tools/gpu_check.sh; its console line
    is in <results>/logs/timeline.<chapter>.log). The file's otherData.kernels lists one entry
    per traced variant; variant= names it by key (e.g. 'v2_pipe_s8_low'), and may be left out
    when the file holds a single kernel. field is a key of that entry:
        'untraced_ms', 'traced_ms'   median ms of the untraced and of the traced launch
        'span_us'                    the traced kernel's span on the block(s) shown, in us
        'overlapping_copies'         copies in flight during a compute phase (trace's count)
        'lanes'                      recording lanes
    or one computed from it:
        'overhead_pct'   100 * (traced_ms / untraced_ms - 1), the tracing cost in percent
        'slowdown'       traced_ms / untraced_ms
        'copy_spans', 'compute_spans'   the number of copy / compute spans of that variant
                         in traceEvents (all recorded blocks)
        'tiles_per_block'  compute spans of the variant divided by the recording blocks

The lint
--------
In the same files, a number directly followed by a measured unit (GB/s, TB/s, TFLOP/s,
GFLOP/s, us, µs, ms, or a ratio written as `%` or `x`, e.g. "23%", "1.4x") in prose is an
error unless it carries a fig annotation or a not-measured mark. Not prose: code spans and
code blocks (fenced, or indented by 4 spaces after a blank line outside a list), HTML
comments, and the generated blocks between <!-- NAME:tag --> and <!-- /NAME:tag --> (RESULTS,
SWEEP, PROFILE, ...), whose numbers the pipeline writes. --report lists every unannotated
figure (file:line: text) and a count per file, and exits 0 unless an annotation is wrong.
"""
import argparse
import csv
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A number: optional sign, digits (maybe grouped by commas), optional decimals; not glued to an
# identifier (v1, sm_90, ch01) or to a preceding number/decimal point.
NUMBER = re.compile(r"(?<![\w.,])[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?=x(?!\w)|[^\w]|$)")
FIG = re.compile(r"<!--\s*fig:\s*(.*?)\s*;\s*([^;]*?)\s*-->")
NOT_MEASURED = re.compile(r"<!--\s*not measured:\s*(.+?)\s*-->")
COMMENT = re.compile(r"<!--.*?-->")
MEASURED = re.compile(
    r"(?<![\w.,])[+\-\u2212]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
    r"(?:\s?(?:GB/s|TB/s|TFLOP/s|GFLOP/s|us|µs|ms)(?![\w/])|(?:%|x)(?![\w]))")
GENERATED_START = re.compile(r"<!--\s*([A-Z][A-Z_]*):(\S+)\s*-->")
MAX_UNIT = 16


class FigureError(Exception):
    pass


class Run:
    """The committed run and its accessors (see the module docstring)."""

    def __init__(self, results):
        self.results = results
        self._cache = {}

    def _json(self, path):
        if path not in self._cache:
            if not os.path.exists(path):
                raise FigureError(f"no file {os.path.relpath(path, self.results)} in the run")
            with open(path) as f:
                self._cache[path] = json.load(f)
        return self._cache[path]

    def _chapter_file(self, ch, suffix=".json"):
        if not re.fullmatch(r"ch\d\d", ch):
            raise FigureError(f"chapter must be spelt 'chNN', not {ch!r}")
        hits = [p for p in glob.glob(os.path.join(self.results, "json", f"{ch}_*{suffix}"))
                if p.endswith(suffix) and (suffix != ".json" or ".json." not in os.path.basename(p))]
        if len(hits) != 1:
            raise FigureError(f"{ch}: expected one json/{ch}_*{suffix}, found {len(hits)}")
        return hits[0]

    def doc(self, ch):
        return self._json(self._chapter_file(ch))

    def row(self, ch, key):
        for r in self.doc(ch)["rows"]:
            if r.get("key") == key:
                return r
        keys = ", ".join(r.get("key", "?") for r in self.doc(ch)["rows"])
        raise FigureError(f"{ch}: no row {key!r} (rows: {keys})")

    def rate(self, ch, key):
        return self.row(ch, key)["rate"]

    def ms(self, ch, key):
        return self.row(ch, key)["median_ms"]

    def ceiling(self, ch):
        return self.doc(ch)["ceiling"]["rate"]

    def sweep(self, ch):
        return self._json(self._chapter_file(ch, ".json.sweep.json"))

    def table_sweep_gap(self, ch, size):
        """The largest difference, in points, between a row's % in the table and its % in the
        sweep at @p size (the size both measure): how far the two timings of one run disagree."""
        table = {r["key"]: r for r in self.doc(ch)["rows"] if r.get("pairs")}
        gaps = [abs(table[r["variant"]]["pct_of_ceiling"] - r["pct_of_cublas"])
                for r in self.sweep(ch)["sweep"] if r["size"] == size and r["variant"] in table]
        if not gaps:
            raise FigureError(f"{ch}: no row timed both in the table and in the sweep at {size}")
        return max(gaps)

    def tour(self):
        return self._json(os.path.join(self.results, "tour.json"))

    def log(self, path, regex):
        full = os.path.join(self.results, path)
        if not os.path.exists(full):
            raise FigureError(f"no file {path} in the run")
        with open(full, errors="replace") as f:
            m = re.search(regex, f.read(), re.M)
        if not m:
            raise FigureError(f"/{regex}/ matches nothing in {path}")
        return float(m.group(1).replace(",", ""))

    def _ncu(self, ch):
        chapter = os.path.basename(self._chapter_file(ch))[:-5]
        path = os.path.join(self.results, "ncu", f"ncu.{chapter}.csv")
        if path not in self._cache:
            if not os.path.exists(path):
                raise FigureError(f"no ncu/ncu.{chapter}.csv in the run")
            with open(path) as f:
                rows = list(csv.reader(l for l in f if l.startswith('"')))
            if len(rows) < 3:
                raise FigureError(f"ncu/ncu.{chapter}.csv holds no launch")
            self._cache[path] = rows
        return self._cache[path]

    PROFILE_COLUMNS = {"grid": "launch__grid_size", "DRAM rd MB": "dram__bytes_read.sum",
                       "DRAM wr MB": "dram__bytes_write.sum", "L1/TEX MB": "l1tex__t_bytes.sum",
                       "L2 MB": "lts__t_bytes.sum", "SM active cycles": "sm__cycles_active.avg"}
    MB = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3}

    def counter(self, ch, kernel_regex, metric, launch=None, grid=None):
        rows = self._ncu(ch)
        header, units, data = rows[0], rows[1], rows[2:]
        col = {h: i for i, h in enumerate(header)}

        def num(r, name):
            if name not in col:
                raise FigureError(f"{ch}: the ncu export has no column {name!r}")
            text = r[col[name]].replace(",", "")
            try:
                return float(text)
            except ValueError:
                raise FigureError(f"{ch}: {name} is {text!r}, not a number")

        picked = [(i, r) for i, r in enumerate(data) if re.search(kernel_regex, r[col["Kernel Name"]])
                  and (launch is None or i == launch)
                  and (grid is None or num(r, "launch__grid_size") == grid)]
        if len(picked) != 1:
            names = "; ".join(f"#{i} {r[col['Kernel Name']][:60]} grid {r[col['launch__grid_size']]}"
                              for i, r in enumerate(data))
            raise FigureError(f"{ch}: /{kernel_regex}/ (launch={launch}, grid={grid}) selects "
                              f"{len(picked)} launches, not one; launches: {names}")
        _, r = picked[0]
        if metric.startswith("stall:"):
            reason = metric[len("stall:"):]
            for h in header:
                if re.search(rf"issue_stalled_{re.escape(reason)}(_per_warp_active|\.ratio|_per_issue_active)", h) \
                        and re.search(r"issue_stalled_\w+_per_warp_active|warp_latency_issue_stalled_\w+\.ratio|issue_stalled_\w+_per_issue_active", h):
                    return num(r, h)
            raise FigureError(f"{ch}: no stall reason {reason!r} in the ncu export")
        name = self.PROFILE_COLUMNS.get(metric, metric)
        value = num(r, name)
        if metric in self.PROFILE_COLUMNS and units[col[name]] in self.MB:
            value *= self.MB[units[col[name]]]
        return value

    def timeline(self, ch, field, variant=None):
        if not re.fullmatch(r"ch\d\d", ch):
            raise FigureError(f"chapter must be spelt 'chNN', not {ch!r}")
        d = self._json(os.path.join(self.results, "timelines", f"{ch}.json"))
        kernels = d["otherData"]["kernels"]
        if variant is None:
            if len(kernels) != 1:
                raise FigureError(f"timelines/{ch}.json holds {len(kernels)} kernels: name one "
                                  f"with variant= ({', '.join(k['variant'] for k in kernels)})")
            k = kernels[0]
        else:
            found = [k for k in kernels if k["variant"] == variant]
            if not found:
                raise FigureError(f"timelines/{ch}.json has no variant {variant!r}")
            k = found[0]

        def spans(cat):
            return [e for e in d["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat
                    and e.get("args", {}).get("variant") == k["variant"]]
        if field == "overhead_pct":
            return 100.0 * (k["traced_ms"] / k["untraced_ms"] - 1.0)
        if field == "slowdown":
            return k["traced_ms"] / k["untraced_ms"]
        if field == "copy_spans":
            return len(spans("copy"))
        if field == "compute_spans":
            return len(spans("compute"))
        if field == "tiles_per_block":
            compute = spans("compute")
            blocks = {e["args"].get("block") for e in compute}
            return len(compute) / max(1, len(blocks))
        if field not in k:
            raise FigureError(f"timelines/{ch}.json: no field {field!r} (fields: {', '.join(k)})")
        return k[field]

    def env(self):
        names = ["doc", "row", "rate", "ms", "ceiling", "sweep", "table_sweep_gap", "tour", "counter",
                 "timeline", "log"]
        e = {n: getattr(self, n) for n in names}
        e.update(abs=abs, min=min, max=max, round=round, sum=sum, len=len)
        return e


# Pages written whole by a generator from the committed run, checked by their own tests:
# docs/arch-matrix.md by tools/arch_matrix.py (CTest arch_matrix_page).
GENERATED_PAGES = ("docs/arch-matrix.md",)


def default_files(root):
    files = [os.path.join(root, "README.md")]
    for pattern in ("chapters/*/README.md", "docs/*.md", "docs/results/h200/*.md",
                    "docs/results/h200/notes/*.md"):
        files += sorted(glob.glob(os.path.join(root, pattern)))
    generated = {os.path.normpath(os.path.join(root, g)) for g in GENERATED_PAGES}
    return [f for f in files if os.path.exists(f) and os.path.normpath(f) not in generated]


def prose_mask(lines):
    """For each line, the text with non-prose parts blanked (same length), or None if none of
    the line is prose. Blanked: fenced and indented code, code spans, generated blocks."""
    out = []
    fence = None
    generated = None
    prev_blank = True
    in_indented = False
    list_context = False
    for line in lines:
        stripped = line.strip()
        if generated:
            if re.search(rf"<!--\s*/{re.escape(generated)}\s*-->", line):
                generated = None
            out.append(None)
            continue
        if fence:
            if stripped.startswith(fence):
                fence = None
            out.append(None)
            continue
        m = re.match(r"\s*(```+|~~~+)", line)
        if m:
            fence = m.group(1)
            out.append(None)
            continue
        if line.startswith("    ") and (in_indented or (prev_blank and not list_context)):
            in_indented = True
            out.append(None)
            continue
        if stripped:
            in_indented = False
        g = GENERATED_START.search(line)
        if g and not re.search(rf"<!--\s*/{re.escape(g.group(1))}:{re.escape(g.group(2))}\s*-->", line):
            # a generated block starts here (the marker line itself holds no prose figure)
            if "`" not in line[:g.start()].replace("``", ""):
                generated = f"{g.group(1)}:{g.group(2)}"
                out.append(None)
                prev_blank = False
                continue
        # blank code spans (keep length)
        text = re.sub(r"(`+)(.+?)\1", lambda s: " " * len(s.group(0)), line)
        out.append(text)
        if stripped:
            list_context = bool(re.match(r"\s*([-*+]|\d+\.)\s", line)) or \
                (list_context and line.startswith("  "))
        prev_blank = not stripped
    return out


def figure_of(text, comment_start, floor):
    """The last number in text[floor:comment_start], or an error string."""
    matches = list(NUMBER.finditer(text, floor, comment_start))
    if not matches:
        return None, "no number before the annotation"
    m = matches[-1]
    between = text[m.end():comment_start]
    if len(between) > MAX_UNIT:
        return None, f"the annotation is {len(between)} characters after its figure {m.group(0)!r} (only a unit may sit between)"
    return m, None


def check_file(path, run, apply, rel):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    masked = prose_mask(lines)
    errors, unannotated, checked = [], [], 0
    changed = False
    env = run.env()
    exempt = False  # inside a paragraph under a not-measured mark of its own line
    for i, line in enumerate(lines):
        text = masked[i]
        if not line.strip():
            exempt = False
        elif NOT_MEASURED.fullmatch(line.strip()):
            exempt = True
            continue
        covered = set()
        # annotations are looked for in the raw line (code-span blanking keeps positions)
        floor = 0
        new_line = line
        offset = 0
        for c in COMMENT.finditer(line):
            fig, nm = FIG.fullmatch(c.group(0)), NOT_MEASURED.fullmatch(c.group(0))
            if not fig and not nm:
                floor = c.end()
                continue
            search_text = text if text is not None else line
            m, problem = figure_of(search_text, c.start(), floor)
            floor = c.end()
            if problem:
                errors.append(f"{rel}:{i + 1}: {problem}: {c.group(0)}")
                continue
            covered.add(m.start())
            if nm:
                continue
            checked += 1
            expr, fmt = fig.group(1), fig.group(2)
            found = line[m.start():m.end()]
            try:
                value = eval(expr, {"__builtins__": {}}, env)  # noqa: S307 (our own annotations)
                expected = format(value, fmt)
            except FigureError as e:
                errors.append(f"{rel}:{i + 1}: {expr} ; {fmt}: {e}")
                continue
            except Exception as e:  # a typo in an annotation is an error, not a crash
                errors.append(f"{rel}:{i + 1}: {expr} ; {fmt}: {type(e).__name__}: {e}")
                continue
            if expected.replace("-", "\u2212") == found or expected == found:
                continue
            if apply:
                s, e = m.start() + offset, m.end() + offset
                new_line = new_line[:s] + expected + new_line[e:]
                offset += len(expected) - len(found)
                changed = True
                print(f"{rel}:{i + 1}: {found} -> {expected}")
            else:
                errors.append(f"{rel}:{i + 1}: figure disagrees with the run: expected {expected}, "
                              f"found {found}  ({expr} ; {fmt})")
        lines[i] = new_line
        if text is None or exempt:
            continue
        # the lint: measured-looking figures outside comments
        no_comments = COMMENT.sub(lambda c: " " * len(c.group(0)), text)
        for m in MEASURED.finditer(no_comments):
            if m.start() not in covered:
                unannotated.append(f"{rel}:{i + 1}: {m.group(0).strip()!r} has no fig annotation "
                                   f"(or not-measured mark): {line.strip()[:140]}")
    if changed:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
    return errors, unannotated, checked


def self_test():
    """The check can fail: on a copy of chapter 01's README and its run files, tamper one JSON
    value and require a failure naming the line of the figure; --apply must then repair it;
    an unannotated measured figure must fail the lint."""
    import shutil
    import subprocess
    import tempfile
    readme_rel = os.path.join("chapters", "01_sync_shared_loads", "README.md")
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "chapters", "01_sync_shared_loads"))
        shutil.copy(os.path.join(ROOT, readme_rel), os.path.join(tmp, readme_rel))
        results = os.path.join(tmp, "docs", "results", "h200")
        for sub in ("json", "timelines", "logs"):
            os.makedirs(os.path.join(results, sub))
        for p in glob.glob(os.path.join(ROOT, "docs", "results", "h200", "json", "ch01_*")):
            shutil.copy(p, os.path.join(results, "json"))
        shutil.copy(os.path.join(ROOT, "docs", "results", "h200", "timelines", "ch01.json"),
                    os.path.join(results, "timelines"))

        def run(*extra):
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--root", tmp, *extra,
                                   os.path.join(tmp, readme_rel)], capture_output=True, text=True)
            return proc.returncode, proc.stdout + proc.stderr

        failures = []
        rc, out = run()
        if rc != 0:
            failures.append(f"the untouched copy fails:\n{out}")
        with open(os.path.join(tmp, readme_rel)) as f:
            text = f.read()
        line = next((n for n, l in enumerate(text.split("\n"), 1) if "timeline('ch01', 'traced_ms')" in l), None)
        if line is None:
            failures.append(f"{readme_rel} no longer annotates timeline('ch01', 'traced_ms'): "
                            "pick another figure for this self-test")
        else:
            path = os.path.join(results, "timelines", "ch01.json")
            with open(path) as f:
                d = json.load(f)
            d["otherData"]["kernels"][0]["traced_ms"] *= 1.5  # the drift
            with open(path, "w") as f:
                json.dump(d, f)
            rc, out = run()
            if rc == 0 or f"{readme_rel}:{line}: figure disagrees" not in out:
                failures.append(f"a tampered traced_ms was not reported at {readme_rel}:{line} "
                                f"(rc {rc}):\n{out}")
            rc, out = run("--apply")
            rc2, out2 = run()
            if rc2 != 0:
                failures.append(f"--apply did not bring the figures back in line:\n{out}\n{out2}")
        with open(os.path.join(tmp, readme_rel), "a") as f:
            f.write("\nThe copy ran at 1234 GB/s here.\n")
        rc, out = run()
        if rc == 0 or "'1234 GB/s' has no fig annotation" not in out:
            failures.append(f"an unannotated figure passed the lint (rc {rc}):\n{out}")
    for f in failures:
        print("SELF-TEST FAIL: " + f)
    print("self-test: " + ("FAILED" if failures else "the check rejects drift and unannotated figures"))
    return 1 if failures else 0


def main():
    if "--self-test" in sys.argv[1:]:
        sys.exit(self_test())
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--results")
    ap.add_argument("--apply", action="store_true", help="rewrite each annotated figure from the run")
    ap.add_argument("--report", action="store_true", help="list unannotated figures, exit 0")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    run = Run(os.path.abspath(args.results or os.path.join(root, "docs", "results", "h200")))
    files = [os.path.abspath(f) for f in args.files] or default_files(root)
    all_errors, total_checked, per_file = [], 0, []
    for path in files:
        rel = os.path.relpath(path, root)
        errors, unannotated, checked = check_file(path, run, args.apply, rel)
        total_checked += checked
        all_errors += errors
        if args.report:
            for u in unannotated:
                print(u)
        else:
            all_errors += unannotated
        if unannotated or errors:
            per_file.append((rel, len(errors), len(unannotated)))
    for e in all_errors:
        print("FAIL " + e)
    if per_file:
        print("\nper file (annotation errors, unannotated figures):")
        for rel, n_err, n_un in per_file:
            print(f"  {rel}: {n_err} wrong, {n_un} unannotated")
    print(f"\n{total_checked} annotated figure(s) evaluated in {len(files)} file(s); "
          f"{sum(p[1] for p in per_file)} wrong, {sum(p[2] for p in per_file)} unannotated")
    if args.report:
        sys.exit(1 if any(p[1] for p in per_file) else 0)
    sys.exit(1 if all_errors else 0)


if __name__ == "__main__":
    main()

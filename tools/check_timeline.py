#!/usr/bin/env python3
"""Check an in-kernel timeline (the Chrome trace JSON a chapter writes with --timeline=PATH).

    check_timeline.py TRACE.json [--variant KEY] [--expect-overlap | --expect-no-overlap]

Always checked (exit 1 on any failure, one line per problem):
  * the file is JSON with a "traceEvents" list; every event has ph, pid, tid, ts (and dur >= 0
    for a complete event "X");
  * each track (pid, tid) is in time order: the device clock never ran backwards within a lane;
  * spans are paired: every "B" has its "E", and complete spans on one track follow each
    other without overlapping (a lane computes one tile at a time, a ring slot holds one tile
    at a time);
  * every event lies inside its kernel's span (the "kernel" event of its process).

--expect-overlap: at least one copy was in flight (issued, not yet landed) while a compute
phase of the same block was open, with a positive overlap in time. That is the overlap an
asynchronous pipeline exists for. --expect-no-overlap: no copy was (a synchronous kernel or a
one-stage ring). Either needs at least one copy span and one compute span to judge from.
--variant restricts both to one kernel of a file that holds several.

--synthetic=KIND builds a small trace in the writer's format instead of reading a file
(KIND: overlap, serial, backwards, unpaired, outside, slot-reuse), and --self-test checks that
the checker accepts the good ones and rejects each broken one for the right reason.
"""
import argparse
import json
import sys

EPS = 1e-6  # us; the writer prints whole nanoseconds (3 decimals of a microsecond)


def load(path):
    with open(path) as f:
        return json.load(f)


def events_of(trace):
    ev = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(ev, list):
        raise ValueError('no "traceEvents" list')
    return ev


def check_structure(trace):
    """Problems with the file's structure, pairing, order and spans, as a list of strings."""
    problems = []
    try:
        events = events_of(trace)
    except ValueError as e:
        return [str(e)]
    last_ts = {}
    open_b = {}
    x_end = {}  # track -> end of its latest complete span
    kernel = {}  # pid -> (start, end)
    for i, e in enumerate(events):
        if not isinstance(e, dict) or "ph" not in e or "pid" not in e:
            problems.append(f"event {i}: not an object with ph and pid")
            continue
        ph = e["ph"]
        if ph == "M":
            continue
        missing = [k for k in ("tid", "ts", "name") if k not in e]
        if missing:
            problems.append(f"event {i}: missing {', '.join(missing)}")
            continue
        track = (e["pid"], e["tid"])
        ts = float(e["ts"])
        if track in last_ts and ts + EPS < last_ts[track]:
            problems.append(f"track {track}: '{e['name']}' at {ts} us comes after an event at "
                            f"{last_ts[track]} us (time runs backwards)")
        last_ts[track] = max(ts, last_ts.get(track, ts))
        if ph == "X":
            dur = e.get("dur")
            if dur is None or float(dur) < 0:
                problems.append(f"event {i} '{e['name']}': complete event without dur >= 0")
                continue
            end = ts + float(dur)
            if e.get("cat") == "kernel":
                kernel[e["pid"]] = (ts, end)
                continue
            if track in x_end and ts + EPS < x_end[track]:
                problems.append(f"track {track}: span '{e['name']}' [{ts}, {end}] begins before "
                                f"the previous span on its track ended ({x_end[track]})")
            x_end[track] = max(end, x_end.get(track, end))
        elif ph == "B":
            open_b.setdefault(track, []).append(e["name"])
        elif ph == "E":
            if not open_b.get(track):
                problems.append(f"track {track}: end '{e['name']}' at {ts} without a begin")
            else:
                open_b[track].pop()
        elif ph not in ("i", "I"):
            problems.append(f"event {i}: unexpected ph '{ph}'")
    for track, names in open_b.items():
        for name in names:
            problems.append(f"track {track}: begin '{name}' never ends")
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") == "M" or "ts" not in e or "pid" not in e:
            continue
        if e.get("cat") == "kernel":
            continue
        span = kernel.get(e["pid"])
        if span is None:
            problems.append(f"process {e['pid']}: no kernel span")
            kernel[e["pid"]] = (float("-inf"), float("inf"))  # say it once
            continue
        ts = float(e["ts"])
        end = ts + float(e.get("dur", 0) or 0)
        if ts + EPS < span[0] or end > span[1] + EPS:
            problems.append(f"'{e.get('name')}' [{ts}, {end}] us lies outside its kernel's span "
                            f"[{span[0]}, {span[1]}]")
    return problems


def spans(trace, cat, variant=None):
    """Complete events of category `cat`: list of (variant, block, start, end, name)."""
    out = []
    for e in events_of(trace):
        if not isinstance(e, dict) or e.get("ph") != "X" or e.get("cat") != cat:
            continue
        args = e.get("args", {})
        if variant is not None and args.get("variant") != variant:
            continue
        start = float(e["ts"])
        out.append((args.get("variant"), args.get("block"), start, start + float(e["dur"]),
                    e.get("name", "")))
    return out


def overlapping_copies(trace, variant=None):
    """Copy spans that intersect (positive length) a compute span of the same kernel and block."""
    compute = {}
    for v, b, s, t, _ in spans(trace, "compute", variant):
        compute.setdefault((v, b), []).append((s, t))
    hits = []
    for v, b, s, t, name in spans(trace, "copy", variant):
        for cs, ct in compute.get((v, b), []):
            if s < ct - EPS and cs < t - EPS:
                hits.append((v, b, name, s, t, cs, ct))
                break
    return hits


def check(trace, variant=None, expect=None):
    """All problems; `expect` is None, 'overlap' or 'no-overlap'."""
    problems = check_structure(trace)
    if problems or expect is None:
        return problems
    copies = spans(trace, "copy", variant)
    computes = spans(trace, "compute", variant)
    what = f"variant {variant}" if variant else "the trace"
    if not copies or not computes:
        return [f"{what} has {len(copies)} copy and {len(computes)} compute spans: "
                "nothing to judge overlap from"]
    hits = overlapping_copies(trace, variant)
    if expect == "overlap" and not hits:
        return [f"no overlap: none of the {len(copies)} copies of {what} was in flight during "
                "a compute phase of its block"]
    if expect == "no-overlap" and hits:
        v, b, name, s, t, cs, ct = hits[0]
        return [f"unexpected overlap: {len(hits)} copies of {what} were in flight during "
                f"compute, e.g. block {b} '{name}' [{s}, {t}] us vs compute [{cs}, {ct}] us"]
    return []


# ---- synthetic traces in the writer's format (for the tests of this checker) -------------

def synthetic(kind):
    """A one-block trace of a 6-tile ring: 'overlap' (2 stages), 'serial' (1 stage), or a
    broken one: 'backwards', 'unpaired', 'outside', 'slot-reuse'."""
    stages = 1 if kind == "serial" else 2
    ev = []
    pid, lane_tid = 1000, 1
    t = 0.0
    copies = {}

    def add(ph, cat, name, ts, tid, tile, slot, dur=None):
        e = {"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(ts, 3),
             "args": {"variant": "synthetic", "block": 0, "tile": tile, "slot": slot}}
        if ph == "i":
            e["s"] = "t"
        if dur is not None:
            e["dur"] = round(dur, 3)
        ev.append(e)

    def issue(j, ts):
        if j < 6:
            copies[j] = ts

    for j in range(stages - 1):
        t += 0.032
        issue(j, t)
    for j in range(6):
        slot = j % stages
        if stages > 1:
            t += 0.032
            issue(j + stages - 1, t)
        t += 0.032
        add("i", "wait", f"wait begun tile {j}", t, lane_tid, j, slot)
        if stages == 1:
            issue(j, t)
        t += 0.7 if (stages == 1 or j == 0) else 0.064
        add("i", "wait", f"wait done tile {j}", t, lane_tid, j, slot)
        add("X", "copy", f"copy tile {j} slot {slot}", copies[j], 257 + slot, j, slot, t - copies[j])
        t += 0.032
        add("X", "compute", f"compute tile {j} slot {slot}", t, lane_tid, j, slot, 1.28)
        t += 1.28 + 0.032
        add("i", "release", f"slot released tile {j}", t, lane_tid, j, slot)
    end = t + 0.064
    if kind == "backwards":
        add("i", "wait", "wait begun tile 9", t - 5.0, lane_tid, 9, 0)
    if kind == "unpaired":
        e = {"ph": "B", "cat": "compute", "name": "compute tile 9", "pid": pid, "tid": lane_tid,
             "ts": round(t, 3)}
        ev.append(e)
    if kind == "outside":
        add("i", "release", "slot released tile 9", end + 3.0, lane_tid, 9, 0)
    if kind == "slot-reuse":  # a copy into slot 0 issued while the slot still held a tile
        first = next(e for e in ev if e["cat"] == "copy" and e["args"]["slot"] == 0)
        add("X", "copy", "copy tile 8 slot 0", first["ts"] + 0.01, 257, 8, 0, 0.5)
    # copy tracks in time order, as the writer sorts them
    ev.sort(key=lambda e: (e["pid"], e["tid"], e["ts"]) if e["cat"] == "copy" else (0, 0, 0))
    kernel = {"ph": "X", "cat": "kernel", "name": "kernel synthetic", "pid": pid, "tid": 0,
              "ts": 0.0, "dur": round(end, 3), "args": {"variant": "synthetic"}}
    meta = [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "synthetic | SM 0"}}]
    return {"displayTimeUnit": "ns", "otherData": {"chapter": "synthetic", "gpu": "none"},
            "traceEvents": meta + [kernel] + ev}


def self_test():
    cases = [  # (kind, expect, must pass?, text the first problem must contain)
        ("overlap", "overlap", True, None),
        ("serial", "no-overlap", True, None),
        ("serial", "overlap", False, "no overlap"),
        ("overlap", "no-overlap", False, "unexpected overlap"),
        ("backwards", None, False, "time runs backwards"),
        ("unpaired", None, False, "never ends"),
        ("outside", None, False, "outside its kernel's span"),
        ("slot-reuse", None, False, "before the previous span on its track ended"),
    ]
    bad = 0
    for kind, expect, should_pass, reason in cases:
        trace = json.loads(json.dumps(synthetic(kind)))  # through JSON, as a file would be
        problems = check(trace, None, expect)
        ok = (not problems) if should_pass else bool(problems and reason in problems[0])
        label = f"{kind} (expect {expect or 'valid'})"
        print(f"{'ok  ' if ok else 'FAIL'} {label}: {problems[0] if problems else 'accepted'}")
        bad += not ok
    print("self-test:", "PASS" if not bad else f"FAIL ({bad} case(s))")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", nargs="?", help="trace JSON written with --timeline=PATH")
    ap.add_argument("--variant", help="judge overlap within this kernel (variant key) only")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--expect-overlap", action="store_true")
    g.add_argument("--expect-no-overlap", action="store_true")
    ap.add_argument("--synthetic", choices=["overlap", "serial", "backwards", "unpaired",
                                            "outside", "slot-reuse"])
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if a.synthetic:
        trace, label = synthetic(a.synthetic), f"synthetic:{a.synthetic}"
    elif a.trace:
        label = a.trace
        try:
            trace = load(a.trace)
        except (OSError, ValueError) as e:
            print(f"{label}: FAIL: cannot read the trace: {e}")
            return 1
    else:
        ap.error("give a trace file, --synthetic=KIND or --self-test")
    expect = "overlap" if a.expect_overlap else "no-overlap" if a.expect_no_overlap else None
    problems = check(trace, a.variant, expect)
    for p in problems[:20]:
        print(f"{label}: FAIL: {p}")
    if len(problems) > 20:
        print(f"{label}: ... {len(problems) - 20} more")
    if not problems:
        n = len(overlapping_copies(trace, a.variant))
        print(f"{label}: OK ({n} copies in flight during compute)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

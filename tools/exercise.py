#!/usr/bin/env python3
"""A student's copy of a chapter's exercise, made from the chapter's own solution.

    tools/exercise.py new NN               write exercises/NN_topic/ (never over an existing copy)
    tools/exercise.py new NN --into DIR    write DIR/NN_topic/ instead (CI's scratch folder)
    tools/exercise.py list                 the chapters that have an exercise

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
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p_new = sub.add_parser("new", help="write a student's copy of chapter NN's exercise")
    p_new.add_argument("chapter", help="chapter number (04) or directory name (04_pipeline_prefetch)")
    p_new.add_argument("--into", default=os.path.join(ROOT, "exercises"),
                       help="parent folder of the copy (default: exercises/ in the repository)")
    sub.add_parser("list", help="list the chapters and their number of gaps")
    args = parser.parse_args()
    if args.command == "new":
        new(args.chapter, args.into)
    else:
        list_chapters()


if __name__ == "__main__":
    main()

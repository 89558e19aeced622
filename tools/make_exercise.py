#!/usr/bin/env python3
"""Generate a chapter's exercise from its solution, so the two can never drift apart.

    tools/make_exercise.py <solution kernels.cuh> <exercise kernels.cuh>   write one (+ main.cu)
    tools/make_exercise.py --check <solution> <exercise>                   exit 1 if stale
    tools/make_exercise.py --all                 regenerate chapters/*/exercise/kernels.cuh

The exercise lives beside the solution, in chapters/NN_topic/exercise/kernels.cuh, and is
committed: students edit that file and build chNN_topic_exercise (-DTUTORIAL_BUILD_EXERCISES=ON).
CTest's chNN_topic_exercise_in_sync test (run in CI) fails when the committed exercise no
longer matches its solution: rerun --all after changing a chapter's kernels.cuh.

In the solution, each exercise gap is a marked region:

    // EXERCISE-BEGIN: <hint for the student>
    ...the solution lines...
    // EXERCISE-STUB: <a line that keeps the exercise compiling>   (optional, repeatable)
    // EXERCISE-END

The exercise gets, in place of the region (same indentation):

    // TODO(exercise): <hint for the student>
    <the stub lines, if any>

Everything outside the regions is copied unchanged. A solution without regions is an error,
as is an unclosed or nested region.
"""
import glob
import os
import re
import sys

BEGIN = re.compile(r"^(\s*)// EXERCISE-BEGIN: (.*)$")
STUB = re.compile(r"^\s*// EXERCISE-STUB: (.*)$")
END = re.compile(r"^\s*// EXERCISE-END\s*$")


def convert(lines, source):
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
    if regions == 0:
        sys.exit(f"{source}: no EXERCISE-BEGIN regions")
    return out


def generate(solution):
    with open(solution) as f:
        lines = f.readlines()
    name = os.path.basename(os.path.dirname(os.path.abspath(solution)))
    header = [f"// EXERCISE for chapter {name}, generated from ../kernels.cuh by tools/make_exercise.py.\n",
              "// Fill in every TODO(exercise) until `chNN_topic_exercise` reports PASS.\n"]
    return "".join(header + convert(lines, solution))


def main_copy(solution):
    """The chapter's main.cu, copied next to the exercise: `#include "kernels.cuh"` looks in the
    including file's own directory first, so only a copy here picks up the exercise header."""
    with open(os.path.join(os.path.dirname(solution), "main.cu")) as f:
        return "// EXERCISE copy of ../main.cu (tools/make_exercise.py); edit kernels.cuh, not this.\n" + f.read()


def write(solution, target):
    """The exercise header and, beside it, the copy of main.cu (both are checked by --check)."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        f.write(generate(solution))
    with open(os.path.join(os.path.dirname(target), "main.cu"), "w") as f:
        f.write(main_copy(solution))
    print(f"wrote {target} and main.cu")


def main():
    args = sys.argv[1:]
    if args == ["--all"]:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for solution in sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]_*", "kernels.cuh"))):
            with open(solution) as f:
                if "EXERCISE-BEGIN" not in f.read():
                    print(f"no exercise regions: {solution}")
                    continue
            write(solution, os.path.join(os.path.dirname(solution), "exercise", "kernels.cuh"))
        return
    if len(args) == 3 and args[0] == "--check":
        exercise_main = os.path.join(os.path.dirname(args[2]), "main.cu")
        with open(args[2]) as f, open(exercise_main) as g:
            if f.read() != generate(args[1]) or g.read() != main_copy(args[1]):
                sys.exit(f"{args[2]} is stale: run tools/make_exercise.py --all")
        print(f"{args[2]} matches {args[1]}")
        return
    if len(args) != 2:
        sys.exit(__doc__)
    write(args[0], args[1])


if __name__ == "__main__":
    main()

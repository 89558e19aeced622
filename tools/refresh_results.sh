#!/usr/bin/env bash
# Regenerate every README results table and every figure from the reference run
# (docs/results/h200/, imported by tools/import_gpu_results.sh):
#   - each chapter README's table between <!-- RESULTS:chNN --> markers (tools/results_to_md.py)
#   - each chapter README's counters between <!-- PROFILE:chNN --> markers, when the run has
#     profile.md (tools/profile_to_md.py)
#   - docs/results/h200/plots/ (tools/plot_results.py; chapter 04's plot_sweep.py as ch04_sweep.png)
#   - docs/results/h200/tour.json (tools/tour_summary.py)
#   - README.md's verbatim outputs of the run (tools/readme_verbatim.py)
#   - every annotated figure in the prose (tools/check_prose.py --apply)
# Usage: tools/refresh_results.sh [results folder]    (needs python3; figures need matplotlib)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run=${1:-$root/docs/results/h200}
[ -f "$run/RUN.md" ] || { echo "error: $run/RUN.md missing: import a run first (tools/import_gpu_results.sh)" >&2; exit 2; }
field() { sed -n "s/^$1: //p" "$run/RUN.md" | head -1; }
note="$(field gpu | sed 's/ (.*//'), $(field date), commit $(field commit | cut -c1-12): $(field command)"

python3 "$root/tools/results_to_md.py" --results "$run" --apply
if [ -f "$run/profile.md" ]; then
  python3 "$root/tools/profile_to_md.py" --results "$run" --apply
fi
python3 "$root/tools/tour_summary.py" "$run/json" --out "$run/tour.json" > "$run/logs/tour-summary.txt"
# README.md's two verbatim outputs (chapter 01's console output, the tour summary)
python3 "$root/tools/readme_verbatim.py" --results "$run" --apply
# the figures the prose quotes (<!-- fig: ... --> annotations, tools/check_prose.py): rewritten
# from the new run; one that no longer evaluates is named here and by CTest prose_figures
python3 "$root/tools/check_prose.py" --results "$run" --apply || \
  echo "warning: some prose figures need a hand (listed above; CTest prose_figures fails until then)" >&2
python3 "$root/tools/plot_results.py" "$run/json" "$run/plots" --title "$note"
sweep04=$(ls "$run"/json/ch04_*.json.sweep.json 2>/dev/null | head -1 || true)
if [ -n "$sweep04" ] && python3 -c "import matplotlib" 2>/dev/null; then
  python3 "$root/chapters/04_pipeline_prefetch/plot_sweep.py" "$sweep04" -o "$run/plots/ch04_sweep.png"
fi
echo "refreshed from $run: README tables, plots in $run/plots, tour.json"

#!/usr/bin/env bash
# Import one GPU job (the results.tar.gz that tools/gpu_check.sh leaves in $OUT) as the
# reference run in docs/results/h200/, replacing the previous run's files and keeping notes/
# (the chapters' investigation notes, written by hand). Then tools/refresh_results.sh
# regenerates every README table and plot from it.
# Usage: tools/import_gpu_results.sh <results.tar.gz> "<command that produced it>" [<commit>]
#   <commit> defaults to the one the job recorded (git rev-parse HEAD where it ran), else to
#   this checkout's HEAD.
# Env:   RESULTS_DIR=docs/results/<gpu> to import a run of another GPU elsewhere;
#        KEEP_PROFILE=1 to keep the previous run's Nsight Compute profile when this job has none.
#
# Layout of the result folder:
#   RUN.md      GPU, date, commit, command, and what each file is
#   json/       each chapter's --json output (and <chapter>.json.sweep.json of its sweeps)
#   tour.json   the tour summary (tools/tour_summary.py) with every chapter's JSON
#   plots/      the figures (tools/plot_results.py; written by tools/refresh_results.sh)
#   profile.md  Nsight Compute counters per variant (when the job profiled), ncu/ the CSVs
#   logs/       the job's summary, CTest and sanitizer logs, each chapter's full-size output
#   notes/      per-chapter investigation notes (kept across imports)
set -euo pipefail
tarball=$1; command=$2
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${RESULTS_DIR:-$root/docs/results/h200}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$tarball" -C "$tmp"
# The commit: as given, else as the GPU job recorded it, else this checkout's HEAD.
job_commit=$(sed -n 's/^commit: //p' "$tmp/logs/environment.txt" 2>/dev/null | grep -v unknown || true)
commit=${3:-${job_commit:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}}

# The previous run goes; its notes stay. KEEP_PROFILE=1 keeps its profile (profile.md, ncu/)
# when this job did not profile; the command text must then say whose counters they are.
mkdir -p "$dest"
rm -rf "$dest/json" "$dest/plots" "$dest/logs" "$dest/tour.json" "$dest/RUN.md" "$dest/timelines"
if [ "${KEEP_PROFILE:-0}" != 1 ] || [ -f "$tmp/json/profile.md" ]; then
  rm -rf "$dest/ncu" "$dest/profile.md"
fi
mkdir -p "$dest/json" "$dest/logs"

cp "$tmp"/json/*.json "$dest/json/" 2>/dev/null || true
# The tour step's per-chapter JSON (full size, as README.md runs it) where the full step has none.
if [ -d "$tmp/json/tour" ]; then
  for f in "$tmp"/json/tour/ch*.json; do
    [ -f "$f" ] && [ ! -f "$dest/json/$(basename "$f")" ] && cp "$f" "$dest/json/"
  done
  cp "$tmp"/logs/tour.log "$dest/logs/" 2>/dev/null || true
fi
# Profiling output (profile step): the summary tables, ncu CSVs, chapter ncu scripts' output.
[ -f "$tmp/json/profile.md" ] && cp "$tmp/json/profile.md" "$dest/"
if [ -d "$tmp/json/ncu" ]; then mkdir -p "$dest/ncu"; cp "$tmp"/json/ncu/*.csv "$dest/ncu/" 2>/dev/null || true; fi
cp "$tmp"/json/*.txt "$dest/logs/" 2>/dev/null || true
# In-kernel timelines (timeline step): the Chrome-trace JSON of each chapter in timelines/,
# the PNGs beside the other figures in plots/ (refresh_results.sh leaves them in place).
if [ -d "$tmp/json/timelines" ]; then
  mkdir -p "$dest/timelines" "$dest/plots"
  cp "$tmp"/json/timelines/*.json "$dest/timelines/" 2>/dev/null || true
  cp "$tmp"/json/timelines/*.png "$dest/plots/" 2>/dev/null || true
fi
cp "$tmp"/logs/timeline.*.log "$dest/logs/" 2>/dev/null || true
# Probes: keep the head of each synccheck log (the first reports say what was flagged).
for f in "$tmp"/logs/probe.*.log; do [ -f "$f" ] && head -60 "$f" > "$dest/logs/$(basename "$f")"; done
for f in summary.txt environment.txt ctest.log ctest-exercises.log; do
  [ -f "$tmp/logs/$f" ] && cp "$tmp/logs/$f" "$dest/logs/"
done
for f in "$tmp"/logs/*.full.log "$tmp"/logs/arch80.*.log; do [ -f "$f" ] && cp "$f" "$dest/logs/"; done
# The hangs step (every planted mistake: seconds, exit code, how it failed) and the
# perturbation build (every chapter under seeded delays, the perturbation negatives' CTest).
for f in "$tmp"/logs/hangs.txt "$tmp"/logs/hangs.*.log "$tmp"/logs/perturb.*.log; do
  [ -f "$f" ] && cp "$f" "$dest/logs/"
done
# Sanitizer logs: keep only the summary lines (the full logs repeat the chapter output).
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp"/logs/sanitizer.*.log 2>/dev/null \
  | sed "s|$tmp/logs/||" > "$dest/logs/sanitizer-summary.txt" || true

# The tour summary, from the JSON now in place.
python3 "$root/tools/tour_summary.py" "$dest/json" --out "$dest/tour.json" > "$dest/logs/tour-summary.txt" || true

gpu=$(python3 -c "import json,glob,sys; f=sorted(p for p in glob.glob(sys.argv[1]+'/ch*.json') if p.count('.json')==1)[0]; d=json.load(open(f))['device']; print(f\"{d['name']} (CC {d['cc']}, {d['sms']} SMs, driver {d['driver']}, runtime {d['runtime']})\")" "$dest/json" 2>/dev/null \
      || grep -m1 -oE "NVIDIA H[0-9]+" "$tmp/logs/environment.txt" || echo "GPU")
date_run=$(tail -1 "$tmp/logs/environment.txt" 2>/dev/null || date -u)
cat > "$dest/RUN.md" <<EOT
# Reference run: $(basename "$dest")

gpu: ${gpu}
date: ${date_run}
commit: ${commit}
command: ${command}

Every table in the chapter READMEs and every figure in plots/ comes from this run
(\`tools/refresh_results.sh\` regenerates them from the files here).

- \`json/\`: each chapter's \`--json\` output, and \`<chapter>.json.sweep.json\` for its sweeps
- \`tour.json\`: the tour summary (each chapter's lesson against its baseline) with every
  chapter's JSON; \`logs/tour-summary.txt\` is the same as a table
- \`plots/\`: the figures the READMEs show
- \`profile.md\`, \`ncu/\` (when profiled): Nsight Compute counters per variant
- \`logs/summary.txt\`: the job's summary (build, CTest, each chapter's exit code, arch80,
  sanitizers); \`logs/ctest.log\`: the full CTest output on the GPU
- \`logs/<chapter>.full.log\`: each chapter's full-size output; \`logs/arch80.*\`: the sm_80-only
  build on this GPU
- \`logs/sanitizer-summary.txt\`: compute-sanitizer memcheck/racecheck/synccheck/initcheck
- \`timelines/\`: in-kernel timelines (Chrome trace JSON; open in Perfetto), drawn as
  \`plots/timeline_*.png\`; \`logs/timeline.*.log\`: each traced run, with its overhead
- \`logs/probe.*\`: standalone probes (tools/probes/) and what synccheck said about them
- \`logs/hangs.txt\`: every planted mistake (the chapters' negatives) run alone with a 5 s
  watchdog: seconds to FAIL, exit code, how it failed; \`logs/hangs.*.log\` their output
- \`logs/perturb.*\`: the TUTORIAL_PERTURB=ON build: every chapter under seeded delays
  (\`perturb.<chapter>.log\`) and the perturbation negatives' CTest (\`perturb.ctest.log\`)
- \`notes/\`: per-chapter investigation notes
EOT
echo "imported into $dest; now run tools/refresh_results.sh"

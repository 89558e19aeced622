#!/usr/bin/env bash
# Import one GPU run (the results.tar.gz that tools/gpu_check.sh leaves in $OUT) into
# docs/results/<name>/, so nobody has to rerun a GPU job to see a number.
# Usage: tools/import_gpu_results.sh <results.tar.gz> <name> "<command that produced it>"
set -euo pipefail
tarball=$1; name=$2; command=$3
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/docs/results/$name
tmp=$(mktemp -d)
tar -xzf "$tarball" -C "$tmp"
mkdir -p "$dest/json" "$dest/logs"
cp "$tmp"/json/*.json "$dest/json/" 2>/dev/null || true
# Profiling output (profile step): ncu CSVs, the summary tables, chapter ncu scripts' output.
if [ -d "$tmp/json/ncu" ]; then mkdir -p "$dest/ncu"; cp "$tmp"/json/ncu/*.csv "$dest/ncu/"; fi
cp "$tmp"/json/*.md "$tmp"/json/*.txt "$dest/" 2>/dev/null || true
# Probes: keep the head of each synccheck log (the first reports say what was flagged).
for f in "$tmp"/logs/probe.*.log; do [ -f "$f" ] && head -60 "$f" > "$dest/logs/$(basename "$f")"; done
for f in summary.txt environment.txt ctest.log; do  # a profile-only run has no ctest.log
  [ -f "$tmp/logs/$f" ] && cp "$tmp/logs/$f" "$dest/logs/"
done
cp "$tmp"/logs/ctest-exercises.log "$dest/logs/" 2>/dev/null || true
# The tour (tour step): its log ends with the summary table; tour.json holds every chapter.
if [ -d "$tmp/json/tour" ]; then
  mkdir -p "$dest/tour"
  cp "$tmp"/json/tour/tour.json "$dest/tour/" 2>/dev/null || true
  cp "$tmp"/json/tour/ch*.json "$dest/json/" 2>/dev/null || true  # each chapter at full size
  cp -r "$tmp"/json/tour/plots "$dest/tour/" 2>/dev/null || true
  cp "$tmp"/logs/tour.log "$dest/logs/" 2>/dev/null || true
fi
for f in "$tmp"/logs/*.full.log; do [ -f "$f" ] && cp "$f" "$dest/logs/"; done
# Sanitizer logs: keep only the summary lines (the full logs repeat the chapter output).
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp"/logs/sanitizer.*.log 2>/dev/null \
  | sed "s|$tmp/logs/||" > "$dest/logs/sanitizer-summary.txt" || true
gpu=$(python3 -c "import json,glob,sys; f=sorted(glob.glob(sys.argv[1]+'/json/ch*.json')+glob.glob(sys.argv[1]+'/json/tour/ch*.json'))[0]; d=json.load(open(f))['device']; print(f\"{d['name']} (CC {d['cc']}, {d['sms']} SMs, driver {d['driver']}, runtime {d['runtime']})\")" "$tmp" 2>/dev/null || grep -m1 -oE "NVIDIA H[0-9]+" "$tmp/logs/environment.txt")
date_run=$(tail -1 "$tmp/logs/environment.txt")
cat > "$dest/RUN.md" <<EOT
# GPU run $name

gpu: ${gpu:-GPU}
date: ${date_run}
command: $command

- \`logs/summary.txt\`: the script's summary (build, ctest, each chapter's exit code, sanitizer)
- \`logs/ctest.log\`: the full CTest output on the GPU (GPU tests ran, not skipped)
- \`logs/<chapter>.full.log\`: each chapter's full-size output
- \`logs/sanitizer-summary.txt\`: compute-sanitizer memcheck/racecheck/synccheck/initcheck
- \`json/\`: each chapter's \`--json\` output (tables and plots are made from these)
- \`profile.md\`, \`ncu/\`, \`*.txt\` (when profiled): Nsight Compute counters per variant
- \`logs/probe.*\`: standalone probes (tools/probes/) and what synccheck said about them
- \`logs/tour.log\`, \`tour/\` (when the tour ran): \`cmake --workflow --preset tour\`'s output,
  ending with the summary table, and its tour.json (each chapter's JSON is in json/)
EOT
rm -rf "$tmp"
echo "imported into $dest"

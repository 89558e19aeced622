#!/usr/bin/env bash
# The whole GPU job in one call, for the lent H200 (or any sm_90 machine):
#   1. configure and build for sm_90 with Ninja (tests included)
#   2. run the full CTest suite: GPU tests must RUN here, and any skip is reported
#   2c. arch80: a second build for sm_80 only (-DCMAKE_CUDA_ARCHITECTURES=80: sm_80 SASS and
#       compute_80 PTX) in build-sm80, every chapter with --check-only: on a newer GPU each
#       chapter must pass or skip (77) the variants it has no code for, naming the missing
#       architecture; no chapter may exit 1 (a wrong answer from a missing kernel image)
#   3. run every chapter at full size with --json
#   4. dump SASS with cuobjdump and run the SASS assertions (the CTest 'sass' label)
#   5. compute-sanitizer memcheck, racecheck, synccheck, initcheck on every chapter (--check-only)
#   5b. probes: small standalone programs that test a tool's or the hardware's behaviour
#       (tools/probes/*.cu), each run plainly and under compute-sanitizer synccheck
#   5d. perturb: a second build with -DTUTORIAL_PERTURB=ON (seeded delays at the ordering
#       points, common/perturb.cuh) in build-perturb: every chapter --check-only must pass, and
#       `ctest -L perturb` (each perturbation negative must FAIL); logs/perturb.*.log
#   5e. hangs: every chapter's negatives (the planted mistakes, the hang kinds among them: wrong
#       parity, an expect_tx the copies never deliver, a missing arrival), each run alone under
#       `timeout 20` with a 5 s watchdog: each must FAIL (exit 1) within 10 s, never hang;
#       seconds, exit code and how it failed per variant in logs/hangs.txt
#   3c. timeline: the chapters with an in-kernel timeline, --check-only --timeline (small
#       problems), each trace checked (tools/check_timeline.py) and drawn (tools/plot_timeline.py)
#       into json/timelines/: one PNG per chapter and the side-by-side picture
#   3b. tour (only when named in STEPS): `cmake --workflow --preset tour`, as README.md runs it
#   5c. profile (only when named in STEPS): Nsight Compute counters for every chapter
#       (tools/profile_chapters.sh) and chapter-specific ncu scripts (chapters/*/ncu_*.sh)
#   6. pack logs and JSON into $OUT/results.tar.gz (the device tool returns at most 8 files)
#      and print a short summary table last.
# Usage: OUT=/some/dir tools/gpu_check.sh [chapter-regex]   (default: every chapter)
# Env:   STEPS=build,ctest,exercises,arch80,full,timeline,sass,sanitizer,probes,perturb,hangs
#        (default): a subset;
#        add tour and/or profile to run those too;
#        BUDGET=<seconds> (default 570): steps that would start after it are skipped and the
#        results packed anyway, so a time-limited machine still returns everything it did;
#        SKIP_SANITIZER=1 to skip step 5; SANITIZER_TOOLS="racecheck memcheck" (default all four),
#        SANITIZER_JOBS=N sanitizer runs at a time (default 4), PER_JOB=<seconds> each (180),
#        SANITIZER_BUDGET=<seconds> for the whole step (default: what the budget leaves);
#        racecheck runs with TUTORIAL_SKIP_SMEM_SCRUB=1 (the harness skips its shared-memory
#        scrub; racecheck checks shared memory itself) unless RACECHECK_SKIP_SCRUB=0;
#        ARCH=90 to change the architecture;
#        HANG_LIMIT_S=<seconds> (default 10): the hangs step's limit per planted mistake;
#        HANG_WATCHDOG_S=<seconds> (default 5): TUTORIAL_WATCHDOG_S in the hangs step, so a
#        wait that cannot be bounded on the device is caught inside that limit too;
#        ONLY_DIRS=<regex> to configure only matching chapter directories (TUTORIAL_ONLY);
#        FULL_ONLY=<regex> to run only matching chapters at full size (step 3);
#        PROFILE_ONLY=<regex> to profile only matching chapters (step 5c);
#        EXTRA_CMAKE_ARGS="-DTUTORIAL_BUILD_TESTS=OFF ..." passed to the configure step;
#        KEEP_WORK=1 to add to the results of an earlier call on the same machine (one job in
#        several calls: the last call's tarball holds them all, its summary every call's lines);
#        TUTORIAL_SOURCE_COMMIT=<hash> when this machine's .git is not the one its files came
#        from (the lent H200 gets the working tree with the session's first snapshot of .git):
#        the build, every JSON and logs/environment.txt then name that commit;
#        BUILD_DIR=build to build where the presets do, so the tour step reuses that build
#        (its sm_90 code is what the default sm_80+sm_90 build runs on an H200).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
ONLY=${1:-.}
ARCH=${ARCH:-90}
BUILD=${BUILD_DIR:-build-gpu}   # BUILD_DIR=build: the tour step then reuses this build
WORK=${WORK:-/tmp/gpu-check}   # everything lands here; $OUT gets one tarball and the summary
LOGS=$WORK/logs
# KEEP_WORK=1: a later call on the same (still warm) machine adds to the earlier calls' results,
# so one job split over several device calls comes back as one tarball and one summary.
[ "${KEEP_WORK:-0}" = 1 ] || rm -rf "$WORK"
mkdir -p "$LOGS" "$OUT"
summary=()
note() { summary+=("$1"); echo "== $1"; }
START=$(date +%s)
BUDGET=${BUDGET:-570}
STEPS=${STEPS:-build,ctest,exercises,arch80,full,timeline,sass,sanitizer,probes,perturb,hangs}   # also: tour, profile
want() { [[ ",$STEPS," == *",$1,"* ]]; }
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
pack() {
  { echo "## call of $(date -u '+%F %T') UTC: STEPS=$STEPS"; printf '%s\n' "${summary[@]}"; } \
    >> "$LOGS/summary.txt"
  cp "$LOGS/summary.txt" "$OUT/summary.txt"
  tar -czf "$OUT/results.tar.gz" -C "$WORK" logs json sass 2>/dev/null
}
trap pack EXIT

# Every chapter run of this call writes it into its JSON ("call"; tools/results_to_md.py puts it
# in the RESULTS header): the call's number within the job (KEEP_WORK=1 calls count on), its
# start time and its steps. A caller may set TUTORIAL_RUN_CALL itself.
calls_before=$(grep -c '^## call of' "$LOGS/summary.txt" 2>/dev/null || true)
export TUTORIAL_RUN_CALL=${TUTORIAL_RUN_CALL:-"call $(( ${calls_before:-0} + 1 )) of the job ($(date -u '+%F %T') UTC, STEPS=$STEPS)"}
{ nvidia-smi; nvcc --version; cmake --version | head -1; echo "commit: ${TUTORIAL_SOURCE_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"; echo "call: $TUTORIAL_RUN_CALL"; date -u; } > "$LOGS/environment.txt" 2>&1

# 1. build
if ! want build; then note "build: not requested"
elif cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=$ARCH \
     -DTUTORIAL_ONLY="${ONLY_DIRS:-}" -DTUTORIAL_BUILD_EXERCISES=ON ${EXTRA_CMAKE_ARGS:-} \
     > "$LOGS/configure.log" 2>&1 && cmake --build $BUILD -j 16 -- -k 0 > "$LOGS/build.log" 2>&1; then
  note "build: ok"
else
  note "build: FAILED (see logs/build.log)"; tail -50 "$LOGS/build.log"
fi

# 2. the test suite, on the GPU
if want ctest; then
# The CPU-only checks (asm_expect counterexamples, every header alone, the architecture matrix,
# the docs site and the prose figures) are CI's: they need no GPU and would take most of the
# budget here. Everything else runs, the GPU tests included.
ctest --test-dir $BUILD -j 4 --timeout 900 --output-on-failure -E exercise \
  -LE '^(rules|headers|arch|docs|prose)$' > "$LOGS/ctest.log" 2>&1
ctest_rc=$?
passed_line=$(grep -E "tests passed" "$LOGS/ctest.log" | tail -1)
skipped=$(grep -cE "\(Skipped\)|\[  SKIPPED \]" "$LOGS/ctest.log")
note "ctest: rc=$ctest_rc; $passed_line; skipped lines: $skipped"
grep -E "\*\*\*Failed|\(Failed\)|Skipped\)" "$LOGS/ctest.log" | head -40
note "sass/ptx assertion failures in ctest: $(grep -cE "^FAIL " "$LOGS/ctest.log")"
fi

# 2b. the exercises: each unsolved exercise must FAIL its chapter's check
if want exercises; then
ctest --test-dir $BUILD -j 4 --timeout 600 --output-on-failure -L "^exercise$" \
  > "$LOGS/ctest-exercises.log" 2>&1
note "exercises (unsolved must fail): rc=$?; $(grep -E "tests passed" "$LOGS/ctest-exercises.log" | tail -1)"
fi

# 2c. a binary without code for this GPU's architecture must skip, never answer wrongly
if want arch80; then
  if cmake -S . -B build-sm80 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=80 \
       -DTUTORIAL_BUILD_TESTS=OFF -DTUTORIAL_ONLY="${ONLY_DIRS:-}" > "$LOGS/arch80-configure.log" 2>&1 &&
     cmake --build build-sm80 -j 16 -- -k 0 > "$LOGS/arch80-build.log" 2>&1; then
    arch80_fail=0
    for exe in $(ls build-sm80/bin/ch[0-9][0-9]_* 2>/dev/null | grep -v _exercise | grep -E "$ONLY"); do
      name=$(basename "$exe")
      timeout 300 "$exe" --check-only --seed=5 > "$LOGS/arch80.$name.log" 2>&1
      rc=$?
      [ "$rc" = 0 ] || [ "$rc" = 77 ] || arch80_fail=1
      reason=$(grep -m1 -E "^SKIP|^skipping" "$LOGS/arch80.$name.log")
      note "arch80 $name --check-only: exit $rc${reason:+ ($reason)}"
    done
    note "arch80: $([ $arch80_fail = 0 ] && echo "ok, every chapter passed or skipped" || echo "FAILED: a chapter exited other than 0 or 77")"
  else
    note "arch80: build FAILED (see logs/arch80-build.log)"; tail -30 "$LOGS/arch80-build.log"
  fi
fi

# 3. every chapter at full size, with JSON
mkdir -p "$WORK/json"
want full && for exe in $(ls $BUILD/bin/ch[0-9][0-9]_* 2>/dev/null | grep -v _exercise | grep -E "${FULL_ONLY:-$ONLY}"); do
  name=$(basename "$exe")
  [ "$(left)" -gt 60 ] || { note "$name full run: skipped (time budget)"; continue; }
  timeout $(( $(left) - 30 )) "$exe" --json="$WORK/json/$name.json" > "$LOGS/$name.full.log" 2>&1
  rc=$?
  note "$name full run: exit $rc"
  sed -n '/^GPU:/,/^RESULT/p' "$LOGS/$name.full.log"
done

# 3b. the tour, exactly as README.md tells a user to run it (`cmake --workflow --preset tour`:
#     the default preset's build in build/, every chapter at full size, one summary table,
#     build/results/tour.json and the plots when matplotlib is there). The build is done first
#     with all cores; the workflow then finds it up to date and runs the tour target.
if want tour; then
  if [ "$BUILD" = build ] ||
     { cmake --preset tour > "$LOGS/tour-configure.log" 2>&1 &&
       cmake --build --preset tour --target chapters -j 16 > "$LOGS/tour-build.log" 2>&1; }; then
    timeout $(( $(left) - 20 )) cmake --workflow --preset tour > "$LOGS/tour.log" 2>&1
    note "tour (cmake --workflow --preset tour): exit $?"
    sed -n '/tour summary/,$p' "$LOGS/tour.log"
    mkdir -p "$WORK/json/tour" && cp -r build/results/. "$WORK/json/tour/" 2>/dev/null
  else
    note "tour: build FAILED (see logs/tour-build.log)"; tail -30 "$LOGS/tour-build.log"
  fi
fi

# 3c. in-kernel timelines (docs/timelines.md): each chapter that has one, at its small trace size
#     (--check-only: its checks, then the traced kernels, each checked; tracing's cost printed),
#     the file checked, the overlap each lesson claims asserted where it is deterministic, one
#     PNG per chapter and the side-by-side picture (sync, ring at the same occupancy, warp-
#     specialized). Everything in json/timelines/, so it comes back in the tarball.
if want timeline; then
  tl=$WORK/json/timelines; mkdir -p "$tl"
  for name in ch01_sync_shared_loads ch04_pipeline_prefetch ch07_producer_consumer \
              ch11_tma_bulk_copies ch14_warp_specialization ch16_tensor_core_gemm; do
    exe=$BUILD/bin/$name; short=${name%%_*}
    { [ -x "$exe" ] && echo "$name" | grep -qE "$ONLY"; } || continue
    [ "$(left)" -gt 40 ] || { note "timeline $name: skipped (time budget)"; continue; }
    timeout 90 "$exe" --check-only --seed=7 --timeline="$tl/$short.json" \
      > "$LOGS/timeline.$name.log" 2>&1
    note "timeline $name: exit $?; $(grep -m1 '^timeline: ' "$LOGS/timeline.$name.log")"
    while read -r line; do note "  $line"; done \
      < <(grep -E '^timeline [A-Za-z0-9_]+ +untraced' "$LOGS/timeline.$name.log")  # its cost
    [ -f "$tl/$short.json" ] || continue
    note "timeline $short check: $(python3 tools/check_timeline.py "$tl/$short.json" | tail -1)"
    python3 tools/plot_timeline.py "$tl/$short.json" -o "$tl/timeline_$short.png" --blocks 1 \
      >> "$LOGS/timeline.plot.log" 2>&1 || note "timeline $short: plot FAILED (logs/timeline.plot.log)"
  done
  for expect in "ch04:v2_pipe_s2_low:overlap" "ch04:v2_pipe_s8_low:overlap" \
                "ch04:v2_pipe_s1_low:no-overlap" "ch04:v1_sync_low:no-overlap" \
                "ch01:v1_stream_low:no-overlap" "ch11:v1_bulk_ptx_2x16K_low:overlap"; do
    IFS=: read -r short variant what <<< "$expect"
    [ -f "$tl/$short.json" ] || continue
    note "timeline $short $variant expect $what: $(python3 tools/check_timeline.py "$tl/$short.json" \
      --variant "$variant" --expect-$what | tail -1)"
  done
  side=()
  while IFS=: read -r name variant; do   # the same picks as the tour's picture
    short=${name%%_*}
    [ -f "$tl/$short.json" ] && side+=("$tl/$short.json:$variant")
  done < <(grep '^ch' tools/timeline_side_by_side.txt)
  [ ${#side[@]} -ge 2 ] && { python3 tools/plot_timeline.py "${side[@]}" -o "$tl/timeline_side_by_side.png" \
    --blocks 1 >> "$LOGS/timeline.plot.log" 2>&1; note "timeline side by side: exit $?"; }
fi

# 4. SASS: the dumps, for the docs (assertions already ran in ctest under the 'sass' label)
mkdir -p "$WORK/sass"
want sass && for exe in $(ls $BUILD/bin/ch[0-9][0-9]_* 2>/dev/null | grep -E "$ONLY"); do
  cuobjdump --dump-sass "$exe" > "$WORK/sass/$(basename "$exe").sass" 2>&1
done

# 5. compute-sanitizer, every tool, every chapter, check-only sizes; 4 at a time on the GPU,
#    each bounded so the whole step fits the budget.
sanitize_one() {  # <exe> <tool> <timeout seconds>
  local name log rc errors
  name=$(basename "$1"); log="$LOGS/sanitizer.$name.$2.log"
  # racecheck checks shared-memory hazards itself; the harness's shared-memory scrub (227 KiB
  # of stores per SM before every checked launch) is what may make it too slow to finish.
  local skip_scrub=0; [ "$2" = racecheck ] && skip_scrub=${RACECHECK_SKIP_SCRUB:-1}
  # The sanitizers slow kernels down by orders of magnitude: the harness's watchdog (10 s by
  # default) gets the job's own limit, less a margin, so a hang still names its variant.
  TUTORIAL_WATCHDOG_S=$(( $3 > 20 ? $3 - 10 : $3 )) \
  TUTORIAL_SKIP_SMEM_SCRUB=$skip_scrub timeout "$3" compute-sanitizer --tool "$2" \
    --error-exitcode 99 "$1" --check-only --seed=1 > "$log" 2>&1
  rc=$?
  errors=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  echo "sanitizer $2 $name: exit $rc; ${errors:-no summary}"
}
export -f sanitize_one
export LOGS
if want sanitizer && [ "${SKIP_SANITIZER:-0}" != 1 ]; then
  step_budget=$(( $(left) - 20 ))
  [ -n "${SANITIZER_BUDGET:-}" ] && [ "$SANITIZER_BUDGET" -lt "$step_budget" ] && step_budget=$SANITIZER_BUDGET
  if [ "$step_budget" -gt 30 ]; then
    for exe in $(ls $BUILD/bin/ch[0-9][0-9]_* 2>/dev/null | grep -v _exercise | grep -E "$ONLY"); do
      for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}; do echo "$exe $tool ${PER_JOB:-180}"; done
    done | timeout "$step_budget" xargs -P "${SANITIZER_JOBS:-4}" -L 1 bash -c 'sanitize_one "$0" "$1" "$2"' \
      > "$LOGS/sanitizer-lines.txt"
    sort "$LOGS/sanitizer-lines.txt" > "$LOGS/sanitizer-sorted.txt"
    while read -r line; do note "$line"; done < "$LOGS/sanitizer-sorted.txt"
  else
    note "sanitizer: skipped (time budget)"
  fi
fi

# 5b. probes
if want probes; then
  for src in tools/probes/*.cu; do
    probe=$WORK/$(basename "$src" .cu)
    if nvcc -std=c++17 -O2 -arch=sm_$ARCH -o "$probe" "$src" > "$LOGS/probe.$(basename "$src").build.log" 2>&1; then
      for form in $(grep -oE "usage: %s [a-z|]+" "$src" | sed 's/usage: %s //; s/|/ /g'); do
        "$probe" "$form" > "$LOGS/probe.$(basename "$src" .cu).$form.log" 2>&1
        plain=$(tail -1 "$LOGS/probe.$(basename "$src" .cu).$form.log")
        compute-sanitizer --tool synccheck "$probe" "$form" > "$LOGS/probe.$(basename "$src" .cu).$form.synccheck.log" 2>&1
        sync=$(grep -E "ERROR SUMMARY" "$LOGS/probe.$(basename "$src" .cu).$form.synccheck.log" | tail -1)
        note "probe $(basename "$src" .cu) $form: $plain; synccheck: $sync"
      done
    else
      note "probe $(basename "$src"): build FAILED"
    fi
  done
fi

# 5d. the perturbation build: seeded delays (a few microseconds, in about one of eight warps and
#     iterations, chosen from --seed) at every ordering point the lesson kernels mark. A correct
#     protocol waits for what it needs however late it comes, so every chapter must still pass;
#     the perturbation negatives (races the H200 orders by luck without the delays) must FAIL.
if want perturb; then
  if [ "$(left)" -lt 120 ]; then
    note "perturb: skipped (time budget)"
  elif cmake -S . -B build-perturb -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=$ARCH \
         -DTUTORIAL_PERTURB=ON -DTUTORIAL_BUILD_TESTS=OFF -DTUTORIAL_ONLY="${ONLY_DIRS:-}" \
         > "$LOGS/perturb.configure.log" 2>&1 &&
       cmake --build build-perturb --target chapters -j 16 -- -k 0 > "$LOGS/perturb.build.log" 2>&1; then
    perturb_fail=0
    for exe in $(ls build-perturb/bin/ch[0-9][0-9]_* 2>/dev/null | grep -v _exercise | grep -E "$ONLY"); do
      name=$(basename "$exe")
      [ "$(left)" -gt 30 ] || { note "perturb $name: skipped (time budget)"; perturb_fail=1; continue; }
      timeout 300 "$exe" --check-only --seed=11 > "$LOGS/perturb.$name.log" 2>&1
      rc=$?
      [ "$rc" = 0 ] || [ "$rc" = 77 ] || perturb_fail=1
      note "perturb $name --check-only --seed=11: exit $rc$(grep -m1 -E 'did not finish within|^SKIP' "$LOGS/perturb.$name.log" | sed 's/^/ (/; s/$/)/')"
    done
    note "perturb chapters: $([ $perturb_fail = 0 ] && echo "ok, every chapter passed (or skipped) under perturbation" || echo "FAILED: a chapter failed under perturbation")"
    ctest --test-dir build-perturb -L perturb --timeout 300 --output-on-failure \
      > "$LOGS/perturb.ctest.log" 2>&1
    perturb_rc=$?
    if grep -q "No tests were found" "$LOGS/perturb.ctest.log"; then
      note "perturb negatives (ctest -L perturb): none registered (no chapter sets .perturb_negative = true)"
    else
      note "perturb negatives (ctest -L perturb, each must FAIL): rc=$perturb_rc; $(grep -E "tests passed" "$LOGS/perturb.ctest.log" | tail -1)"
      grep -E "\*\*\*Failed|\(Failed\)|Skipped\)" "$LOGS/perturb.ctest.log" | head -20
    fi
  else
    note "perturb: build FAILED (see logs/perturb.build.log)"; tail -30 "$LOGS/perturb.build.log"
  fi
fi

# 5e. hangs: the planted mistakes in the chapters' waits (every chapter's negatives: wrong parity,
#     an expect_tx the copies never deliver, a missing arrival, ...) must each FAIL within
#     HANG_LIMIT_S, never hang. Each runs alone (its own wall time) under `timeout 20`, with the
#     watchdog at HANG_WATCHDOG_S so a wait the device cannot bound is caught inside the limit.
#     logs/hangs.txt: per variant the seconds, the exit code and how the failure was reported
#     (a named timeout, the watchdog's line, or a mismatch).
if want hangs; then
  hang_limit=${HANG_LIMIT_S:-10}
  printf '%-28s %-30s %7s %4s  %-13s %s\n' chapter variant seconds exit "reported as" verdict \
    > "$LOGS/hangs.txt"
  hang_bad=0; hang_count=0; hang_slowest=0
  for exe in $(ls $BUILD/bin/ch[0-9][0-9]_* 2>/dev/null | grep -v _exercise | grep -E "$ONLY"); do
    name=$(basename "$exe")
    for key in $("$exe" --list 2>/dev/null | grep -F '[negative: must FAIL]' | awk '{print $1}'); do
      [ "$(left)" -gt 30 ] || { note "hangs $name $key: skipped (time budget)"; hang_bad=1; continue; }
      log="$LOGS/hangs.$name.$key.log"
      t0=$(date +%s.%N)
      TUTORIAL_WATCHDOG_S=${HANG_WATCHDOG_S:-5} timeout 20 "$exe" --variant="$key" --check-only \
        --seed=7 > "$log" 2>&1
      rc=$?
      secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
      how=mismatch
      grep -q "device reported:" "$log" && how="named timeout"
      grep -q "did not finish within" "$log" && how=watchdog
      if [ "$rc" = 124 ]; then verdict="HANG (killed after 20 s)"; how=-
      elif [ "$rc" = 77 ]; then verdict="skipped"; how=-
      elif [ "$rc" != 1 ]; then verdict="WRONG EXIT (want 1)"
      elif awk -v s="$secs" -v l="$hang_limit" 'BEGIN { exit !(s > l) }'; then verdict="SLOW (over $hang_limit s)"
      else verdict=ok; fi
      [ "$verdict" = ok ] || [ "$verdict" = skipped ] || hang_bad=1
      hang_count=$((hang_count + 1))
      hang_slowest=$(awk -v s="$secs" -v m="$hang_slowest" 'BEGIN { print (s > m ? s : m) }')
      printf '%-28s %-30s %7s %4s  %-13s %s\n' "$name" "$key" "$secs" "$rc" "$how" "$verdict" \
        >> "$LOGS/hangs.txt"
    done
  done
  cat "$LOGS/hangs.txt"
  note "hangs: $([ $hang_bad = 0 ] && echo "ok, $hang_count planted mistakes each FAILED within $hang_limit s (slowest $hang_slowest s)" || echo "FAILED: a planted mistake hung, ran past $hang_limit s, passed or was not run (logs/hangs.txt)")"
fi

# 5c. profile
if want profile; then
  mkdir -p "$WORK/json/ncu"
  bin=$BUILD/bin; [ -d "$bin" ] || bin=build/bin   # the tour's build, when the step ran alone
  # Nsight Compute replays each profiled kernel many times: no watchdog limit there.
  # (process substitution, not a pipe: note() must run in this shell to reach the summary)
  while read -r line; do note "$line"; done < <(TUTORIAL_WATCHDOG_S=0 tools/profile_chapters.sh \
    "$bin" "$WORK/json/ncu" "${PROFILE_ONLY:-.}")
  python3 tools/summarize_ncu.py "$WORK/json/ncu" > "$WORK/json/profile.md" 2> "$LOGS/summarize_ncu.err"
  for script in chapters/*/ncu_*.sh; do
    [ -x "$script" ] || continue
    [ "$(left)" -gt 90 ] || { note "$script: skipped (time budget)"; continue; }
    chapter=$(basename "$(dirname "$script")")
    echo "ch$chapter" | grep -qE "${PROFILE_ONLY:-.}" || continue
    TUTORIAL_WATCHDOG_S=0 timeout $(( $(left) - 30 )) "$script" "$bin/ch$chapter" > "$WORK/json/$(basename "$script" .sh).txt" 2>&1
    note "$script: exit $?"
  done
fi

# (the EXIT trap packs the results once, after this summary)
echo
echo "================ GPU check summary ================"
printf '%s\n' "${summary[@]}"

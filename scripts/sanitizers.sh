#!/usr/bin/env bash
# The engine under the sanitizers (CI runs it after test.sh; about 15-20 minutes on 2 cores, mostly building):
#   1. ThreadSanitizer: `ambience stress --realtime --chaos` on SDL's dummy driver, so the game thread (update,
#      play/stop/fade, seek, skip), the streaming thread (decoding, AL buffer queues) and the audio callback
#      (rendering) all run at once. Any report fails the run. Tests/Sanitizers/tsan.supp holds the suppressions,
#      each with its reason (races inside C libraries we cannot fix; none so far). The engine's locks are `Lock`
#      (Sources/Ambience/Engine/Lock.swift), which TSan can see; a bare `Mutex` would drown the run in false reports.
#   2. AddressSanitizer and LeakSanitizer: the whole test suite but the C API suite (see below), beside the
#      private PulseAudio and D-Bus servers of scripts/with-services.sh.
# Each build has its own scratch path (.build/tsan, .build/asan), so the normal build is left alone.
#   scripts/sanitizers.sh [tsan|asan]...      (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(tsan asan)
export SDL_AUDIODRIVER=dummy
status=0
seconds() { date +%s; }

for step in "${steps[@]}"; do
  case $step in
  tsan)
    start=$(seconds)
    swift build -c debug --sanitize=thread --scratch-path .build/tsan --product ambience
    built=$(seconds)
    log=$(mktemp /tmp/ambience-tsan.XXXXXX)
    # 2000 voices (256 real), 20 s of real time, the bundled theme and lullaby seeking and skipping every 0.3 s.
    if TSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/tsan.supp halt_on_error=0 second_deadlock_stack=1 history_size=4" \
        .build/tsan/debug/ambience stress --voices 2000 --seconds 20 --realtime --chaos > "$log" 2>&1 \
        && ! grep -q "WARNING: ThreadSanitizer" "$log"; then
      echo "sanitizers: tsan: clean ($(grep -c . "$log") lines of output; build $((built - start)) s, run $(( $(seconds) - built )) s)"
    else
      echo "sanitizers: tsan: FAILED (build $((built - start)) s, run $(( $(seconds) - built )) s):" >&2
      cat "$log" >&2
      status=1
    fi
    rm -f "$log"
    ;;
  asan)
    start=$(seconds)
    swift build --build-tests --sanitize=address --scratch-path .build/asan
    built=$(seconds)
    # One test at a time: instrumented code runs 2-3 times slower, and in parallel the real-time suites miss
    # their timing windows (route changes, the Xvfb screenshot); serially the run takes no longer (about 2 min).
    # RouteChangeTests drive the normal build's `ambience play` in subprocesses (nothing of theirs runs
    # instrumented), and the MPRIS suite is about real players answering within timeouts: under ASan's slowdown
    # both only measure timing. They run in test.sh.
    # LeakSanitizer stays on, with Tests/Sanitizers/lsan.supp for what system libraries keep. The C API suite is
    # skipped: its C test program is built with plain `cc` and cannot link an ASan-instrumented libambience-c.so
    # (undefined __asan_* symbols); valgrind checks the C API's memory in the normal run.
    if ASAN_OPTIONS="detect_leaks=1 halt_on_error=1" LSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/lsan.supp" \
        bash scripts/with-services.sh swift test --skip-build --sanitize=address --scratch-path .build/asan --skip CAPITests --skip RouteChangeTests --skip MPRISTests \
        --no-parallel; then
      echo "sanitizers: asan: the test suite is clean (build $((built - start)) s, tests $(( $(seconds) - built )) s)"
    else
      echo "sanitizers: asan: FAILED (build $((built - start)) s, tests $(( $(seconds) - built )) s)" >&2
      status=1
    fi
    ;;
  *) echo "sanitizers: unknown step '$step' (tsan or asan)" >&2; exit 2 ;;
  esac
done
exit $status

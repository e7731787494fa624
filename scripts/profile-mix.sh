#!/usr/bin/env bash
# Where the mixing time goes: profiles the release `ambience bench` on one system and one scene at a time with perf
# (call graphs unwound from .eh_frame, since Debian's libopenal.so.1 keeps no frame pointers and no symbol table),
# and splits the samples into OpenAL Soft's mixing, OpenAL Soft's API calls, the engine, the scene driver, the Swift
# runtime, libc and the kernel (scripts/profile-split.py). Prints Markdown: docs/bench/profile.md holds a run.
#
#   scripts/profile-mix.sh [SECONDS] [OUT_DIR]     (default 30 s of audio per scene; perf data in OUT_DIR)
#
# Then the cost of each AL call a voice's start makes (scripts/al-call-costs.c, built with cc and -lopenal).
# Scenes: 1,024 real voices at varied pitch (Ambience, then raw OpenAL Soft); 10,000 voices with 256 real
# (Ambience); the 256 voices Ambience keeps real, alone through Ambience and through raw OpenAL Soft.
# Needs perf (Debian: apt-get install linux-perf) and a release build:
#   flock /tmp/ambience-build.lock swift build -c release --product ambience
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
out=${2:-$(mktemp -d /tmp/ambience-profile.XXXXXX)}
mkdir -p "$out"
tool=.build/release/ambience
if ! command -v perf >/dev/null; then
    echo "profile-mix.sh: perf is not installed (Debian: apt-get install linux-perf)" >&2
    exit 1
fi
if [ ! -x "$tool" ]; then
    echo "profile-mix.sh: $tool is missing; build it: swift build -c release --product ambience" >&2
    exit 1
fi
# A paranoid kernel refuses unprivileged profiling; root is not asked.
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
    echo "profile-mix.sh: kernel.perf_event_paranoid is above 1; run as root or lower it (sysctl)" >&2
    exit 1
fi

echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores;" \
    "$(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown);" \
    "$seconds s of audio per scene; perf $(perf --version | cut -d' ' -f3)"
echo
profile() {
    local name=$1 title=$2
    shift 2
    perf record -q -F 1999 --call-graph dwarf,16384 -o "$out/$name.data" -- \
        "$tool" bench --runs 1 --unit-pitch none --seconds "$seconds" "$@" >"$out/$name.bench.txt" 2>/dev/null
    perf script -i "$out/$name.data" 2>/dev/null >"$out/$name.txt"
    python3 scripts/profile-split.py "$title (\`ambience bench --runs 1 --unit-pitch none --seconds $seconds $*\`)" \
        "$out/$name.txt"
}
profile ambience-1024 "1,024 real voices, varied pitch: Ambience" --voices 1024 --systems ambience
profile openal-1024 "1,024 voices, varied pitch: raw OpenAL Soft" --voices 1024 --systems openal
profile ambience-10k "10,000 voices, 256 real: Ambience" --voices 10000 --systems ambience
profile ambience-realset "the same 256 real voices alone: Ambience" --voices 10000 --systems ambienceRealSet
profile openal-realset "the same 256 voices: raw OpenAL Soft" --voices 10000 --systems openalRealSet
# What each AL call that starts a voice costs by itself (scripts/al-call-costs.c), beside the profiles.
if command -v cc >/dev/null && cc -O2 scripts/al-call-costs.c -lopenal -o "$out/al-call-costs" 2>/dev/null; then
    echo "### What one AL call costs (nanoseconds, medians of 2,000; every other source playing a loop)"
    echo
    "$out/al-call-costs" 256 1024 4096
    echo
fi
echo "perf data and bench output: $out" >&2

#!/usr/bin/env bash
# Two revisions' `ambience bench --json` side by side in one run: builds each revision's release `ambience` in its
# own detached worktree and scratch path, runs the two in turns (N pairs, the order swapped every pair so that a
# load that rises or falls during the run falls on both alike), and prints per row the median of the paired ratios
# after/before, with their spread and the load average at each run (scripts/bench-compare.py; Markdown).
#
#   scripts/bench-compare.sh [--pairs N] [--scratch DIR] [--before-dir DIR] [--after-dir DIR] [--json FILE]
#                            REV_BEFORE REV_AFTER [bench arguments...]
#
#   --pairs       pairs of runs (default 5)
#   --scratch     where the worktrees are made (default $TMPDIR/ambience-bench-compare); kept for the next run, so
#                 that a second comparison builds incrementally; remove them with `git worktree remove`
#   --before-dir, --after-dir   use these checkouts instead of making worktrees (their HEAD is not checked)
#   --json        write every run's JSON, the loads and the summary to FILE
# The bench arguments go to both revisions alike (`bench --json` is added), so they must be ones both know:
#   scripts/bench-compare.sh 4e20a45 main --runs 3 --systems ambience,ambienceMusic,openal,sdlMixer,ambienceRealSet,openalRealSet
#   scripts/bench-compare.sh 4e20a45 main --formats --seconds 10
# Each build takes the shared build lock (flock /tmp/ambience-build.lock); the runs do not.
# A failure keeps the folder of the finished runs and build logs (its path is printed); a success removes it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
pairs=5
scratch=${TMPDIR:-/tmp}/ambience-bench-compare
before_dir="" after_dir="" json_out=""
while [ $# -gt 0 ]; do
    case $1 in
        --pairs) pairs=$2; shift 2 ;;
        --scratch) scratch=$2; shift 2 ;;
        --before-dir) before_dir=$2; shift 2 ;;
        --after-dir) after_dir=$2; shift 2 ;;
        --json) json_out=$2; shift 2 ;;
        -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) break ;;
    esac
done
if [ $# -lt 2 ]; then
    echo "usage: bench-compare.sh [options] REV_BEFORE REV_AFTER [bench arguments...] (--help)" >&2
    exit 2
fi
if ! [[ $pairs =~ ^[1-9][0-9]?$ ]]; then
    echo "bench-compare.sh: --pairs takes 1 to 99, not '$pairs'" >&2
    exit 2
fi
rev_before=$1 rev_after=$2
shift 2

# A checkout of REV: the given folder, or a detached worktree under the scratch folder (made once).
checkout() {
    local rev=$1 given=$2 commit
    if [ -n "$given" ]; then
        (cd "$given" && pwd)
        return
    fi
    commit=$(git -C "$repo" rev-parse --verify --quiet "$rev^{commit}") || {
        echo "bench-compare.sh: no revision '$rev'" >&2
        return 1
    }
    local dir=$scratch/${commit:0:12}
    # A folder left by a stopped or failed `worktree add` is no checkout of COMMIT: made again.
    if [ -d "$dir" ] && ! is_worktree "$dir" "$commit"; then
        echo "bench-compare.sh: $dir is not a worktree at $rev; making it again" >&2
        git -C "$repo" worktree remove --force "$dir" >&2 2>/dev/null || rm -rf "$dir"
        git -C "$repo" worktree prune
    fi
    if [ ! -d "$dir" ]; then
        mkdir -p "$scratch"
        # `set -e` does not reach into the caller's $(checkout ...): the status is checked here.
        if ! git -C "$repo" worktree add --detach "$dir" "$commit" >&2; then
            echo "bench-compare.sh: could not make a worktree of '$rev' at $dir" >&2
            return 1
        fi
    fi
    echo "$dir"
}

# Whether DIR is a worktree of its own (not a plain folder inside another checkout) with COMMIT checked out.
is_worktree() {
    local dir=$1 commit=$2 top
    [ -f "$dir/.git" ] || return 1
    top=$(git -C "$dir" rev-parse --show-toplevel 2>/dev/null) || return 1
    [ "$top" = "$(cd "$dir" && pwd -P)" ] && [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null)" = "$commit" ]
}

# Builds the release `ambience` of a checkout under the build lock, in its own scratch path; prints the binary.
build() {
    local dir=$1 log=$runs/build-$2.log
    echo "building $dir (log: $log)" >&2
    if ! (cd "$dir" && flock /tmp/ambience-build.lock \
        swift build -c release --product ambience --scratch-path "$dir/.build-release") >"$log" 2>&1; then
        tail -30 "$log" >&2
        echo "bench-compare.sh: the build of $dir failed" >&2
        return 1
    fi
    echo "$dir/.build-release/release/ambience"
}

runs=$(mktemp -d "${TMPDIR:-/tmp}/ambience-bench-compare-runs.XXXXXX")
# Removed only once the summary is made: a failure keeps the runs that finished (and the build logs).
summarized=0
finish() {
    if [ "$summarized" = 1 ]; then
        rm -rf "$runs"
    else
        echo "bench-compare.sh: stopped before the summary; the runs so far are kept in $runs" >&2
    fi
}
trap finish EXIT
before=$(checkout "$rev_before" "$before_dir") || exit 1
after=$(checkout "$rev_after" "$after_dir") || exit 1
before_bin=$(build "$before" before) || exit 1
after_bin=$(build "$after" after) || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8
# One run of SIDE (before or after) in pair I: the load average before it, then its JSON (cwd its own checkout, for
# the bench's assets).
run() {
    local side=$1 i=$2 dir bin
    shift 2
    if [ "$side" = before ]; then dir=$before bin=$before_bin; else dir=$after bin=$after_bin; fi
    cut -d' ' -f1-3 /proc/loadavg >"$runs/$i-$side.load"
    echo "pair $i: $side (load $(cat "$runs/$i-$side.load"))" >&2
    if ! (cd "$dir" && "$bin" bench --json "$@") >"$runs/$i-$side.json" 2>"$runs/$i-$side.err"; then
        tail -5 "$runs/$i-$side.err" >&2
        echo "bench-compare.sh: the $side run of pair $i failed" >&2
        return 1
    fi
}
for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then
        run before "$i" "$@"
        run after "$i" "$@"
    else
        run after "$i" "$@"
        run before "$i" "$@"
    fi
done
describe() { git -C "$1" log -1 --format='%h %cs' 2>/dev/null || echo "$1"; }
python3 "$repo/scripts/bench-compare.py" --runs "$runs" --pairs "$pairs" \
    --before "$rev_before ($(describe "$before"))" --after "$rev_after ($(describe "$after"))" \
    --arguments "bench --json $*" ${json_out:+--json "$json_out"}
summarized=1

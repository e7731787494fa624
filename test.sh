#!/usr/bin/env bash
# Second command: the whole test suite, with the real parts it needs.
set -euo pipefail
cd "$(dirname "$0")"
# Every tool the tests run writes UTF-8 (C.UTF-8 is built into Debian's libc; the C locale mangles "Tëst").
export LANG=C.UTF-8 LC_ALL=C.UTF-8
bash scripts/install-deps.sh
# No sound card here: device tests use SDL's dummy driver unless a test chooses otherwise.
export SDL_AUDIODRIVER="${SDL_AUDIODRIVER:-dummy}"
swift build --build-tests
# A private PulseAudio server and D-Bus session bus (scripts/with-services.sh) for the session and desktop tests.
bash scripts/with-services.sh swift test --skip-build "$@"

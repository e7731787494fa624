#!/usr/bin/env bash
# First command: install what is missing, build, and start the demo game "Gravity Wave".
# With a display it opens the game's window; without one it plays headless (a scripted pilot) and records
# the game's audio to out/gravity-wave.wav. Extra arguments go to the game (see `gravity-wave --help`).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/install-deps.sh
swift build -c release --product gravity-wave
swift build -c release --product ambience
mkdir -p out
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec .build/release/gravity-wave "$@"
fi
echo "No display here: Gravity Wave plays headless for 10 seconds and records its audio."
.build/release/gravity-wave --headless --seconds 10 --record out/gravity-wave.wav "$@"
.build/release/ambience info out/gravity-wave.wav
echo "Listen: out/gravity-wave.wav"

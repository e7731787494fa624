#!/usr/bin/env bash
# First command: install what is missing, build, and render the bundled music and effects to a WAV.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/install-deps.sh
swift build -c release
mkdir -p out
.build/release/ambience render --out out/demo-mix.wav --seconds 20 \
  --music Assets/Music/gravity-wave-theme.ogg --music Assets/Music/orbit-lullaby.mp3 \
  --sfx Assets/SFX/laser.wav@1,pan=-0.6 --sfx Assets/SFX/pickup.wav@2.5,pan=0.6 \
  --sfx Assets/SFX/explosion.wav@4 --sfx Assets/SFX/laser.wav@6.2,pitch=1.3 --sfx Assets/SFX/ui-click.wav@8
.build/release/ambience info out/demo-mix.wav
echo "Listen: out/demo-mix.wav"

#!/usr/bin/env bash
# Builds each package under Tests/ConsumerPackages (a game of its own that depends on one of Ambience's products)
# into .build/consumer-packages/NAME, where MixerOnlyConsumerTests runs and reads it. test.sh runs this as a step of
# its own, after the main build and before the tests: a second package's build inside the test pass would load the
# two cores the timing-sensitive suites share. Extra arguments go to each `swift build` (e.g. -c release).
set -euo pipefail
cd "$(dirname "$0")/.."
for package in Tests/ConsumerPackages/*/; do
  name=$(basename "$package")
  scratch=".build/consumer-packages/$name"
  # A build kept from before files were added to or moved between the engine's targets can keep the old file list
  # (seen once: a new file's functions "not in scope"); then it is built again from nothing.
  swift build --package-path "$package" --scratch-path "$scratch" "$@" \
    || { rm -rf "$scratch"; swift build --package-path "$package" --scratch-path "$scratch" "$@"; }
done

#!/usr/bin/env bash
# Second command: the whole test suite, with the real parts it needs; then the suites that meet the sound server
# again, on PipeWire.
set -euo pipefail
cd "$(dirname "$0")"
# Every tool the tests run writes UTF-8 (C.UTF-8 is built into Debian's libc; the C locale mangles "Tëst").
export LANG=C.UTF-8 LC_ALL=C.UTF-8
bash scripts/install-deps.sh
# pygame's own mixer tests for RealProgramsTests, fetched once into .build/pygame-tests (never committed).
bash scripts/fetch-pygame-tests.sh
# No sound card here: device tests use SDL's dummy driver unless a test chooses otherwise.
export SDL_AUDIODRIVER="${SDL_AUDIODRIVER:-dummy}"
swift build --build-tests
# The consumer packages (Tests/ConsumerPackages: a game that depends on the mixer alone), built apart from the tests.
bash scripts/build-consumer-packages.sh
# A private sound server (PulseAudio unless AMBIENCE_SOUND_SERVER=pipewire) and D-Bus session bus
# (scripts/with-services.sh) for the session and desktop tests.
status=0
# Arguments choose tests for one run: then that run is all.
if [ $# -gt 0 ]; then
  bash scripts/with-services.sh swift test --skip-build "$@" || status=$?
  exit "$status"
fi
# The suites that run other people's programs on the SDL_mixer stand-in (games under Xvfb, pygame, a real mpv) and
# the stand-in's own, which listen to what it played, in a pass of their own after the rest: beside 700 other tests
# on two cores a game took seconds to start and the stand-in's stream thread starved for 0.4 s; alone they take
# under a minute, their cases in parallel.
own_pass='RealProgram|SDLMixer|RunCommandTests'
# The unit targets first, without the services (Tests/README.md: they need none, and run in seconds); the
# rest of the suite skips them.
unit_targets='^(AmbiencePlatform|AmbienceCore|AmbienceDecoding|AmbienceMixer|AmbienceLibrary|AmbienceMusic|AmbienceDesktop|AmbienceOutput)Tests\.'
echo "test.sh: the unit targets, without services"
swift test --skip-build --filter "$unit_targets" || status=$?
bash scripts/with-services.sh swift test --skip-build --skip "$own_pass" --skip "$unit_targets" || status=$?
echo "test.sh: the SDL_mixer stand-in and the real programs: $own_pass"
bash scripts/with-services.sh swift test --skip-build --filter "$own_pass" --skip RealProgramRulesTests || status=$?
# The session's rules with real programs and a real mpv judge what a game sounds like through the whole stack (the
# stand-in, SDL, the sound server, the recorder), so they run last and one case at a time: beside the pass above, a
# load of 8 or more let the output run dry and cut the sound they measure (seen in 5 of 6 runs under load).
echo "test.sh: the session's rules with real programs, one case at a time"
bash scripts/with-services.sh swift test --skip-build --no-parallel --filter RealProgramRulesTests || status=$?
# The engine's own output (libpulse's threaded main loop; the default where a server answers, but SDL_AUDIODRIVER
# above makes the suites choose SDL): the suites where the output meets the server again, on it, on each server.
output_suites='RouteChangeTests|RouteTableTests|FaultTests|FaultsOfServers|FrozenSoundServerTests|PulseAudioMonitorTests|RealtimeTests|PulseOutputTests|OutputBackendCAPITests'
echo "test.sh: the output suites on the engine's libpulse output, on PulseAudio and on PipeWire"
for server in pulseaudio pipewire; do
  AMBIENCE_OUTPUT=libpulse AMBIENCE_SOUND_SERVER=$server bash scripts/with-services.sh swift test --skip-build \
    --filter "$output_suites" || status=$?
done
# The route-change, fault, desktop and sound-server suites again, on PipeWire (pipewire, wireplumber and
# pipewire-pulse), unless that was the server of the run above. Everything else does not meet the server.
[ "${AMBIENCE_SOUND_SERVER:-pulseaudio}" != pipewire ] || exit "$status"
pipewire_suites=(
  RouteChangeTests RouteTableTests                                  # route changes, real and as tables
  FaultTests FaultsOfServers FrozenSoundServerTests                 # faults: the sound server killed and back, frozen
  PulseAudioMonitorTests PulseAudioMonitorFailureTests              # the server's account of sinks and streams
  MPRISTests SleepTests                                             # the desktop: players, system music, sleep
  SessionPolicyTests SessionRulesTests SessionOtherPlayersTests     # the session's rules
  CorkRequestServerTests                                           # cork requests (PipeWire sends none)
  SoundServerChoiceTests                                            # the pass runs on the server it asked for
)
filters=()
for suite in "${pipewire_suites[@]}"; do filters+=(--filter "[./]$suite/"); done
echo "test.sh: the same suites on PipeWire: ${pipewire_suites[*]}"
AMBIENCE_SOUND_SERVER=pipewire bash scripts/with-services.sh swift test --skip-build "${filters[@]}" || status=$?
exit "$status"

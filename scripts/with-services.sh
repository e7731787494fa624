#!/usr/bin/env bash
# Runs a command beside the real parts the tests use: a private PulseAudio server with two null sinks
# ("speakers", the default, and "headphones") and a private D-Bus session bus. Everything lives in one
# temporary folder and is stopped when the command ends. Exports, for the command:
#   PULSE_SERVER, DBUS_SESSION_BUS_ADDRESS, AMBIENCE_TEST_SERVICES=1, AMBIENCE_TEST_RUNTIME (the folder),
#   LANG=LC_ALL=C.UTF-8 (built into Debian's libc: in the C locale, oggenc turns a tag's "Tëst" into "T##st")
set -euo pipefail
export LANG=C.UTF-8 LC_ALL=C.UTF-8

root=$(mktemp -d /tmp/ambience-services.XXXXXX)
export HOME="$root/home" XDG_CONFIG_HOME="$root/config" XDG_RUNTIME_DIR="$root/runtime" XDG_CACHE_HOME="$root/cache"
export PULSE_RUNTIME_PATH="$root/pulse" PULSE_STATE_PATH="$root/pulse-state"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR" "$XDG_CACHE_HOME" "$PULSE_RUNTIME_PATH" "$PULSE_STATE_PATH"
chmod 700 "$XDG_RUNTIME_DIR"
echo "autospawn = no" > "$root/client.conf"
export PULSE_CLIENTCONFIG="$root/client.conf"
export PULSE_SERVER="unix:$root/native"

cat > "$root/server.pa" <<PA
load-module module-native-protocol-unix auth-anonymous=1 socket=$root/native
load-module module-null-sink sink_name=speakers sink_properties=device.description=Speakers
load-module module-null-sink sink_name=headphones sink_properties=device.description=Headphones
set-default-sink speakers
PA

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT

pulseaudio -n -F "$root/server.pa" --daemonize=no --exit-idle-time=-1 --disallow-exit=yes --use-pid-file=no \
  --realtime=no --high-priority=no --log-target="file:$root/pulseaudio.log" &
pids+=($!)
for _ in $(seq 1 200); do pactl info >/dev/null 2>&1 && break; sleep 0.025; done
pactl info >/dev/null 2>&1 || { echo "with-services: PulseAudio did not start; log:" >&2; cat "$root/pulseaudio.log" >&2; exit 1; }

dbus-daemon --session --nofork --nopidfile --address="unix:path=$root/bus.sock" --print-address=1 > "$root/bus.address" &
pids+=($!)
for _ in $(seq 1 200); do [ -s "$root/bus.address" ] && break; sleep 0.025; done
export DBUS_SESSION_BUS_ADDRESS
DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$root/bus.address")
[ -n "$DBUS_SESSION_BUS_ADDRESS" ] || { echo "with-services: dbus-daemon did not start" >&2; exit 1; }

export AMBIENCE_TEST_SERVICES=1 AMBIENCE_TEST_RUNTIME="$root"
"$@"

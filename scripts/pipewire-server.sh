#!/usr/bin/env bash
# Runs a private PipeWire sound server in ROOT until it is killed or one of its parts dies:
#   pipewire        the server
#   wireplumber     its session manager: without it no stream is linked to a sink and no default is chosen
#   pipewire-pulse  PipeWire's PulseAudio server, which every libpulse client (ours, SDL's, pactl) talks to,
#                   listening on ROOT/native
#   dbus-daemon     a session bus of the server's own, which wireplumber needs (it exits without one)
# and null sinks named SINK... (described by their capitalised names), the first the default. ROOT/ready appears once
# all of that is so.
# Everything lives in ROOT: its runtime folder (ROOT/runtime), configuration, state and logs (ROOT/*.log); no
# user's server is seen or touched. The hardware monitors are off and there is no module-always-sink, as with the
# `pulseaudio -n` the tests run otherwise. Killing the process group stops every part; started again on the same
# ROOT, it comes back on the same socket.
# Usage: scripts/pipewire-server.sh ROOT SINK...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: pipewire-server.sh ROOT SINK..." >&2; exit 2; }
root=$1
shift
for command in dbus-daemon pipewire pw-cli wireplumber pipewire-pulse pactl; do
  command -v "$command" >/dev/null || { echo "pipewire-server: $command is not installed (bash scripts/install-deps.sh)" >&2; exit 1; }
done

export XDG_RUNTIME_DIR="$root/runtime" XDG_CONFIG_HOME="$root/config" XDG_STATE_HOME="$root/state"
export PULSE_SERVER="unix:$root/native"
unset PIPEWIRE_REMOTE PIPEWIRE_RUNTIME_DIR PIPEWIRE_CONFIG_DIR PIPEWIRE_CONFIG_NAME PIPEWIRE_CONFIG_PREFIX WIREPLUMBER_CONFIG_DIR
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME/pipewire" "$XDG_CONFIG_HOME/wireplumber/main.lua.d" \
  "$XDG_CONFIG_HOME/wireplumber/bluetooth.lua.d"
chmod 700 "$XDG_RUNTIME_DIR"

# PipeWire's PulseAudio server on ROOT/native, without module-always-sink: with every sink gone there is no sink, not
# a "Dummy Output" (PulseAudio runs without it here too).
cat > "$XDG_CONFIG_HOME/pipewire/pipewire-pulse.conf" <<CONF
context.spa-libs = {
    audio.convert.* = audioconvert/libspa-audioconvert
    support.*       = support/libspa-support
}
context.modules = [
    { name = libpipewire-module-protocol-native }
    { name = libpipewire-module-client-node }
    { name = libpipewire-module-adapter }
    { name = libpipewire-module-metadata }
    { name = libpipewire-module-protocol-pulse args = { } }
]
pulse.properties = {
    server.address = [ "unix:$root/native" ]
}
CONF
# wireplumber's defaults less the hardware monitors: on a machine with sound cards, cameras or Bluetooth the private
# server would open them, beside the user's own server.
cat > "$XDG_CONFIG_HOME/wireplumber/main.lua.d/60-ambience-no-hardware.lua" <<'LUA'
alsa_monitor.enabled = false
v4l2_monitor.enabled = false
libcamera_monitor.enabled = false
LUA
echo 'bluez_monitor.enabled = false' > "$XDG_CONFIG_HOME/wireplumber/bluetooth.lua.d/60-ambience-no-hardware.lua"

source "$(dirname "$0")/processes.sh"
pids=()
stop() {
  stop_processes "${pids[@]}"
}
trap stop EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

fail() {
  echo "pipewire-server: $1 did not start; logs in $root:" >&2
  for log in dbus pipewire wireplumber pipewire-pulse; do
    [ -s "$root/$log.log" ] && { echo "--- $log.log" >&2; tail -n 20 "$root/$log.log" >&2; }
  done
  exit 1
}

# ready CHECK...: waits up to 10 s for CHECK to succeed while every part lives.
ready() {
  local _ pid
  for _ in $(seq 1 400); do
    "$@" >/dev/null 2>&1 && return 0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || return 1; done
    sleep 0.025
  done
  "$@" >/dev/null 2>&1
}

rm -f "$root/server-bus.sock" "$root/ready"
dbus-daemon --session --nofork --nopidfile --address="unix:path=$root/server-bus.sock" > "$root/dbus.log" 2>&1 &
pids+=($!)
ready test -S "$root/server-bus.sock" || fail dbus-daemon
export DBUS_SESSION_BUS_ADDRESS="unix:path=$root/server-bus.sock"

pipewire > "$root/pipewire.log" 2>&1 &
pids+=($!)
# Answering, not just a socket: a killed server leaves its socket behind, and wireplumber started against that one
# fails ("Failed to connect to PipeWire") and takes the whole server down with it (4 restarts in 120 under load).
ready timeout 2 pw-cli info 0 || fail pipewire
wireplumber > "$root/wireplumber.log" 2>&1 &
pids+=($!)
pipewire-pulse > "$root/pipewire-pulse.log" 2>&1 &
pids+=($!)
ready pactl info || fail pipewire-pulse

for sink in "$@"; do
  pactl load-module module-null-sink "sink_name=$sink" "sink_properties=device.description=${sink^}" >/dev/null
done
# The default lives in metadata that wireplumber makes once it is up: until then the server refuses to set it.
ready pactl set-default-sink "$1" || fail "wireplumber (the server would not take a default sink)"
# wireplumber makes the configured default the default: once it has, the server is whole.
is_default() { [ "$(pactl get-default-sink)" = "$1" ]; }
ready is_default "$1" || fail "wireplumber (the default sink is '$(pactl get-default-sink 2>&1)', not '$1')"
# A sink's module is loaded before the server lists the sink, and a later one can be listed first: wait for all.
all_listed() {
  local listed sink
  listed=$(pactl list short sinks | cut -f2)
  for sink in "$@"; do grep -qx "$sink" <<< "$listed" || return 1; done
}
ready all_listed "$@" || fail "the sinks ($*; listed: $(pactl list short sinks 2>&1 | cut -f2 | tr '\n' ' '))"
touch "$root/ready"

# Up: stay until killed, or until a part dies (then stop the others, so the server is whole or gone).
wait -n "${pids[@]}" || true
echo "pipewire-server: a part of the server ended; stopping the rest (logs in $root)" >&2
exit 1

#!/usr/bin/env bash
# Runs a command beside the real parts the tests use: a private sound server with two null sinks ("speakers", the
# default, and "headphones") and a private D-Bus session bus. Everything lives in one temporary folder (its own
# XDG_RUNTIME_DIR, HOME, configuration and state: no user's server is seen or touched) and is stopped when the
# command ends.
#
# The sound server is AMBIENCE_SOUND_SERVER:
#   pulseaudio (the default)  PulseAudio, with no configuration but the sinks (`pulseaudio -n`), logging at
#                             AMBIENCE_PULSE_LOG_LEVEL (default notice; debug logs each stream's underruns, which
#                             `ambience bench --latency --server-log` counts)
#   pipewire                  pipewire + wireplumber (the session manager: without it no stream reaches a sink) +
#                             pipewire-pulse (PipeWire's PulseAudio server, which every libpulse client talks to)
# Then, after the sound server (which keeps its own priority), a private system bus with polkitd and rtkit-daemon on
# it, where the engine asks for its audio thread's real-time priority as on a desktop.
# Exports, for the command:
#   AMBIENCE_SOUND_SERVER (the server that runs), PULSE_SERVER, DBUS_SESSION_BUS_ADDRESS, DBUS_SYSTEM_BUS_ADDRESS,
#   AMBIENCE_TEST_SERVICES=1, AMBIENCE_TEST_RTKIT=1 when rtkit runs on the system bus (a polkitd or rtkit that
#   does not start is a warning, not a failure: the priority tests then say what they need),
#   AMBIENCE_TEST_RUNTIME (the folder), LANG=LC_ALL=C.UTF-8 (built into Debian's libc: in the C locale, oggenc turns
#   a tag's "Tëst" into "T##st")
set -euo pipefail
export LANG=C.UTF-8 LC_ALL=C.UTF-8

server=${AMBIENCE_SOUND_SERVER:-pulseaudio}
case "$server" in
  pulseaudio|pipewire) ;;
  *) echo "with-services: AMBIENCE_SOUND_SERVER is '$server'; it must be pulseaudio or pipewire" >&2; exit 2 ;;
esac
export AMBIENCE_SOUND_SERVER=$server

root=$(mktemp -d /tmp/ambience-services.XXXXXX)
export HOME="$root/home" XDG_CONFIG_HOME="$root/config" XDG_RUNTIME_DIR="$root/runtime" XDG_CACHE_HOME="$root/cache"
export XDG_STATE_HOME="$root/state" XDG_DATA_HOME="$root/data"
export PULSE_RUNTIME_PATH="$root/pulse" PULSE_STATE_PATH="$root/pulse-state"
# A user's PipeWire settings would point the servers and clients elsewhere.
unset PIPEWIRE_REMOTE PIPEWIRE_RUNTIME_DIR PIPEWIRE_CONFIG_DIR PIPEWIRE_CONFIG_NAME PIPEWIRE_CONFIG_PREFIX WIREPLUMBER_CONFIG_DIR
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR" "$XDG_CACHE_HOME" "$XDG_STATE_HOME" "$XDG_DATA_HOME" \
  "$PULSE_RUNTIME_PATH" "$PULSE_STATE_PATH"
chmod 700 "$XDG_RUNTIME_DIR"
echo "autospawn = no" > "$root/client.conf"
export PULSE_CLIENTCONFIG="$root/client.conf"
export PULSE_SERVER="unix:$root/native"

source "$(dirname "$0")/processes.sh"
pids=()
cleanup() {
  stop_processes "${pids[@]}"
  rm -rf "$root"
}
trap cleanup EXIT

# fail WHAT LOG...: says what did not start, shows its logs, and exits (the trap stops the rest).
fail() {
  local what=$1
  shift
  echo "with-services: $what did not start; its log:" >&2
  for log in "$@"; do
    echo "--- $log" >&2
    cat "$log" >&2 2>/dev/null || echo "(no log)" >&2
  done
  exit 1
}

# ready CHECK...: waits up to 10 s for CHECK to succeed while every process started so far lives.
ready() {
  local _
  for _ in $(seq 1 400); do
    "$@" >/dev/null 2>&1 && return 0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || return 1; done
    sleep 0.025
  done
  "$@" >/dev/null 2>&1
}

# The session bus first, so that nothing started after it reaches a user's bus.
dbus-daemon --session --nofork --nopidfile --address="unix:path=$root/bus.sock" --print-address=1 > "$root/bus.address" &
pids+=($!)
ready test -s "$root/bus.address" || { echo "with-services: dbus-daemon did not start" >&2; exit 1; }
export DBUS_SESSION_BUS_ADDRESS
DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$root/bus.address")

start_pulseaudio() {
  cat > "$root/server.pa" <<PA
load-module module-native-protocol-unix auth-anonymous=1 socket=$root/native
load-module module-null-sink sink_name=speakers sink_properties=device.description=Speakers
load-module module-null-sink sink_name=headphones sink_properties=device.description=Headphones
set-default-sink speakers
PA
  # Off every session bus: PulseAudio takes the name org.PulseAudio1 there, and the tests' own throw-away servers,
  # on the tests' bus, would find it taken and refuse to start.
  DBUS_SESSION_BUS_ADDRESS="unix:path=$root/no-bus" pulseaudio -n -F "$root/server.pa" --daemonize=no --exit-idle-time=-1 --disallow-exit=yes --use-pid-file=no \
    --realtime=no --high-priority=no --log-level="${AMBIENCE_PULSE_LOG_LEVEL:-notice}" --log-target="file:$root/pulseaudio.log" &
  pids+=($!)
  ready pactl info || fail PulseAudio "$root/pulseaudio.log"
}

start_pipewire() {
  # A server of its own parts (pipewire, wireplumber, pipewire-pulse, and the session bus wireplumber needs), in
  # this folder; scripts/pipewire-server.sh says how.
  bash "$(dirname "$0")/pipewire-server.sh" "$root" speakers headphones > "$root/pipewire-server.log" 2>&1 &
  pids+=($!)
  ready test -e "$root/ready" || fail PipeWire "$root/pipewire-server.log" "$root/pipewire.log" "$root/wireplumber.log" \
    "$root/pipewire-pulse.log"
}

# A system bus of our own, on an abstract socket: polkitd and rtkit drop root for users of their own, who could not
# reach a socket in this folder (mode 700). polkitd answers rtkit's question (root is always authorized), and rtkit runs without its
# canary (a watchdog that demotes every thread when it starves, as a loaded machine makes it) and with its limits
# raised (25 requests in 20 s; 15 processes and 25 threads a user at once: every test runs as root), since the
# suites open an output, and ask, in test after test and in parallel.
start_system_bus() {
  cat > "$root/system.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:abstract=$(basename "$root")-system</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/> <allow own="*"/> <allow send_destination="*"/> <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
  dbus-daemon --config-file="$root/system.conf" --nofork --nopidfile --print-address=1 > "$root/system-bus.address" \
    2> "$root/system-bus.log" &
  pids+=($!)
  ready test -s "$root/system-bus.address" || fail "the system bus" "$root/system-bus.log"
  export DBUS_SYSTEM_BUS_ADDRESS
  DBUS_SYSTEM_BUS_ADDRESS=$(head -n1 "$root/system-bus.address")
  # Without polkitd or rtkit the bus stays, and every test but the priority ones runs: those say what is missing.
  /usr/lib/polkit-1/polkitd --no-debug > "$root/polkitd.log" 2>&1 &
  local polkitd=$!
  pids+=("$polkitd")
  if ! ready dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetNameOwner string:org.freedesktop.PolicyKit1; then
    without_rtkit polkitd "$root/polkitd.log" "$polkitd"
    return
  fi
  # rtkit allows itself no file size (RLIMIT_FSIZE 0): its log goes through a pipe, whose reader is stopped too.
  mkfifo "$root/rtkit.fifo"
  cat "$root/rtkit.fifo" > "$root/rtkit.log" &
  local reader=$!
  pids+=("$reader")
  /usr/libexec/rtkit-daemon --stderr --no-canary --actions-per-burst-max=100000 --processes-per-user-max=100000 \
    --threads-per-user-max=100000 2> "$root/rtkit.fifo" &
  local rtkit=$!
  pids+=("$rtkit")
  if ! ready dbus-send --system --print-reply --dest=org.freedesktop.RealtimeKit1 /org/freedesktop/RealtimeKit1 \
    org.freedesktop.DBus.Properties.Get string:org.freedesktop.RealtimeKit1 string:MaxRealtimePriority; then
    without_rtkit rtkit "$root/rtkit.log" "$rtkit" "$reader"
    return
  fi
  export AMBIENCE_TEST_RTKIT=1
}

# without_rtkit WHAT LOG PID...: warns that WHAT did not start (with its log), stops its processes and goes on
# without rtkit.
without_rtkit() {
  local what=$1 log=$2 kept=() other
  shift 2
  echo "with-services: $what did not start, so no rtkit on the system bus (the priority tests say so); its log:" >&2
  cat "$log" >&2 2>/dev/null || echo "(no log)" >&2
  stop_processes "$@"
  # Off the list that `ready` watches, where a process that ended means a failure.
  for other in "${pids[@]}"; do [[ " $* " == *" $other "* ]] || kept+=("$other"); done
  pids=("${kept[@]}")
}

"start_$server"
start_system_bus
pactl info | grep -qE "^Server String: (unix:)?$root/native$" || {
  echo "with-services: pactl reaches another server than the private one:" >&2
  pactl info >&2
  exit 1
}

export AMBIENCE_TEST_SERVICES=1 AMBIENCE_TEST_RUNTIME="$root"
"$@"

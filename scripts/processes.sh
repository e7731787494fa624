# Sourced by with-services.sh and pipewire-server.sh.
# stop_processes PID...: TERM, newest (last) first, so clients go before the servers they need; at most 5 s for them
# to go, then KILL for what will not stop, so a teardown never hangs; then reaps them.
stop_processes() {
  local i pid alive
  local pids=("$@")
  for (( i = ${#pids[@]} - 1; i >= 0; i-- )); do kill "${pids[i]}" 2>/dev/null || true; done
  for _ in $(seq 50); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
}

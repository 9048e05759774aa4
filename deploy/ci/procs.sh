# Sourced by the CI scripts that start background processes.
#   ci_pids+=($!)                        track a process
#   ci_stop_all                          stop and reap every tracked process
#   ci_wait_for FILE REGEX PID SECONDS   print the first match of REGEX in
#                                        FILE, waiting while process PID lives
ci_pids=()

ci_stop_all() {
  local p
  for p in "${ci_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${ci_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}

ci_wait_for() {
  local i m
  for i in $(seq $(( $4 * 10 ))); do
    if m=$(grep -Eo "$2" "$1" 2>/dev/null | head -n1) && [ -n "$m" ]; then
      echo "$m"; return 0
    fi
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  echo "$(basename "$0" .sh): no match for $2 in $1:" >&2; cat "$1" >&2; return 1
}

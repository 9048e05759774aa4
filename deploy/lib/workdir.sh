# shellcheck shell=bash
# workdir.sh: work-dir and step hygiene for the offline image scripts
# (sourced, not run). Needs log() and BUILD_TMPDIR from the caller.
#
#   new_workdir PREFIX      fresh dir in $NEW_WORKDIR, removed at exit
#   remove_workdir DIR      ends leftover processes, unmounts, removes
#   waitable [--log F] CMD  runs a long step so INT/TERM stop it at once
#   install_cleanup_traps   EXIT/INT/TERM: stop the step, remove work dirs

# Mount points at or below a directory, deepest first.
mounts_below() {
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

# End, by pid, what a killed run left working in dir: processes chrooted
# into it (apt, dpkg) or naming it on their command line (debootstrap, wget).
kill_leftovers() {
  local dir="$1" p pid r cmd args
  for p in /proc/[0-9]*; do
    pid="${p#/proc/}"
    if [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ]; then continue; fi
    r="$(readlink "$p/root" 2>/dev/null)" || continue
    # mapfile, not a pipe through tr: one fork less per process on the machine.
    args=()
    mapfile -t -d '' args <"$p/cmdline" 2>/dev/null || true
    cmd=" ${args[*]+"${args[*]}"} "
    case "$r" in "$dir"|"$dir"/*) ;; *)
      case "$cmd" in *" $dir/"*|*" $dir "*) ;; *) continue;; esac;;
    esac
    log "killing leftover pid $pid in $dir"
    kill -9 "$pid" 2>/dev/null || true
  done
}

umount_below() {
  local m
  for m in $(mounts_below "$1"); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "warning: cannot unmount $m"
  done
}

# Remove a work dir once nothing is mounted below it; never cross into another
# file system (protects a bound /dev).
remove_workdir() {
  local dir="$1"
  [ -d "$dir" ] || return 0
  dir="$(readlink -f "$dir")"
  kill_leftovers "$dir"
  umount_below "$dir"
  if [ -n "$(mounts_below "$dir")" ]; then
    sleep 0.5
    umount_below "$dir"
  fi
  if [ -n "$(mounts_below "$dir")" ]; then
    log "warning: mounts remain below $dir; not removing it"
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

# new_workdir PREFIX: a fresh work dir in $NEW_WORKDIR, registered for the
# cleanup (not via $(...): that would register it in a subshell only).
WORKDIRS=()
NEW_WORKDIR=""
new_workdir() {
  NEW_WORKDIR="$(mktemp -d "$BUILD_TMPDIR/${1}XXXXXX")"
  WORKDIRS+=("$NEW_WORKDIR")
}

# Long steps run as a waited-for background job in their own session, so
# INT/TERM act at once and the cleanup can end the whole step (debootstrap's
# downloads, apt's methods), not just its first process. The lock fd (9) is
# not handed down. With --log, the step's output is appended to FILE (not
# redirected around the call, so a trap running meanwhile still logs to our
# stderr).
WAIT_PID=""
waitable() {
  local rc=0 out=""
  if [ "${1:-}" = --log ]; then
    out="$2"
    shift 2
  fi
  (
    exec 9>&-
    if [ -n "$out" ]; then exec >>"$out" 2>&1; fi
    exec setsid -w "$@"
  ) &
  WAIT_PID=$!
  wait "$WAIT_PID" || rc=$?
  WAIT_PID=""
  return "$rc"
}
stop_waited() {
  local pid="$WAIT_PID" i
  [ -n "$pid" ] || return 0
  WAIT_PID=""
  log "stopping the running step (pid $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 50); do
    : "$i"
    kill -0 -- "-$pid" 2>/dev/null || kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

workdir_cleanup() {
  local rc=$? d
  stop_waited
  for d in "${WORKDIRS[@]+"${WORKDIRS[@]}"}"; do remove_workdir "$d" || true; done
  exit "$rc"
}
install_cleanup_traps() {
  trap workdir_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# import_root ROOT TAG [docker import args...]: a root dir as an image.
import_root() {
  local root="$1" tag="$2"
  shift 2
  tar --numeric-owner --xattrs -C "$root" \
    --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -c . |
    docker import "$@" - "$tag" >/dev/null
}

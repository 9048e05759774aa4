#!/usr/bin/env bash
# build-offline images for `docker compose up` WITHOUT a container registry.
#
#   deploy/offline/build-images.sh          # then: docker compose up -d --no-build
#
# compose.yaml normally builds notebridge/bridge:local from the Dockerfile
# (golang + distroless base images) and pulls caddy:2. Where no registry is
# reachable, this script seeds the three tags compose uses from the local Go
# toolchain, Debian (debootstrap) and npm instead; compose then runs them as
# it finds them.
#
#   notebridge/bridge:local   static binary of the working tree on an empty
#                             root (certs, passwd/group, /var/lib/notebridge,
#                             /tmp): the equivalent of the distroless image.
#                             Always rebuilt (seconds).
#   caddy:2                   Debian bookworm minbase + Debian's caddy (2.6.x).
#                             Built only when the tag is missing.
#   notebridge/joplin:3.5.1   deploy/joplin/build-offline.sh (cached by tag).
#
# Progress goes to stderr; stdout gets the three tags, one a line.
# Needs root, docker, go, debootstrap (deploy/ci/ensure-docker.sh installs
# docker and debootstrap) and a Debian mirror for the caddy image.
#
# Environment:
#   BRIDGE_IMAGE     default notebridge/bridge:local
#   CADDY_IMAGE      default caddy:2
#   JOPLIN_IMAGE     default notebridge/joplin:3.5.1 (passed to the Joplin script)
#   CADDY_REBUILD=1  rebuild the caddy image even when the tag exists
#   JOPLIN_REBUILD=1 passed through to deploy/joplin/build-offline.sh
#   SKIP_JOPLIN=1    do not build/check the Joplin image
#   DEBIAN_MIRROR    default http://deb.debian.org/debian
#   BUILD_TMPDIR     parent of the work dirs (default /var/tmp)
set -euo pipefail
umask 022

log() { printf 'build-images: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/debian-rootfs.sh
. "$HERE/../lib/debian-rootfs.sh"
REPO="$(cd "$HERE/../.." && pwd)"
BRIDGE_TAG="${BRIDGE_IMAGE:-notebridge/bridge:local}"
CADDY_TAG="${CADDY_IMAGE:-caddy:2}"
JOPLIN_TAG="${JOPLIN_IMAGE:-notebridge/joplin:3.5.1}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# shellcheck disable=SC2034 # used by configure_rootfs_apt
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-${MIRROR%/debian}/debian-security}"
SUITE=bookworm
BUILD_TMPDIR="${BUILD_TMPDIR:-/var/tmp}"
BRIDGE_PREFIX="notebridge-bridge-image."
CADDY_PREFIX="notebridge-caddy-build."
CADDY_LOCK="$BUILD_TMPDIR/notebridge-caddy-build.lock"

if [ ! -f "$REPO/go.mod" ] || [ ! -d "$REPO/services/notebridge" ]; then
  die "repository root not found at $REPO"
fi
command -v docker >/dev/null 2>&1 || die "docker client not found (run deploy/ci/ensure-docker.sh)"
docker info >/dev/null 2>&1 || die "docker daemon not answering (run deploy/ci/ensure-docker.sh)"
mkdir -p "$BUILD_TMPDIR"

elapsed() { printf '%ss' "$(( $(date +%s) - $1 ))"; }

# ---- work-dir hygiene (same approach as deploy/joplin/build-offline.sh) ----

# Mount points at or below a directory, deepest first.
mounts_below() {
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

# End, by pid, what a killed run left working in dir: processes chrooted
# into it (apt, dpkg) or naming it on their command line (debootstrap, wget).
kill_leftovers() {
  local dir="$1" p pid r cmd
  for p in /proc/[0-9]*; do
    pid="${p#/proc/}"
    if [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ]; then continue; fi
    r="$(readlink "$p/root" 2>/dev/null)" || continue
    cmd="$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" || cmd=""
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
cleanup() {
  local rc=$? d
  stop_waited
  for d in "${WORKDIRS[@]+"${WORKDIRS[@]}"}"; do remove_workdir "$d" || true; done
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Long steps run as a waited-for background job in their own session, so
# INT/TERM act at once and the cleanup can end the whole step (debootstrap's
# downloads, go's compilers), not just its first process. The lock fd is not
# handed down.
# `waitable [--log FILE] CMD...`: with --log, the step's output is appended
# to FILE (not redirected around the call, so that a trap running meanwhile
# still logs to our stderr).
WAIT_PID=""
waitable() {
  local rc=0 out=""
  if [ "${1:-}" = --log ]; then
    out="$2"
    shift 2
  fi
  # Explicit execs: no intermediate shell keeps the lock fd, and the pid we
  # wait for is the step itself, leading its own process group.
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

# Import a root dir as an image; extra args are docker import options.
import_root() { # root tag [docker import args...]
  local root="$1" tag="$2"
  shift 2
  tar --numeric-owner --xattrs -C "$root" \
    --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -c . |
    docker import "$@" - "$tag" >/dev/null
}

# Drop the image a tag pointed to before a rebuild, if nothing uses it now.
# `docker rmi ID` refuses when containers or other tags still use it.
drop_old_image() { # old_id tag
  local old="$1" new
  [ -n "$old" ] || return 0
  new="$(docker image inspect -f '{{.Id}}' "$2" 2>/dev/null || true)"
  [ "$old" != "$new" ] || return 0
  docker image rm "$old" >/dev/null 2>&1 || true
}

# ---- a. notebridge/bridge:local ----------------------------------------------
build_bridge() {
  local start work root version old
  start=$(date +%s)
  command -v go >/dev/null 2>&1 || die "go not found"
  [ -r /etc/ssl/certs/ca-certificates.crt ] || die "host /etc/ssl/certs/ca-certificates.crt missing"
  new_workdir "$BRIDGE_PREFIX"
  work="$NEW_WORKDIR"
  root="$work/root"
  version="$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo dev)"
  log "go build notebridge $version"
  mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/var/lib/notebridge" "$root/tmp"
  waitable env CGO_ENABLED=0 go build -C "$REPO" -trimpath \
    -ldflags "-s -w -X main.version=$version" \
    -o "$root/usr/local/bin/notebridge" ./services/notebridge >&2 || die "go build failed"
  install -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    'notebridge:x:1000:1000:notebridge:/var/lib/notebridge:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'notebridge:x:1000:' 'nonroot:x:65532:' >"$root/etc/group"
  chmod 0644 "$root/etc/passwd" "$root/etc/group"
  chown 1000:1000 "$root/var/lib/notebridge"
  chmod 0755 "$root/var/lib/notebridge"
  chmod 1777 "$root/tmp"

  old="$(docker image inspect -f '{{.Id}}' "$BRIDGE_TAG" 2>/dev/null || true)"
  log "docker import -> $BRIDGE_TAG"
  import_root "$root" "$BRIDGE_TAG" \
    --change 'USER 1000:1000' \
    --change 'ENV NOTEBRIDGE_STATE_DIR=/var/lib/notebridge' \
    --change 'ENTRYPOINT ["/usr/local/bin/notebridge"]' \
    --change 'CMD ["serve","--listen","0.0.0.0:8765","--actions-listen","0.0.0.0:8766"]' \
    --change 'EXPOSE 8765 8766' \
    --change "LABEL org.notebridge.version=$version" \
    --message "notebridge $version (offline build)"
  drop_old_image "$old" "$BRIDGE_TAG"
  remove_workdir "$work"
  log "built $BRIDGE_TAG in $(elapsed "$start")"
}

# ---- b. caddy:2 ----------------------------------------------------------------
caddy_cached() {
  [ "${CADDY_REBUILD:-0}" != 1 ] && docker image inspect "$CADDY_TAG" >/dev/null 2>&1
}

build_caddy() {
  local start work root old
  if caddy_cached; then
    log "$CADDY_TAG cached (CADDY_REBUILD=1 rebuilds it)"
    return 0
  fi
  [ "$(id -u)" -eq 0 ] || die "building $CADDY_TAG needs root (debootstrap, chroot, mount)"
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found (run deploy/ci/ensure-docker.sh)"

  # One build at a time; a waiting caller then finds the tag cached (unless
  # it forced a rebuild, in which case it builds again).
  exec 9>"$CADDY_LOCK"
  if ! flock -n 9; then
    log "another caddy build is running; waiting for it"
    flock 9
    if caddy_cached; then exec 9>&-; return 0; fi
  fi
  local old_dir
  for old_dir in "$BUILD_TMPDIR/$CADDY_PREFIX"*; do
    [ -d "$old_dir" ] || continue
    log "cleaning up leftover $old_dir"
    remove_workdir "$old_dir" || true
  done

  start=$(date +%s)
  new_workdir "$CADDY_PREFIX"
  work="$NEW_WORKDIR"
  root="$work/root"

  log "debootstrap $SUITE (minbase) from $MIRROR"
  waitable --log "$work/debootstrap.log" debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" || {
    tail -n 40 "$work/debootstrap.log" >&2
    die "debootstrap failed"
  }

  configure_rootfs_apt "$root"

  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  in_root() { # [--log FILE] CMD...
    local logopt=()
    if [ "${1:-}" = --log ]; then logopt=(--log "$2"); shift 2; fi
    waitable "${logopt[@]+"${logopt[@]}"}" chroot "$root" /usr/bin/env -i \
      HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
  }

  log "apt-get install caddy ca-certificates"
  { in_root --log "$work/apt.log" apt-get update -qq &&
    in_root --log "$work/apt.log" apt-get install -y -qq --no-install-recommends caddy ca-certificates; } || {
    tail -n 40 "$work/apt.log" >&2
    die "apt-get install failed"
  }
  in_root --log "$work/caddy-version" caddy version || die "caddy does not start inside the built root"
  log "smoke test: caddy $(head -n1 "$work/caddy-version")"
  in_root --log "$work/apt.log" apt-get clean
  umount_below "$root/proc"
  umount_below "$root/dev"
  [ -z "$(mounts_below "$root")" ] || die "mounts remain below $root"

  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/*.log \
    "$root"/var/log/apt/* "$root"/tmp/* "$root"/usr/share/doc/* "$root"/usr/share/man/* \
    "$root/usr/sbin/policy-rc.d" "$root/etc/apt/apt.conf.d/99notebridge"
  : >"$root/etc/resolv.conf"
  mkdir -p "$root/config" "$root/data" "$root/etc/caddy" "$root/srv"

  old="$(docker image inspect -f '{{.Id}}' "$CADDY_TAG" 2>/dev/null || true)"
  log "docker import -> $CADDY_TAG"
  import_root "$root" "$CADDY_TAG" \
    --change 'ENV XDG_CONFIG_HOME=/config' \
    --change 'ENV XDG_DATA_HOME=/data' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'WORKDIR /srv' \
    --change 'EXPOSE 80 443' \
    --change 'CMD ["caddy","run","--config","/etc/caddy/Caddyfile","--adapter","caddyfile"]' \
    --change 'LABEL org.notebridge.offline=debian-bookworm-caddy' \
    --message "caddy from Debian $SUITE (notebridge offline build)"
  drop_old_image "$old" "$CADDY_TAG"
  remove_workdir "$work"
  exec 9>&-
  log "built $CADDY_TAG in $(elapsed "$start")"
}

# ---- c. notebridge/joplin:3.5.1 ------------------------------------------------
build_joplin() {
  local start tag
  start=$(date +%s)
  tag="$(bash "$REPO/deploy/joplin/build-offline.sh" "$JOPLIN_TAG")" || die "deploy/joplin/build-offline.sh failed"
  [ "$tag" = "$JOPLIN_TAG" ] || die "deploy/joplin/build-offline.sh printed '$tag', expected $JOPLIN_TAG"
  log "$JOPLIN_TAG ready in $(elapsed "$start")"
}

ALL_START=$(date +%s)
build_bridge
build_caddy
if [ "${SKIP_JOPLIN:-0}" = 1 ]; then
  log "SKIP_JOPLIN=1: not checking $JOPLIN_TAG"
else
  build_joplin
fi
log "done in $(elapsed "$ALL_START")"
printf '%s\n' "$BRIDGE_TAG" "$CADDY_TAG"
[ "${SKIP_JOPLIN:-0}" = 1 ] || printf '%s\n' "$JOPLIN_TAG"

#!/usr/bin/env bash
# build-offline.sh: build the notebridge Joplin image WITHOUT a container
# registry, and cache it in the local Docker engine under a tag.
#
#   IMAGE=$(deploy/joplin/build-offline.sh)            # default tag
#   IMAGE=$(deploy/joplin/build-offline.sh my/tag:x)   # or JOPLIN_IMAGE=...
#
# The image is the equivalent of deploy/joplin/Dockerfile, made from a
# debootstrapped Debian bookworm root (Debian's nodejs 18 + npm) into which
# joplin@$JOPLIN_VERSION is npm-installed, then `docker import`ed.
#
# Only the tag is printed on stdout; all progress goes to stderr.
#
# Caching: if the tag already exists, it is reused (a few seconds). If its
# entrypoint differs from deploy/joplin/entrypoint.sh, only the entrypoint is
# refreshed (docker cp + commit, seconds). JOPLIN_REBUILD=1 forces a full
# rebuild. Needs root, docker, debootstrap (see deploy/ci/ensure-docker.sh)
# and access to a Debian mirror and the npm registry.
#
# Environment:
#   JOPLIN_IMAGE      tag (default notebridge/joplin:3.5.1); arg 1 wins
#   JOPLIN_VERSION    joplin npm version (default 3.5.1)
#   DEBIAN_MIRROR     default http://deb.debian.org/debian
#   JOPLIN_REBUILD=1  ignore the cached image
#   JOPLIN_SHRINK=0   keep compilers etc. in the image (default: removed)
#   BUILD_TMPDIR      parent of the work dir (default /var/tmp)
set -euo pipefail

log() { printf 'build-offline: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/debian-rootfs.sh
. "$HERE/../lib/debian-rootfs.sh"
JOPLIN_VERSION="${JOPLIN_VERSION:-3.5.1}"
TAG="${1:-${JOPLIN_IMAGE:-notebridge/joplin:${JOPLIN_VERSION}}}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# shellcheck disable=SC2034 # used by configure_rootfs_apt
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-${MIRROR%/debian}/debian-security}"
SUITE=bookworm
ENTRYPOINT_SRC="$HERE/entrypoint.sh"
ENTRYPOINT_DST=/usr/local/bin/joplin-entrypoint.sh
BUILD_TMPDIR="${BUILD_TMPDIR:-/var/tmp}"
WORK_PREFIX="notebridge-joplin-build."
LOCK_FILE="$BUILD_TMPDIR/notebridge-joplin-build.lock"

[ -r "$ENTRYPOINT_SRC" ] || die "missing $ENTRYPOINT_SRC"
command -v docker >/dev/null 2>&1 || die "docker client not found (run deploy/ci/ensure-docker.sh)"
docker info >/dev/null 2>&1 || die "docker daemon not answering (run deploy/ci/ensure-docker.sh)"

EP_SHA="$(sha256sum "$ENTRYPOINT_SRC" | cut -d' ' -f1)"
EP_LABEL="org.notebridge.entrypoint.sha256"

# Print the tag if a usable cached image exists; refresh only its entrypoint
# when that changed. Returns non-zero when a full build is needed.
use_cached() {
  [ "${JOPLIN_REBUILD:-0}" != 1 ] || return 1
  docker image inspect "$TAG" >/dev/null 2>&1 || return 1
  local have
  have="$(docker image inspect -f "{{ index .Config.Labels \"$EP_LABEL\" }}" "$TAG" 2>/dev/null || true)"
  if [ "$have" != "$EP_SHA" ]; then
    log "cached $TAG has another entrypoint; refreshing it"
    local cid
    cid="$(docker create "$TAG")" || return 1
    # Through tar, so owner and mode are right whatever the checkout has.
    if tar -C "$(dirname "$ENTRYPOINT_SRC")" --owner=0 --group=0 --numeric-owner \
         --mode=0755 --transform "s|.*|$(basename "$ENTRYPOINT_DST")|" \
         -c "$(basename "$ENTRYPOINT_SRC")" |
       docker cp - "$cid:$(dirname "$ENTRYPOINT_DST")" >&2 &&
       docker commit --change "LABEL $EP_LABEL=$EP_SHA" "$cid" "$TAG" >/dev/null; then
      docker rm -f "$cid" >/dev/null 2>&1 || true
    else
      docker rm -f "$cid" >/dev/null 2>&1 || true
      return 1
    fi
  fi
  printf '%s\n' "$TAG"
  return 0
}

if use_cached; then exit 0; fi

[ "$(id -u)" -eq 0 ] || die "a full build needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found (run deploy/ci/ensure-docker.sh)"
[ -r /etc/ssl/certs/ca-certificates.crt ] || die "host /etc/ssl/certs/ca-certificates.crt missing"

# Serialize builds: a second caller waits, then finds the image cached.
mkdir -p "$BUILD_TMPDIR"
exec 9>"$LOCK_FILE"
if ! flock -n 9; then
  log "another build is running; waiting for it"
  flock 9
fi
if use_cached; then exit 0; fi

# Unmount everything below a directory, deepest first.
umount_below() {
  local dir="$1" m
  dir="$(readlink -f "$dir" 2>/dev/null || printf '%s' "$dir")"
  # /proc/self/mounts escapes spaces etc. as octal; our paths have none.
  for m in $(awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "warning: cannot unmount $m"
  done
}

# Remove a work dir only when nothing is mounted below it any more, and never
# crossing into another file system (protects e.g. a bound /dev).
remove_workdir() {
  local dir="$1" p r
  [ -d "$dir" ] || return 0
  dir="$(readlink -f "$dir")"
  # Processes still chrooted into it (e.g. npm of a killed build) hold the
  # mounts busy: end them, by pid.
  for p in /proc/[0-9]*; do
    r="$(readlink "$p/root" 2>/dev/null)" || continue
    case "$r" in
      "$dir"|"$dir"/*) log "killing leftover pid ${p#/proc/} in $dir"; kill -9 "${p#/proc/}" 2>/dev/null || true;;
    esac
  done
  sleep 0.5
  umount_below "$dir"
  if awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { found=1 } END { exit !found }' /proc/self/mounts; then
    log "warning: mounts remain below $dir; not removing it"
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

# Leftovers of earlier, failed runs (we hold the lock, so none is live).
for old in "$BUILD_TMPDIR/$WORK_PREFIX"*; do
  [ -d "$old" ] || continue
  log "cleaning up leftover $old"
  remove_workdir "$old" || true
done

# Run a long step as a background job and wait for it: bash runs traps only
# between commands, and `wait` is interruptible, so SIGTERM/SIGINT take effect
# at once (the EXIT trap then ends what still runs in the chroot). The lock
# fd is not handed down, so a stray child can never hold the build lock.
waitable() {
  "$@" 9>&- &
  wait "$!"
}

WORK="$(mktemp -d "$BUILD_TMPDIR/${WORK_PREFIX}XXXXXX")"
ROOT="$WORK/root"
cleanup() {
  local rc=$?
  remove_workdir "$WORK" || true
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

START=$(date +%s)

# --- 1. base system ------------------------------------------------------
log "debootstrap $SUITE (minbase) from $MIRROR"
waitable debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || {
  tail -n 40 "$WORK/debootstrap.log" >&2
  die "debootstrap failed"
}

mount_chroot() {
  mount -t proc proc "$ROOT/proc"
  mount --bind /dev "$ROOT/dev"
  mount --bind /dev/pts "$ROOT/dev/pts" 2>/dev/null || true
}
unmount_chroot() { umount_below "$ROOT/proc"; umount_below "$ROOT/dev"; }
run_chroot() {
  waitable chroot "$ROOT" /usr/bin/env -i \
    HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# Network and apt configuration for the build.
configure_rootfs_apt "$ROOT"

mount_chroot

# --- 2. packages ---------------------------------------------------------
RUNTIME_PKGS=(nodejs socat ca-certificates libsecret-1-0)
BUILD_PKGS=(npm libnode-dev python3 make g++ libsecret-1-dev pkg-config)
log "apt-get install ${RUNTIME_PKGS[*]} ${BUILD_PKGS[*]}"
run_chroot apt-get update -qq >&2
run_chroot apt-get install -y -qq --no-install-recommends \
  "${RUNTIME_PKGS[@]}" "${BUILD_PKGS[@]}" >"$WORK/apt.log" 2>&1 || {
  tail -n 40 "$WORK/apt.log" >&2
  die "apt-get install failed"
}

# --- 3. joplin -------------------------------------------------------------
# Use the host's CA bundle while downloading (it may hold a CA the network
# needs); restore Debian's own bundle afterwards so the image does not carry it.
cp "$ROOT/etc/ssl/certs/ca-certificates.crt" "$WORK/ca-certificates.crt.debian"
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"

log "npm install -g joplin@$JOPLIN_VERSION (compiles native modules; several minutes)"
NPM_ENV=(
  npm_config_nodedir=/usr                       # headers from libnode-dev, no download
  npm_config_cafile=/etc/ssl/certs/ca-certificates.crt
  NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
  npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
  npm_config_loglevel=warn
  JOBS=2
)
if ! run_chroot env "${NPM_ENV[@]}" \
  npm install -g "joplin@$JOPLIN_VERSION" >"$WORK/npm.log" 2>&1; then
  tail -n 60 "$WORK/npm.log" >&2
  die "npm install failed"
fi
run_chroot npm cache clean --force >/dev/null 2>&1 || true

# --- 4. runtime setup ----------------------------------------------------
install -m 0755 "$ENTRYPOINT_SRC" "$ROOT$ENTRYPOINT_DST"
# Unprivileged user owning the data volume.
run_chroot groupadd --gid 1000 joplin
run_chroot useradd --uid 1000 --gid 1000 --home-dir /home/joplin \
  --create-home --shell /usr/sbin/nologin joplin
mkdir -p "$ROOT/data/profile"
chown -R 1000:1000 "$ROOT/data"

if [ "${JOPLIN_SHRINK:-1}" = 1 ]; then
  log "removing build-only packages"
  run_chroot apt-mark manual "${RUNTIME_PKGS[@]}" >/dev/null
  run_chroot apt-get purge -y -qq --auto-remove "${BUILD_PKGS[@]}" >>"$WORK/apt.log" 2>&1 || {
    tail -n 40 "$WORK/apt.log" >&2
    die "apt-get purge failed"
  }
fi
cp "$WORK/ca-certificates.crt.debian" "$ROOT/etc/ssl/certs/ca-certificates.crt"

# Smoke test: the CLI must start in the final root.
log "smoke test: joplin version"
if ! run_chroot /bin/sh -c 'cd /tmp && HOME=/tmp joplin --profile /tmp/smoke-profile version' >&2; then
  die "joplin does not start inside the built root"
fi
rm -rf "$ROOT/tmp/smoke-profile"

run_chroot apt-get clean
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/* "$ROOT"/var/log/*.log \
  "$ROOT"/var/log/apt/* "$ROOT"/root/.npm "$ROOT"/root/.cache "$ROOT"/tmp/* \
  "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* "$ROOT/usr/sbin/policy-rc.d" \
  "$ROOT/etc/apt/apt.conf.d/99notebridge"
: >"$ROOT/etc/resolv.conf"

unmount_chroot

# --- 5. import -------------------------------------------------------------
log "docker import -> $TAG"
tar --numeric-owner --xattrs -C "$ROOT" \
  --exclude=./proc/* --exclude=./sys/* --exclude=./dev/* -c . |
  docker import \
    --change "ENTRYPOINT [\"$ENTRYPOINT_DST\"]" \
    --change 'EXPOSE 41184' \
    --change 'VOLUME /data' \
    --change 'USER joplin' \
    --change 'WORKDIR /home/joplin' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV HOME=/home/joplin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV NODE_ENV=production' \
    --change 'ENV JOPLIN_PROFILE=/data/profile' \
    --change "LABEL org.notebridge.joplin.version=$JOPLIN_VERSION" \
    --change "LABEL $EP_LABEL=$EP_SHA" \
    --message "notebridge joplin $JOPLIN_VERSION (offline build)" \
    - "$TAG" >/dev/null

log "built $TAG in $(( $(date +%s) - START ))s"
printf '%s\n' "$TAG"

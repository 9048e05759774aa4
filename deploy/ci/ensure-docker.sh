#!/usr/bin/env bash
# ensure-docker.sh: make sure a working Docker engine (and debootstrap) is
# available on a Debian bookworm machine. Idempotent: safe to run repeatedly.
#
#   - installs Debian's docker.io if dockerd is missing
#   - installs debootstrap if missing (used by deploy/offline/seed-base-images.sh)
#   - starts dockerd in the background (log: /tmp/dockerd.log) if the
#     daemon does not answer, then waits up to DOCKER_WAIT_SECONDS (60).
#
# All progress goes to stderr. Exit status 0 means `docker info` works.
set -euo pipefail

log() { printf 'ensure-docker: %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    log "must run as root (or have sudo)"; exit 1; fi
fi

export DEBIAN_FRONTEND=noninteractive
APT_UPDATED=0
apt_install() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    log "apt-get update"
    $SUDO apt-get update -qq >&2
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    --no-install-recommends "$@" >&2
}

pkgs=()
# docker.io ships dockerd, containerd and runc. If a docker client already
# exists (e.g. /usr/local/bin/docker) that's fine; Debian's goes to /usr/bin.
if ! command -v dockerd >/dev/null 2>&1; then
  pkgs+=(docker.io)
  # iptables is needed for the default bridge network.
  command -v iptables >/dev/null 2>&1 || pkgs+=(iptables)
fi
command -v debootstrap >/dev/null 2>&1 || pkgs+=(debootstrap)
# debootstrap verifies Release signatures with this keyring.
[ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || pkgs+=(debian-archive-keyring)
if [ "${#pkgs[@]}" -gt 0 ]; then
  apt_install "${pkgs[@]}"
fi

if ! command -v docker >/dev/null 2>&1; then
  log "no docker client found after install"; exit 1
fi

if docker info >/dev/null 2>&1; then
  log "docker daemon already answering"
  exit 0
fi

# Start dockerd unless one is already running (e.g. still booting).
if ! pgrep -x dockerd >/dev/null 2>&1; then
  # Prefer the service manager when there is a working one.
  started=0
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    if $SUDO systemctl start docker >&2 2>&1; then started=1; fi
  fi
  if [ "$started" -eq 0 ]; then
    # A dockerd that died leaves its pid file, which stops a new one starting.
    pidf=/var/run/docker.pid
    if [ -f "$pidf" ] && ! kill -0 "$(cat "$pidf" 2>/dev/null)" 2>/dev/null; then
      log "removing stale $pidf"
      $SUDO rm -f "$pidf"
    fi
    # containerd is started by dockerd itself when not running.
    log "starting dockerd (log: /tmp/dockerd.log)"
    $SUDO sh -c 'nohup dockerd >>/tmp/dockerd.log 2>&1 </dev/null &'
  fi
fi

wait_s="${DOCKER_WAIT_SECONDS:-60}"
for _ in $(seq 1 "$wait_s"); do
  if docker info >/dev/null 2>&1; then
    log "docker daemon is ready"
    exit 0
  fi
  sleep 1
done

log "docker daemon did not answer within ${wait_s}s; last lines of /tmp/dockerd.log:"
tail -n 30 /tmp/dockerd.log >&2 2>/dev/null || true
exit 1

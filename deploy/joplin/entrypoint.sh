#!/usr/bin/env bash
# joplin-entrypoint.sh: shared entrypoint of the notebridge Joplin images
# (deploy/joplin/Dockerfile and deploy/joplin/build-offline.sh).
#
# Runs the Joplin CLI Data API server ("joplin server start") and exposes it
# on all interfaces through socat, because Joplin itself only ever binds
# 127.0.0.1:
#
#   0.0.0.0:${JOPLIN_PORT:-41184}  --socat-->  127.0.0.1:${JOPLIN_INTERNAL_PORT:-41183} (Joplin)
#
# Environment:
#   JOPLIN_PROFILE        profile directory (default /data/profile)
#   JOPLIN_TOKEN_FILE     file holding the API token (preferred)
#   JOPLIN_TOKEN          API token (used when JOPLIN_TOKEN_FILE is unset)
#                         With neither, the token Joplin generated is kept.
#   JOPLIN_PORT           external port socat listens on (default 41184)
#   JOPLIN_INTERNAL_PORT  Joplin's own loopback port, api.port (default 41183)
#
# The token is never printed. The container stops when either process dies;
# SIGTERM/SIGINT are forwarded to both.
set -euo pipefail

log() { printf 'joplin-entrypoint: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

PROFILE="${JOPLIN_PROFILE:-/data/profile}"
EXT_PORT="${JOPLIN_PORT:-41184}"
INT_PORT="${JOPLIN_INTERNAL_PORT:-41183}"

case "$EXT_PORT" in ''|*[!0-9]*) die "JOPLIN_PORT must be a number";; esac
case "$INT_PORT" in ''|*[!0-9]*) die "JOPLIN_INTERNAL_PORT must be a number";; esac
[ "$EXT_PORT" != "$INT_PORT" ] || die "JOPLIN_PORT and JOPLIN_INTERNAL_PORT must differ"

command -v joplin >/dev/null 2>&1 || die "joplin CLI not found in PATH"
command -v socat >/dev/null 2>&1 || die "socat not found in PATH"

mkdir -p "$PROFILE" 2>/dev/null || die "cannot create profile dir $PROFILE"
[ -w "$PROFILE" ] || die "profile dir $PROFILE is not writable by uid $(id -u)"

# --- API token ------------------------------------------------------------
TOKEN=""
if [ -n "${JOPLIN_TOKEN_FILE:-}" ]; then
  [ -r "$JOPLIN_TOKEN_FILE" ] || die "JOPLIN_TOKEN_FILE is set but not readable"
  # First line only, surrounding whitespace / CR stripped.
  IFS= read -r TOKEN <"$JOPLIN_TOKEN_FILE" || true
  TOKEN="$(printf '%s' "$TOKEN" | tr -d '[:space:]')"
  [ -n "$TOKEN" ] || die "JOPLIN_TOKEN_FILE is empty"
elif [ -n "${JOPLIN_TOKEN:-}" ]; then
  TOKEN="$JOPLIN_TOKEN"
fi
# Do not leak the token to the child processes' environment.
unset JOPLIN_TOKEN

if [ -n "$TOKEN" ]; then
  # The token travels in URLs, so keep it to URL-safe characters; this also
  # keeps it safe inside the quoted batch line below.
  case "$TOKEN" in
    *[!A-Za-z0-9._~-]*) die "API token may only contain A-Z a-z 0-9 . _ ~ -";;
  esac
fi

# --- configuration ----------------------------------------------------------
# One "joplin batch" run applies all settings (each CLI start costs seconds),
# and keeps the token out of the process list. The batch file is private and
# removed right away.
umask 077
BATCH="$(mktemp "${TMPDIR:-/tmp}/joplin-config.XXXXXX")"
trap 'rm -f "$BATCH"' EXIT
{
  printf 'config api.port %s\n' "$INT_PORT"
  if [ -n "$TOKEN" ]; then printf 'config api.token "%s"\n' "$TOKEN"; fi
} >"$BATCH"
TOKEN=""
if ! joplin --profile "$PROFILE" batch "$BATCH" >/dev/null 2>&1; then
  rm -f "$BATCH"
  die "could not configure the Joplin profile (joplin batch failed)"
fi
rm -f "$BATCH"
trap - EXIT
umask 022

# A pid file left by a previous container run could name a live process of
# this one and make "server start" think a server is already running.
rm -f "$PROFILE/clipper-server.pid" 2>/dev/null || true

# --- processes --------------------------------------------------------------
JOPLIN_PID=""
SOCAT_PID=""

terminate() {
  local sig="$1"
  log "received SIG$sig, stopping"
  [ -n "$SOCAT_PID" ] && kill -TERM "$SOCAT_PID" 2>/dev/null || true
  [ -n "$JOPLIN_PID" ] && kill -TERM "$JOPLIN_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  exit 0
}
trap 'terminate TERM' TERM
trap 'terminate INT' INT

log "starting Joplin API server on 127.0.0.1:$INT_PORT (profile $PROFILE)"
joplin --profile "$PROFILE" server start &
JOPLIN_PID=$!

# Publish the port only once Joplin accepts connections, so that clients see
# "connection refused" rather than a reset while it boots.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
while ! port_open "$INT_PORT"; do
  if ! kill -0 "$JOPLIN_PID" 2>/dev/null; then
    set +e; wait "$JOPLIN_PID"; rc=$?; set -e
    die "Joplin exited during startup (status $rc)"
  fi
  sleep 0.2
done

log "forwarding 0.0.0.0:$EXT_PORT -> 127.0.0.1:$INT_PORT"
socat "TCP-LISTEN:$EXT_PORT,fork,reuseaddr,bind=0.0.0.0" "TCP:127.0.0.1:$INT_PORT" &
SOCAT_PID=$!

# Exit as soon as either process dies, taking the other one down.
set +e
wait -n "$JOPLIN_PID" "$SOCAT_PID"
rc=$?
set -e
if kill -0 "$JOPLIN_PID" 2>/dev/null; then
  log "socat exited (status $rc); stopping Joplin"
else
  log "Joplin exited (status $rc); stopping socat"
fi
kill -TERM "$JOPLIN_PID" "$SOCAT_PID" 2>/dev/null || true
wait 2>/dev/null || true
[ "$rc" -ne 0 ] || rc=1
exit "$rc"

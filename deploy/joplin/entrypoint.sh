#!/usr/bin/env bash
# joplin-entrypoint.sh: shared entrypoint of the notebridge Joplin images
# (deploy/joplin/Dockerfile).
#
# Runs the sync supervisor (joplinsync run), which owns the one long-lived
# Joplin CLI process: it starts the Data API in it ("server start") and
# syncs the profile with NOTEBRIDGE_SYNC_TARGET (docs/sync.md). The Data API
# is exposed on all interfaces through socat, because Joplin itself only
# ever binds 127.0.0.1:
#
#   0.0.0.0:${JOPLIN_PORT:-41184}  --socat-->  127.0.0.1:${JOPLIN_INTERNAL_PORT:-41183} (Joplin)
#
# With arguments it runs a joplinsync command instead and exits:
#   authorize-sync              one-time Dropbox/OneDrive authorisation
#   check                       validate the sync settings and secrets
#   secret set NAME             store a sync secret (hidden input)
#
# Environment:
#   JOPLIN_PROFILE        profile directory (default /data/profile)
#   JOPLIN_TOKEN_FILE     file holding the API token (preferred)
#   JOPLIN_TOKEN          API token (used when JOPLIN_TOKEN_FILE is unset)
#                         With neither, the token Joplin generated is kept.
#   JOPLIN_PORT           external port socat listens on (default 41184)
#   JOPLIN_INTERNAL_PORT  Joplin's own loopback port, api.port (default 41183)
#   JOPLIN_CLIPPER_LOG=1  keep Joplin's request log PROFILE/log-clipper.txt
#                         (it holds every request URL, token included)
#
# The token is never printed. The container stops when either process dies;
# SIGTERM/SIGINT are forwarded to both.
set -euo pipefail

# The profile holds the notes and the API token: keep it private.
umask 077

log() { printf 'joplin-entrypoint: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

case "${1:-}" in
  authorize-sync|check|secret) exec joplinsync "$@" ;;
  '') ;;
  *) die "unknown command $1 (authorize-sync, check, secret set NAME)" ;;
esac

PROFILE="${JOPLIN_PROFILE:-/data/profile}"
EXT_PORT="${JOPLIN_PORT:-41184}"
INT_PORT="${JOPLIN_INTERNAL_PORT:-41183}"

case "$EXT_PORT" in ''|*[!0-9]*) die "JOPLIN_PORT must be a number";; esac
case "$INT_PORT" in ''|*[!0-9]*) die "JOPLIN_INTERNAL_PORT must be a number";; esac
[ "$EXT_PORT" != "$INT_PORT" ] || die "JOPLIN_PORT and JOPLIN_INTERNAL_PORT must differ"

command -v joplin >/dev/null 2>&1 || die "joplin CLI not found in PATH"
command -v socat >/dev/null 2>&1 || die "socat not found in PATH"
command -v joplinsync >/dev/null 2>&1 || die "joplinsync not found in PATH"

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
# api.port and api.token are file-stored settings: Joplin keeps them in
# PROFILE/settings.json. Merging them in with node takes ~0.1 s, where a CLI
# run ("joplin batch") takes ~1.5 s; the CLI stays the fallback. The token is
# handed over through the environment (or a private file), never argv.
apply_settings_file() {
  NB_SETTINGS="$PROFILE/settings.json" NB_PORT="$INT_PORT" NB_TOKEN="$TOKEN" node -e '
    const fs = require("fs");
    const f = process.env.NB_SETTINGS;
    let s = {};
    if (fs.existsSync(f)) {
      s = JSON.parse(fs.readFileSync(f, "utf8"));
      if (s === null || typeof s !== "object" || Array.isArray(s)) process.exit(1);
    } else {
      s["$schema"] = "https://joplinapp.org/schema/settings.json";
    }
    s["api.port"] = Number(process.env.NB_PORT);
    if (process.env.NB_TOKEN) s["api.token"] = process.env.NB_TOKEN;
    const tmp = f + ".nb-tmp";
    fs.writeFileSync(tmp, JSON.stringify(s, null, "\t"), { mode: 0o600 });
    fs.renameSync(tmp, f);
  ' >/dev/null 2>&1
}
apply_settings_cli() {
  local batch rc
  batch="$(umask 077 && mktemp "${TMPDIR:-/tmp}/joplin-config.XXXXXX")" || return 1
  {
    printf 'config api.port %s\n' "$INT_PORT"
    if [ -n "$TOKEN" ]; then printf 'config api.token "%s"\n' "$TOKEN"; fi
  } >"$batch"
  joplin --profile "$PROFILE" batch "$batch" >/dev/null 2>&1 && rc=0 || rc=$?
  rm -f "$batch"
  return "$rc"
}
if ! apply_settings_file; then
  log "settings.json not writable as JSON; configuring through the Joplin CLI"
  apply_settings_cli || die "could not configure the Joplin profile"
fi
TOKEN=""

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

# Joplin logs every request line, token included ("GET /notes?token=..."),
# to stdout and to PROFILE/log-clipper.txt. --quiet keeps it off stdout (so
# off `docker logs`); the file goes to /dev/null unless JOPLIN_CLIPPER_LOG=1.
CLIPPER_LOG="$PROFILE/log-clipper.txt"
if [ "${JOPLIN_CLIPPER_LOG:-0}" = 1 ]; then
  [ -L "$CLIPPER_LOG" ] && rm -f "$CLIPPER_LOG"
else
  rm -f "$CLIPPER_LOG" && ln -s /dev/null "$CLIPPER_LOG"
fi

log "starting the sync supervisor and Joplin's API server on 127.0.0.1:$INT_PORT (profile $PROFILE)"
joplinsync run --profile "$PROFILE" --port "$INT_PORT" &
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

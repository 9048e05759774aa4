#!/usr/bin/env bash
# walkthrough.sh (issue 36): the README's "First time" path for a connector,
# played on this machine from a fresh clone, each step timed: the person's
# notes are on a WebDAV server (their other device synced a note there);
# they clone, build, answer the setup assistant (here by its flags: the
# answers a person types), start the stack, read the owner passphrase, and
# a connector (the TypeScript SDK's OAuth client, as ChatGPT and Claude
# connect) registers, is approved on the consent page with the passphrase,
# and reads the synced note.
#
# What this network forces, and nothing else: the public name is
# notebridge.local, which no public DNS serves, so the setup assistant's
# DNS check is answered by an extra_hosts line of an override used for that
# one command; the connector reaches Caddy's port on 127.0.0.1 with the
# name as SNI and trusts Caddy's internal CA (a real domain gets a public
# certificate); the ports and subnets are moved beside CI's other stacks;
# the build takes the CA bundle this network needs.
#
# Prints one MEASURE line per step (seconds) and the answers the setup took.
# Environment: WALK_HTTPS_PORT (18543), WALK_HTTP_PORT (18580),
# WALK_DAV_PORT (18092), WALK_NET (172.31.24x: edge .245, backend .244,
# egress .243), NOTEBRIDGE_BUILD_CA.
set -euo pipefail

log() { printf 'walkthrough: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

REPO="$(cd "$(dirname "$0")/../.." && pwd)"
W="$(mktemp -d)"
PROJECT=nbwalk
DOMAIN=notebridge.local
HTTPS_PORT="${WALK_HTTPS_PORT:-18543}"
HTTP_PORT="${WALK_HTTP_PORT:-18580}"
DAV_PORT="${WALK_DAV_PORT:-18092}"
DAV_PID=""
CLONE="$W/notebridge"

dc() { docker compose -p "$PROJECT" "$@"; }
cleanup() {
  if [ -d "$CLONE" ]; then
    (cd "$CLONE" && dc --profile '*' down -v --remove-orphans >/dev/null 2>&1) || true
  fi
  [ -z "$DAV_PID" ] || kill "$DAV_PID" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT

# timed NAME CMD...: runs a step, prints its time on the script's stdout
# (fd 3, whatever the step's own output is redirected to) and returns the
# step's status.
exec 3>&1
timed() {
  local name="$1" t0 t1 rc=0
  shift
  t0=$(date +%s%N)
  "$@" || rc=$?
  t1=$(date +%s%N)
  printf 'MEASURE walkthrough step %-34s %6.1f s\n' "$name" "$(( (t1 - t0) / 1000000 ))e-3" >&3
  return "$rc"
}

# readme_step N [WANT]: the command of step N of the README's connector
# path: the first `docker compose …` code span of numbered item N (its
# line and the indented lines after it) under "A connector in ChatGPT or Claude". With WANT,
# dies unless it is WANT, so a README whose steps change fails here until
# this script follows it.
readme_step() {
  local cmd
  cmd="$(awk -v n="$1" '
    /^\*\*A connector in ChatGPT or Claude\*\*/ { inpath = 1; next }
    inpath && /^\*\*/ { exit }
    item && /^ / { text = text " " $0; next }
    item { exit }
    inpath && index($0, n ". ") == 1 { item = 1; text = $0 }
    END { print text }' README.md |
    grep -o '`docker compose [^`]*`' | head -1 | tr -d '`')" || true
  [ -n "$cmd" ] || die "step $1 of the README's connector path names no docker compose command"
  if [ $# -gt 1 ] && [ "$cmd" != "$2" ]; then
    die "step $1 of the README's connector path is now '$cmd', this walk-through plays '$2': update deploy/ci/walkthrough.sh"
  fi
  printf '%s\n' "$cmd"
}

# readme_run CMD [ARGS...]: runs a README command as written, adding only
# what a script needs: this walk-through's project (and the compose files
# in EXTRA_FILES), -T for run and exec (no terminal), -q for build, and
# ARGS after it (the setup assistant's answers).
EXTRA_FILES=()
readme_run() {
  local words
  read -r -a words <<<"$1"
  shift
  case "${words[2]}" in
    run | exec) words=("${words[@]:0:3}" -T "${words[@]:3}") ;;
    build) words+=(-q) ;;
  esac
  dc "${EXTRA_FILES[@]}" "${words[@]:2}" "$@"
}

command -v rclone >/dev/null 2>&1 || die "rclone not found (apt-get install rclone)"
(cd "$REPO/deploy/ci/oauth-client" && npm ci --no-audit --no-fund --silent)

# ---- before: the person's notes on their WebDAV server ---------------------
gw="$(ip -4 -o addr show docker0 | awk '{ split($4, a, "/"); print a[1]; exit }')"
[ -n "$gw" ] || die "no docker0 address (host.docker.internal)"
mkdir -p "$W/dav/joplin"
umask 077
head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$W/dav-pass"
RCLONE_USER=walk RCLONE_PASS="$(cat "$W/dav-pass")" rclone serve webdav "$W/dav" --addr "$gw:$DAV_PORT" >"$W/dav.log" 2>&1 &
DAV_PID=$!
for _ in $(seq 50); do grep -q 'WebDav Server started' "$W/dav.log" 2>/dev/null && break; sleep 0.2; done
grep -q 'WebDav Server started' "$W/dav.log" || { cat "$W/dav.log" >&2; die "rclone serve webdav did not start"; }
WORD="walkthrough$(date +%s)x$$"
DAV_PASS="$(cat "$W/dav-pass")" bash "$REPO/deploy/offline/phone-note.sh" "http://host.docker.internal:$DAV_PORT/joplin" walk "$WORD" >"$W/device.log" 2>&1 ||
  { cat "$W/device.log" >&2; die "the device could not sync its note"; }
grep -rqs "$WORD" "$W/dav/joplin" || die "the device's note is not on the WebDAV server"
log "the person's WebDAV server holds a note synced from their phone"

# ---- the README's steps ------------------------------------------------------
unset COMPOSE_FILE COMPOSE_PROJECT_NAME COMPOSE_PROFILES NOTEBRIDGE_DOMAIN NOTEBRIDGE_OAUTH NOTEBRIDGE_PUBLISH_MCP
export NOTEBRIDGE_HTTPS_PORT="$HTTPS_PORT" NOTEBRIDGE_HTTP_PORT="$HTTP_PORT"
net="${WALK_NET:-172.31.24}"
export NOTEBRIDGE_EDGE_SUBNET="${net}5.0/24" NOTEBRIDGE_EDGE_DYNAMIC="${net}5.128/25" NOTEBRIDGE_CADDY_ADDR="${net}5.2" \
  NOTEBRIDGE_TUNNEL_ADDR="${net}5.3" NOTEBRIDGE_BACKEND_SUBNET="${net}4.0/24" NOTEBRIDGE_EGRESS_SUBNET="${net}3.0/24"

# 1. git clone and cd.
timed "1 git clone" git clone -q "$REPO" "$CLONE"
cd "$CLONE"
# Steps 2 to 5 run the commands the clone's README names, in its order.
step2="$(readme_step 2 'docker compose build')"
step3="$(readme_step 3 'docker compose run --rm setup')"
step4="$(readme_step 4 'docker compose up -d --wait')"
step5="$(readme_step 5 'docker compose exec bridge notebridge secrets show owner-passphrase')"
# 2. The images of this commit (cached layers).
timed "2 $step2" readme_run "$step2" >"$W/build.out" 2>&1 || { tail -40 "$W/build.out" >&2; die "the build failed"; }
# 3. The setup assistant, answered by its flags. The password comes from
# a file in the project (the assistant's container sees it as /project).
cp "$W/dav-pass" "$CLONE/.walk-sync-password"
cat >"$W/dns.yaml" <<EOF
services:
  setup:
    extra_hosts:
      - $DOMAIN:127.0.0.1
EOF
answers=(--reach domain --domain "$DOMAIN" --sync-target webdav --sync-url "http://host.docker.internal:$DAV_PORT/joplin"
  --sync-user walk --sync-password-file /project/.walk-sync-password --e2ee no --meaning off)
EXTRA_FILES=(-f compose.yaml -f "$W/dns.yaml")
timed "3 $step3" readme_run "$step3" --non-interactive "${answers[@]}" >"$W/setup.out" 2>&1 ||
  { cat "$W/setup.out" >&2; die "setup refused its answers"; }
EXTRA_FILES=()
rm -f "$CLONE/.walk-sync-password"
grep -q "https://$DOMAIN/mcp" "$W/setup.out" || { cat "$W/setup.out" >&2; die "setup did not print the connector URL"; }
log "setup took $(( ${#answers[@]} / 2 )) answers and printed the connector URL https://$DOMAIN/mcp"
# 4. Start the stack.
timed "4 $step4" readme_run "$step4" >/dev/null 2>&1 || { dc ps >&2; dc logs --tail 40 bridge >&2; die "up --wait failed"; }
# 5. The owner passphrase.
timed "5 $step5" readme_run "$step5" >"$W/passphrase" || die "$step5 failed"
# 6 and 7. The connector: registration, consent with the passphrase,
# tokens, then the person's synced note.
ca_deadline=$(( $(date +%s) + 30 ))
until dc cp caddy:/data/caddy/pki/authorities/local/root.crt "$W/ca.crt" >/dev/null 2>&1 && [ -s "$W/ca.crt" ]; do
  [ "$(date +%s)" -lt "$ca_deadline" ] || die "Caddy's root CA did not appear"
  sleep 1
done
timed "6-7 connector: OAuth and the note" env OAUTH_DOMAIN="$DOMAIN" OAUTH_HTTPS_PORT="$HTTPS_PORT" OAUTH_CA="$W/ca.crt" \
  OAUTH_PASSPHRASE="$(cat "$W/passphrase")" OAUTH_E2E_FIND="$WORD" \
  node "$REPO/deploy/ci/oauth-client/oauth-e2e.mjs" >"$W/connector.out" 2>&1 ||
  { cat "$W/connector.out" >&2; dc logs --tail 40 bridge joplin >&2; die "the connector could not read the synced note"; }
grep '^ok' "$W/connector.out" | sed 's/^/  /' >&2
grep -q "reads the person's synced note" "$W/connector.out" || die "the connector did not read the synced note"
log "all steps passed: a connector reads the note the person synced from their phone"

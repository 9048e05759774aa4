#!/usr/bin/env bash
# stack-smoke.sh: run the real compose stack (Caddy → notebridge → bundled
# Joplin) with `docker compose up -d --wait` and check it end to end over
# HTTPS, then tear it down.
#
#   bash deploy/offline/seed-base-images.sh   # only without a registry
#   docker compose build                      # the real Dockerfiles
#   bash deploy/offline/stack-smoke.sh
#
# Uses its own compose project (default nbsmoke), host ports (default
# 18443 / 18080) and edge subnet (172.31.254.0/24; compose.yaml's default
# is 172.31.253.0/24), so it does not touch a stack started by
# `docker compose up`.
# The project's containers, networks and volumes are removed at exit, pass or
# fail. Tokens are never printed: they go to a private temp dir and reach curl
# through a header file, not argv.
#
# Checks, through Caddy on https://localhost:$HTTPS_PORT with Caddy's root CA:
#   1. POST /v1/joplin_status with the Actions token -> 200, "authenticated":true
#   2. the same without a token                       -> 401
#   3. GET /healthz and /readyz                        -> 404 (never published)
#   4. GET and POST /mcp                               -> 404 (MCP off by default)
#   5. create_notebook, then list_notebooks shows it   -> 200, 200
#   6. volume ownership: bridge-state 1000:1000, tokens 0600 1000:1000
#   7. the bridge's environment: NOTEBRIDGE_DOMAIN from .env, no origin
#      unless NOTEBRIDGE_ORIGIN is set
#
# With SMOKE_OAUTH=1 the stack runs as the ChatGPT/Claude connector
# quickstart (docs/quickstarts.md) sets it (NOTEBRIDGE_DOMAIN=notebridge.local, which Caddy serves
# from its internal CA, NOTEBRIDGE_PUBLISH_MCP=on, NOTEBRIDGE_OAUTH=true),
# and check 4 becomes: /mcp without a token -> 401 naming the resource
# metadata; both metadata documents name https://notebridge.local; dynamic
# registration -> 201; Caddy holds the edge address the bridge trusts as its
# proxy and `notebridge oauth clients` lists the client; the owner
# passphrase hash is in the secrets volume.
#
# With SMOKE_SYNC=webdav the bundled Joplin syncs with a WebDAV server
# (Debian's rclone on the host) configured as docs/sync.md's recipe says,
# holding a note from the person's "device" (deploy/offline/smoke-sync.sh):
# check 8 finds that note through Actions and sees a note written through
# Actions reach the server.
#
# Exit status: 0 when every check passed; 1 when a check failed (each is named
# on stderr); 2 when the stack could not be started.
#
# Environment:
#   SMOKE_PROJECT        compose project name (default nbsmoke)
#   SMOKE_HTTPS_PORT     host port for Caddy's 443 (default 18443)
#   SMOKE_HTTP_PORT      host port for Caddy's 80  (default 18080)
#   SMOKE_HEALTH_TIMEOUT seconds `up --wait` may take (default 180)
#   SMOKE_OAUTH          1: the OAuth mode above (default off)
#   SMOKE_SYNC           webdav: the sync case above (default off)
#   SMOKE_DAV_PORT       host port of its WebDAV server (default 18091)
#   SMOKE_RELEASE        a version: run the published images of that release
#                        (compose.release.yaml) from SMOKE_REGISTRY, pulled
#                        first, never built (default: build here)
#   SMOKE_REGISTRY       their registry (default ghcr.io/notebridge)
#   SMOKE_MEANING        1: the profile "meaning" as well (the bundled
#                        embedder); a note is then found by meaning through
#                        Actions (default off)
#   SMOKE_MEANING_LOAD   N (with SMOKE_MEANING=1): a benchmark, not a check:
#                        N notes of about 2.4 KB are created, and get_note
#                        through Caddy is timed while the embedder works on
#                        them and again after it is done (MEASURE lines)
set -euo pipefail

log() { printf 'stack-smoke: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PROJECT="${SMOKE_PROJECT:-nbsmoke}"
HTTPS_PORT="${SMOKE_HTTPS_PORT:-18443}"
HTTP_PORT="${SMOKE_HTTP_PORT:-18080}"
HEALTH_TIMEOUT="${SMOKE_HEALTH_TIMEOUT:-180}"
OAUTH="${SMOKE_OAUTH:-0}"
SYNC="${SMOKE_SYNC:-}"
MEANING="${SMOKE_MEANING:-0}"
MEANING_LOAD="${SMOKE_MEANING_LOAD:-0}"
RELEASE="${SMOKE_RELEASE:-}"
case "$SYNC" in ''|webdav) ;; *) die "SMOKE_SYNC must be webdav or empty";; esac
HOST=localhost
[ "$OAUTH" = 1 ] && HOST=notebridge.local
BASE="https://$HOST:$HTTPS_PORT"

cd "$REPO"
[ -f compose.yaml ] || die "no compose.yaml in $REPO"
docker info >/dev/null 2>&1 || die "docker daemon not answering (run deploy/ci/ensure-docker.sh)"
docker compose version >/dev/null 2>&1 || die "the Docker Compose v2 plugin is missing"
command -v curl >/dev/null 2>&1 || die "curl not found"
command -v jq >/dev/null 2>&1 || die "jq not found"

# Test what .env and compose.yaml configure, not what this shell happens to
# have set; only the host ports are ours.
unset COMPOSE_FILE COMPOSE_PROJECT_NAME COMPOSE_PROFILES NOTEBRIDGE_DOMAIN \
  NOTEBRIDGE_PUBLISH_MCP NOTEBRIDGE_JOPLIN_URL NOTEBRIDGE_ORIGIN NOTEBRIDGE_OAUTH \
  NOTEBRIDGE_SYNC_TARGET NOTEBRIDGE_SYNC_URL NOTEBRIDGE_SYNC_USER NOTEBRIDGE_SYNC_FOLDER \
  NOTEBRIDGE_SYNC_S3_BUCKET NOTEBRIDGE_SYNC_S3_REGION NOTEBRIDGE_SYNC_S3_PATH_STYLE NOTEBRIDGE_SYNC_INTERVAL
export NOTEBRIDGE_HTTPS_PORT="$HTTPS_PORT" NOTEBRIDGE_HTTP_PORT="$HTTP_PORT"
# Two networks cannot share a subnet: Caddy's fixed address moves with it.
# SMOKE_EDGE_NET (default 172.31.254) moves it for a second run beside this one.
EDGE_NET="${SMOKE_EDGE_NET:-172.31.254}"
export NOTEBRIDGE_EDGE_SUBNET="$EDGE_NET.0/24" NOTEBRIDGE_EDGE_DYNAMIC="$EDGE_NET.128/25" NOTEBRIDGE_CADDY_ADDR="$EDGE_NET.2" NOTEBRIDGE_TUNNEL_ADDR="$EDGE_NET.3"
# The other two networks move with it (SMOKE_BACKEND_NET, SMOKE_EGRESS_NET).
export NOTEBRIDGE_BACKEND_SUBNET="${SMOKE_BACKEND_NET:-172.31.250}.0/24" NOTEBRIDGE_EGRESS_SUBNET="${SMOKE_EGRESS_NET:-172.31.249}.0/24"
if [ "$OAUTH" = 1 ]; then
  export NOTEBRIDGE_DOMAIN="$HOST" NOTEBRIDGE_PUBLISH_MCP=on NOTEBRIDGE_OAUTH=true
fi

# The load benchmark makes more Actions requests than a person does.
[ "$MEANING_LOAD" -gt 0 ] && export NOTEBRIDGE_ACTIONS_RATE=100000-M
if [ "$MEANING" = 1 ]; then
  # The one setting docs/stack.md gives: meaning added to the profiles .env names.
  profiles="$(sed -n 's/^COMPOSE_PROFILES=//p' .env | tail -n1)"
  export COMPOSE_PROFILES="${profiles:+$profiles,}meaning"
fi

# Compose's --env-file arguments: none (.env) unless the sync case adds its
# recipe after .env.
ENV_ARGS=()
dc() { docker compose -p "$PROJECT" "${ENV_ARGS[@]}" "$@"; }
if [ -n "$SYNC" ]; then
  # shellcheck source=deploy/offline/smoke-sync.sh
  . "$HERE/smoke-sync.sh"
fi

UP_ARGS=()
if [ -n "$RELEASE" ]; then
  # docs/images.md's way to the published images: the overlay and the version.
  export COMPOSE_FILE=compose.yaml:compose.release.yaml NOTEBRIDGE_RELEASE="$RELEASE"
  [ -z "${SMOKE_REGISTRY:-}" ] || export NOTEBRIDGE_REGISTRY="$SMOKE_REGISTRY"
  UP_ARGS=(--no-build)
else
  # up builds missing images itself, but not within a health timeout.
  images="notebridge/bridge:local notebridge/joplin:3.5.1"
  [ "$MEANING" = 1 ] && images="$images notebridge/embedder:local"
  for img in $images; do
    docker image inspect "$img" >/dev/null 2>&1 || die "image $img missing: run docker compose build first"
  done
fi
docker image inspect caddy:2 >/dev/null 2>&1 ||
  die "image caddy:2 missing: docker compose pull caddy (or deploy/offline/seed-base-images.sh)"
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

TMP="$(umask 077 && mktemp -d "${TMPDIR:-/tmp}/nbsmoke.XXXXXX")"
FAILED=()
STARTED=0
UP_PID=""

dump_state() {
  log "--- docker compose ps -a"
  dc ps -a >&2 || true
  local s
  for s in secrets joplin bridge caddy; do
    log "--- last log lines of $s"
    dc logs --no-color --tail 25 "$s" >&2 2>&1 || true
  done
}

teardown() {
  local rc=$? t
  trap - EXIT INT TERM
  if [ -n "$UP_PID" ]; then
    kill -TERM "$UP_PID" 2>/dev/null || true
    wait "$UP_PID" 2>/dev/null || true
  fi
  if [ "$STARTED" = 1 ]; then
    if [ "$rc" -ne 0 ]; then dump_state; fi
    t=$(date +%s)
    dc down -v --remove-orphans -t 10 >/dev/null 2>&1 || log "warning: docker compose down failed"
    log "down -v took $(( $(date +%s) - t ))s"
    # Containers of this project, leaving out test containers run from an
    # image this project built (an image carries its builder's labels).
    if docker ps -a --filter "label=com.docker.compose.project=$PROJECT" \
         --format '{{.Label "org.testcontainers"}}' | grep -qv '^true$' ||
       [ -n "$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")" ] ||
       [ -n "$(docker network ls -q --filter "label=com.docker.compose.project=$PROJECT")" ]; then
      log "warning: project $PROJECT left containers, volumes or networks behind"
      [ "$rc" -ne 0 ] || rc=1
    fi
  fi
  [ -z "$SYNC" ] || sync_teardown
  rm -rf "$TMP"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Leftovers of an earlier, interrupted run of this project.
if [ -n "$(docker ps -aq --filter "label=com.docker.compose.project=$PROJECT")$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")" ]; then
  log "removing leftovers of project $PROJECT"
  dc down -v --remove-orphans -t 5 >/dev/null 2>&1 || true
fi
for p in "$HTTPS_PORT" "$HTTP_PORT"; do
  port_busy "$p" && die "host port $p is in use (set SMOKE_HTTPS_PORT / SMOKE_HTTP_PORT)"
done

# ---- start ------------------------------------------------------------------
STARTED=1
if [ -n "$SYNC" ]; then
  # Before `up`, as a person would: the sync target exists and holds their
  # notes; the recipe is in the env files and the password is stored.
  sync_setup
fi
if [ -n "$RELEASE" ]; then
  log "docker compose -p $PROJECT pull (release $RELEASE from ${NOTEBRIDGE_REGISTRY:-ghcr.io/notebridge})"
  # The project's images; caddy:2 comes from wherever the machine gets it.
  pulled=(bridge joplin)
  [ "$MEANING" = 1 ] && pulled+=(embedder)
  dc pull --quiet "${pulled[@]}" >"$TMP/pull.log" 2>&1 || { tail -n 20 "$TMP/pull.log" >&2; die "docker compose pull failed"; }
fi
T0=$(date +%s)
log "docker compose -p $PROJECT up -d --wait (https :$HTTPS_PORT, http :$HTTP_PORT)"
# --wait returns once every service is healthy (or, for the one-shot
# secrets service, done). In the background and waited for, so INT/TERM stop
# it at once (teardown).
timeout "$HEALTH_TIMEOUT" docker compose -p "$PROJECT" "${ENV_ARGS[@]}" up -d --wait "${UP_ARGS[@]}" >"$TMP/up.log" 2>&1 &
UP_PID=$!
up_rc=0
wait "$UP_PID" || up_rc=$?
UP_PID=""
if [ "$up_rc" -ne 0 ]; then
  tail -n 30 "$TMP/up.log" >&2
  [ "$up_rc" -ne 124 ] || die "docker compose up did not finish within ${HEALTH_TIMEOUT}s (services not healthy)"
  die "docker compose up failed (status $up_rc)"
fi
UP_PID=""
T_UP=$(( $(date +%s) - T0 ))

health() { # service -> health status of its container ("" when none)
  local id
  id="$(dc ps -q "$1" 2>/dev/null | head -n1)"
  [ -n "$id" ] || return 0
  docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$id" 2>/dev/null || true
}
deadline=$(( T0 + HEALTH_TIMEOUT ))
while :; do
  h="$(health bridge)"
  [ "$h" = healthy ] && break
  [ "$(date +%s)" -lt "$deadline" ] || die "bridge not healthy after ${HEALTH_TIMEOUT}s (status: ${h:-no container})"
  sleep 1
done
T_HEALTHY=$(( $(date +%s) - T0 ))
log "up -d returned after ${T_UP}s; bridge healthy after ${T_HEALTHY}s (joplin: $(health joplin), caddy: $(health caddy))"

# ---- secrets and Caddy's CA ---------------------------------------------------
# The bridge image has no shell or cat (distroless equivalent), so the token
# is copied out of the running bridge container's read-only secrets mount.
dc cp bridge:/secrets/actions-token "$TMP/actions-token" >/dev/null 2>&1 ||
  die "cannot copy /secrets/actions-token out of the bridge container"
TOKEN="$(tr -d '[:space:]' <"$TMP/actions-token")"
rm -f "$TMP/actions-token"
[ -n "$TOKEN" ] || die "the Actions token file is empty"
( umask 077 && printf 'Authorization: Bearer %s\n' "$TOKEN" >"$TMP/auth.hdr" )

ca_deadline=$(( $(date +%s) + 30 ))
until dc cp caddy:/data/caddy/pki/authorities/local/root.crt "$TMP/root.crt" >/dev/null 2>&1 &&
      [ -s "$TMP/root.crt" ]; do
  [ "$(date +%s)" -lt "$ca_deadline" ] || die "Caddy's root CA did not appear in /data/caddy/pki/authorities/local"
  sleep 1
done

# ---- notebridge doctor sees what serve runs with --------------------------------
# compose gives serve its settings as variables, so a command exec'd beside
# it checks the same configuration. On this healthy stack every check
# passes; with OAuth on, the smoke's made-up name may only fail its DNS.
dc exec -T bridge notebridge doctor >"$TMP/doctor.out" 2>&1 || true
if [ "$OAUTH" = 1 ]; then
  ! grep '^PROBLEM' "$TMP/doctor.out" | grep -qv "^PROBLEM  DNS of $HOST" ||
    { cat "$TMP/doctor.out" >&2; die "notebridge doctor found a problem besides the smoke's DNS name"; }
else
  grep -q 'checks passed' "$TMP/doctor.out" || { cat "$TMP/doctor.out" >&2; die "notebridge doctor found a problem on a healthy stack"; }
fi
grep -q '^ok       Joplin at ' "$TMP/doctor.out" || { cat "$TMP/doctor.out" >&2; die "notebridge doctor did not check Joplin"; }
log "notebridge doctor: $(grep -c '^ok' "$TMP/doctor.out") checks ok"

# ---- checks -------------------------------------------------------------------
# req METHOD PATH auth|noauth [BODY]: status code on stdout, body in $TMP/body,
# headers in $TMP/headers.
req() {
  local method="$1" path="$2" auth="$3" body="${4:-}"
  local args=(-sS -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' --max-time 20
    --cacert "$TMP/root.crt" --resolve "$HOST:$HTTPS_PORT:127.0.0.1" -X "$method")
  [ "$auth" = auth ] && args+=(-H "@$TMP/auth.hdr")
  [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
  local code
  code="$(curl "${args[@]}" "$BASE$path" 2>"$TMP/curl.err")" || true
  printf '%s' "${code:-000}"
}
# A short view of the last response body for failure messages.
last_body() {
  local b
  b="$(head -c 300 "$TMP/body" 2>/dev/null || true)"
  printf '%s' "${b//"$TOKEN"/<token>}"
}
pass() { log "PASS $*"; }
fail() { log "FAIL $*"; FAILED+=("$1"); }

# get_note of the Kitchen note, timed 40 times through Caddy: the median and
# the 95th percentile in milliseconds.
time_get_note() {
  local i t args=(-sS -o /dev/null -w '%{http_code} %{time_total}\n' --max-time 20 --cacert "$TMP/root.crt"
    --resolve "$HOST:$HTTPS_PORT:127.0.0.1" -H "@$TMP/auth.hdr" -H 'Content-Type: application/json'
    --data-binary "{\"id\":\"$KITCHEN_ID\"}" "$BASE/v1/get_note")
  for i in $(seq 1 40); do curl "${args[@]}"; done >"$TMP/times"
  if grep -qv '^200 ' "$TMP/times"; then printf 'not every answer was 200: %s' "$(cut -d' ' -f1 "$TMP/times" | sort | uniq -c | tr '\n' ' ')"; return; fi
  cut -d' ' -f2 "$TMP/times" | sort -n |
    awk '{ms[NR]=$1*1000} END {printf "p50 %.1f ms, p95 %.1f ms", ms[int(NR*0.5)], ms[int(NR*0.95)]}'
}

# The bridge's latency while the bundled embedder embeds a large Joplin
# (issue 34): MEANING_LOAD notes are created, get_note is timed while
# chunks are pending and again once none are.
meaning_load() {
  local i body pending before after
  body="$(printf 'A line of a long personal note about budgets, travel, the garden and the house. %.0s' $(seq 1 30))"
  for i in $(seq 1 "$MEANING_LOAD"); do
    code="$(req POST /v1/create_note auth "$(jq -cn --arg nb "$NB_ID" --arg t "Load note $i" --arg b "$body $i" '{notebook_id:$nb, title:$t, body:$b}')")"
    [ "$code" = 200 ] || { fail "load-create_note" "(status $code: $(last_body))"; return; }
  done
  req POST /v1/joplin_status auth '{}' >/dev/null
  pending="$(jq -r '.index.meaning | (.pending + .notes_pending)' "$TMP/body")"
  before="$(time_get_note)"
  req POST /v1/joplin_status auth '{}' >/dev/null
  log "MEASURE get_note through Caddy while embedding ($pending chunks and notes pending before, $(jq -r '.index.meaning | (.pending + .notes_pending)' "$TMP/body") after): $before"
  for _ in $(seq 1 1800); do
    req POST /v1/joplin_status auth '{}' >/dev/null
    jq -e '.index.meaning | .pending == 0 and .notes_pending == 0' "$TMP/body" >/dev/null 2>&1 && break
    sleep 1
  done
  after="$(time_get_note)"
  log "MEASURE get_note through Caddy with the embedder idle ($(jq -c '.index.meaning | {done, pending}' "$TMP/body")): $after"
}

T1=$(date +%s)
# Caddy may still be issuing its localhost certificate: retry the first call.
for _ in $(seq 1 60); do
  code="$(req POST /v1/joplin_status auth '{}')"
  [ "$code" = 000 ] || [ "$code" = 502 ] || break
  sleep 0.5
done
if [ "$code" = 200 ] && grep -q '"authenticated":true' "$TMP/body"; then
  pass "1 joplin_status with token: 200, authenticated"
else
  fail "1-joplin_status-auth" "(status $code: $(last_body) $(head -c 200 "$TMP/curl.err" 2>/dev/null))"
fi
if grep -qi '^strict-transport-security:' "$TMP/headers" 2>/dev/null; then
  pass "1b security headers present (HSTS)"
else
  fail "1b-security-headers" "(no Strict-Transport-Security header)"
fi

code="$(req POST /v1/joplin_status noauth '{}')"
if [ "$code" = 401 ]; then pass "2 joplin_status without token: 401"
else fail "2-joplin_status-noauth" "(status $code, want 401: $(last_body))"; fi

for path in /healthz /readyz; do
  code="$(req GET "$path" noauth)"
  if [ "$code" = 404 ]; then pass "3 GET $path: 404"
  else fail "3-$path" "(status $code, want 404: $(last_body))"; fi
done

if [ "$OAUTH" = 1 ]; then
  code="$(req GET /mcp noauth)"
  if [ "$code" = 401 ] &&
     grep -qi "^www-authenticate: Bearer .*resource_metadata=\"https://$HOST/.well-known/oauth-protected-resource/mcp\"" "$TMP/headers"; then
    pass "4 GET /mcp without a token: 401 naming the resource metadata"
  else fail "4-oauth-/mcp" "(status $code, want 401 with resource_metadata: $(grep -i '^www-authenticate' "$TMP/headers" 2>/dev/null))"; fi
  code="$(req GET /.well-known/oauth-protected-resource/mcp noauth)"
  if [ "$code" = 200 ] && jq -e --arg r "https://$HOST/mcp" --arg i "https://$HOST" \
       '.resource == $r and (.authorization_servers | index($i))' "$TMP/body" >/dev/null 2>&1; then
    pass "4b protected resource metadata: resource https://$HOST/mcp"
  else fail "4b-oauth-prm" "(status $code: $(last_body))"; fi
  code="$(req GET /.well-known/oauth-authorization-server noauth)"
  if [ "$code" = 200 ] && jq -e --arg i "https://$HOST" \
       '.issuer == $i and .code_challenge_methods_supported == ["S256"]' "$TMP/body" >/dev/null 2>&1; then
    pass "4c authorization server metadata: issuer https://$HOST, PKCE S256 only"
  else fail "4c-oauth-asm" "(status $code: $(last_body))"; fi
  code="$(req POST /oauth/register noauth \
    '{"client_name":"nbsmoke","redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"none"}')"
  if [ "$code" = 201 ] && jq -e '.client_id | length > 0' "$TMP/body" >/dev/null 2>&1; then
    pass "4d dynamic client registration: 201"
  else fail "4d-oauth-register" "(status $code: $(last_body))"; fi
  # Issue 21: Caddy holds the edge address the bridge trusts as its proxy,
  # and the operator's command sees the client just registered.
  caddy_ip="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$(dc ps -q caddy | head -n1)" 2>/dev/null || true)"
  trusted="$(docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$(dc ps -q bridge | head -n1)" 2>/dev/null | sed -n 's/^NOTEBRIDGE_TRUSTED_PROXIES=//p')"
  if [ "${caddy_ip% }" = "$NOTEBRIDGE_CADDY_ADDR" ] && [ "$trusted" = "127.0.0.0/8,::1/128,$NOTEBRIDGE_CADDY_ADDR/32,$NOTEBRIDGE_TUNNEL_ADDR/32" ] &&
     dc exec -T bridge notebridge oauth clients 2>/dev/null | grep -q '"nbsmoke"'; then
    pass "4e Caddy at $NOTEBRIDGE_CADDY_ADDR (and the tunnel sidecar's $NOTEBRIDGE_TUNNEL_ADDR) are the bridge's trusted proxies; oauth clients lists the new client"
  else fail "4e-oauth-proxy" "(caddy at '$caddy_ip', trusted '$trusted')"; fi
else
  for method in GET POST; do
    code="$(req "$method" /mcp noauth)"
    if [ "$code" = 404 ] && grep -q '"NOT_FOUND"' "$TMP/body"; then pass "4 $method /mcp: 404"
    else fail "4-$method-/mcp" "(status $code, want 404 NOT_FOUND: $(last_body))"; fi
  done
fi

TITLE="nbsmoke $(date -u +%Y%m%dT%H%M%SZ) $$"
code="$(req POST /v1/create_notebook auth "$(jq -cn --arg t "$TITLE" '{title:$t}')")"
NB_ID=""
if [ "$code" = 200 ]; then
  NB_ID="$(jq -r '.id // empty' "$TMP/body" 2>/dev/null || true)"
fi
if [ -n "$NB_ID" ] && [ "$(jq -r '.title' "$TMP/body")" = "$TITLE" ]; then
  pass "5a create_notebook: 200, id $NB_ID"
else
  fail "5a-create_notebook" "(status $code: $(last_body))"
fi
code="$(req POST /v1/list_notebooks auth '{}')"
if [ "$code" = 200 ] && [ -n "$NB_ID" ] &&
   jq -e --arg id "$NB_ID" --arg t "$TITLE" \
     '[.notebooks | .. | objects | select(.id? == $id and .title? == $t)] | length == 1' \
     "$TMP/body" >/dev/null 2>&1; then
  pass "5b list_notebooks: 200, lists the new notebook (total $(jq -r .total "$TMP/body"))"
else
  fail "5b-list_notebooks" "(status $code: $(last_body))"
fi

# The volumes the bridge (uid 1000) writes or reads: the state dir must be
# writable for the operator journal, the tokens private to uid 1000. Looked at
# with the Joplin image's stat (the bridge image has no shell tools).
vol_stat() { # volume path...
  local vol="$1"
  shift
  docker run --rm --network none --user 0:0 -v "${PROJECT}_$vol:/v:ro" \
    --entrypoint stat notebridge/joplin:3.5.1 -c '%u:%g %a %n' "$@" 2>&1 || true
}
st="$(vol_stat bridge-state /v)"
if [ "${st%% *}" = 1000:1000 ]; then pass "6a bridge-state volume owned by 1000:1000"
else fail "6a-bridge-state-owner" "($st; the bridge, uid 1000, could not write its journal)"; fi
st="$(vol_stat secrets /v/joplin-token /v/mcp-token /v/actions-token /v/owner-passphrase /v/owner-passphrase.argon2id)"
if [ "$(printf '%s\n' "$st" | awk '{print $1, $2}' | sort -u)" = "1000:1000 600" ]; then
  pass "6b secrets: three tokens, the owner passphrase and its hash, 0600, 1000:1000"
else
  fail "6b-secrets-perms" "($(printf '%s' "$st" | tr '\n' ';'))"
fi
# Item 4 of issue #12: the origin follows the domain unless set.
env_of_bridge="$(docker inspect -f '{{range .Config.Env}}{{println .}}{{end}}' "$(dc ps -q bridge | head -n1)" 2>/dev/null || true)"
if printf '%s\n' "$env_of_bridge" | grep -qx "NOTEBRIDGE_DOMAIN=$HOST" &&
   ! printf '%s\n' "$env_of_bridge" | grep -q '^NOTEBRIDGE_ORIGIN=.'; then
  pass "7 bridge environment: NOTEBRIDGE_DOMAIN=$HOST, no NOTEBRIDGE_ORIGIN"
else
  fail "7-bridge-env" "($(printf '%s' "$env_of_bridge" | grep -E '^NOTEBRIDGE_(DOMAIN|ORIGIN)=' | tr '\n' ' '))"
fi
[ -z "$SYNC" ] || sync_checks
if [ "$MEANING" = 1 ]; then
  # A note found by meaning: the bundled embedder embeds it in the
  # background; joplin_status says when every chunk is done.
  code="$(req POST /v1/create_note auth "$(jq -cn --arg nb "$NB_ID"     '{notebook_id:$nb, title:"Kitchen works", body:"Agreed with Sam: at most 14,000 euros for the remodel; the old stove goes in March."}')")"
  [ "$code" = 200 ] || fail "8a-create_note" "(status $code: $(last_body))"
  KITCHEN_ID="$(jq -r '.id // empty' "$TMP/body")"
  for _ in $(seq 1 120); do
    req POST /v1/joplin_status auth '{}' >/dev/null
    jq -e '.index.meaning | .state == "ready" and .done >= 1 and .pending == 0 and .notes_pending == 0' "$TMP/body" >/dev/null 2>&1 && break
    sleep 1
  done
  if jq -e '.index.meaning.done >= 1' "$TMP/body" >/dev/null 2>&1; then pass "8a the bundled embedder embedded every note ($(jq -c '.index.meaning | {model, done}' "$TMP/body"))"
  else fail "8a-meaning-ready" "(index.meaning: $(jq -c '.index.meaning' "$TMP/body" 2>/dev/null))"; fi
  code="$(req POST /v1/search auth '{"query":"how much money for redoing the cooking area","mode":"semantic","limit":3}')"
  if [ "$code" = 200 ] && [ "$(jq -r '.results[0].title // empty' "$TMP/body")" = "Kitchen works" ]; then
    pass "8b a paraphrase found by meaning first (mode $(jq -r .mode "$TMP/body"))"
  else fail "8b-search-by-meaning" "(status $code: $(last_body))"; fi
  if [ "$MEANING_LOAD" -gt 0 ]; then meaning_load; fi
fi
T_CHECKS=$(( $(date +%s) - T1 ))

log "timings: up -d ${T_UP}s, bridge healthy ${T_HEALTHY}s, checks ${T_CHECKS}s"
if [ "${#FAILED[@]}" -gt 0 ]; then
  log "FAILED: ${FAILED[*]}"
  exit 1
fi
log "all checks passed"

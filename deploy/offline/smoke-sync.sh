# smoke-sync.sh: the stack smoke's WebDAV case (SMOKE_SYNC=webdav), sourced
# by stack-smoke.sh. The bundled Joplin is configured exactly as
# docs/sync.md's WebDAV recipe says: the recipe's lines in an env file
# next to .env, the password through `docker compose run --rm -T
# sync-secret sync-password` on stdin.
#
#   sync_setup    before `up`: a WebDAV server (Debian's rclone) on the
#                 host's Docker bridge address, which the joplin service
#                 reaches as host.docker.internal; the person's existing
#                 note, written and synced by a second Joplin profile (the
#                 "device"); the recipe and the secret
#   sync_checks   after the stack's own checks:
#                 8a status.json in the sync-state volume: idle, webdav, a
#                    completed sync, no error; joplin_status reports it
#                 8b the device's note through Actions: search finds it,
#                    get_note returns its text
#                 8c a note written through Actions reaches the WebDAV
#                    directory
#                 8d the WebDAV password is in no container log or status
#   sync_teardown stop the WebDAV server
#
# Uses from stack-smoke.sh: TMP, PROJECT, dc, req, pass, fail, last_body,
# die, log, NB_ID. Sets ENV_ARGS (compose's --env-file arguments).

SYNC_DAV_PID=""
SYNC_WORD=""
SYNC_PASS=""

sync_setup() {
  command -v rclone >/dev/null 2>&1 || die "rclone not found (apt-get install rclone)"
  local gw port out
  # host-gateway: the address of the default bridge on the host.
  gw="$(ip -4 -o addr show docker0 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')"
  [ -n "$gw" ] || die "no docker0 address (host.docker.internal) to serve WebDAV on"
  port="${SMOKE_DAV_PORT:-18091}"
  mkdir -p "$TMP/dav/joplin"
  SYNC_PASS="$(head -c 18 /dev/urandom | base64 | tr -d '/+=')"
  RCLONE_USER=smoke RCLONE_PASS="$SYNC_PASS" rclone serve webdav "$TMP/dav" --addr "$gw:$port" >"$TMP/dav.log" 2>&1 &
  SYNC_DAV_PID=$!
  for _ in $(seq 50); do
    grep -q 'WebDav Server started' "$TMP/dav.log" 2>/dev/null && break
    kill -0 "$SYNC_DAV_PID" 2>/dev/null || break
    sleep 0.2
  done
  grep -q 'WebDav Server started' "$TMP/dav.log" || { cat "$TMP/dav.log" >&2; die "rclone serve webdav did not start on $gw:$port"; }
  log "WebDAV server (rclone) on $gw:$port, reached as host.docker.internal:$port"

  # The person's existing note, from their other device.
  SYNC_WORD="smokesync$(date +%s)x$$"
  DAV_PASS="$SYNC_PASS" bash "$HERE/phone-note.sh" "http://host.docker.internal:$port/joplin" smoke "$SYNC_WORD" >"$TMP/device.log" 2>&1 ||
    { cat "$TMP/device.log" >&2; die "the device could not write its note"; }
  grep -rqs "$SYNC_WORD" "$TMP/dav/joplin" || die "the device's note is not on the WebDAV server"

  # docs/sync.md, WebDAV recipe (interval shortened for the smoke).
  cat >"$TMP/sync.env" <<EOF
NOTEBRIDGE_SYNC_TARGET=webdav
NOTEBRIDGE_SYNC_URL=http://host.docker.internal:$port/joplin
NOTEBRIDGE_SYNC_USER=smoke
NOTEBRIDGE_SYNC_INTERVAL=5
EOF
  ENV_ARGS=(--env-file .env --env-file "$TMP/sync.env")
  printf '%s\n' "$SYNC_PASS" | dc run --rm -T sync-secret sync-password >"$TMP/secret.log" 2>&1 ||
    { cat "$TMP/secret.log" >&2; die "docker compose run --rm -T sync-secret sync-password failed"; }
  grep -q 'stored /secrets/sync-password' "$TMP/secret.log" || { cat "$TMP/secret.log" >&2; die "sync-secret did not store the password"; }
}

# sync_status: the bundled Joplin's status.json, read from the volume.
sync_status() {
  docker run --rm --network none --user 0:0 -v "${PROJECT}_sync-state:/v:ro" \
    --entrypoint cat notebridge/joplin:3.5.1 /v/status.json 2>/dev/null || true
}

sync_checks() {
  local st code id deadline word2
  deadline=$(( $(date +%s) + 60 ))
  while :; do
    st="$(sync_status)"
    printf '%s' "$st" | jq -e '.completed_syncs >= 1 and .state == "idle"' >/dev/null 2>&1 && break
    [ "$(date +%s)" -lt "$deadline" ] || break
    sleep 1
  done
  if printf '%s' "$st" | jq -e '.schema == 1 and .target == "webdav" and .state == "idle" and .completed_syncs >= 1 and .last_error == null and .last_success_at != null' >/dev/null 2>&1; then
    pass "8a sync status: webdav, idle, $(printf '%s' "$st" | jq -r .completed_syncs) syncs, no error"
  else
    fail "8a-sync-status" "($(printf '%s' "$st" | jq -c '{target,state,completed_syncs,last_error}' 2>/dev/null || printf '%s' "$st" | head -c 300))"
  fi
  code="$(req POST /v1/joplin_status auth '{}')"
  if [ "$code" = 200 ] && jq -e '.sync.target == "webdav" and (.sync.state == "idle" or .sync.state == "syncing")' "$TMP/body" >/dev/null 2>&1; then
    pass "8a joplin_status through Actions: sync target webdav, $(jq -r .sync.state "$TMP/body")"
  else
    fail "8a-joplin_status-sync" "(status $code: $(jq -c .sync "$TMP/body" 2>/dev/null || last_body))"
  fi

  id=""
  deadline=$(( $(date +%s) + 30 ))
  while [ -z "$id" ] && [ "$(date +%s)" -lt "$deadline" ]; do
    code="$(req POST /v1/search auth "$(jq -cn --arg q "$SYNC_WORD" '{query:$q}')")"
    [ "$code" = 200 ] && id="$(jq -r '.results[0].id // empty' "$TMP/body" 2>/dev/null)"
    [ -n "$id" ] || sleep 1
  done
  if [ -n "$id" ] && [ "$(req POST /v1/get_note auth "$(jq -cn --arg id "$id" '{id:$id}')")" = 200 ] &&
     jq -e --arg w "$SYNC_WORD" '.title == "Groceries" and (.body | contains($w))' "$TMP/body" >/dev/null 2>&1; then
    pass "8b the device's note through Actions: search finds it, get_note has its text"
  else
    fail "8b-synced-note" "(search/get_note status $code: $(last_body))"
  fi

  word2="smokeagent$(date +%s)x$$"
  local t0
  t0=$(date +%s)
  code="$(req POST /v1/create_note auth "$(jq -cn --arg nb "$NB_ID" --arg w "$word2" '{notebook_id:$nb,title:"From the agent",body:$w}')")"
  deadline=$(( $(date +%s) + 60 ))
  until grep -rqs "$word2" "$TMP/dav/joplin"; do
    [ "$(date +%s)" -lt "$deadline" ] || break
    sleep 1
  done
  if [ "$code" = 200 ] && grep -rqs "$word2" "$TMP/dav/joplin"; then
    pass "8c a note written through Actions reached the WebDAV server ($(( $(date +%s) - t0 )) s)"
  else
    fail "8c-upload" "(create_note status $code: $(last_body); not on the WebDAV server after 60 s)"
  fi

  if dc logs --no-color 2>&1 | grep -qF "$SYNC_PASS" || printf '%s' "$(sync_status)" | grep -qF "$SYNC_PASS"; then
    fail "8d-password-leak" "(the WebDAV password is in a container log or status.json)"
  else
    pass "8d the WebDAV password is in no container log or status"
  fi
}

sync_teardown() {
  if [ -n "$SYNC_DAV_PID" ]; then
    kill "$SYNC_DAV_PID" 2>/dev/null || true
    wait "$SYNC_DAV_PID" 2>/dev/null || true
  fi
}

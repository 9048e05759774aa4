# Sourced by deploy/ci/oauth-e2e.sh, deploy/ci/mcp-remote.sh and
# deploy/ci/consent-chromium.sh:
# starts the fake Joplin, `notebridge mcp serve --oauth` for the public
# origin https://$OAUTH_DOMAIN, and the host's Caddy with the repository's
# Caddyfile (NOTEBRIDGE_PUBLISH_MCP=on) on a free HTTPS port. The domain is
# under .local, so Caddy issues its certificate from its internal CA and
# notebridge accepts it as a public origin. Clients reach it with
#   curl --connect-to "$OAUTH_DOMAIN:443:127.0.0.1:$OAUTH_HTTPS_PORT" --cacert "$OAUTH_CA"
# Caddy's tunnel site (plain HTTP, docs/tunnels.md) listens on
# OAUTH_TUNNEL_PORT; OAUTH_TUNNEL_ADDR, when set before oauth_start_stack,
# is the address Caddy believes as the tunnel (default: compose's).
# Sets OAUTH_WORK, OAUTH_BIN, OAUTH_STATE, OAUTH_HTTPS_PORT, OAUTH_TUNNEL_PORT, OAUTH_CA,
# OAUTH_JOPLIN_URL (the fake Joplin; its token is in $OAUTH_WORK/joplin-token); the
# EXIT trap stops every process started here and removes OAUTH_WORK.
export PATH="/usr/local/go/bin:$PATH"
OAUTH_DOMAIN=notebridge.local
OAUTH_WORK=$(mktemp -d)
# shellcheck source=deploy/ci/procs.sh
. "$(dirname "${BASH_SOURCE[0]}")/procs.sh"
oauth_cleanup() {
  ci_stop_all
  rm -rf "$OAUTH_WORK"
}
trap oauth_cleanup EXIT

# oauth_install_clients: Node and the pinned clients of deploy/ci/oauth-client.
oauth_install_clients() {
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  (cd deploy/ci/oauth-client && npm ci --no-audit --no-fund --silent)
}

# oauth_report_failure NAME: says NAME failed, with the server's and
# Caddy's last log lines.
oauth_report_failure() {
  echo "$1: FAILED; the server's and Caddy's last log lines:" >&2
  tail -n 20 "$OAUTH_WORK/serve.err" >&2
  tail -n 5 "$OAUTH_WORK/caddy.log" >&2
}

oauth_free_port() {
  node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

oauth_start_stack() {
  if ! command -v caddy >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq caddy >/dev/null
  fi
  OAUTH_BIN="$OAUTH_WORK/notebridge"
  go build -o "$OAUTH_BIN" ./services/notebridge
  go build -o "$OAUTH_WORK/joplinfake" ./pkg/testkit/joplinfake/cmd/joplinfake

  (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$OAUTH_WORK/joplin-token")
  "$OAUTH_WORK/joplinfake" -token-file "$OAUTH_WORK/joplin-token" > "$OAUTH_WORK/fake.out" 2>&1 &
  ci_pids+=($!)
  local joplin_url addr
  joplin_url=$(ci_wait_for "$OAUTH_WORK/fake.out" '^http://127\.0\.0\.1:[0-9]+' "${ci_pids[-1]}" 30)
  OAUTH_JOPLIN_URL=$joplin_url

  OAUTH_STATE="$OAUTH_WORK/state"
  mkdir -p "$OAUTH_WORK/home"
  HOME="$OAUTH_WORK/home" NOTEBRIDGE_DOMAIN="$OAUTH_DOMAIN" "$OAUTH_BIN" mcp serve --oauth \
    --listen 127.0.0.1:0 --state-dir "$OAUTH_STATE" \
    --joplin-url "$joplin_url" --joplin-token-file "$OAUTH_WORK/joplin-token" \
    > "$OAUTH_WORK/serve.out" 2> "$OAUTH_WORK/serve.err" &
  ci_pids+=($!)
  addr=$(ci_wait_for "$OAUTH_WORK/serve.err" 'addr=127\.0\.0\.1:[0-9]+' "${ci_pids[-1]}" 30)
  addr=${addr#addr=}

  OAUTH_HTTPS_PORT=$(oauth_free_port)
  local http_port
  http_port=$(oauth_free_port)
  OAUTH_TUNNEL_PORT=$(oauth_free_port)
  mkdir -p "$OAUTH_WORK/caddy"
  XDG_DATA_HOME="$OAUTH_WORK/caddy/data" XDG_CONFIG_HOME="$OAUTH_WORK/caddy/config" HOME="$OAUTH_WORK/caddy" \
  NOTEBRIDGE_DOMAIN="$OAUTH_DOMAIN" NOTEBRIDGE_PUBLISH_MCP=on \
  NOTEBRIDGE_MCP_UPSTREAM="$addr" NOTEBRIDGE_ACTIONS_UPSTREAM=127.0.0.1:1 \
  NOTEBRIDGE_CADDY_HTTPS_PORT="$OAUTH_HTTPS_PORT" NOTEBRIDGE_CADDY_HTTP_PORT="$http_port" \
  NOTEBRIDGE_TUNNEL_PORT="$OAUTH_TUNNEL_PORT" NOTEBRIDGE_TUNNEL_ADDR="${OAUTH_TUNNEL_ADDR:-172.31.253.3}" \
    caddy run --config Caddyfile --adapter caddyfile > "$OAUTH_WORK/caddy.log" 2>&1 &
  ci_pids+=($!)
  OAUTH_CA="$OAUTH_WORK/caddy/data/caddy/pki/authorities/local/root.crt"
  local i
  for i in $(seq 300); do
    if [ -s "$OAUTH_CA" ] && curl -fsS -o /dev/null --cacert "$OAUTH_CA" \
        --connect-to "$OAUTH_DOMAIN:443:127.0.0.1:$OAUTH_HTTPS_PORT" \
        "https://$OAUTH_DOMAIN/.well-known/oauth-authorization-server" 2>/dev/null; then
      return 0
    fi
    kill -0 "${ci_pids[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "oauth-stack: Caddy did not serve https://$OAUTH_DOMAIN:" >&2
  tail -n 30 "$OAUTH_WORK/caddy.log" >&2
  return 1
}

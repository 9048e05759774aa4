#!/usr/bin/env bash
# OAuth for remote MCP through a tunnel (docs/tunnels.md, issue #36), without
# Docker: the tunnel's public end (Cloudflare's edge with cloudflared, or
# Tailscale Funnel) holds the certificate and forwards plain HTTP to Caddy's
# tunnel site (Caddyfile, port NOTEBRIDGE_TUNNEL_PORT) with its forwarded
# headers; deploy/ci/oauth-client/tunnel-edge.mjs stands in for it, once as
# each. Through it, the TypeScript SDK's OAuth client
# (deploy/ci/oauth-client/oauth-e2e.mjs) completes discovery, registration,
# consent, token, calls, refresh and revocation with every URL on the
# public origin. Between the two runs one client address is locked out of
# the consent page (lockout.mjs); the second run, from another address,
# must still sign in: the tunnel's X-Forwarded-For reached the bridge.
# Exits non-zero on any failure; prints no token.
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ci/oauth-stack.sh

# The stand-in runs on this host, so Caddy believes loopback as the tunnel.
OAUTH_TUNNEL_ADDR=127.0.0.1
oauth_install_clients
oauth_start_stack

edge_cert="$OAUTH_WORK/edge.crt" edge_key="$OAUTH_WORK/edge.key"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj "/CN=$OAUTH_DOMAIN" -addext "subjectAltName=DNS:$OAUTH_DOMAIN" \
  -keyout "$edge_key" -out "$edge_cert" 2>/dev/null

# edge MODE CLIENT_IP: starts the stand-in; sets EDGE_PORT and EDGE_PID.
edge() {
  EDGE_MODE=$1 EDGE_CLIENT_IP=$2 EDGE_CERT="$edge_cert" EDGE_KEY="$edge_key" \
  EDGE_UPSTREAM="127.0.0.1:$OAUTH_TUNNEL_PORT" \
    node deploy/ci/oauth-client/tunnel-edge.mjs > "$OAUTH_WORK/edge-$1.out" 2> "$OAUTH_WORK/edge-$1.log" &
  EDGE_PID=$!
  ci_pids+=("$EDGE_PID")
  EDGE_PORT=$(ci_wait_for "$OAUTH_WORK/edge-$1.out" 'listening [0-9]+' "$EDGE_PID" 30)
  EDGE_PORT=${EDGE_PORT#listening }
}

# through MODE SCRIPT: runs SCRIPT against the stand-in of MODE.
through() {
  OAUTH_DOMAIN="$OAUTH_DOMAIN" OAUTH_HTTPS_PORT="$EDGE_PORT" OAUTH_CA="$edge_cert" \
  OAUTH_PASSPHRASE="$("$OAUTH_BIN" secrets show owner-passphrase --dir "$OAUTH_STATE")" \
    node "deploy/ci/oauth-client/$2"
}

# forwarded MODE: every request the stand-in forwarded named the public host.
forwarded() {
  local n others
  n=$(grep -c ' host=' "$OAUTH_WORK/edge-$1.log" || true)
  others=$(grep -v " host=$OAUTH_DOMAIN\$" "$OAUTH_WORK/edge-$1.log" || true)
  if [ "$n" -eq 0 ] || [ -n "$others" ]; then
    echo "tunnel-e2e ($1): requests off the public host, or none:" >&2; echo "$others" >&2; return 1
  fi
  echo "tunnel-e2e ($1): $n requests, all to https://$OAUTH_DOMAIN"
}

# On any failure (set -e), the server's and Caddy's last lines, then the
# cleanup of oauth-stack.sh.
trap 'rc=$?; if [ "$rc" -ne 0 ]; then oauth_report_failure tunnel-e2e; fi; oauth_cleanup' EXIT

echo "== as cloudflared (Host kept, X-Forwarded-For appended, CF-Connecting-IP)"
edge cloudflared 203.0.113.7
through cloudflared oauth-e2e.mjs
forwarded cloudflared
echo "== one client address locked out of the consent page"
edge cloudflared 203.0.113.66
through cloudflared lockout.mjs
echo "== as Tailscale Funnel (X-Forwarded-Host, X-Forwarded-For replaced), from another address"
edge tailscale 198.51.100.9
through tailscale oauth-e2e.mjs
forwarded tailscale

if [ -s "$OAUTH_WORK/serve.out" ]; then
  echo "tunnel-e2e: mcp serve wrote to stdout" >&2; exit 1
fi

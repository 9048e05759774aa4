#!/usr/bin/env bash
# A second real OAuth client in CI (issue #21): mcp-remote, the npm package
# desktop MCP clients use to reach remote servers (pinned in
# deploy/ci/oauth-client/package.json), against `notebridge mcp serve
# --oauth` and the fake Joplin, through the host's Caddy with the
# repository's Caddyfile over HTTPS (deploy/ci/oauth-stack.sh). mcp-remote
# does discovery, registration and the token exchange itself; its browser
# is deploy/ci/oauth-client/consent-browser.sh (BROWSER), which approves
# the consent form with the owner passphrase. Node trusts Caddy's internal
# CA through NODE_EXTRA_CA_CERTS; connect-to.cjs sends notebridge.local:443
# to Caddy's port. mcp-remote's tokens live in a temporary
# MCP_REMOTE_CONFIG_DIR (and HOME), removed on exit. Prints no token.
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ci/oauth-stack.sh

oauth_install_clients
oauth_start_stack

client_dir=$(pwd)/deploy/ci/oauth-client
mkdir -p "$OAUTH_WORK/mcp-remote/home" "$OAUTH_WORK/mcp-remote/config"
status=0
env -u DISPLAY -u WAYLAND_DISPLAY -u DBUS_SESSION_BUS_ADDRESS \
  HOME="$OAUTH_WORK/mcp-remote/home" \
  MCP_REMOTE_CONFIG_DIR="$OAUTH_WORK/mcp-remote/config" \
  MCP_REMOTE_BROWSER_LOG="$OAUTH_WORK/mcp-remote/browser.log" \
  MCP_REMOTE_CALLBACK_PORT="$(oauth_free_port)" \
  BROWSER="$client_dir/consent-browser.sh" \
  NODE_EXTRA_CA_CERTS="$OAUTH_CA" \
  NODE_OPTIONS="--require $client_dir/connect-to.cjs" \
  OAUTH_DOMAIN="$OAUTH_DOMAIN" OAUTH_HTTPS_PORT="$OAUTH_HTTPS_PORT" OAUTH_CA="$OAUTH_CA" \
  OAUTH_PASSPHRASE="$("$OAUTH_BIN" secrets show owner-passphrase --dir "$OAUTH_STATE")" \
  node "$client_dir/mcp-remote-e2e.mjs" || status=$?

if [ -e "$OAUTH_WORK/mcp-remote/home/.mcp-auth" ]; then
  echo "mcp-remote: tokens were stored outside MCP_REMOTE_CONFIG_DIR" >&2; status=1
fi
if [ "$status" -ne 0 ]; then oauth_report_failure mcp-remote; fi
exit "$status"

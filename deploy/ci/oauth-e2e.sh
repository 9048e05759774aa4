#!/usr/bin/env bash
# OAuth 2.1 for remote MCP end to end (issue #16), without Docker: the
# official TypeScript MCP SDK v1's OAuth client (deploy/ci/oauth-client,
# pinned) against `notebridge mcp serve --oauth` and the fake Joplin,
# through the host's Caddy with the repository's Caddyfile over HTTPS
# (NOTEBRIDGE_PUBLISH_MCP=on; deploy/ci/oauth-stack.sh). Steps: discovery →
# dynamic registration → the consent form (curl with a cookie jar and the
# owner passphrase from `secrets show owner-passphrase`) → token (finishAuth)
# → tools/list, tools/call → refresh → revocation → the next call refused.
# Exits non-zero on any failure; prints no token.
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ci/oauth-stack.sh

oauth_install_clients
oauth_start_stack

status=0
OAUTH_DOMAIN="$OAUTH_DOMAIN" OAUTH_HTTPS_PORT="$OAUTH_HTTPS_PORT" OAUTH_CA="$OAUTH_CA" \
OAUTH_PASSPHRASE="$("$OAUTH_BIN" secrets show owner-passphrase --dir "$OAUTH_STATE")" \
  node deploy/ci/oauth-client/oauth-e2e.mjs || status=$?

if [ -s "$OAUTH_WORK/serve.out" ]; then
  echo "oauth-e2e: mcp serve wrote to stdout" >&2; status=1
fi
if [ "$status" -ne 0 ]; then oauth_report_failure oauth-e2e; fi
exit "$status"

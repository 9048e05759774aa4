#!/usr/bin/env bash
# The owner's console (issue #33) in a real browser, without Docker:
# Debian's headless Chromium (installed when missing) driven over the
# DevTools protocol (deploy/ci/oauth-client/console-chromium.mjs) and the
# TypeScript SDK's OAuth client, against `notebridge mcp serve --oauth`
# (the console is on with OAuth) behind the host's Caddy with the
# repository's Caddyfile over HTTPS (deploy/ci/oauth-stack.sh). Three
# notebooks are seeded, one "lemon" note each; the client is granted Alpha
# and Beta. Screenshots of each console page are kept as CI artifacts in
# $CI_ARTIFACTS (default ci-artifacts/), console-*.png.
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ci/oauth-stack.sh

if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
oauth_install_clients
oauth_start_stack
joplin_token=$(cat "$OAUTH_WORK/joplin-token")
seed() { # seed PATH JSON: POST to the fake Joplin, print the new id
  curl -fsS -X POST -H 'Content-Type: application/json' --data-binary "$2" "$OAUTH_JOPLIN_URL$1?token=$joplin_token" |
    sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p'
}
for nb in Alpha Beta Gamma; do
  id=$(seed /folders "{\"title\":\"$nb\"}")
  seed /notes "{\"parent_id\":\"$id\",\"title\":\"$nb note\",\"body\":\"lemon $nb\"}" >/dev/null
done
trap 'if [ -s "$OAUTH_WORK/chromium.pid" ]; then kill "$(cat "$OAUTH_WORK/chromium.pid")" 2>/dev/null || true; fi; oauth_cleanup' EXIT

artifacts="${CI_ARTIFACTS:-$(pwd)/ci-artifacts}"
mkdir -p "$artifacts"
rm -f "$artifacts"/console-*.png
intermediate="$(dirname "$OAUTH_CA")/intermediate.crt"
spki=$(openssl x509 -in "$intermediate" -pubkey -noout | openssl pkey -pubin -outform der |
  openssl dgst -sha256 -binary | base64)

status=0
OAUTH_DOMAIN="$OAUTH_DOMAIN" OAUTH_HTTPS_PORT="$OAUTH_HTTPS_PORT" OAUTH_CA="$OAUTH_CA" OAUTH_CA_SPKI="$spki" \
OAUTH_JOPLIN_URL="$OAUTH_JOPLIN_URL" JOPLIN_TOKEN="$joplin_token" \
CONSOLE_SHOTS="$artifacts" CHROMIUM_PID_FILE="$OAUTH_WORK/chromium.pid" \
OAUTH_PASSPHRASE="$("$OAUTH_BIN" secrets show owner-passphrase --dir "$OAUTH_STATE")" \
  node deploy/ci/oauth-client/console-chromium.mjs || status=$?

if [ "$status" -ne 0 ]; then oauth_report_failure console-chromium; fi
ls "$artifacts"/console-*.png 2>/dev/null || true
exit "$status"

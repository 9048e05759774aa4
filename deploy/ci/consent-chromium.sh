#!/usr/bin/env bash
# The OAuth consent page (issue #16) in a real browser, without Docker:
# Debian's headless Chromium (installed when missing), driven over the
# DevTools protocol (deploy/ci/oauth-client/consent-chromium.mjs, with the
# pinned `ws`), against `notebridge mcp serve --oauth` behind the host's
# Caddy with the repository's Caddyfile over HTTPS (deploy/ci/oauth-stack.sh).
# The page must render (client name, scopes, form, the notebook tree with
# nothing checked), the flow must complete by checking two of the three
# notebooks seeded here, typing the owner passphrase and clicking Approve,
# the code the browser brings back must be exchanged for tokens, and
# `search` with that token must find exactly the notes of the two notebooks
# (issue #24). The screenshot is kept
# as a CI artifact at $CI_ARTIFACTS/consent.png (default ci-artifacts/).
# Chromium ignores certificate errors only for Caddy's internal CA
# (--ignore-certificate-errors-spki-list with its intermediate's key hash)
# and runs with --no-sandbox (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/../.."
. deploy/ci/oauth-stack.sh

if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
(cd deploy/ci/oauth-client && npm ci --no-audit --no-fund --silent)
oauth_start_stack
# Three notebooks, one note each, all matching "lemon"; the browser shares
# Alpha and Beta only.
joplin_token=$(cat "$OAUTH_WORK/joplin-token")
seed() { # seed PATH JSON: POST to the fake Joplin, print the new id
  curl -fsS -X POST -H 'Content-Type: application/json' --data-binary "$2" "$OAUTH_JOPLIN_URL$1?token=$joplin_token" |
    sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p'
}
for nb in Alpha Beta Gamma; do
  id=$(seed /folders "{\"title\":\"$nb\"}")
  seed /notes "{\"parent_id\":\"$id\",\"title\":\"$nb note\",\"body\":\"lemon $nb\"}" >/dev/null
done
# Chromium is stopped by the driver; should the driver die, by this trap.
trap 'if [ -s "$OAUTH_WORK/chromium.pid" ]; then kill "$(cat "$OAUTH_WORK/chromium.pid")" 2>/dev/null || true; fi; oauth_cleanup' EXIT

artifacts="${CI_ARTIFACTS:-$(pwd)/ci-artifacts}"
mkdir -p "$artifacts"
rm -f "$artifacts/consent.png"
intermediate="$(dirname "$OAUTH_CA")/intermediate.crt"
spki=$(openssl x509 -in "$intermediate" -pubkey -noout | openssl pkey -pubin -outform der |
  openssl dgst -sha256 -binary | base64)

status=0
OAUTH_DOMAIN="$OAUTH_DOMAIN" OAUTH_HTTPS_PORT="$OAUTH_HTTPS_PORT" OAUTH_CA="$OAUTH_CA" OAUTH_CA_SPKI="$spki" \
CONSENT_SCREENSHOT="$artifacts/consent.png" CHROMIUM_PID_FILE="$OAUTH_WORK/chromium.pid" \
OAUTH_PASSPHRASE="$("$OAUTH_BIN" secrets show owner-passphrase --dir "$OAUTH_STATE")" \
  node deploy/ci/oauth-client/consent-chromium.mjs || status=$?

if [ "$status" -ne 0 ]; then
  echo "consent-chromium: FAILED; the server's last log lines:" >&2
  tail -n 20 "$OAUTH_WORK/serve.err" >&2
fi
[ -s "$artifacts/consent.png" ] && echo "consent-chromium: screenshot artifact: $artifacts/consent.png"
exit "$status"

#!/usr/bin/env bash
# The "browser" mcp-remote opens (BROWSER, through xdg-open) in
# deploy/ci/mcp-remote.sh: it loads the consent page named by $1 through
# Caddy, approves it with the owner passphrase ($OAUTH_PASSPHRASE, sent on
# stdin, never on a command line), and follows the redirect to mcp-remote's
# local callback, as the owner's browser would. Each run is counted in
# $MCP_REMOTE_BROWSER_LOG. Prints nothing secret.
set -euo pipefail
url=$1
echo opened >> "$MCP_REMOTE_BROWSER_LOG"
jar=$(mktemp)
trap 'rm -f "$jar"' EXIT
c=(curl -sS --fail-with-body --cacert "$OAUTH_CA" --connect-to "$OAUTH_DOMAIN:443:127.0.0.1:$OAUTH_HTTPS_PORT" -b "$jar" -c "$jar")
page=$("${c[@]}" "$url")
csrf=$(printf '%s' "$page" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -n 1)
if [ -z "$csrf" ]; then echo "consent-browser: no consent form at the authorization URL" >&2; exit 1; fi
callback=$(printf '%s' "$OAUTH_PASSPHRASE" | "${c[@]}" -o /dev/null -w '%{redirect_url}' \
  -H "Origin: https://$OAUTH_DOMAIN" --data-urlencode "csrf=$csrf" --data-urlencode "decision=approve" --data-urlencode "all_notebooks=1" \
  --data-urlencode "passphrase@-" "$url")
case "$callback" in
  http://localhost:*/*code=*|http://127.0.0.1:*/*code=*) ;;
  *) echo "consent-browser: the approval did not redirect to the local callback with a code" >&2; exit 1 ;;
esac
curl -sS --fail -o /dev/null "$callback"

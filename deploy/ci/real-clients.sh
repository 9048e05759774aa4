#!/usr/bin/env bash
# Real MCP clients against the built binary, without Docker: the official
# TypeScript SDK v1 (@modelcontextprotocol/sdk) and v2
# (@modelcontextprotocol/client), pinned in deploy/ci/clients, each over
# stdio (`notebridge mcp stdio`) and Streamable HTTP (`notebridge mcp
# serve` with its bearer token file), against the fake Joplin
# (pkg/testkit/joplinfake/cmd/joplinfake). Each client must read the error
# code, message and details of a duplicate create, a NOT_FOUND and an
# INVALID_ARGUMENT, get a success whose structuredContent validates, and
# read notes as resources and the fetch, search, outline and revision tools.
# Exits non-zero on any failure. The Go SDK client runs in `go test ./...`
# (services/notebridge/gosdk_client_test.go).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "real-clients: Node $node_major is too old; @modelcontextprotocol/client needs Node >= 20" >&2
  exit 1
fi

# shellcheck source=deploy/ci/procs.sh
. "$(dirname "$0")/procs.sh"
work=$(mktemp -d)
cleanup() {
  ci_stop_all
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/notebridge" ./services/notebridge
go build -o "$work/joplinfake" ./pkg/testkit/joplinfake/cmd/joplinfake

(umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/joplin-token")
"$work/joplinfake" -token-file "$work/joplin-token" > "$work/fake.out" 2>&1 &
ci_pids+=($!)
joplin_url=$(ci_wait_for "$work/fake.out" '^http://127\.0\.0\.1:[0-9]+' "${ci_pids[-1]}" 20)

mkdir -p "$work/home"
HOME="$work/home" "$work/notebridge" mcp serve --listen 127.0.0.1:0 --state-dir "$work/state" \
  --joplin-url "$joplin_url" --joplin-token-file "$work/joplin-token" > "$work/serve.out" 2> "$work/serve.err" &
ci_pids+=($!)
addr=$(ci_wait_for "$work/serve.err" 'addr=127\.0\.0\.1:[0-9]+' "${ci_pids[-1]}" 20)
addr=${addr#addr=}

(cd deploy/ci/clients && npm ci --no-audit --no-fund --silent)

status=0
CLIENTS_BIN="$work/notebridge" CLIENTS_HOME="$work/home" \
CLIENTS_JOPLIN_URL="$joplin_url" CLIENTS_JOPLIN_TOKEN_FILE="$work/joplin-token" \
CLIENTS_MCP_URL="http://$addr/mcp" CLIENTS_MCP_TOKEN_FILE="$work/state/mcp-token" \
  node --test --test-reporter=spec deploy/ci/clients/sdk-v1.test.mjs deploy/ci/clients/sdk-v2.test.mjs || status=$?

if [ -s "$work/serve.out" ]; then
  echo "real-clients: mcp serve wrote to stdout" >&2; status=1
fi
exit "$status"

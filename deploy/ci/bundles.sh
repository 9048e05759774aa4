#!/usr/bin/env bash
# The install bundles (issue #36 §4) against their published schemas:
#  - deploy/bundles/server.json (the MCP registry entry: the published
#    image as an OCI package over stdio, and the remote form) against the
#    registry's server.json schema, from the registry's Go module (the Go
#    module proxy carries it; pinned), with deploy/ci/schemacheck;
#  - deploy/bundles/mcpb/manifest.json (Claude Desktop's stdio route) with
#    the MCPB toolchain's own validator (npm @anthropic-ai/mcpb, pinned),
#    then packed with a notebridge binary built here, and read back.
# Each check is also shown to fail on a broken copy.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

registry_dir=$(GOFLAGS=-mod=mod go mod download -json github.com/modelcontextprotocol/registry@v1.8.14 |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
schema="$registry_dir/docs/reference/server-json/draft/server.schema.json"
go run ./deploy/ci/schemacheck "$schema" deploy/bundles/server.json
sed 's|"io.github.notebridge/notebridge"|"notebridge"|' deploy/bundles/server.json > "$work/broken-server.json"
if go run ./deploy/ci/schemacheck "$schema" "$work/broken-server.json" >/dev/null 2>&1; then
  echo "bundles: a server.json without a namespace passed the schema" >&2; exit 1
fi
echo "bundles: a broken server.json is refused"

if ! command -v npm >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
(cd "$work" && npm install --no-audit --no-fund --silent @anthropic-ai/mcpb@2.1.2 >/dev/null)
mcpb="$work/node_modules/.bin/mcpb"
"$mcpb" validate deploy/bundles/mcpb/manifest.json
sed 's|"entry_point": "server/notebridge",||' deploy/bundles/mcpb/manifest.json > "$work/broken-manifest.json"
if "$mcpb" validate "$work/broken-manifest.json" >/dev/null 2>&1; then
  echo "bundles: a manifest without an entry point passed" >&2; exit 1
fi
echo "bundles: a broken manifest is refused"
mkdir -p "$work/bundle/server"
cp deploy/bundles/mcpb/manifest.json "$work/bundle/"
CGO_ENABLED=0 go build -trimpath -o "$work/bundle/server/notebridge" ./services/notebridge
"$mcpb" pack "$work/bundle" "$work/notebridge.mcpb"
"$mcpb" info "$work/notebridge.mcpb"

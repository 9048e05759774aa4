#!/usr/bin/env bash
# ensure-compose.sh: make sure `docker compose` (Compose v2) works. When it
# is missing, the plugin is built from the Go module proxy into
# ~/.docker/cli-plugins (about 5 minutes on 2 cores). Idempotent; progress
# goes to stderr.
#
# No buildx plugin is needed: Compose v2 builds with the engine's BuildKit
# itself (checked on Docker Engine 20.10 with the 28.x client, which has no
# buildx). Only a plain `docker build` of the Dockerfiles would need buildx.
#
# Environment: COMPOSE_VERSION (default v2.29.7).
set -euo pipefail

log() { printf 'ensure-compose: %s\n' "$*" >&2; }
COMPOSE_VERSION="${COMPOSE_VERSION:-v2.29.7}"
PLUGINS="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"

if docker compose version >/dev/null 2>&1; then
  log "$(docker compose version)"
  exit 0
fi
command -v go >/dev/null 2>&1 || { log "go not found; cannot build the Compose plugin"; exit 1; }
start=$(date +%s)
gobin="$(mktemp -d)"
trap 'rm -rf "$gobin"' EXIT
log "go install github.com/docker/compose/v2/cmd@$COMPOSE_VERSION"
# go install names the binary after the package directory: "cmd".
GOBIN="$gobin" GOFLAGS='' CGO_ENABLED=0 go install \
  -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
  "github.com/docker/compose/v2/cmd@$COMPOSE_VERSION" >&2
mkdir -p "$PLUGINS"
# Into place atomically: a half-copied plugin is never left behind.
install -m 0755 "$gobin/cmd" "$PLUGINS/.docker-compose.new"
mv -f "$PLUGINS/.docker-compose.new" "$PLUGINS/docker-compose"
log "$(docker compose version), built in $(( $(date +%s) - start ))s"

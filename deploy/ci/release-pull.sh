#!/usr/bin/env bash
# release-pull.sh: the release path without GitHub, on loopback. A registry
# built from the Go module proxy (distribution/distribution, the registry
# GHCR and Docker Hub descend from) listens on 127.0.0.1; the images this
# machine built are pushed to it under the names the release workflow
# publishes (notebridge-bridge, -joplin, -embedder at one version); their
# local copies under those names are removed; then the stack smoke runs the
# way to published images docs/images.md gives (compose.release.yaml): `docker compose
# pull` from that registry and `up --no-build`. Docker talks plain HTTP to a
# registry on 127.0.0.0/8 without configuration.
#
#   bash deploy/ci/release-pull.sh       # after docker compose build
set -euo pipefail
log() { printf 'release-pull: %s\n' "$*" >&2; }
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PORT="${RELEASE_REGISTRY_PORT:-15000}"
VERSION="0.0.0-ci"
REGISTRY="127.0.0.1:$PORT"

work="$(mktemp -d)"
reg_pid=""
cleanup() {
  [ -z "$reg_pid" ] || kill "$reg_pid" 2>/dev/null || true
  for name in bridge joplin embedder; do
    docker image rm "$REGISTRY/notebridge-$name:$VERSION" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

log "building the registry (github.com/distribution/distribution/v3/cmd/registry) from the Go module proxy"
GOBIN="$work/bin" go install github.com/distribution/distribution/v3/cmd/registry@v3.1.2
cat >"$work/config.yml" <<CONFIG
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $work/data
http:
  addr: $REGISTRY
CONFIG
"$work/bin/registry" serve "$work/config.yml" >"$work/registry.log" 2>&1 &
reg_pid=$!
for _ in $(seq 1 50); do
  curl -fsS "http://$REGISTRY/v2/" >/dev/null 2>&1 && break
  kill -0 "$reg_pid" 2>/dev/null || { cat "$work/registry.log" >&2; exit 1; }
  sleep 0.2
done

for pair in bridge:notebridge/bridge:local joplin:notebridge/joplin:3.5.1 embedder:notebridge/embedder:local; do
  name="${pair%%:*}" local="${pair#*:}"
  target="$REGISTRY/notebridge-$name:$VERSION"
  docker tag "$local" "$target"
  docker push --quiet "$target" >/dev/null
  digest="$(docker image inspect -f '{{index .RepoDigests 0}}' "$target")"
  docker image rm "$target" >/dev/null
  log "pushed $local as $digest"
done

cd "$REPO"
SMOKE_PROJECT=nbrelease SMOKE_RELEASE="$VERSION" SMOKE_REGISTRY="$REGISTRY" bash deploy/offline/stack-smoke.sh
for name in bridge joplin; do
  docker image inspect "$REGISTRY/notebridge-$name:$VERSION" >/dev/null 2>&1 ||
    { log "FAIL: $REGISTRY/notebridge-$name:$VERSION was not pulled"; exit 1; }
done
log "the stack ran from images pulled from $REGISTRY, nothing built"

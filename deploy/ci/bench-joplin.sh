#!/usr/bin/env bash
# bench-joplin.sh: side-by-side benchmark of notebridge against a real
# Joplin (issue 14). Starts the Joplin image with a token, builds notebridge
# and deploy/ci/benchjoplin, seeds 500 notes into one notebook, then times
# get_note, search and list_notes straight over the REST API (kept alive)
# and through `notebridge mcp stdio`, interleaved in one run; prints the
# medians, their ratio and the Joplin requests per bridge call.
#
# Environment: NOTEBRIDGE_JOPLIN_IMAGE (default notebridge/joplin:3.5.1),
# BENCH_NOTES (500), BENCH_CALLS (200), BENCH_BIN (a notebridge binary to
# measure instead of building this tree), BENCH_BASELINE_BIN (a second
# binary, e.g. an earlier commit's, timed in turn in the same run),
# BENCH_SCOPED (when set: the second binary is this one limited by
# --notebooks to the seeded notebook, issue 24).
# BENCH_TASK=1 runs the scripted agent task of issue 25 instead (model-
# visible bytes and Joplin requests per step, idle requests per minute for
# BENCH_IDLE, default 3m, and the start-up count) over a corpus of its own
# (issue 35: BENCH_NOTES notes of about 2 KB, BENCH_TAGS tags (20), a notebook of the
# run's own), which it removes at the end. With BENCH_JOPLIN_URL and
# BENCH_JOPLIN_TOKEN_FILE it runs against that Joplin, one that may hold a
# person's notes, instead of starting the image.
set -euo pipefail

cd "$(dirname "$0")/../.."
IMAGE="${NOTEBRIDGE_JOPLIN_IMAGE:-notebridge/joplin:3.5.1}"
work="$(mktemp -d)"
name="notebridge-bench-joplin-$$"
cleanup() { docker rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

umask 077
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
if [ -n "${BENCH_BIN:-}" ]; then
  cp "$BENCH_BIN" "$work/notebridge"
else
  go build -o "$work/notebridge" ./services/notebridge
fi
go build -o "$work/benchjoplin" ./deploy/ci/benchjoplin

if [ -n "${BENCH_JOPLIN_URL:-}" ]; then
  [ -n "${BENCH_TASK:-}" ] || { echo "bench-joplin: BENCH_JOPLIN_URL is for BENCH_TASK=1 (the timed run leaves its notes)" >&2; exit 2; }
  "$work/benchjoplin" -task -joplin-url "$BENCH_JOPLIN_URL" -token-file "${BENCH_JOPLIN_TOKEN_FILE:?BENCH_JOPLIN_TOKEN_FILE is needed with BENCH_JOPLIN_URL}" \
    -bin "$work/notebridge" -notes "${BENCH_NOTES:-500}" -tags "${BENCH_TAGS:-20}" -idle "${BENCH_IDLE:-3m}"
  exit 0
fi

# A fixed host port: the timed run restarts the container after seeding
# (Joplin's own search then holds the corpus), and a published port chosen
# by Docker may change on a restart.
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
docker run -d --name "$name" -e JOPLIN_TOKEN="$(cat "$work/token")" -p "127.0.0.1:$port:41184" "$IMAGE" >/dev/null
url="http://127.0.0.1:$port"
for _ in $(seq 1 180); do
  if curl -fsS "$url/ping" >/dev/null 2>&1; then break; fi
  sleep 1
done
curl -fsS "$url/ping" >/dev/null || { echo "bench-joplin: Joplin did not answer /ping" >&2; exit 1; }

if [ -n "${BENCH_TASK:-}" ]; then
  "$work/benchjoplin" -task -joplin-url "$url" -token-file "$work/token" -bin "$work/notebridge" \
    -notes "${BENCH_NOTES:-500}" -tags "${BENCH_TAGS:-20}" -idle "${BENCH_IDLE:-3m}"
  exit 0
fi
"$work/benchjoplin" -joplin-url "$url" -token-file "$work/token" -bin "$work/notebridge" \
  -notes "${BENCH_NOTES:-500}" -n "${BENCH_CALLS:-200}" -baseline-bin "${BENCH_BASELINE_BIN:-}" ${BENCH_SCOPED:+-scoped} \
  -restart-joplin "docker restart $name >/dev/null"

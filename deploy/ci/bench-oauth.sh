#!/usr/bin/env bash
# bench-oauth.sh: the OAuth load benchmarks of issue 21 against real
# `notebridge mcp serve --oauth` processes (deploy/ci/benchoauth):
#   consent   200 addresses post a wrong owner passphrase at once: peak RSS
#             above idle; then one address posts 30 at once: checks run;
#   secrets   40 wrong client secrets from 40 addresses at /oauth/token
#             while list_notes is timed over MCP against the fake Joplin;
#   legacy    the same against a client whose secret the state file holds
#             as bcrypt (as before SHA-256 digests), for BENCH_DURATION.
# Each runs for this tree's binary and, when BENCH_BASELINE_REF names a
# commit (e.g. c991f24), for that commit's, built from `git archive` in a
# temporary directory (the legacy scenario only for this tree).
#
# Environment: BENCH_BASELINE_REF (unset: no baseline), BENCH_RUNS (3),
# BENCH_DURATION (10s).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/notebridge" ./services/notebridge
go build -o "$work/benchoauth" ./deploy/ci/benchoauth
go build -o "$work/joplinfake" ./pkg/testkit/joplinfake/cmd/joplinfake
bins=("$work/notebridge")
if [ -n "${BENCH_BASELINE_REF:-}" ]; then
  mkdir "$work/baseline-src"
  git archive "$BENCH_BASELINE_REF" | tar -x -C "$work/baseline-src"
  (cd "$work/baseline-src" && go build -o "$work/baseline" ./services/notebridge)
  bins+=("$work/baseline")
fi

runs="${BENCH_RUNS:-3}"
for bin in "${bins[@]}"; do
  echo "== $(basename "$bin")"
  for _ in $(seq "$runs"); do
    "$work/benchoauth" -bin "$bin" -scenario consent
    "$work/benchoauth" -bin "$bin" -joplinfake "$work/joplinfake" -scenario secrets
  done
done
echo "== notebridge, legacy bcrypt client"
"$work/benchoauth" -bin "$work/notebridge" -joplinfake "$work/joplinfake" -scenario secrets -legacy \
  -duration "${BENCH_DURATION:-10s}"

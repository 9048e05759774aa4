#!/usr/bin/env bash
# Reproduces the OKF figures in docs/benchmarks.md: every benchmark runs in
# one invocation, side by side, so a noisy machine affects them alike.
# Usage: bash deploy/ci/bench-okf.sh [count]   (default count 3)
set -euo pipefail
cd "$(dirname "$0")/../.."
count="${1:-3}"
echo "# $(date -u +%FT%TZ) $(go version) $(nproc) CPUs"
go test ./pkg/okf/okfops -run '^$' -count "$count" -timeout 60m \
  -bench 'ListConcepts|ValidateBundle|ColdDisk|Revision|WriteConcept|ConceptPatch|Migration' -benchtime 10x

#!/usr/bin/env bash
# Reproduces the "OKF manifest cache (issue 14)" figures in
# docs/benchmarks.md. With a base tree (the code before the cache, e.g.
# `git archive 0a99b74 | tar -x -C /tmp/base` plus this tree's
# pkg/okf/okfops/bench_cache_test.go, in pkg/okfops before the zones), runs base and this tree alternately, so
# a noisy machine affects both alike. Every write series is its own
# process, so its first call is the first in a process.
# Usage: bash deploy/ci/bench-okf-cache.sh [base-dir] [rounds]   (rounds default 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
base="${1:-}"
rounds="${2:-2}"
out="$(mktemp -d)"
go test -c -o "$out/new.test" ./pkg/okf/okfops
trees=(new)
if [[ -n "$base" ]]; then
  # Trees before the zones (issue 23) hold the package at pkg/okfops.
  basepkg=./pkg/okf/okfops
  [[ -d "$base/pkg/okf/okfops" ]] || basepkg=./pkg/okfops
  (cd "$base" && go test -c -o "$out/base.test" "$basepkg")
  trees=(base new)
fi
echo "# $(date -u +%FT%TZ) $(go version) $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  for t in "${trees[@]}"; do
    echo "## $t round $r"
    (cd pkg/okf/okfops && "$out/$t.test" -test.run '^$' -test.bench 'CacheReads' -test.benchtime 5x)
    for i in 1 2; do
      (cd pkg/okf/okfops && "$out/$t.test" -test.run '^$' -test.bench 'WriteSeries' -test.benchtime 1x)
    done
  done
done
echo "## new: cache memory"
(cd pkg/okf/okfops && "$out/new.test" -test.run '^$' -test.bench 'ManifestCacheMemory' -test.benchtime 3x)
rm -rf "$out"

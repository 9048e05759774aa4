#!/usr/bin/env bash
# Fuzz every fuzz target of the module, one after another.
#
#   deploy/ci/fuzz.sh --list             print the targets as a JSON array of
#                                        "package FuzzName" strings (the
#                                        nightly workflow's matrix)
#   deploy/ci/fuzz.sh [-t 10m] [TARGET]  fuzz each target (or only the one
#                                        given as "package FuzzName") for the
#                                        time given (default 10m each)
#
# A target is any `func FuzzX(f *testing.F)` in a _test.go file. A crasher is
# written by `go test -fuzz` to the package's testdata/fuzz/FuzzX/ folder,
# where `go test ./...` replays it as a regression case from then on: commit
# it with the fix. Exits non-zero when any target found a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

targets() {
  grep -rn --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
    sed -E 's#^\./(.*)/[^/]*_test\.go:[0-9]+:func (Fuzz[A-Za-z0-9_]*)\(.*#./\1 \2#' |
    sort -u
}

if [ "${1:-}" = "--list" ]; then
  targets | awk 'BEGIN{printf "["} {printf "%s\"%s\"", (NR>1?",":""), $0} END{print "]"}'
  exit 0
fi

fuzztime=10m
if [ "${1:-}" = "-t" ]; then fuzztime=$2; shift 2; fi
only=${1:-}

failed=0
while read -r pkg name; do
  if [ -n "$only" ] && [ "$only" != "$pkg $name" ]; then continue; fi
  echo "== fuzz $pkg $name for $fuzztime"
  # -run=^$ skips the package's other tests; ^Name$ because one name may
  # prefix another (FuzzParse, FuzzParseBearer).
  if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg"; then
    echo "FAILED: $pkg $name (crasher under $pkg/testdata/fuzz/$name/)"
    failed=1
  fi
done < <(targets)
exit "$failed"

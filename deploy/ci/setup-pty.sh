#!/usr/bin/env bash
# The setup assistant through a pseudo-terminal (issue #36 §3): builds the
# binary and runs deploy/ci/setup-pty.py, which answers `notebridge setup`
# as a person would, wrong answers included (a choice not offered, a sync
# login refused by a WebDAV stand-in), and checks the files it writes.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"
if ! command -v python3 >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/notebridge" ./services/notebridge
python3 deploy/ci/setup-pty.py "$work/notebridge" "$work"

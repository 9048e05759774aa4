#!/usr/bin/env bash
# check-no-build-ca.sh MARKER.pem IMAGE...: fail if the certificate in
# MARKER.pem (handed to the builds inside the build-secret CA bundle) is
# found anywhere in the images: a layer's files or the image config and
# history. `docker save` writes layers as plain tar, so a grep sees them all.
set -euo pipefail
log() { printf 'check-no-build-ca: %s\n' "$*" >&2; }
[ "$#" -ge 2 ] || { log "usage: $0 MARKER.pem IMAGE..."; exit 2; }
marker="$1"
shift
# The first base64 line of the certificate (64 characters, unique to it).
needle="$(sed -n '/BEGIN CERTIFICATE/{n;p;q}' "$marker")"
[ "${#needle}" -ge 40 ] || { log "no certificate in $marker"; exit 2; }
found=0
for img in "$@"; do
  # grep -c reads to the end, so docker save never dies of SIGPIPE.
  if ! count="$(docker save "$img" | { grep -acF "$needle" || true; })"; then
    log "docker save $img failed"
    exit 2
  fi
  if [ "$count" != 0 ]; then
    log "FAIL: $img contains the build-secret CA"
    found=1
  else
    log "ok: $img does not contain the build-secret CA"
  fi
done
exit "$found"

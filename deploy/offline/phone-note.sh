#!/usr/bin/env bash
# phone-note.sh URL USER WORD: the person's other device (a second Joplin
# CLI profile in the Joplin image) makes a note "Groceries" holding WORD in
# a notebook "Phone" and syncs it to the WebDAV target URL as USER, with
# the password in DAV_PASS. URL is as a container reaches it
# (host.docker.internal is the host). Prints the device's output; fails
# when a command or the sync fails.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: DAV_PASS=… $0 URL USER WORD" >&2; exit 2; }
[ -n "${DAV_PASS:-}" ] || { echo "phone-note: DAV_PASS is not set" >&2; exit 2; }
out="$(docker run --rm --add-host host.docker.internal:host-gateway \
  -e DAV_PASS -e DAV_URL="$1" -e DAV_USER="$2" -e WORD="$3" \
  --entrypoint sh notebridge/joplin:3.5.1 -c '
    cd /home/node && umask 077 &&
    printf "{\"sync.target\":6,\"sync.6.path\":\"%s\",\"sync.6.username\":\"%s\",\"sync.6.password\":\"%s\"}" "$DAV_URL" "$DAV_USER" "$DAV_PASS" >s.json &&
    joplin --profile dev config --import-file s.json && rm s.json &&
    printf "mkbook Phone\nuse Phone\nmknote \"Groceries\"\nset \"Groceries\" body \"%s oat milk\"\nsync\n" "$WORD" >b.txt &&
    joplin --profile dev batch b.txt' 2>&1)" || { printf '%s\n' "$out" >&2; echo "phone-note: the device could not write and sync its note" >&2; exit 1; }
printf '%s\n' "$out"
case "$out" in *"Last error"*) echo "phone-note: the device's sync failed" >&2; exit 1 ;; esac

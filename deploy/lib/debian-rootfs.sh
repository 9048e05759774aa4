# shellcheck shell=bash
# debian-rootfs.sh: shared by the offline image builds (sourced, not run).
# Needs MIRROR, SECURITY_MIRROR and SUITE set by the caller.

# configure_rootfs_apt ROOT: DNS, apt sources and apt settings for building
# inside a freshly debootstrapped ROOT, and no service may start there.
configure_rootfs_apt() {
  local root=$1
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  cat >"$root/etc/apt/sources.list" <<EOS
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
EOS
  # Mirrors may serve snapshots whose Release files have expired.
  cat >"$root/etc/apt/apt.conf.d/99notebridge" <<'EOS'
Acquire::Check-Valid-Until "false";
Acquire::Retries "3";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOS
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
}

#!/usr/bin/env bash
# Makes (once) the Debian bookworm amd64 root file system that the systemd
# test boots in QEMU: debootstrap from Debian's archive with systemd as init,
# Debian's kernel and initramfs, curl. Cached as a tarball.
#   scripts/systest-rootfs.sh [CACHE]   (default out/cache)
set -euo pipefail
cache=$(realpath -m "${1:-out/cache}")
tar="$cache/systest-rootfs.tar"
[ -f "$tar" ] && { echo "systest-rootfs: cached $tar"; exit 0; }
command -v debootstrap >/dev/null || { echo "systest-rootfs: apt-get install debootstrap" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase --include=systemd-sysv,udev,linux-image-amd64,curl,ca-certificates,procps,kmod \
  bookworm "$work/root" http://deb.debian.org/debian
rm -rf "$work/root/var/cache/apt/archives/"*.deb
tar -C "$work/root" -cf "$tar.tmp" .
mv "$tar.tmp" "$tar"
echo "systest-rootfs: made $tar"

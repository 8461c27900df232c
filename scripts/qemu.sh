#!/usr/bin/env bash
# Boots the SD-card image the way the board boots it, through U-Boot, in QEMU:
# -M virt with Debian's u-boot-qemu as firmware, the card as a virtio disk,
# HTTPS/HTTP/SSH forwarded to local ports, the serial console on this
# terminal (Ctrl-a x quits).
#   scripts/qemu.sh [IMAGE]   (default out/bonesync-bbb.img)
# The image is copied to out/qemu-sd.img, grown to 1 GiB like a card larger
# than the image, and that copy is booted, so the built image stays as built.
# The card is kept between runs (its CA, users and files, as on a board),
# and made afresh only when there is none, when the image's version
# (IMAGE_VERSION, from the Makefile) changed, or with FRESH=1 (make
# qemu-fresh); a rebuild of the same version puts its boot partition (the
# kernel, and bonesync in the initramfs) onto the kept card. Ports: HTTPS_PORT (8443), HTTP_PORT (8080), SSH_PORT (2222).
set -euo pipefail
img=${1:-out/bonesync-bbb.img}
card=${CARD:-out/qemu-sd.img}
stamp=$card.version
version=${IMAGE_VERSION:-unknown}
build=$(sha256sum "$img" | cut -c1-16) # the build is reproducible: same bytes, same system
[ -f "$img" ] || { echo "qemu: $img missing; run make image" >&2; exit 1; }
firmware=/usr/lib/u-boot/qemu_arm/u-boot.bin
[ -f "$firmware" ] || { echo "qemu: $firmware missing; apt-get install u-boot-qemu qemu-system-arm" >&2; exit 1; }
had_version= had_build=
# layout: partition 1's entry and partition 2's start (the card grows partition 2's size).
layout() { python3 -c 'import sys; m=open(sys.argv[1],"rb").read(512); print(m[446:462].hex(), m[470:474].hex())' "$1"; }
[ -f "$stamp" ] && read -r had_version had_build < "$stamp"
why=""
if [ ! -f "$card" ]; then why="there was none"
elif [ "${FRESH:-0}" = 1 ]; then why="make qemu-fresh"
elif [ "${had_version:-none}" != "$version" ]; then why="the image is version $version, the card had ${had_version:-none}"
elif [ "$(layout "$img")" != "$(layout "$card")" ]; then
  # The boot partition moved or changed size: a new one would not fit the kept card.
  why="the image's partition layout differs from the card's"
fi
if [ -n "$why" ]; then
  echo "qemu: a fresh card $card from $img ($why): a first boot, new CA and password"
  cp --sparse=always "$img" "$card.tmp"
  truncate -s 1G "$card.tmp"
  mv "$card.tmp" "$card"
elif [ "${had_build:-}" != "$build" ]; then
  # The same version rebuilt: the new system (the boot partition: kernel,
  # initramfs with bonesync) onto the kept card; its data stays.
  read -r start sectors < <(python3 -c 'import struct,sys; e=open(sys.argv[1],"rb").read(512)[446:462]; print(*struct.unpack("<II", e[8:16]))' "$img")
  dd if="$img" of="$card" bs=512 skip="$start" seek="$start" count="$sectors" conv=notrunc status=none
  echo "qemu: keeping the card $card (its CA, users and files) with this build's boot partition; make qemu-fresh starts a new one"
else
  echo "qemu: keeping the card $card (version $version: its CA, users and files); make qemu-fresh starts a new one"
fi
echo "$version $build" > "$stamp"
cat <<EOT
qemu: from this machine: https://localhost:${HTTPS_PORT:-8443}/ (the CA: http://localhost:${HTTP_PORT:-8080}/ca.crt),
      WebDAV https://localhost:${HTTPS_PORT:-8443}/dav/, sftp -P ${SSH_PORT:-2222} admin@localhost.
      The box's own console below prints its addresses inside QEMU, which this machine does not reach.
EOT
exec qemu-system-arm -M virt,highmem=off -cpu cortex-a15 -smp 1 -m 512 \
  -bios "$firmware" \
  -drive if=none,file="$card",format=raw,id=sd -device virtio-blk-pci,drive=sd \
  -netdev user,id=n0,hostfwd=tcp:127.0.0.1:${HTTPS_PORT:-8443}-:443,hostfwd=tcp:127.0.0.1:${HTTP_PORT:-8080}-:80,hostfwd=tcp:127.0.0.1:${SSH_PORT:-2222}-:22 \
  -device virtio-net-pci,netdev=n0 \
  -device virtio-rng-pci \
  -nographic

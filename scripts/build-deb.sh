#!/usr/bin/env bash
# Builds the bonesync .deb for one Debian architecture with dpkg-deb: the
# binary, the systemd units, a commented config in /etc/bonesync (a conffile:
# edits survive upgrades), the README and docs/; enabled and started on install; the
# user's data (/var/lib/bonesync) kept on remove and on purge.
#   scripts/build-deb.sh ARCH BINARY VERSION OUTDIR     ARCH: amd64 or armhf
set -euo pipefail
arch=$1 bin=$2 version=$3 out=$4
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/bonesync_${version}_${arch}"
install -D -m 0755 "$bin" "$root/usr/bin/bonesync"
for u in systemd/*.service systemd/*.socket; do
  install -D -m 0644 "$u" "$root/lib/systemd/system/$(basename "$u")"
done
install -d -m 0755 "$root/etc/bonesync"
go run ./appliance config-example > "$root/etc/bonesync/bonesync.conf"
chmod 0644 "$root/etc/bonesync/bonesync.conf"
install -D -m 0644 README.md "$root/usr/share/doc/bonesync/README.md"
install -d -m 0755 "$root/usr/share/doc/bonesync/docs"
install -m 0644 docs/*.md "$root/usr/share/doc/bonesync/docs/"
mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: bonesync
Version: $version
Architecture: $arch
Maintainer: bonesync developers <bonesync@localhost>
Installed-Size: $size
Depends: systemd
Section: net
Priority: optional
Homepage: https://bonesync.local/
Description: home sync appliance: your files over HTTPS (WebDAV) and SFTP
 bonesync makes its own name-constrained certificate authority, measures what
 TLS and SSH handshakes cost on this machine, picks the strongest server keys
 that meet its latency target, and serves users' files over WebDAV and SFTP.
CONTROL
echo /etc/bonesync/bonesync.conf > "$root/DEBIAN/conffiles"
cat > "$root/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ] || [ "$1" = abort-upgrade ]; then
  if [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
    systemctl enable bonesync.socket bonesync.service || true
    systemctl restart bonesync.socket bonesync.service || true
  else
    deb-systemd-helper enable bonesync.socket bonesync.service >/dev/null 2>&1 || \
      systemctl --root=/ enable bonesync.socket bonesync.service || true
  fi
fi
SH
cat > "$root/DEBIAN/prerm" <<'SH'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
  systemctl stop bonesync.service bonesync.socket || true
fi
SH
cat > "$root/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
# The users' files, keys and CA in /var/lib/bonesync stay, on remove and on
# purge alike: delete them by hand if you mean to.
if [ "$1" = remove ] || [ "$1" = purge ]; then
  systemctl disable bonesync.socket bonesync.service >/dev/null 2>&1 || true
  [ -d /run/systemd/system ] && systemctl daemon-reload || true
fi
SH
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
mkdir -p "$out"
find "$root" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-0}" {} +
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/bonesync_${version}_${arch}.deb" >/dev/null
echo "$out/bonesync_${version}_${arch}.deb"

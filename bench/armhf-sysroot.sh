#!/usr/bin/env bash
# Makes the armhf sysroot in which `go run ./bench` runs Debian's nginx,
# sshd, djpeg and rclone under qemu-arm (qemu-arm -L SYSROOT) to count their
# instructions per handshake, per MiB and per photo decoded: nginx,
# openssh-server, libjpeg-turbo-progs, rclone and the libraries they load
# (as `ldd` lists them on bookworm), fetched with the ordinary apt client for
# a foreign architecture (private lists, the host's dpkg untouched) and
# unpacked with dpkg -x. VERSIONS records what was unpacked.
#   bench/armhf-sysroot.sh [DIR]     (default out/cache/bench-armhf; the sysroot is DIR/sysroot)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-out/cache/bench-armhf}")
root="$dir/sysroot"
if [ -x "$root/usr/sbin/nginx" ] && [ -x "$root/usr/sbin/sshd" ] && [ -x "$root/usr/bin/djpeg" ] && [ -x "$root/usr/bin/rclone" ] && [ -s "$root/VERSIONS" ]; then
  exit 0
fi
pkgs=(nginx libssl3 libc6 libcrypt1 libpcre2-8-0 zlib1g libgcc-s1
  openssh-server libaudit1 libcap-ng0 libcap2 libcom-err2 libgcrypt20 libgpg-error0 libgssapi-krb5-2
  libk5crypto3 libkeyutils1 libkrb5-3 libkrb5support0 liblz4-1 liblzma5 libnsl2 libpam0g libselinux1
  libsystemd0 libtirpc3 libwrap0 libzstd1
  libjpeg-turbo-progs libjpeg62-turbo
  rclone)
mkdir -p "$dir/lists/partial" "$dir/debs"
o=(-oAPT::Architecture=armhf -oAPT::Architectures=armhf -oDir::State::Lists="$dir/lists"
   -oDir::State::Status=/dev/null -oDebug::NoLocking=1 -oAPT::Sandbox::User=root)
# A mirror mid-sync can fail one index (seen: bookworm-security): go on with the others.
apt-get "${o[@]}" -qq update || echo "armhf-sysroot: apt-get update reported errors; trying the download anyway" >&2
rm -f "$dir"/debs/*.deb
(cd "$dir/debs" && apt-get "${o[@]}" -qq download "${pkgs[@]}")
rm -rf "$root.new"
mkdir -p "$root.new"
for f in "$dir"/debs/*.deb; do
  dpkg -x "$f" "$root.new"
  dpkg-deb --showformat='${Package} ${Version}\n' -W "$f" >> "$root.new/VERSIONS"
done
rm -rf "$root"
mv "$root.new" "$root"
echo "armhf-sysroot: $(paste -sd, "$root/VERSIONS") in $root"

#!/usr/bin/env bash
# Makes the armhf sysroot in which `go run ./bench` runs Debian's nginx under
# qemu-arm (qemu-arm -L SYSROOT) to count its instructions per handshake:
# nginx and the libraries it loads, fetched with the ordinary apt client for
# a foreign architecture (private lists, the host's dpkg untouched) and
# unpacked with dpkg -x. VERSIONS records what was unpacked.
#   bench/armhf-sysroot.sh [DIR]     (default out/cache/bench-armhf; the sysroot is DIR/sysroot)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:-out/cache/bench-armhf}")
root="$dir/sysroot"
if [ -x "$root/usr/sbin/nginx" ] && [ -s "$root/VERSIONS" ]; then
  exit 0
fi
pkgs=(nginx libssl3 libc6 libcrypt1 libpcre2-8-0 zlib1g libgcc-s1)
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

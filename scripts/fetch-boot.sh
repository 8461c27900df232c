#!/usr/bin/env bash
# Fetches the pinned armhf boot packages (scripts/boot-packages.lock) into a
# cache with apt-get download, without touching the host's dpkg setup, and
# checks their sha256. Nothing comes from anywhere but Debian's archive.
#   scripts/fetch-boot.sh [CACHE]        (default out/cache)
set -euo pipefail
cd "$(dirname "$0")/.."
cache=$(realpath -m "${1:-out/cache}")
lock=scripts/boot-packages.lock
mkdir -p "$cache/debs" "$cache/lists/partial"
o=(-oAPT::Architecture=armhf -oAPT::Architectures=armhf -oDir::State::Lists="$cache/lists"
   -oDir::State::Status=/dev/null -oDebug::NoLocking=1 -oAPT::Sandbox::User=root)

have() { # package version sha -> 0 if the cached .deb is there and right
  local f="$cache/debs/$1_$2_armhf.deb"
  [ -f "$f" ] && echo "$3  $f" | sha256sum -c --status
}

missing=()
while read -r pkg ver sha; do
  case "$pkg" in ''|'#'*) continue ;; esac
  have "$pkg" "$ver" "$sha" || missing+=("$pkg=$ver")
done < "$lock"
if [ ${#missing[@]} -eq 0 ]; then
  echo "fetch-boot: all pinned packages cached in $cache/debs"
  exit 0
fi

# A mirror mid-sync can fail one index (seen: bookworm-security); the pinned
# packages come from the main archive, so go on and let the download decide.
apt-get "${o[@]}" -qq update || echo "fetch-boot: apt-get update reported errors; trying the download anyway" >&2
(cd "$cache/debs" && apt-get "${o[@]}" -qq download "${missing[@]}")

while read -r pkg ver sha; do
  case "$pkg" in ''|'#'*) continue ;; esac
  # apt-get names files with the version's ':' as %3a; ours have none.
  if ! have "$pkg" "$ver" "$sha"; then
    echo "fetch-boot: $pkg $ver: missing or sha256 mismatch (want $sha)" >&2
    echo "fetch-boot: if Debian replaced this version, update $lock (and say so in the commit)" >&2
    exit 1
  fi
done < "$lock"
echo "fetch-boot: fetched ${missing[*]} into $cache/debs"

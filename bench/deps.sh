#!/usr/bin/env bash
# Installs the Debian packages `make bench` compares bonesync with, if they
# are missing: nginx (with Debian's OpenSSL), openssh-server (sshd), apache2
# (mod_dav), nextcloud-desktop-cmd (the sync client), qemu-user
# (the dynamic qemu-arm that loads the armcost plugin), gcc (to build it),
# libjpeg-turbo-progs (djpeg, beside bonesync's previews) and GNU time (the
# peak memory of a process it starts).
# Package scripts are not allowed to start the services: the benchmark runs
# its own nginx and sshd on loopback with its own config files. Then the
# armhf sysroot (bench/armhf-sysroot.sh), once.
#   bench/deps.sh [SYSROOT-CACHE]     (default out/cache/bench-armhf)
set -euo pipefail
cache="${1:-}"
need=()
[ -x /usr/sbin/nginx ] || need+=(nginx)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
[ -x /usr/sbin/apache2 ] || need+=(apache2)
command -v nextcloudcmd >/dev/null || need+=(nextcloud-desktop-cmd)
command -v qemu-arm >/dev/null || need+=(qemu-user)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v djpeg >/dev/null || need+=(libjpeg-turbo-progs)
[ -x /usr/bin/time ] || need+=(time)
sysroot() { # the armhf nginx for the ARM counts; without it they are Go-only
  "$(dirname "$0")/armhf-sysroot.sh" ${cache:+"$cache"} || echo "bench: no armhf sysroot; nginx will not be counted under qemu-arm" >&2
}
if [ ${#need[@]} -eq 0 ]; then
  sysroot
  exit 0
fi
echo "bench: installing ${need[*]}"
made_policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  made_policy=1
fi
cleanup() { [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d; }
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || echo "bench: apt-get update reported errors; trying the install anyway" >&2
apt-get install -y -qq --no-install-recommends "${need[@]}"
sysroot

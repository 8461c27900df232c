#!/usr/bin/env bash
# The Debian packages the tests use, one table: each line is the test
# groups that use a package (unit, e2e, image, boot, systemd, cross), how
# to tell it is here, and the package.
#
#   scripts/install-test-deps.sh              install what is missing (CI's first step)
#   scripts/install-test-deps.sh --check G..  install nothing; fail naming every
#                                             package group G needs and lacks
#                                             (each make test-* target runs it first)
#
# Packages are installed by name with --no-install-recommends: a test that
# needs what a package only recommends names it here (ipxe-qemu below).
set -euo pipefail

# dep GROUPS PACKAGE CHECK...: PACKAGE is here when CHECK succeeds.
missing=()
dep() {
  local groups=$1 pkg=$2
  shift 2
  if [ ${#want[@]} -gt 0 ]; then
    local hit= g
    for g in "${want[@]}"; do
      [[ ",$groups," == *",$g,"* ]] && hit=1
    done
    [ -n "$hit" ] || return 0
  fi
  "$@" >/dev/null 2>&1 || missing+=("$pkg")
}
have() { command -v "$1"; }

want=()
check=
if [ "${1:-}" = --check ]; then
  check=1
  shift
  want=("$@")
fi

# Real clients and servers the end-to-end tests talk to.
dep e2e curl have curl
dep unit,e2e,cross qemu-user-static have qemu-arm-static # runs the ARM binary (armcrypto, the cross test); qemu-x86_64-static traces armcrypto's amd64 code
dep unit,image file have file
dep unit,image,cross binutils have readelf                # ELF checks
dep e2e,unit python3 have python3
dep e2e openssh-client have sftp
dep e2e openssh-server test -x /usr/sbin/sshd            # an SFTP target the copies are sent to
dep e2e rclone have rclone
dep e2e litmus have litmus
dep e2e nextcloud-desktop-cmd have nextcloudcmd
dep e2e owncloud-client-cmd have owncloudcmd
dep e2e vdirsyncer have vdirsyncer
dep e2e sshfs have sshfs
# GNOME Files' WebDAV, as the connect page's steps give it: gvfs's dav
# backend, gio, and a D-Bus session to run them in.
dep e2e gvfs-backends test -x /usr/libexec/gvfsd-dav
dep e2e libglib2.0-bin have gio
dep e2e dbus-daemon have dbus-run-session
# KDE's Dolphin's WebDAV: KIO (kio_http, a dependency), driven by
# kioclient5, headless on Qt's offscreen platform (in libqt5gui5, also a
# dependency): nothing it only recommends is needed.
dep e2e kde-cli-tools have kioclient5
dep e2e openssl have openssl                             # hashes the CA store the Qt clients and gvfs are given
dep e2e chromium have chromium                           # the web pages' browser tests
dep e2e libnss3-tools have certutil                      # the welcome page's Chrome-on-Linux steps, followed as printed
dep unit llvm have llvm-mc                               # reads back the NEON encodings armcrypto/gen writes
dep unit dnsmasq-base have dnsmasq                       # the DHCP server of netup's tests
dep unit,e2e iproute2 have ip
dep e2e python3-paramiko /usr/bin/python3 -c "import paramiko"
dep e2e python3-caldav /usr/bin/python3 -c "import caldav"
# The image and the boot test.
dep image,boot qemu-system-arm have qemu-system-arm
# QEMU's virtio NIC loads its option ROM from ipxe-qemu, a Recommends that
# --no-install-recommends leaves out: without it the boot tests' NIC stops
# at once ("failed to find romfile efi-virtio.rom").
dep boot ipxe-qemu test -f /usr/lib/ipxe/qemu/efi-virtio.rom
dep image,boot u-boot-qemu test -f /usr/lib/u-boot/qemu_arm/u-boot.bin
dep image,boot,unit dosfstools have mkfs.vfat
dep image,boot,unit mtools have mcopy
dep image,boot,unit e2fsprogs have mke2fs
dep image,unit kmod have depmod
dep image bmap-tools have bmaptool
dep image,boot xz-utils have xz
dep systemd,image dpkg have dpkg-deb
# The systemd units and the test under a real systemd.
dep systemd systemd have systemd-analyze
dep systemd debootstrap have debootstrap
dep systemd qemu-system-x86 have qemu-system-x86_64

if [ -n "$check" ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "test group ${want[*]:-all}: missing Debian packages: ${missing[*]} (scripts/install-test-deps.sh installs them)" >&2
    exit 1
  fi
  exit 0
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# staticcheck, pinned: make test wants no findings from this version.
staticcheck_version=0.8.2
staticcheck=$(go env GOPATH)/bin/staticcheck
if ! "$staticcheck" -version 2>/dev/null | grep -qF "($staticcheck_version)"; then
  echo "installing staticcheck v$staticcheck_version"
  go install "honnef.co/go/tools/cmd/staticcheck@v$staticcheck_version"
fi

#!/usr/bin/env bash
# Installs the Debian packages the tests use, if they are missing:
# real clients (curl, OpenSSH's sftp and ssh-keygen, rclone, litmus), OpenSSH's sshd,
# qemu-user-static (runs the ARM binary), file and binutils (ELF checks).
set -euo pipefail
need=()
command -v curl >/dev/null || need+=(curl)
command -v qemu-arm-static >/dev/null || need+=(qemu-user-static)
command -v file >/dev/null || need+=(file)
command -v readelf >/dev/null || need+=(binutils)
command -v python3 >/dev/null || need+=(python3)
command -v sftp >/dev/null || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)   # an SFTP target the copies are sent to
command -v rclone >/dev/null || need+=(rclone)
command -v litmus >/dev/null || need+=(litmus)
command -v nextcloudcmd >/dev/null || need+=(nextcloud-desktop-cmd)
command -v owncloudcmd >/dev/null || need+=(owncloud-client-cmd)
command -v vdirsyncer >/dev/null || need+=(vdirsyncer)
command -v sshfs >/dev/null || need+=(sshfs)
# GNOME Files' WebDAV, as the connect page's steps give it: gvfs's dav
# backend, gio, and a D-Bus session to run them in.
[ -x /usr/libexec/gvfsd-dav ] || need+=(gvfs-backends)
command -v gio >/dev/null || need+=(libglib2.0-bin)
command -v dbus-run-session >/dev/null || need+=(dbus-daemon)
command -v chromium >/dev/null || need+=(chromium)   # the web pages' browser tests
command -v certutil >/dev/null || need+=(libnss3-tools)   # the welcome page's Chrome-on-Linux steps, followed as printed
command -v llvm-mc >/dev/null || need+=(llvm)           # reads back the NEON encodings armcrypto/gen writes
command -v dnsmasq >/dev/null || need+=(dnsmasq-base)   # the DHCP server of netup's tests
command -v ip >/dev/null || need+=(iproute2)
/usr/bin/python3 -c "import paramiko" 2>/dev/null || need+=(python3-paramiko)
/usr/bin/python3 -c "import caldav" 2>/dev/null || need+=(python3-caldav)
# The image and the boot test.
command -v qemu-system-arm >/dev/null || need+=(qemu-system-arm)
# QEMU's virtio NIC loads its option ROM from ipxe-qemu, a Recommends that
# --no-install-recommends leaves out: without it the boot tests' NIC stops
# at once ("failed to find romfile efi-virtio.rom").
[ -f /usr/lib/ipxe/qemu/efi-virtio.rom ] || need+=(ipxe-qemu)
[ -f /usr/lib/u-boot/qemu_arm/u-boot.bin ] || need+=(u-boot-qemu)
command -v mkfs.vfat >/dev/null || need+=(dosfstools)
command -v mcopy >/dev/null || need+=(mtools)
command -v mke2fs >/dev/null || need+=(e2fsprogs)
command -v depmod >/dev/null || need+=(kmod)
command -v bmaptool >/dev/null || need+=(bmap-tools)
command -v xz >/dev/null || need+=(xz-utils)
command -v dpkg-deb >/dev/null || need+=(dpkg)
# The systemd units and the test under a real systemd.
command -v systemd-analyze >/dev/null || need+=(systemd)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
# staticcheck, pinned: make test wants no findings from this version.
staticcheck_version=0.8.2
staticcheck=$(go env GOPATH)/bin/staticcheck
if ! "$staticcheck" -version 2>/dev/null | grep -qF "($staticcheck_version)"; then
  echo "installing staticcheck v$staticcheck_version"
  go install "honnef.co/go/tools/cmd/staticcheck@v$staticcheck_version"
fi

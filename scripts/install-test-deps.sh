#!/usr/bin/env bash
# Installs the Debian packages the tests use, if they are missing:
# real clients (curl, OpenSSH's sftp and ssh-keygen, rclone, litmus),
# qemu-user-static (runs the ARM binary), file and binutils (ELF checks).
set -euo pipefail
need=()
command -v curl >/dev/null || need+=(curl)
command -v qemu-arm-static >/dev/null || need+=(qemu-user-static)
command -v file >/dev/null || need+=(file)
command -v readelf >/dev/null || need+=(binutils)
command -v python3 >/dev/null || need+=(python3)
command -v sftp >/dev/null || need+=(openssh-client)
command -v rclone >/dev/null || need+=(rclone)
command -v litmus >/dev/null || need+=(litmus)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

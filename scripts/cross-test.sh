#!/usr/bin/env bash
# Checks the board binary: a static 32-bit ARM ELF that runs `bonesync bench
# -quick` under qemu-arm-static and writes a report whose choice is sane.
set -euo pipefail
bin=${1:?usage: cross-test.sh BINARY}

desc=$(file -b "$bin")
echo "cross-test: $desc"
for want in "ELF 32-bit LSB" "ARM" "EABI5" "statically linked"; do
  case "$desc" in *"$want"*) ;; *) echo "cross-test: FAIL: $bin is not $want" >&2; exit 1 ;; esac
done
# No program interpreter means nothing to load at run time: truly static.
if readelf -l "$bin" | grep -q INTERP; then
  echo "cross-test: FAIL: $bin has a program interpreter" >&2; exit 1
fi
# Built for ARMv7 with cgo off, as the go command recorded it.
settings=$(go version -m "$bin")
for want in "GOARCH=arm" "GOARM=7" "CGO_ENABLED=0"; do
  grep -q "build[[:space:]]*$want" <<<"$settings" || { echo "cross-test: FAIL: $bin lacks $want" >&2; exit 1; }
done

qemu=$(command -v qemu-arm-static || true)
[ -n "$qemu" ] || { echo "cross-test: FAIL: qemu-arm-static missing (apt-get install qemu-user-static)" >&2; exit 1; }
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
start=$(date +%s)
"$qemu" "$bin" bench -quick -state "$state" > "$state/console.txt" 2> "$state/log.txt" || {
  echo "cross-test: FAIL: bonesync bench under qemu-arm-static" >&2; tail -20 "$state/log.txt" >&2; exit 1; }
echo "cross-test: bench under qemu-arm-static took $(( $(date +%s) - start )) s"
# Built with armcrypto's overlay: no word of the slow path.
if grep -q "Go's own crypto" "$state/log.txt"; then
  echo "cross-test: FAIL: $bin says it was built without armcrypto's overlay" >&2; exit 1
fi
python3 - "$state" <<'PY'
import json, sys, os
d = sys.argv[1]
r = json.load(open(os.path.join(d, "report.json")))
console = open(os.path.join(d, "console.txt")).read()
assert r["machine"]["arch"] == "armv7", r["machine"]["arch"]
tls, ssh = r["decision"]["tls"]["key"], r["decision"]["ssh"]["key"]
assert tls in ("rsa-2048", "rsa-3072", "rsa-4096", "ecdsa-p256", "ecdsa-p384"), tls
assert ssh in ("rsa-3072", "rsa-4096", "ed25519"), ssh  # the candidates (keys.SSHCandidates)
assert len(r["tls"]) == 6 and len(r["ssh"]) == 3, "candidate rows missing"
assert "Chosen HTTPS key: " + tls in console, "console and report.json disagree"
print("cross-test: ok: armv7 report chose", tls, "for HTTPS and", ssh, "for SFTP")
PY

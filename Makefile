# bonesync: `make run` starts the appliance on this machine; `make test` runs
# every test. See README.md, and docs/ for the rest.

GO        ?= go
SHELL     := /bin/bash
OUT       ?= out
# The clock floor: never trust a clock that reads earlier than the build.
BUILD_UNIX := $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),$(shell date +%s))
VERSION   ?= 0.1.0+$(shell git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || echo 0)
LDFLAGS   := -s -w -X github.com/bonesync/bonesync/appliance/clock.BuildUnix=$(BUILD_UNIX) -X main.Version=$(VERSION)
GOFLAGS_B := -trimpath -ldflags '$(LDFLAGS)'
# The Go release go.mod names, for every build and test here: with another
# local Go the go command fetches and runs this one (GOTOOLCHAIN, from the
# module proxy, once), so the board's binary comes out the same and
# armcrypto's overlay, written for exactly this release, applies.
# An explicit GOTOOLCHAIN in the environment (local, for an offline
# packager) is kept.
GO_PINNED := go$(shell sed -n 's/^go //p' go.mod)
GOTOOLCHAIN ?= $(GO_PINNED)
export GOTOOLCHAIN

.PHONY: all armcrypto-overlay build build-arm build-std build-arm-std fuzz-arm crypto-full run bench image qemu qemu-fresh deb install docs test test-unit test-fuzz test-cross test-image test-boot test-systemd test-systemd-vm clean

all: build build-arm

# Every binary is built through the crypto overlay (armcrypto: on the
# board 32-bit-limb X25519, P-256, Poly1305 and RSA arithmetic in place of
# Go's 64-bit ones, NEON hashes and ChaCha20; on a PC RSA's Montgomery
# arithmetic with MULX and ADX). It refuses another Go or x/crypto than it
# was tested with; the -std targets build without it. The overlay is
# written once per make, before any build that takes it.
ARMCRYPTO := $(OUT)/armcrypto
OVERLAID   = env -u GOROOT "$$(cat $(ARMCRYPTO)/go-command)" build -modfile=$(ARMCRYPTO)/go.mod -overlay=$(ARMCRYPTO)/overlay.json $(GOFLAGS_B)
armcrypto-overlay:
	$(GO) run ./armcrypto -out $(ARMCRYPTO)

# This machine's binary.
build: armcrypto-overlay
	$(OVERLAID) -o $(OUT)/bonesync ./appliance

# The board's binary: static, 32-bit ARMv7, no cgo.
ARM_ENV   := GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0
build-arm: armcrypto-overlay
	$(ARM_ENV) $(OVERLAID) -o $(OUT)/bonesync-armv7 ./appliance

# The same with the standard library's crypto as it is, for comparison
# (make bench counts both) or for a toolchain the overlay was not made for.
build-std:
	$(GO) build $(GOFLAGS_B) -o $(OUT)/bonesync ./appliance
build-arm-std:
	$(ARM_ENV) $(GO) build $(GOFLAGS_B) -o $(OUT)/bonesync-armv7-std ./appliance

# The appliance on this machine: state in ./var, high ports, the quick
# benchmark budget on first start.
# make run HTTPS=9443 HTTP=9080 SSH=2223 moves the ports (8080 is often
# taken). The first run writes a commented ./var/bonesync.conf to edit.
HTTPS ?= 8443
HTTP  ?= 8080
SSH   ?= 2222
run: build
	@mkdir -p ./var && test -e ./var/bonesync.conf || { $(OUT)/bonesync config-example > ./var/bonesync.conf && echo "make run: wrote ./var/bonesync.conf, every setting at its default (edit it, then make run again)"; }
	$(OUT)/bonesync serve -state ./var -config ./var/bonesync.conf -https :$(HTTPS) -http :$(HTTP) -ssh :$(SSH) -quick

# The generated parts of the docs: the config reference and the command
# list (tests check both).
docs: build
	scripts/config-doc.sh $(OUT)/bonesync docs/config.md
	scripts/commands-doc.sh $(OUT)/bonesync docs/commands.md

# Every test group in turn, stopping at the first that fails, and the time
# each took at the end (out/test-times.txt).
TEST_GROUPS := test-unit test-fuzz test-cross test-systemd test-image test-boot test-systemd-vm
test:
	@mkdir -p $(OUT); : > $(OUT)/test-times.txt
	@for g in $(TEST_GROUPS); do \
	  s=$$(date +%s); \
	  if ! $(MAKE) --no-print-directory $$g; then \
	    echo "$$g FAILED after $$(( $$(date +%s) - s )) s" >> $(OUT)/test-times.txt; \
	    echo; echo "make test: time per group"; cat $(OUT)/test-times.txt; exit 1; \
	  fi; \
	  echo "$$g $$(( $$(date +%s) - s )) s" >> $(OUT)/test-times.txt; \
	done
	@echo; echo "make test: time per group"; cat $(OUT)/test-times.txt

DESTDIR   ?=
PREFIX    ?= /usr

# bonesync beside nginx/OpenSSL (HTTPS) and OpenSSH's sshd (SFTP) on this
# machine, plus ARM instruction counts per TLS handshake under qemu-arm:
# ratios from one run, in $(OUT)/bench.md. As root (sshd); about 3 minutes.
# Shorter: make bench BENCHFLAGS='-duration 5s'
bench: build build-arm
	bench/deps.sh $(OUT)/cache/bench-armhf
	$(GO) run ./bench -bonesync $(OUT)/bonesync -bonesync-arm $(OUT)/bonesync-armv7 -sysroot $(OUT)/cache/bench-armhf/sysroot -out $(OUT)/bench.md $(BENCHFLAGS)
	$(MAKE) --no-print-directory crypto-full

# Debian packages for the BeagleBone's Debian (armhf) and for a PC (amd64).
deb: build-arm
	GOOS=linux GOARCH=amd64 CGO_ENABLED=0 $(OVERLAID) -o $(OUT)/bonesync-amd64 ./appliance
	SOURCE_DATE_EPOCH=$(BUILD_UNIX) scripts/build-deb.sh armhf $(OUT)/bonesync-armv7 $(VERSION) $(OUT)
	SOURCE_DATE_EPOCH=$(BUILD_UNIX) scripts/build-deb.sh amd64 $(OUT)/bonesync-amd64 $(VERSION) $(OUT)

# For everyone else: make install DESTDIR=/some/root
install: build
	install -D -m 0755 $(OUT)/bonesync $(DESTDIR)$(PREFIX)/bin/bonesync
	install -d $(DESTDIR)/lib/systemd/system $(DESTDIR)/etc/bonesync
	install -m 0644 systemd/*.service systemd/*.socket $(DESTDIR)/lib/systemd/system/
	test -e $(DESTDIR)/etc/bonesync/bonesync.conf || $(OUT)/bonesync config-example > $(DESTDIR)/etc/bonesync/bonesync.conf
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/bonesync/README.md
	install -d $(DESTDIR)$(PREFIX)/share/doc/bonesync/docs
	install -m 0644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/bonesync/docs/

# Under a real systemd: Debian bookworm (debootstrap, cached) booted in QEMU,
# the .deb installed, the service killed and wedged.
test-systemd-vm: deb
	scripts/install-test-deps.sh --check systemd
	$(GO) test -count=1 -timeout 40m -v -tags vm -run TestUnderSystemd ./systemd/ 2>&1 | tee $(OUT)/systemd-vm-test.log | grep -E '^(--- |\s+vm_test|ok|FAIL|PASS)'; test $${PIPESTATUS[0]} -eq 0

# The units: systemd-analyze verify and security, the packages' contents.
test-systemd: deb
	scripts/install-test-deps.sh --check systemd
	$(GO) test -count=1 -v -run 'TestUnits|TestDeb' ./systemd/ 2>&1 | tee $(OUT)/systemd-test.log | grep -E '^(--- |\s+units_test|ok|FAIL|PASS)'; test $${PIPESTATUS[0]} -eq 0

# The SD-card image: Debian's armhf kernel and U-Boot (pinned, fetched with
# apt-get download) and bonesync as /init. No root, no loop devices.
# The update bundle is signed with UPDATE_KEY (made there on first use, with
# .pub beside it; keep it safe and out of git), and the image trusts it.
UPDATE_KEY ?= $(OUT)/update-signing.key
image: build-arm
	scripts/fetch-boot.sh
	SOURCE_DATE_EPOCH=$(BUILD_UNIX) $(GO) run ./image -binary $(OUT)/bonesync-armv7 -out $(OUT) -version $(VERSION) -sign-key $(UPDATE_KEY)

# Boot the image through U-Boot in QEMU, the serial console on this terminal.
qemu: image
	IMAGE_VERSION=$(VERSION) scripts/qemu.sh $(OUT)/bonesync-bbb.img

# The same with a fresh card: a first boot (new CA, new password, no files).
qemu-fresh: image
	FRESH=1 IMAGE_VERSION=$(VERSION) scripts/qemu.sh $(OUT)/bonesync-bbb.img

# The image's checks (partition table, FAT fields, MLO first, fsck, a second
# build with the same bytes) and the boot test in QEMU.
test-image: image
	scripts/install-test-deps.sh --check image
	SOURCE_DATE_EPOCH=$(BUILD_UNIX) BONESYNC_IMAGE=$(CURDIR)/$(OUT)/bonesync-bbb.img UPDATE_KEY=$(abspath $(UPDATE_KEY)) $(GO) test -count=1 ./image/
test-boot: image
	scripts/install-test-deps.sh --check boot
	BONESYNC_IMAGE=$(CURDIR)/$(OUT)/bonesync-bbb.img UPDATE_KEY=$(abspath $(UPDATE_KEY)) $(GO) test -count=1 -timeout 30m -parallel 4 -run 'TestBoot|TestUpdate|TestDataDisk|TestEMMC|TestGadget' -tags vm -v ./image/ 2>&1 | tee $(OUT)/boot-test.log | grep -E '^(=== RUN|--- |\s+(update_|datadisk_|emmc_|gadget_)?vm_test|PASS|FAIL|ok)'; test $${PIPESTATUS[0]} -eq 0

# The static checks cover every package, the VM tests' files included:
# gofmt, go vet, staticcheck (the version scripts/install-test-deps.sh
# installs) with no findings, the project's own lint for dropped errors of
# encoders, writes, syncs and closes (lint/droppederr) over the code that
# runs on the box or builds its card, and no build output tracked by git.
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck
test-unit:
	scripts/install-test-deps.sh --check unit e2e
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags vm ./image/ ./systemd/
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags vm ./image/ ./systemd/
	$(GO) run ./lint/droppederr -test=false ./appliance/... ./image/... ./armcrypto/...
	scripts/check-tracked.sh
	$(GO) test -count=1 -timeout 30m $$($(GO) list ./... | grep -v -e /image -e /systemd)

# The fuzz targets, briefly: path confinement, picture decoding, and the
# parsers of what the network sends (calendar and contact objects, the If
# header, Nextcloud chunk names, the update manifest), and the USB drive's
# FAT image (that Image never panics and reads back). A count of inputs,
# not a time, which the fuzzer can overrun on a loaded machine (longer:
# FUZZTIME=10m FUZZDECODE=10m FUZZPARSE=10m).
FUZZTIME ?= 300000x
FUZZDECODE ?= 50000x
FUZZPARSE ?= 50000x
test-fuzz:
	$(GO) test -run '^$$' -fuzz FuzzConfinement -fuzztime $(FUZZTIME) ./appliance/store
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZDECODE) ./appliance/preview
	$(GO) test -run '^$$' -fuzz FuzzObject -fuzztime $(FUZZPARSE) ./appliance/calendars
	$(GO) test -run '^$$' -fuzz FuzzIfHeader -fuzztime $(FUZZPARSE) ./appliance/files
	$(GO) test -run '^$$' -fuzz FuzzChunkName -fuzztime $(FUZZPARSE) ./appliance/files
	$(GO) test -run '^$$' -fuzz FuzzManifest -fuzztime $(FUZZPARSE) ./appliance/update
	$(GO) test -run '^$$' -fuzz FuzzImage -fuzztime $(FUZZPARSE) ./appliance/vfat

# The ARM crypto overlay against the standard library's, at length: random
# cases of each replaced primitive under qemu-arm, compared with the
# untouched build (make test runs 3000).
CASES ?= 300000
# The crypto overlay's exhaustive run: the standard packages' tests whole
# (make test runs them -short) and many differential cases, under qemu-arm
# and natively on amd64. make bench runs it with CRYPTO_CASES.
CRYPTO_CASES ?= 30000
crypto-full:
	$(GO) test -count=1 -timeout 0 -run 'TestOn(ARM|AMD64)/(std|differential)' ./armcrypto -args -full -cases $(CRYPTO_CASES)

fuzz-arm:
	$(GO) test -count=1 -timeout 0 -v -run 'TestOnARM/differential' ./armcrypto -args -cases $(CASES)

# Cross-build for the board, check the ELF, run the benchmark under qemu-arm-static.
test-cross: build-arm
	scripts/install-test-deps.sh --check cross
	scripts/cross-test.sh $(OUT)/bonesync-armv7

clean:
	rm -rf $(OUT)

# bonesync: `make run` starts the appliance on this machine; `make test` runs
# every test. See README.md.

GO        ?= go
SHELL     := /bin/bash
OUT       ?= out
# The clock floor: never trust a clock that reads earlier than the build.
BUILD_UNIX := $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),$(shell date +%s))
LDFLAGS   := -s -w -X github.com/bonesync/bonesync/appliance/clock.BuildUnix=$(BUILD_UNIX)
GOFLAGS_B := -trimpath -ldflags '$(LDFLAGS)'

.PHONY: all build build-arm run image qemu test test-unit test-fuzz test-cross test-image test-boot clean

all: build build-arm

build:
	$(GO) build $(GOFLAGS_B) -o $(OUT)/bonesync ./appliance

# The board's binary: static, 32-bit ARMv7, no cgo.
build-arm:
	GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0 $(GO) build $(GOFLAGS_B) -o $(OUT)/bonesync-armv7 ./appliance

# The appliance on this machine: state in ./var, high ports, the quick
# benchmark budget on first start.
run: build
	$(OUT)/bonesync serve -state ./var -https :8443 -http :8080 -ssh :2222 -quick

test: test-unit test-fuzz test-cross test-image test-boot

# The SD-card image: Debian's armhf kernel and U-Boot (pinned, fetched with
# apt-get download) and bonesync as /init. No root, no loop devices.
image: build-arm
	scripts/fetch-boot.sh
	SOURCE_DATE_EPOCH=$(BUILD_UNIX) $(GO) run ./image -binary $(OUT)/bonesync-armv7 -out $(OUT)

# Boot the image through U-Boot in QEMU, the serial console on this terminal.
qemu: image
	scripts/qemu.sh $(OUT)/bonesync-bbb.img

# The image's checks (partition table, FAT fields, MLO first, fsck, a second
# build with the same bytes) and the boot test in QEMU.
test-image: image
	SOURCE_DATE_EPOCH=$(BUILD_UNIX) BONESYNC_IMAGE=$(CURDIR)/$(OUT)/bonesync-bbb.img $(GO) test -count=1 ./image/
test-boot: image
	BONESYNC_IMAGE=$(CURDIR)/$(OUT)/bonesync-bbb.img $(GO) test -count=1 -timeout 20m -run 'TestBoot' -tags vm -v ./image/ 2>&1 | tee $(OUT)/boot-test.log | grep -E '^(=== RUN|--- |\s+vm_test|PASS|FAIL|ok)'; test $${PIPESTATUS[0]} -eq 0

test-unit:
	@test -z "$$(gofmt -l appliance)" || { echo "gofmt needed:"; gofmt -l appliance; exit 1; }
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# The path-confinement fuzz target, briefly (longer: make test-fuzz FUZZTIME=10m).
FUZZTIME ?= 20s
test-fuzz:
	$(GO) test -run '^$$' -fuzz FuzzConfinement -fuzztime $(FUZZTIME) ./appliance/store

# Cross-build for the board, check the ELF, run the benchmark under qemu-arm-static.
test-cross: build-arm
	scripts/cross-test.sh $(OUT)/bonesync-armv7

clean:
	rm -rf $(OUT)

# bonesync: `make run` starts the appliance on this machine; `make test` runs
# every test. See README.md.

GO        ?= go
OUT       ?= out
# The clock floor: never trust a clock that reads earlier than the build.
BUILD_UNIX := $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),$(shell date +%s))
LDFLAGS   := -s -w -X github.com/bonesync/bonesync/appliance/clock.BuildUnix=$(BUILD_UNIX)
GOFLAGS_B := -trimpath -ldflags '$(LDFLAGS)'

.PHONY: all build build-arm run test test-unit test-fuzz test-cross clean

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

test: test-unit test-fuzz test-cross

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

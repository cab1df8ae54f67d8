# Thin wrapper over CMake; see README.md.
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)

.PHONY: all build deps test unit integration vm conformance bench demo install uninstall clean

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

deps:
	scripts/install-deps.sh

unit: build
	$(BUILD)/unit-tests

integration: build
	tests/integration/run.sh $(BUILD)

vm: build
	tests/vm/run.sh --build $(BUILD)

conformance: build
	tests/conformance/run.sh --hide-cgroup2 --expect-pass-list tests/conformance/expected-pass.txt \
		--markdown docs/conformance.md $(BUILD)/cerberus crun runc

# Every tier this machine can run; the last line sums them up.
test: build
	tests/run-all.sh $(BUILD)

bench: build
	bench/run.sh --build $(BUILD)

install: build
	install -D -m 0755 $(BUILD)/cerberus $(DESTDIR)$(PREFIX)/bin/cerberus

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cerberus

clean:
	rm -rf $(BUILD)

# SPDX-License-Identifier: Apache-2.0
# Thin wrapper over CMake; see README.md.
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)

.PHONY: all build deps test unit fuzz integration vm test-kernels vm-systemd conformance cve-table bench bench-policy bench-dns bench-dns-floor bench-egress bench-egress-floor bench-compile bench-observer-floor demo install uninstall clean

all: build

build:
	cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

deps:
	scripts/install-deps.sh

unit: build
	$(BUILD)/unit-tests

# libFuzzer targets, built with clang in $(BUILD)-fuzz; FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 60
fuzz:
	tests/fuzz/run.sh --build $(BUILD)-fuzz --seconds $(FUZZ_SECONDS)

integration: build
	tests/integration/run.sh $(BUILD)

# The real-kernel lane on one kernel of tests/vm/kernels.list (6.1, 6.12, 7.x).
KERNEL ?= 6.1
vm: build
	tests/vm/run.sh --build $(BUILD) --kernel $(KERNEL)

# Every policy case on every kernel of the lane, in each boot (BPF LSM, fmod_ret, landlock); the verdicts
# go to tests/policy/results/<kernel>/, and docs/policy.md's coverage tables are written from them.
test-kernels: build
	tests/vm/test-kernels.sh --build $(BUILD)
	scripts/coverage-table.sh

# systemd as init with Podman, Docker and containerd on their defaults (the root image is cached).
vm-systemd: build
	tests/vm/run.sh --systemd --build $(BUILD)

# The host as it is, then crun and runc with cgroup2 hidden (crun refuses hybrid hosts);
# both runs update the table in docs/conformance.md.
conformance: build
	tests/conformance/run.sh --expect-pass-list tests/conformance/expected-pass.txt \
		--markdown docs/conformance.md $(BUILD)/cerberus crun runc
	tests/conformance/run.sh --hide-cgroup2 --markdown docs/conformance.md crun runc

# runc's escapes since 2019 against cerberus, runc and crun in one run; the table in docs/security.md.
cve-table: build
	tests/security/cve_table.sh --markdown docs/security.md $(BUILD)

# The races of tests/security/cve_escape.sh again on the VM lane's kernel (pure cgroup v2), about 4 min
# under emulation: out of `make test`, which runs them natively (tests/integration/cve_escape.bats).
test-races: build
	tests/vm/run.sh --build $(BUILD) --cases tests/vm/races

# runc's own integration suite (Debian's runc 1.1.5 source) against cerberus, then runc
# itself as the control; rewrites the runc-suite tables of docs/conformance.md.
runc-suite: build
	tests/runc-suite/run.sh --markdown docs/conformance.md $(BUILD)/cerberus runc

# Every tier this machine can run; the last line sums them up.
test: deps build
	tests/run-all.sh $(BUILD)

# The main job: an agent container under a policy (see scripts/demo.sh).
demo: deps build
	scripts/demo.sh $(BUILD)

# On this host, then `run` with --systemd-cgroup (and cgroupfs) in one boot of the systemd VM lane.
bench: build
	bench/run.sh --build $(BUILD)
	bench/policy.sh --build $(BUILD) --boots bpf-lsm --scale 0
	bench/systemd.sh --build $(BUILD)

# The agent policy's cost, measured in the real-kernel VM lane (BPF LSM).
bench-policy: build
	bench/policy.sh --build $(BUILD)

# Query latency through the DNS gate against straight to the resolver, the gate's CPU and memory.
bench-dns: build
	bench/dns.sh $(BUILD)

# The same, with the floor: the first queries through a forwarder doing nothing (bench/dns_floor/relay.c).
bench-dns-floor: build
	bench/dns.sh $(BUILD) --floor

# Request latency and throughput through the egress proxy (allowed_http) against direct.
bench-egress: build
	bench/egress.sh $(BUILD)

# The same, with the floor: a zero-work TCP relay where the proxy sits (bench/egress_floor/relay.c).
bench-egress-floor: build
	bench/egress.sh $(BUILD) --floor

# CPU time to compile and narrow large allowed_hosts lists (bench/policy_compile.cpp).
bench-compile: build
	$(BUILD)/cerberus-bench-compile 2048 16384 65536

# What any program on the system call tracepoints costs the open loop on this host (issue 31's observer).
bench-observer-floor: build
	bench/observer_floor.sh $(BUILD)

# The runtime, the containerd shim (with the "runc" it puts first on its PATH),
# the OCI hook and its hooks.d files, the policy profiles, and the engines'
# config snippets (docs/engines/).
SYSCONFDIR ?= /etc
POLICIES = agent build offline
SNIPPETS = containers.conf.d/cerberus.conf containerd/config.toml docker/daemon.json \
	kubernetes/runtimeclass.yaml kubernetes/agent-pod.yaml
HOOKS_D = cerberus-create-runtime.json cerberus-poststop.json
SHARE = $(DESTDIR)$(PREFIX)/share/cerberus

install: build
	install -D -m 0755 $(BUILD)/cerberus $(DESTDIR)$(PREFIX)/bin/cerberus
	install -D -m 0755 containerd-shim/containerd-shim-runc-cerberus $(DESTDIR)$(PREFIX)/bin/containerd-shim-runc-cerberus
	install -d $(DESTDIR)$(PREFIX)/libexec/cerberus
	ln -sfn ../../bin/cerberus $(DESTDIR)$(PREFIX)/libexec/cerberus/runc
	install -m 0755 $(BUILD)/cerberus-hook $(DESTDIR)$(PREFIX)/libexec/cerberus/cerberus-hook
	install -d $(SHARE)/oci-hooks.d
	# The hooks.d files name the hook by its installed path.
	for h in $(HOOKS_D); do sed 's|/usr/local/|$(PREFIX)/|' oci-hooks/hooks.d/$$h >$(SHARE)/oci-hooks.d/$$h || exit 1; done
	for p in $(POLICIES); do install -D -m 0644 config/policies/$$p.json $(DESTDIR)$(SYSCONFDIR)/cerberus/policies/$$p.json || exit 1; done
	for s in $(SNIPPETS); do install -D -m 0644 config/$$s $(SHARE)/$$s || exit 1; done

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cerberus $(DESTDIR)$(PREFIX)/bin/containerd-shim-runc-cerberus
	rm -f $(DESTDIR)$(PREFIX)/libexec/cerberus/runc $(DESTDIR)$(PREFIX)/libexec/cerberus/cerberus-hook
	for h in $(HOOKS_D); do rm -f $(SHARE)/oci-hooks.d/$$h; done
	for p in $(POLICIES); do rm -f $(DESTDIR)$(SYSCONFDIR)/cerberus/policies/$$p.json; done
	for s in $(SNIPPETS); do rm -f $(SHARE)/$$s; done
	rmdir $(DESTDIR)$(PREFIX)/libexec/cerberus $(DESTDIR)$(PREFIX)/libexec $(SHARE)/oci-hooks.d $(SHARE)/containers.conf.d $(SHARE)/containerd $(SHARE)/docker \
		$(SHARE)/kubernetes $(SHARE) $(DESTDIR)$(SYSCONFDIR)/cerberus/policies $(DESTDIR)$(SYSCONFDIR)/cerberus 2>/dev/null || true

clean:
	rm -rf $(BUILD)

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The DNS gate against dnsmasq in a container's network namespace, alone
# (`cerberus dns-gate`) and in a policed container's lifecycle: see
# dns_gate.sh. The policy case with the kernel's steering is
# tests/vm/cases/policy_dns.sh.

load helpers

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    for tool in dig dnsmasq bpftool nsenter python3; do
        command -v "$tool" >/dev/null || skip "needs $tool"
    done
    setup_bundle
    set_args sleep 300
    ln -sf busybox "$BUNDLE/rootfs/bin/nslookup"
}

run_script() {
    run env CERBERUS="$CERBERUS" ROOT="$ROOT" BUNDLE="$BUNDLE" ID="$ID" WORK="$BATS_TEST_TMPDIR" \
        unshare -m "$BATS_TEST_DIRNAME/dns_gate.sh" "$1"
    echo "$output"
    [ "$status" -eq 0 ]
}

teardown() {
    teardown_bundle
    # the script's mount points; a real gate's files keep them
    rmdir /run/cerberus-dns /run/cerberus-asks 2>/dev/null || true
}

@test "dns gate: allowed names answered and admitted, others REFUSED, private answers kept out, forget" {
    run_script gate
}

@test "dns gate: a policy with names is served from create to delete (landlock backend)" {
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    edit_config '.annotations["io.cerberus.policy"] = "{\"allowed_hosts\":[\"allowed.example:443\"]}"'
    run_script lifecycle
}

@test "dns gate: learn mode proposes the name an audit run asked and reached, not its address (landlock backend)" {
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    edit_config '.annotations["io.cerberus.policy"] = "{\"mode\":\"audit\",\"allowed_hosts\":[\"allowed.example:443\"]}"'
    run_script learn
}

@test "dns gate: two containers with different names in one network namespace, each resolves only its own (landlock backend)" {
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    edit_config '.annotations["io.cerberus.policy"] = "{\"allowed_hosts\":[\"allowed.example:443\"]}"'
    run_script pod
}

@test "dns gate: a container flooding the gate does not hold up another's answers beyond the bound of docs/policy.md" {
    run_script flood
}

@test "dns gate: a lookup of an asked name waits for the operator: allowed once, denied, timed out, granted for 2s until it expires, always and revoked (landlock backend)" {
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    edit_config '.annotations["io.cerberus.policy"] = "{\"allowed_hosts\":[\"allowed.example:443\"],\"ask_hosts\":{\"names\":[\"other.example:443\",\"*.wild.example:80\"],\"ask_timeout\":\"3s\"}}"'
    run_script ask
}

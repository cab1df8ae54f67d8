#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The egress proxy: allowed_http's request rules and the host's credentials with curl, python3, git and wget
# against local HTTPS servers (egress.sh); audit mode at the proxy and learn mode over its records (egress_audit.sh).

load helpers
load egress_setup

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    for tool in curl dnsmasq openssl nsenter python3 git wget; do
        command -v "$tool" >/dev/null || skip "needs $tool"
    done
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    setup_bundle
    set_args sleep 300
    egress_bundle '{"allowed_hosts": [],
        "allowed_http": ["GET https://allowed.example/repos/*", "HEAD https://allowed.example/repos/*",
                         "POST https://allowed.example/upload",
                         "GET https://second.example/*", "GET wss://allowed.example/socket/*"]}'
}

teardown() {
    teardown_bundle
    rmdir /run/cerberus-dns /run/cerberus-asks /etc/cerberus 2>/dev/null || true # the script's mount points, when empty
}

@test "egress proxy: allowed requests pass, others get 403 and a record, a host's credential is set by the proxy and never seen in the container, a WebSocket upgrade by its wss rule, fronting and pinned clients fail closed, a killed proxy fails closed and comes back (landlock backend)" {
    run env CERBERUS="$CERBERUS" ROOT="$ROOT" BUNDLE="$BUNDLE" ID="$ID" WORK="$BATS_TEST_TMPDIR" \
        HELPERS="$BATS_TEST_DIRNAME/../helpers" unshare -m "$BATS_TEST_DIRNAME/egress.sh"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "egress proxy: in audit mode a request outside allowed_http reaches the server and is recorded audit; the policy learned from that trail allows it in enforce mode and still refuses others (landlock backend)" {
    run env CERBERUS="$CERBERUS" ROOT="$ROOT" BUNDLE="$BUNDLE" ID="$ID" WORK="$BATS_TEST_TMPDIR" \
        HELPERS="$BATS_TEST_DIRNAME/../helpers" unshare -m "$BATS_TEST_DIRNAME/egress_audit.sh"
    echo "$output"
    [ "$status" -eq 0 ]
}

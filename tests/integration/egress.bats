#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The egress proxy: allowed_http's request rules with curl and python3
# against local HTTPS servers (egress.sh).

load helpers

setup() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    for tool in curl dnsmasq openssl nsenter python3; do
        command -v "$tool" >/dev/null || skip "needs $tool"
    done
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    setup_bundle
    set_args sleep 300
    mkdir -p "$BUNDLE/rootfs/usr" "$BUNDLE/rootfs/etc/ssl/certs"
    ln -s usr/lib "$BUNDLE/rootfs/lib"
    ln -s usr/lib64 "$BUNDLE/rootfs/lib64"
    cp /etc/ssl/certs/ca-certificates.crt "$BUNDLE/rootfs/etc/ssl/certs/"
    edit_config '.mounts += [{"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]}]'
    edit_config '.annotations["io.cerberus.policy"] = ({"allowed_hosts": [],
        "allowed_http": ["GET https://allowed.example/repos/*", "POST https://allowed.example/upload",
                         "GET https://second.example/*", "GET wss://allowed.example/socket/*"]} | tojson)'
}

teardown() {
    teardown_bundle
    rmdir /run/cerberus-dns /run/cerberus-asks /etc/cerberus 2>/dev/null || true # the script's mount points, when empty
}

@test "egress proxy: allowed requests pass, others get 403 and a record, a WebSocket upgrade by its wss rule, fronting and pinned clients fail closed, a killed proxy fails closed and comes back (landlock backend)" {
    run env CERBERUS="$CERBERUS" ROOT="$ROOT" BUNDLE="$BUNDLE" ID="$ID" WORK="$BATS_TEST_TMPDIR" \
        HELPERS="$BATS_TEST_DIRNAME/../helpers" unshare -m "$BATS_TEST_DIRNAME/egress.sh"
    echo "$output"
    [ "$status" -eq 0 ]
}

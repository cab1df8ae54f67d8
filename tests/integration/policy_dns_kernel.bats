#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Host names in allowed_hosts, the kernel's half (issue 17), natively under the landlock backend: DNS queries
# steered to the gate's address and their answers given the source asked, port 53 not bindable, addresses
# admitted in cerb_names until they expire and removed at delete, create refused without a network namespace
# of the container's own (tests/vm/cases/policy_dns_steer.sh, which the VM lane runs under the BPF LSM).

load helpers

setup_file() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
}

@test "policy dns steering on landlock" {
    run "$BATS_TEST_DIRNAME/../policy/run-native.sh" "$(dirname "$CERBERUS")" --enforcement landlock \
        "$BATS_TEST_DIRNAME/../vm/cases/policy_dns_steer.sh"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"VMTEST ok policy_dns_steer: names: binding UDP port 53 refused"* ]]
    [[ "$output" == *"VMTEST ok policy_dns_steer: names: binding UDP port 5353 works"* ]]
    [[ "$output" == *"VMTEST ok policy_dns_steer: no names: binding UDP port 53 works"* ]]
    [[ "$output" == *"VMTEST ok policy_dns_steer: names: UDP query by sendto steered"* ]]
    [[ "$output" == *"VMTEST ok policy_dns_steer: names: sendto port 54 refused"* ]]
    [[ "$output" == *"VMTEST ok policy_dns_steer: names without a network namespace refused at create"* ]]
    [[ "$output" == *"VMTEST ok policy_dns_steer: the refused create left no cgroup"* ]]
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The policy cases (tests/vm/cases/policy_*.sh), written once for every backend, run natively on this host
# under the landlock backend, each denial beside its control; the VM lane runs the same under the BPF LSM.
# Where a case cannot hold on a backend it says so (a skip verdict naming the backend), and
# scripts/coverage-table.sh shows it in docs/policy.md.

load helpers

setup_file() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    export RESULTS_DIR="${CERBERUS_POLICY_RESULTS:-$BATS_FILE_TMPDIR}"
}

run_case() {
    run "$BATS_TEST_DIRNAME/../policy/run-native.sh" "$(dirname "$CERBERUS")" --enforcement landlock \
        --results "$RESULTS_DIR/landlock-$1.txt" "$BATS_TEST_DIRNAME/../vm/cases/policy_$1.sh"
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "policy files on landlock" { run_case files; }
@test "policy network on landlock" { run_case network; }
@test "policy exec on landlock" { run_case exec; }
@test "policy escalation on landlock" { run_case escalation; }
@test "policy bypasses on landlock" { run_case bypass; }
@test "policy hidden paths on landlock" { run_case hidden; }
@test "policy entry through exec on landlock" { run_case entry; }
@test "policy lifecycle on landlock" { run_case lifecycle; }
@test "policy names bound to rules on landlock" { run_case names; }
@test "policy inode changes on landlock" { run_case inode; }
@test "policy rerouted packets on landlock" { run_case reroute; }
@test "policy nesting on landlock" { run_case nesting; }
@test "policy exec into a running container on landlock" { run_case exec_into; }
@test "policy learn on landlock" { run_case learn; }
@test "policy DNS steering on landlock" { run_case dns_steer; }
@test "policy DNS gate on landlock" { run_case dns; }
@test "policy system call ABIs on landlock" { run_case abi; }
@test "policy denied and read-only paths keep their place on landlock" { run_case place; }
@test "policy the agent stays in its cgroup on landlock" { run_case cgroup; }
@test "policy processes outside the container out of reach on landlock" { run_case reach; }
@test "policy a datagram's real destination on landlock" { run_case device; }

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test tier this machine can run, in order of cost; the last line
# sums the tiers up. A tier that fails does not stop the others.
set -uo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
passed=0 failed=0 failed_tiers=""

run_tier() {
    local name=$1 started=$SECONDS verdict=passed
    shift
    echo "=== tier $name: $*"
    if "$@"; then
        passed=$((passed + 1))
    else
        verdict=failed
        failed=$((failed + 1))
        failed_tiers="$failed_tiers $name"
    fi
    # CI's budget is an hour: each tier's share shows where time goes.
    echo "=== tier $name $verdict in $((SECONDS - started)) s"
}

run_tier unit "$build/unit-tests"
# libFuzzer, $CERBERUS_FUZZ_SECONDS (default here 20) per target, in a clang build of its own beside
# $build; `make fuzz` gives each a minute.
run_tier fuzz tests/fuzz/run.sh --build "$build-fuzz" --seconds "${CERBERUS_FUZZ_SECONDS:-20}"
run_tier integration tests/integration/run.sh "$build"
run_tier engines tests/engines/run.sh "$build"
run_tier vm tests/vm/run.sh --build "$build"
# The policy's smoke set on the lane's newer kernels (6.12, 7.x), with and without bpf in lsm=.
run_tier vm-kernels tests/vm/test-kernels.sh --smoke --build "$build"
run_tier vm-systemd tests/vm/run.sh --systemd --build "$build"
run_tier browser tests/browser/run.sh "$build"
# cerberus first: the expected-pass list and the closing count are its own.
run_tier conformance tests/conformance/run.sh \
    --expect-pass-list tests/conformance/expected-pass.txt "$build/cerberus" crun runc

# runc's own integration suite, the files of the expected-pass list, cerberus alone (the full run: make runc-suite).
run_tier runc-suite tests/runc-suite/run.sh \
    --only-listed --expect-pass-list tests/runc-suite/expected-pass.txt "$build/cerberus"

[ -z "$failed_tiers" ] || echo "failed tiers:$failed_tiers"
echo "tiers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

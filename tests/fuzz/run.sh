#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (clang, -DCERBERUS_FUZZ=ON) and runs each for a
# bounded time from its seed corpus in tests/fuzz/corpus/<target>/.
# usage: tests/fuzz/run.sh [--build DIR] [--seconds N] [TARGET...]
#   --build DIR   fuzz build directory (default: build-fuzz; configured and built when needed)
#   --seconds N   time per target (default: $CERBERUS_FUZZ_SECONDS, else 60)
#   TARGET        config, policy, lock_policy, trail, audit_record (default: all)
# New inputs go to DIR/corpus/<target>/ (the seeds in the repository are not touched); a crash
# leaves its input in DIR/artifacts/<target>/ and fails the run: make it a unit test, then fix it.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$repo/build-fuzz
seconds=${CERBERUS_FUZZ_SECONDS:-60}
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
    esac
done
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: --seconds expects a positive number" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || targets=(config policy lock_policy trail audit_record dns)

start=$(date +%s)
if ! CC=clang CXX=clang++ cmake -S "$repo" -B "$build" -DCERBERUS_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
    ! cmake --build "$build" -j "${JOBS:-$(nproc)}" >"$build/fuzz-build.log" 2>&1; then
    tail -30 "$build/fuzz-build.log" 2>/dev/null
    echo "fuzz: building the targets failed"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "fuzz: targets built in $(($(date +%s) - start)) s"

passed=0 failed=0
for target in "${targets[@]}"; do
    seeds=$here/corpus/$target
    corpus=$build/corpus/$target
    artifacts=$build/artifacts/$target
    log=$build/fuzz_$target.log
    rm -rf "$artifacts"
    mkdir -p "$corpus" "$artifacts"
    dict=()
    case $target in policy | lock_policy) dict=(-dict="$here/policy.dict") ;; esac
    "$build/fuzz_$target" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=8192 -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    crashes=$(find "$artifacts" -type f | wc -l)
    if [ $rc -eq 0 ] && [ "$crashes" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok fuzz $target: ${runs:-?} executions in $seconds s, $(find "$corpus" -type f | wc -l) corpus entries"
    else
        failed=$((failed + 1))
        echo "FAIL fuzz $target (exit $rc): ${runs:-?} executions; inputs in $artifacts"
        grep -E "ERROR|SUMMARY|reference check|terminate|what\(\)" "$log" | head -10
    fi
done
echo "fuzz tier: $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

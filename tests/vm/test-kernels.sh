#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The policy cases on the lane's kernels (tests/vm/kernels.list), each in its three boots: bpf-lsm (bpf in
# lsm=, auto's choice), no-bpf-lsm (the fmod_ret programs) and landlock (the landlock backend). Each
# kernel is one run.sh (one initramfs, one VM per boot, one after the other); the verdicts go to
# VERDICTS/<kernel>/<boot>.txt, which scripts/coverage-table.sh turns into docs/policy.md's tables.
# Prints every run's output, then one line per kernel and boot, then `N passed, N failed`; exits 1 on any
# failure.
#
# Usage: tests/vm/test-kernels.sh [--build DIR] [--kernels LIST] [--boots LIST] [--cases GLOBS] [--verdicts DIR]
#                                 [--smoke]
#   --kernels  comma-separated names of kernels.list (default: all of them)
#   --boots    as run.sh's (default: all)
#   --cases    space-separated globs of case scripts (default: the policy cases, backend_choice, soak_fmod_ret,
#              bpf_verifier, audit_auditd; Debian's auditd comes into the VM through fetch-auditd.sh)
#   --verdicts where to write the verdict files (default: tests/policy/results)
#   --smoke    what CI runs beside the default lane: the kernels other than 6.1, the bpf-lsm boot, the case
#              policy_smoke (one load of the programs: on 7.x under emulation each set takes minutes to
#              verify), verdicts to a temporary directory
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$repo/build"
kernels="$(awk '!/^#/ && NF { print $1 }' "$here/kernels.list" | paste -sd,)"
boots=all
cases="$here/cases/policy_*.sh $here/cases/backend_choice.sh $here/cases/soak_fmod_ret.sh $here/kernel-cases/bpf_verifier.sh $here/kernel-cases/audit_auditd.sh"
verdicts="$repo/tests/policy/results"
while [[ $# -gt 0 ]]; do
    case "$1" in
    --build) build="$2"; shift 2 ;;
    --kernels) kernels="$2"; shift 2 ;;
    --boots) boots="$2"; shift 2 ;;
    --cases) cases="$2"; shift 2 ;;
    --verdicts) verdicts="$2"; shift 2 ;;
    --smoke)
        kernels="$(awk '!/^#/ && NF && $1 != "6.1" { print $1 }' "$here/kernels.list" | paste -sd,)"
        boots=bpf-lsm
        cases="$here/cases/policy_smoke.sh"
        verdicts="$(mktemp -d /tmp/cerberus-smoke.XXXXXX)"
        trap 'rm -rf "$verdicts"' EXIT
        shift ;;
    -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "test-kernels.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

status=0
IFS=, read -r -a kernel_list <<<"$kernels"
for kernel in "${kernel_list[@]}"; do
    echo "=== kernel $kernel: boots $boots"
    rm -rf "${verdicts:?}/$kernel"
    # shellcheck disable=SC2046 # --add arguments, one a word
    "$here/run.sh" --build "$build" --kernel "$kernel" --boots "$boots" --cases "$cases" --verdicts "$verdicts" \
        $([[ "$cases" != *audit_auditd* ]] || "$here/fetch-auditd.sh") || status=1
done

passed=0 failed=0
echo "=== per kernel and boot"
for file in "$verdicts"/*/*.txt; do
    [[ -e "$file" ]] || continue
    kernel="$(basename "$(dirname "$file")")"
    [[ ",$kernels," == *",$kernel,"* ]] || continue
    ok="$(grep -c '^VMTEST ok ' "$file")"
    bad="$(grep -c '^VMTEST fail ' "$file")"
    skip="$(grep -c '^VMTEST skip ' "$file")"
    printf '%-5s %-11s %4s passed, %3s failed, %3s skipped\n' "$kernel" "$(basename "$file" .txt)" "$ok" "$bad" "$skip"
    passed=$((passed + ok)) failed=$((failed + bad))
done
echo "$passed passed, $failed failed"
[[ $status -eq 0 && $failed -eq 0 ]]

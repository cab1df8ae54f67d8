# SPDX-License-Identifier: Apache-2.0
# The verdict lines of the scenario runners in tests/security/ (sourced; busybox ash and bash):
# "$verdict_tag ok SCENARIO: CHECK[: DETAIL]" or "$verdict_tag fail SCENARIO: CHECK: DETAIL" (flattened,
# at most 400 characters), with $scenario the runner's scenario and no ":" in CHECK (the VM lane and
# cve_table.sh split there); a failure sets failed=1.

failed=0

ok() { echo "$verdict_tag ok $scenario: $1${2:+: $(printf '%s' "$2" | tr '\n' ' ' | cut -c1-400)}"; }
fail() {
    echo "$verdict_tag fail $scenario: $1: $(printf '%s' "$2" | tr '\n' ' ' | cut -c1-400)"
    failed=1
}
# check NAME DETAIL CMD...: ok when CMD succeeds.
check() {
    name=$1 detail=$2
    shift 2
    if "$@"; then ok "$name"; else fail "$name" "$detail"; fi
}

# SPDX-License-Identifier: Apache-2.0
# The checks of the scripts the gate's and the proxy's bats files run (dns_gate.sh, egress.sh): each prints
# "ok ..." or "FAIL ..."; $failures counts the failures, the script's exit status.
failures=0
ok() { echo "ok $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
expect() { # expect DESCRIPTION COMMAND...: passes when the command succeeds
    local what=$1; shift
    if "$@"; then ok "$what"; else fail "$what"; fi
}
output_has() { # output_has PATTERN COMMAND...: the command's output matches the pattern, whatever its status
    local pattern=$1 output; shift
    output=$("$@" 2>&1)
    grep -q -- "$pattern" <<<"$output" && return
    echo "said: $output"
    return 1
}

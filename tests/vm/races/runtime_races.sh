#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The races of tests/security/cve_escape.sh (runc's CVE-2021-30465, 2019-19921, 2024-45310, 2025-52881,
# 2019-19921/2023-27561 with a shared root, 2025-31133 and 2025-52565) on this kernel, with pure cgroup v2
# and no policy: an attacker container swaps names in a directory it shares with the victim while
# cerberus creates it. Each race reports its attempts and how many the attacker won (none may be won),
# and its control that the racer flips the name. The integration tier runs the same natively. Each race
# has 8 s here (a create takes seconds under emulation, with the racer spinning on one of the two vCPUs):
# about 3 creates each, six races in 3-4 min, measured while the host ran other builds.
# vm-timeout: 400
. /vm/lib.sh

vm_has_cerberus && command -v cerberus-race-attack >/dev/null || exit 0

for scenario in dest-race mkdir-race sysctl-race proc-race devnull-race console-race; do
    started=$(date +%s)
    CVE_RACE_SECONDS=${CVE_RACE_SECONDS:-8} RACE_ATTACK=$(command -v cerberus-race-attack) \
        RECVTTY=$(command -v cerberus-recvtty) \
        sh /vm/security/cve_escape.sh "$scenario" "$(command -v cerberus)" "/tmp/cve-$scenario" >/tmp/cve.out 2>&1
    grep -q '^CVE ' /tmp/cve.out || vm_fail "$scenario" "no verdict: $(cat /tmp/cve.out)"
    sed -n 's/^CVE \(ok\|fail\) \([^:]*\): \([^:]*\)\(: \(.*\)\)\{0,1\}$/\1|\2|\3|\5/p' /tmp/cve.out |
        while IFS='|' read -r verdict name check detail; do
            if [ "$verdict" = ok ]; then
                vm_ok "$name $check"
                vm_log "$name $check: $detail"
            else
                vm_fail "$name $check" "$detail"
            fi
        done
    vm_log "$scenario took $(($(date +%s) - started)) s"
    rm -rf "/tmp/cve-$scenario"
done
exit 0

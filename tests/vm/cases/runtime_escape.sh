#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The CVE-2019-5736 attack on the runtime's own binary (tests/security/exe_escape.sh), with no policy and
# under each kind of policy: the agent gets hold of the runtime's process and binary (the controls), yet
# the host binary stays unchanged, the payload never runs on the host, and a runtime process that is
# still setting up cannot be opened.
# vm-timeout: 400
. /vm/lib.sh

vm_has_cerberus && command -v cerberus-exe-attack >/dev/null || exit 0

run_scenarios() {
    label=$1 policy=$2
    shift 2
    for scenario in "$@"; do
        started=$(date +%s)
        sh /vm/security/exe_escape.sh "$scenario" "$(command -v cerberus)" "$(command -v cerberus-exe-attack)" \
            "/tmp/escape-$label" "$policy" >/tmp/escape.out 2>&1
        grep -q '^ESCAPE ' /tmp/escape.out || vm_fail "$label $scenario" "no verdict: $(cat /tmp/escape.out)"
        sed -n 's/^ESCAPE \(ok\|fail\) \([^:]*\): \([^:]*\)\(: \(.*\)\)\{0,1\}$/\1|\2|\3|\5/p' /tmp/escape.out |
            while IFS='|' read -r verdict name check detail; do
                if [ "$verdict" = ok ]; then vm_ok "$label $name $check"; else vm_fail "$label $name $check" "$detail"; fi
            done
        vm_log "$label $scenario took $(($(date +%s) - started)) s"
    done
}

# The integration tier runs every scenario natively with no policy; here every attack runs under a
# network policy, the attacks that reach the runtime's processes under an allowed_bins and a files
# policy (which already keep the runtime's binary from running in the container, so the trap variants
# add nothing there), and, with no policy, what this kernel does differently: the memfd fallback and
# a created init, and the neighbour's trap (the control for the policies that keep it out of reach).
# A createContainer hook's exec arms the policy; the init's set-up after it is still the runtime's.
run_scenarios no-policy "" exec-trap-memfd run-trap init-setup
run_scenarios network-policy '{"allowed_hosts": ["192.0.2.1:443"]}' \
    exec-trap exec-trap-symlink run-trap exec-setup init-setup hook-setup
run_scenarios bins-policy '{"allowed_bins": ["/bin/busybox", "/bin/sh", "/bin/exe-attack", "/bin/true"]}' \
    exec-trap run-trap exec-setup init-setup
run_scenarios files-policy '{"allowed_paths": ["/tmp", "/workspace", "/bin", "/dev", "/proc"], "read_only_paths": ["/etc"]}' \
    exec-trap run-trap exec-setup init-setup hook-setup
rm -rf /tmp/escape-*
exit 0

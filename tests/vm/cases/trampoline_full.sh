#!/bin/sh
# Another tool holds every trampoline slot of security_path_chmod when the fmod_ret programs are loaded: that
# program is left out, a policy with path rules is refused naming its function, one without them runs.
# Named to sort last: on Debian's 6.1 this scenario (filling a trampoline until E2BIG, attaching beside it,
# detaching the lot) leaves the per-CPU recursion counters of programs loaded afterwards non-zero on a CPU,
# so the trampoline skips them there (bpftool shows recursion_misses growing, stats holding kernel
# pointers): rules needing the armed policy (network, files) were let through in about half of the later
# containers. Whatever runs after this case in a boot is not evidence.
# vm-timeout: 300
# vm-boots: bpf-lsm no-bpf-lsm
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
if [ "$VM_BOOT" != no-bpf-lsm ]; then
    vm_skip "a full trampoline" "auto takes the BPF LSM here; the fmod_ret case runs in the boot without it"
    exit 0
fi
command -v cerberus-fill-trampoline >/dev/null || { vm_skip "a full trampoline" "no cerberus-fill-trampoline in the VM"; exit 0; }
bundle=/tmp/bundle-trampoline-full
make_bundle "$bundle" /bin/cerberus-probe connect tcp 203.0.113.9 443 || exit 1
bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"allowed_hosts": ["192.0.2.1:443"]}'
pins="$(pin_dir)"
[ -n "$pins" ] || { vm_fail "pin dir" "cerberus check names none"; exit 0; }

rm -f $pins/fmod_ret $pins/fmod_ret_* # no container runs: the programs detach, the maps stay
mkdir -p /sys/fs/bpf/fill
vm_expect_contains "another tool fills a trampoline" "errno=7 (Argument list too long)" \
    cerberus-fill-trampoline security_path_chmod /sys/fs/bpf/fill
vm_expect_errno "network rules hold beside the full trampoline" EPERM cerberus run --bundle "$bundle" trampoline-net
cerberus delete --force trampoline-net >/dev/null 2>&1
vm_check "cerb_path_chmod was left out, the others attached" \
    sh -c "test -e $pins/fmod_ret_cerb_file_open && ! test -e $pins/fmod_ret_cerb_path_chmod"
bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"read_only_paths": ["/"]}'
vm_expect_refused "path rules without their hook are refused" \
    "policy.allowed_paths: the fmod-ret backend cannot enforce allowed_paths, read_only_paths (security_path_chmod was left out" \
    cerberus --enforcement fmod-ret run --bundle "$bundle" trampoline-paths
vm_check_fails "and leave no state" test -e /run/cerberus/trampoline-paths

rm -rf /sys/fs/bpf/fill "$bundle"
rm -f $pins/fmod_ret $pins/fmod_ret_* # the next create attaches every program again
exit 0

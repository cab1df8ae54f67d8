#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Another tool holds every trampoline slot of security_path_chmod when the fmod_ret programs are loaded: the
# loader counts the slots first and leaves that program out without trying to attach it, a policy with
# path rules is refused naming its function, one without them runs. Then everything is detached and loaded
# again, and the later containers' denials hold on both CPUs: on Debian's 6.1, an attach the kernel refused
# for a full trampoline (E2BIG), followed by detaching, left later programs skipped on a CPU (about half the
# network denials of later containers were let through), which is why the loader never tries one.
# vm-timeout: 300
# vm-boots: bpf-lsm no-bpf-lsm
. /vm/lib.sh

vm_has_cerberus && vm_has_probe && fmod_ret_case "a full trampoline" || exit 0
bundle=/tmp/bundle-trampoline-full
make_bundle "$bundle" /bin/cerberus-probe connect tcp 203.0.113.9 443 || exit 1
bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"allowed_hosts": ["192.0.2.1:443"]}'
pins="$(pin_dir)"
[ -n "$pins" ] || { vm_fail "pin dir" "cerberus check names none"; exit 0; }

rm -f $pins/fmod_ret $pins/fmod_ret_* # no container runs: the programs detach, the maps stay
mkdir -p /sys/fs/bpf/fill
# Nothing else attaches to security_path_chmod here, so 38 (x86-64's limit) fill it without a refused attach.
vm_expect_contains "another tool fills a trampoline" "attached=38 " \
    cerberus-fill-trampoline security_path_chmod /sys/fs/bpf/fill 38
vm_expect_errno "network rules hold beside the full trampoline" EPERM \
    cerberus --debug --log /tmp/trampoline-full.log run --bundle "$bundle" trampoline-net
cerberus delete --force trampoline-net >/dev/null 2>&1
vm_check "cerb_path_chmod was left out, the others attached" \
    sh -c "test -e $pins/fmod_ret_cerb_file_open && ! test -e $pins/fmod_ret_cerb_path_chmod"
vm_check "the loader counted the slots and left it out before loading" \
    grep -q "leaving out cerb_path_chmod: security_path_chmod's trampoline already holds 38 programs" /tmp/trampoline-full.log
vm_check_fails "and never tried an attach the kernel refused" \
    grep -q "has the most programs the kernel allows" /tmp/trampoline-full.log
bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"read_only_paths": ["/"]}'
vm_expect_refused "path rules without their hook are refused" \
    "policy.allowed_paths: the fmod-ret backend cannot enforce allowed_paths, read_only_paths (security_path_chmod was left out" \
    cerberus --enforcement fmod-ret run --bundle "$bundle" trampoline-paths
vm_check_fails "and leave no state" test -e /run/cerberus/trampoline-paths

# The other tool goes, the programs detach and are loaded again by the next create, every one attached.
rm -rf /sys/fs/bpf/fill
rm -f $pins/fmod_ret $pins/fmod_ret_*
bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"allowed_hosts": ["192.0.2.1:443"]}'
for n in 1 2 3 4 5 6; do
    vm_expect_errno "after the full trampoline, a later container's denial holds (run $n)" EPERM \
        cerberus run --bundle "$bundle" trampoline-after-$n
    cerberus delete --force trampoline-after-$n >/dev/null 2>&1
done
vm_check "and every program is attached again" test -e $pins/fmod_ret_cerb_path_chmod
# What went wrong before: a trampoline skipping a program it found already running on that CPU.
vm_check_fails "no program was skipped by its trampoline (no recursion_misses)" \
    sh -c "bpftool prog show | grep -q recursion_misses"
rm -rf "$bundle" /tmp/trampoline-full.log
exit 0

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Each policy program through this kernel's verifier on its own (cerberus-verifier-stats): none may be
# refused for its size (E2BIG: a million instructions processed), which is what newer verifiers did to
# path_link before judge_change was a global function (7.2 explores bpf_loop callbacks until they
# converge). Variants written for another kernel's prototype are refused here, as the loader never loads
# them; the counts go to the console for comparison across kernels. Only make test-kernels runs it (it
# takes minutes under emulation), from outside cases/.
# vm-timeout: 900
. /vm/lib.sh

command -v cerberus-verifier-stats >/dev/null && ls /vm/bpf/*.bpf.o >/dev/null 2>&1 || exit 0
for object in /vm/bpf/*.bpf.o; do
    name="$(basename "$object" .bpf.o)"
    out="$(cerberus-verifier-stats "$object" 2>&1)"
    echo "$out" | grep -E '^cerb_' | sed "s/^/VMINFO verifier $(uname -r) $name: /"
    loaded="$(echo "$out" | grep -c '^cerb_[a-z_]* ok ')"
    most="$(echo "$out" | sed -n 's/^cerb_[a-z_]* ok processed=\([0-9]*\).*/\1/p' | sort -n | tail -n1)"
    too_big="$(echo "$out" | grep -E '^cerb_[a-z_]* errno=7 ' | cut -d' ' -f1 | paste -sd' ')"
    [ "$loaded" -gt 0 ] && vm_ok "$name: $loaded programs load, the most processed $most instructions" ||
        vm_fail "$name: programs load" "$out"
    [ -z "$too_big" ] && vm_ok "$name: none refused for its size" || vm_fail "$name: none refused for its size" "$too_big"
done
exit 0

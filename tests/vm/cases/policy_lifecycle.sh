#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy across containers: two containers with different policies run side by side and each gets
# only its own rules; after delete no map entry keyed by either's cgroup remains (other containers of the
# host may hold theirs), and none of a container whose record of its keys was lost (a create that died
# midway); the pinned programs stay loaded for the next container.
# vm-timeout: 300
# rule-kinds: paths allowed_hosts
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0

# bundle_with DIR POLICY ARG...
bundle_with() {
    dir="$1" policy="$2"
    shift 2
    make_bundle "$dir" "$@" && bundle_edit "$dir" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
}

a=/tmp/bundle-policy-a
b=/tmp/bundle-policy-b
# Each container tries the other's destination after a pause, so both policies are installed at once.
bundle_with "$a" '{"allowed_hosts": ["192.0.2.1:443"]}' sh -c \
    'sleep 1; /bin/cerberus-probe connect tcp 192.0.2.1 443; /bin/cerberus-probe connect tcp 198.51.100.1 443' || exit 0
bundle_with "$b" '{"allowed_hosts": ["198.51.100.1:443"], "allowed_paths": ["/tmp"], "read_only_paths": ["/"]}' sh -c \
    'sleep 1; /bin/cerberus-probe connect tcp 192.0.2.1 443; /bin/cerberus-probe connect tcp 198.51.100.1 443' || exit 0
cerberus create --bundle "$a" policy-side-a >/tmp/policy-side-a.out 2>&1 || vm_fail "create policy-side-a" "exit $?"
cerberus create --bundle "$b" policy-side-b >/tmp/policy-side-b.out 2>&1 || vm_fail "create policy-side-b" "exit $?"
id_a="$(cgroup_id_of policy-side-a)"
id_b="$(cgroup_id_of policy-side-b)"
vm_check "the policy is in the kernel while the container exists" test "$(policy_entries_of "$id_a")" -gt 0
cerberus start policy-side-a
cerberus start policy-side-b
for c in policy-side-a policy-side-b; do
    tries=0
    while [ "$(cerberus state "$c" | jq -r .status)" != stopped ] && [ "$tries" -lt 100 ]; do
        tries=$((tries + 1))
        sleep 0.1
    done
done
vm_expect_output "container a gets its own rules" "$(printf 'errno=101 (ENETUNREACH)\nerrno=1 (EPERM)')" cat /tmp/policy-side-a.out
vm_expect_output "container b gets its own rules" "$(printf 'errno=1 (EPERM)\nerrno=101 (ENETUNREACH)')" cat /tmp/policy-side-b.out
cerberus delete --force policy-side-a >/dev/null 2>&1
cerberus delete --force policy-side-b >/dev/null 2>&1

vm_check "programs stay pinned, in the directory of this build's layout" test -e "$(pin_dir)/cerb_policies"
vm_expect_output "no map entry of container a left after delete" 0 policy_entries_of "$id_a"
vm_expect_output "no map entry of container b left after delete" 0 policy_entries_of "$id_b"

# Without its policy.keys, delete finds the container's entries by looking through the maps.
cerberus create --bundle "$b" policy-no-keys >/dev/null 2>&1 || vm_fail "create policy-no-keys" "exit $?"
vm_check "create keeps the policy's keys in the state dir" test -s "$CERBERUS_STATE/policy-no-keys/policy.keys"
id_c="$(cgroup_id_of policy-no-keys)"
rm -f "$CERBERUS_STATE/policy-no-keys/policy.keys"
vm_check "delete without the record of the keys" cerberus delete --force policy-no-keys
vm_expect_output "no map entry left after a delete without the record" 0 policy_entries_of "$id_c"

make_bundle "$a" /bin/cerberus-probe connect tcp 203.0.113.9 443
vm_expect_errno "no policy: nothing is denied" ENETUNREACH cerberus run --bundle "$a" policy-none
cerberus delete --force policy-none >/dev/null 2>&1
rm -rf "$a" "$b" /tmp/policy-side-a.out /tmp/policy-side-b.out
exit 0

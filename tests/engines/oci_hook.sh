# SPDX-License-Identifier: Apache-2.0
# The OCI hook for runc and crun users (oci-hooks/, docs/engines/oci-hook.md):
# Podman with --runtime runc and --runtime crun and the installed hooks.d
# files as its hooks dir. Sourced by run.sh: needs $work, $prefix, lib.sh and
# podman.sh (podman_setup's containers.conf, csv_quoted).

hook_image=localhost/cerberus-busybox-hook:test

# Podman with its own storage, the test's containers.conf (podman_setup), the
# installed hooks.d files and the hook's root under $work; $1 is the OCI runtime. crun 1.8 refuses a hybrid host
# whose cgroup2 has controllers: it runs in a private mount namespace with
# that cgroup2 hidden, as tests/conformance/run.sh --hide-cgroup2 does.
hook_podman() {
    local runtime=$1 view=()
    shift
    if [ "$runtime" = crun ] && [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
        view=(unshare --mount --propagation private sh -c
            'mount -t tmpfs -o size=1m,mode=755 cerberus-hook-test /sys/fs/cgroup/unified && exec "$@"' view)
    fi
    CONTAINERS_CONF=$work/podman/containers.conf "${view[@]}" podman --root "$work/hook/storage" --runroot "$work/hook/run" --tmpdir "$work/hook/tmp" \
        --events-backend file --cgroup-manager cgroupfs --hooks-dir "$work/hook/hooks.d" --runtime "$runtime" "$@"
}

# podman run under runtime $1. crun drops a hook's stderr unless the annotation
# run.oci.hooks.stderr names a file: the hook's message is printed from there.
hook_podman_run() {
    local runtime=$1 rc
    shift
    [ "$runtime" = crun ] || { hook_podman "$runtime" run "$@"; return; }
    rm -f "$work/hook/crun-hook-stderr"
    hook_podman crun run --annotation "run.oci.hooks.stderr=$work/hook/crun-hook-stderr" "$@"
    rc=$?
    cat "$work/hook/crun-hook-stderr" 2>/dev/null
    return $rc
}

# Entries of the audit collector's registry (audit.hpp) for this test's
# containers: the hook registers their trails under $work/hook/audit.
registry_entries() {
    grep -lsF "\"trail\":\"$work/hook/audit/" /run/cerberus-audit/containers/* | wc -l
}

# Nothing of a policed container is left: no record under the hook's root, no
# registry entry, and, where policies are pinned, no map entry for the cgroup
# recorded while it ran ($2, optional).
expect_hook_left_nothing() {
    local name=$1 cgroup_id=${2:-}
    if [ -n "$(ls -A "$work/hook/root" 2>/dev/null)" ]; then
        not_ok "$name (left under the hook's root: $(ls "$work/hook/root"))"
    elif [ "$(registry_entries)" -gt 0 ]; then
        not_ok "$name (left a registry entry in /run/cerberus-audit/containers)"
    elif [ -n "$cgroup_id" ] && [ -e /sys/fs/bpf/cerberus/cerb_policies ] &&
        bpftool map lookup pinned /sys/fs/bpf/cerberus/cerb_policies key $(printf '%016x' "$cgroup_id" |
            sed 's/../& /g' | awk '{ for (i = NF; i > 0; i--) printf "0x%s ", $i }') >/dev/null 2>&1; then
        not_ok "$name (the policy entry of cgroup $cgroup_id is still in the map)"
    else
        ok "$name"
    fi
}

oci_hook_test() {
    local runtime run_opts="--network none --log-driver k8s-file" cgroup_id policed_run
    mkdir -p "$work/hook/tmp" "$work/hook/hooks.d"
    # The installed hooks.d files, the hook given this test's root, policy and audit dirs.
    for f in "$prefix"/share/cerberus/oci-hooks.d/*.json; do
        jq --arg root "$work/hook/root" --arg policies "$policy_dir" --arg audit "$work/hook/audit" \
            '.hook.args = [.hook.args[0], "--root", $root, "--policy-dir", $policies, "--audit-dir", $audit]
                + .hook.args[1:]' \
            "$f" >"$work/hook/hooks.d/$(basename "$f")"
    done
    expect_success "hook: the hooks.d files name the installed hook" "$prefix/libexec/cerberus/cerberus-hook" \
        cat "$work/hook/hooks.d/cerberus-create-runtime.json"
    if ! run_captured hook_podman runc import "$work/rootfs.tar" "$hook_image"; then
        not_ok "hook: import the busybox image"
        return
    fi

    # What a hook can enforce is not what the runtime can (docs/engines/oci-hook.md): the hook's
    # outcome must agree under runc and crun, not with the other engines'.
    local engines_outcome=$policy_outcome
    policy_outcome=""
    for runtime in runc crun; do
        expect_success "hook ($runtime): an unpoliced container runs untouched" hello-$runtime \
            hook_podman_run "$runtime" --rm $run_opts "$hook_image" echo hello-$runtime
        if [ -z "$(ls -A "$work/hook/root" 2>/dev/null)" ]; then
            ok "hook ($runtime): the hook left the unpoliced container alone"
        else
            not_ok "hook ($runtime): the hook left the unpoliced container alone"
        fi
        # no-new-privileges: a policy needs it and the hook cannot set it.
        policed_run=(hook_podman_run "$runtime" --rm $run_opts --security-opt no-new-privileges
            --annotation "$(csv_quoted "io.cerberus.policy=$denying_policy")" "$hook_image" sh -c "$policy_container_script")
        if [ "$runtime" = crun ] && [ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
            # With cgroup2 hidden, the container shares crun's cgroup2 directory (the root here):
            # a policy keyed to it would police the host.
            expect_failure "hook (crun, cgroup2 hidden): a policed container without a cgroup2 directory is refused" \
                "has no cgroup2 directory of its own" "${policed_run[@]}"
        else
            expect_policy_outcome "hook ($runtime): a policed container" "${policed_run[@]}"
        fi
        expect_failure "hook ($runtime): a bad policy fails with our error" "$bad_policy_error" \
            hook_podman_run "$runtime" --rm $run_opts --annotation "$(csv_quoted "io.cerberus.policy=$bad_policy")" \
            "$hook_image" echo never
        expect_failure "hook ($runtime): a profile that does not exist fails with our error" "no-such-profile.json" \
            hook_podman_run "$runtime" --rm $run_opts --annotation io.cerberus.policy.profile=no-such-profile \
            "$hook_image" echo never

        # A policed container kept (not --rm), then podman rm: nothing left.
        cgroup_id=""
        if hook_podman_run "$runtime" -d --name "policed-$runtime" $run_opts --security-opt no-new-privileges \
            --annotation "$(csv_quoted "io.cerberus.policy=$denying_policy")" "$hook_image" sleep 300 >/dev/null 2>&1; then
            cgroup_id=$(cat "$work/hook/root"/*/cgroup.id 2>/dev/null)
            if [ -n "$cgroup_id" ] && [ "$(registry_entries)" -gt 0 ]; then
                ok "hook ($runtime): a running policed container is recorded and registered"
            else
                not_ok "hook ($runtime): a running policed container is recorded and registered"
            fi
        fi
        hook_podman "$runtime" rm -f "policed-$runtime" >/dev/null 2>&1
        expect_hook_left_nothing "hook ($runtime): nothing of the policy is left after podman rm" "$cgroup_id"
    done
    echo "policy through the hook on this host: ${policy_outcome:-not tested}"
    policy_outcome=$engines_outcome
    hook_podman runc rm -af >/dev/null 2>&1
    hook_podman runc system reset -f >/dev/null 2>&1
}

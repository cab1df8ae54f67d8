#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy and `cerberus exec` (docker/podman/kubectl exec): a process exec'd into a policed container
# gets what the policy forces on the init (no_new_privs, the forbidden capabilities out of every set),
# whatever the config, --cap or --process say; exec works when the policy forbids CAP_SYS_ADMIN (the
# runtime's own setns is not judged as the agent); the exec'd program and all it does are judged; and the
# runtime's set-up task cannot be taken over (ptrace) from inside the container. Each denial beside its
# control without the policy.
# vm-timeout: 420
# rule-kinds: allowed_bins forbidden_caps escalation
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
p=/bin/cerberus-probe
policy='{"forbidden_caps": ["CAP_SYS_ADMIN", "CAP_CHOWN"], "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}'
# Bits of CAP_CHOWN (0) and CAP_SYS_ADMIN (21) in /proc/<pid>/status.
forbidden_mask=0x200001

# start ID POLICY [JQ_FILTER]: a detached container (sleeping, bundle /tmp/bundle-ID) whose config
# grants what the policy forbids, and no no_new_privs; POLICY empty: none.
start() {
    id="$1" bundle="/tmp/bundle-$1"
    make_bundle "$bundle" sleep 600 || return 99
    mkdir -p "$bundle/rootfs/workspace"
    cp "$bundle/rootfs$p" "$bundle/rootfs/workspace/unlisted"
    bundle_edit "$bundle" '.root.readonly = false | .process.noNewPrivileges = false |
        .process.capabilities = ({"bounding": $c, "effective": $c, "permitted": $c, "inheritable": $c, "ambient": $c})' \
        --argjson c '["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_SYS_PTRACE", "CAP_SETUID", "CAP_SETGID", "CAP_DAC_OVERRIDE"]' ||
        return 99
    [ -z "$2" ] || bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$2" || return 99
    [ -z "$3" ] || bundle_edit "$bundle" "$3" || return 99
    cerberus run -d --bundle "$bundle" "$id" </dev/null
}

stop() {
    cerberus delete --force "$1" >/dev/null 2>&1
    rm -rf "/tmp/bundle-$1"
}

# caps_out ID ARGS...: "dropped" when the exec'd process has neither forbidden capability in any set.
caps_out() {
    id="$1"
    shift
    cerberus exec "$@" "$id" sh -c \
        'for v in $(awk "/^Cap(Inh|Prm|Eff|Bnd|Amb)/ { print \$2 }" /proc/self/status); do
             [ $((0x$v & '$forbidden_mask')) -eq 0 ] || { echo kept; exit 0; }
         done; echo dropped'
}

start exec-free "" || vm_fail "start a container without a policy" "exit $?"
start exec-policed "$policy" || vm_fail "start a policed container" "exit $?"

vm_expect_output "control: exec works without a policy" hi cerberus exec exec-free echo hi
vm_expect_output "exec works when the policy forbids CAP_SYS_ADMIN" hi cerberus exec exec-policed echo hi

vm_expect_contains "control: the config's no_new_privs (off) without a policy" "NoNewPrivs:	0" \
    cerberus exec exec-free grep NoNewPrivs /proc/self/status
vm_expect_contains "no_new_privs forced on the exec'd process" "NoNewPrivs:	1" \
    cerberus exec exec-policed grep NoNewPrivs /proc/self/status
vm_expect_output "control: the config's capabilities without a policy" kept caps_out exec-free
vm_expect_output "forbidden capabilities dropped from every set" dropped caps_out exec-policed
vm_expect_output "--cap does not bring a forbidden capability back" dropped caps_out exec-policed --cap CAP_SYS_ADMIN

# --process: a process.json that asks for all of it.
cat >/tmp/exec-into-process.json <<'EOF'
{"args": ["grep", "-E", "^(NoNewPrivs|CapEff)", "/proc/self/status"], "cwd": "/", "env": ["PATH=/bin"],
 "user": {"uid": 0, "gid": 0}, "noNewPrivileges": false,
 "capabilities": {"bounding": ["CAP_SYS_ADMIN"], "effective": ["CAP_SYS_ADMIN"], "permitted": ["CAP_SYS_ADMIN"]}}
EOF
vm_expect_output "control: --process as written without a policy" "$(printf 'CapEff:\t0000000000200000\nNoNewPrivs:\t0')" \
    cerberus exec --process /tmp/exec-into-process.json exec-free
vm_expect_output "--process gets what the policy forces too" "$(printf 'CapEff:\t0000000000000000\nNoNewPrivs:\t1')" \
    cerberus exec --process /tmp/exec-into-process.json exec-policed

# The set-up is exempt only until the exec: the program and what it does are judged.
vm_expect_output "control: chown works without a policy" ok cerberus exec exec-free $p chown /workspace 1 1
vm_expect_errno "a forbidden capability used by the exec'd process" EPERM cerberus exec exec-policed $p chown /workspace 1 1
vm_expect_output "control: an unlisted binary runs without a policy" ok cerberus exec exec-free /workspace/unlisted read /bin/busybox
vm_expect_errno "an exec'd binary outside allowed_bins is refused" EACCES \
    cerberus exec exec-policed /workspace/unlisted read /bin/busybox
vm_expect_output "a listed binary runs" ok cerberus exec exec-policed $p read /bin/busybox
stop exec-free
stop exec-policed

# The runtime's set-up task, held mid-way: a seccomp notify rule stops its change to uid 4242 (the init
# and the attacker keep uid 0), and the listener is held unanswered. From inside the container an agent
# with CAP_SYS_PTRACE tries to attach to it.
held_setup() {
    id="$1" policy="$2" sock="/tmp/exec-into-$1.sock"
    rm -f "$sock"
    cerberus-probe hold-fds "$sock" >/tmp/exec-into-hold.out 2>&1 &
    holder=$!
    seccomp='{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'$sock'", "syscalls": [{"names": ["setresuid"],
        "action": "SCMP_ACT_NOTIFY", "args": [{"index": 0, "value": 4242, "op": "SCMP_CMP_EQ"}]}]}'
    tries=0
    until [ -S "$sock" ] || [ $tries -ge 50 ]; do sleep 0.1; tries=$((tries + 1)); done
    start "$id" "$policy" ".linux.seccomp = $seccomp" >/dev/null 2>&1 || return 99
    cerberus exec -d --user 4242 "$id" /bin/true >/dev/null 2>&1 &
    exec_pid=$!
    tries=0
    until grep -qx cerberus:exec /proc/[0-9]*/comm 2>/dev/null || [ $tries -ge 100 ]; do sleep 0.1; tries=$((tries + 1)); done
    sleep 0.5 # past its setns, blocked on setresuid
    cerberus exec "$id" $p ptrace-comm cerberus:exec
    status=$?
    kill -9 "$exec_pid" "$holder" 2>/dev/null
    wait "$exec_pid" "$holder" 2>/dev/null
    stop "$id"
    rm -f "$sock"
    return $status
}
vm_expect_output "control: without a policy the held set-up task can be attached" ok held_setup exec-hold-free ""
vm_expect_errno "the runtime's set-up task cannot be traced from the policed container" EPERM \
    held_setup exec-hold-policed "$policy"

rm -f /tmp/exec-into-process.json /tmp/exec-into-hold.out
exit 0

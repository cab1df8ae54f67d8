#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, processes outside the container are out of reach (issue 30, class 2): the container shares
# the host's pid namespace and holds CAP_SYS_PTRACE and CAP_SYS_NICE, and the policy has no
# path rule; the agent writes into a host process's memory (process_vm_writev, PTRACE_POKEDATA,
# /proc/PID/mem), takes its file (pidfd_getfd), signals it (also through a file's owner: F_SETOWN, a
# process group, F_SETOWN_EX, FIOSETOWN), changes its limits and priority, reads the host
# root's user keyring and makes a userfaultfd; then, from a second policed container joining the first one's
# pid namespace, writes into the first one's process. The victim is a process this test starts (never a
# host daemon). Controls: without a policy each act reaches the victim; under the policy the same acts on the
# agent's own child inside the container work.
# vm-timeout: 600
# rule-kinds: other_processes
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-reach
other_bundle=/tmp/bundle-policy-reach-other
p=/bin/cerberus-probe
host_probe="$(command -v cerberus-probe)"
policy='{"allowed_hosts": ["192.0.2.0/24:443"]}'
victim_out=/tmp/policy-reach-victim.$$

# start_victim [CMD...]: starts a victim on the host (or CMD, which prints the victim's line into
# $victim_out); sets victim (its pid on the host, when started here), pid, addr and fd.
start_victim() {
    : >"$victim_out"
    "$host_probe" victim 20 >"$victim_out" 2>&1 &
    victim=$!
    wait_victim
}
wait_victim() {
    tries=0
    until grep -q '^pid=' "$victim_out" 2>/dev/null; do
        tries=$((tries + 1))
        [ "$tries" -lt 100 ] || return 1
        sleep 0.05
    done
    line="$(grep -m1 '^pid=' "$victim_out")"
    pid="$(echo "$line" | sed 's/.*pid=\([0-9]*\).*/\1/')"
    addr="$(echo "$line" | sed 's/.*addr=\([0-9a-fx]*\).*/\1/')"
    fd="$(echo "$line" | sed 's/.*fd=\([0-9]*\).*/\1/')"
}
# stop_victim: prints what became of the victim ("overwritten", "signalled" when SIGIO or SIGURG came,
# "intact", or "gone" when it was killed).
stop_victim() {
    sleep 0.2
    if grep -q overwritten "$victim_out"; then
        echo overwritten
    elif grep -q signalled "$victim_out"; then
        echo signalled
    elif kill -0 "$victim" 2>/dev/null; then
        echo intact
    else
        echo gone
    fi
    kill "$victim" 2>/dev/null
    wait "$victim" 2>/dev/null
}

# reach_run POLICY|"" SHELL: the shell text in a container in the host's pid namespace, with the capabilities.
reach_run() {
    policy_or_plain_bundle "$bundle" "$1" sh -c "$2" || return 99
    bundle_edit "$bundle" '.linux.namespaces |= map(select(.type != "pid")) |
        .process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE", "CAP_SYS_NICE"])' ||
        return 99
    vm_run_bundle "$bundle"
}

# Before Landlock ABI 6 a domain cannot keep signals in: the landlock backend refuses the config at create.
abi="$(cerberus check 2>/dev/null | sed -n 's/^Landlock ABI: *\([0-9]*\).*/\1/p')"
if [ "$POLICY_BACKEND" = landlock ] && [ "${abi:-0}" -lt 6 ]; then
    vm_expect_refused "a shared pid namespace is refused before Landlock ABI 6" "linux.namespaces" \
        reach_run "$policy" true
    cannot_hold landlock "processes outside the container" \
        "Landlock keeps signals inside a domain only from ABI 6 (this kernel has ${abi:-none})"
    rm -rf "$bundle"
    exit 0
fi

# newest_trail_has JQ: the trail of the container run last holds a denial JQ selects.
newest_trail_has() {
    trail="$(ls -t /var/log/cerberus/vmtest-*.jsonl 2>/dev/null | head -n1)"
    [ -n "$trail" ] && jq -e "select(.type == \"denial\") | select($1)" "$trail" >/dev/null
}
# expect_in_trail CHECK JQ: on the BPF backends, the refusal CHECK is reported (the landlock backend's
# refusals of delivery happen in Landlock, which reports nothing of them).
expect_in_trail() {
    [ "${POLICY_BACKEND:-bpf}" != landlock ] || return 0
    if newest_trail_has "$2"; then
        vm_ok "$1, in the trail"
    else
        vm_fail "$1, in the trail" "no denial with $2 in ${trail:-no trail}: $(tail -n3 "$trail" 2>/dev/null)"
    fi
}

# host_victim [--delivery|--full] CHECK EFFECT ACT...: the act (a probe command; PID, ADDR and FD stand for the
# victim's) on a victim on the host: without a policy it succeeds and the victim ends up EFFECT; under the
# policy it is refused (EPERM or EACCES) and the victim is intact. With --delivery the act (I/O signalling a
# file's owner) succeeds under the policy too: the signal's delivery is what is refused. With --full the act
# fills the BPF backends' remembered owners first: there the owner's setting is refused (ENOSPC); under
# landlock, which remembers nothing, the delivery is.
host_victim() {
    delivery=
    [ "$1" = --delivery ] && delivery=yes && shift
    [ "$1" = --full ] && shift && delivery=full-${POLICY_BACKEND:-bpf}
    check="$1" effect="$2"
    shift 2
    for policed in "" "$policy"; do
        start_victim || { vm_fail "$check" "the victim did not start"; return; }
        act="$(echo "$*" | sed "s/PID/$pid/; s/ADDR/$addr/; s/FD/$fd/")"
        vm_run reach_run "$policed" "$p $act"
        became="$(stop_victim)"
        if [ -z "$policed" ]; then
            if [ "$VM_STDOUT" = ok ] && [ "$became" = "$effect" ]; then
                vm_ok "control, $check, without a policy"
            else
                vm_fail "control, $check, without a policy" "victim $became; $(vm__said)"
            fi
        else
            case "$delivery:$VM_STDOUT:$became" in
            :*EPERM*:intact | :*EACCES*:intact | full-landlock:ok:intact) vm_ok "$check" ;;
            yes:ok:intact)
                vm_ok "$check"
                expect_in_trail "$check" ".op == \"signal\" and .target == \"pid=$pid\"" ;;
            full-*:*ENOSPC*:intact)
                if [ "$delivery" != full-landlock ]; then
                    vm_ok "$check"
                    expect_in_trail "$check" '.op == "signal" and .error == "ENOSPC"'
                else
                    vm_fail "$check" "ENOSPC under landlock, which remembers no owner; $(vm__said)"
                fi ;;
            *) vm_fail "$check" "expected ${delivery:+the act done and }a refusal and the victim intact, it is $became; $(vm__said)" ;;
            esac
        fi
    done
}

host_victim "process_vm_writev into a host process" overwritten poke PID ADDR
host_victim "PTRACE_POKEDATA into a host process" overwritten ptrace-poke PID ADDR
host_victim "a write to a host process's /proc/PID/mem" overwritten proc-mem PID ADDR
host_victim "pidfd_getfd of a host process's descriptor" intact getfd PID FD
host_victim "SIGTERM to a host process" gone signal PID
host_victim "prlimit of a host process" intact prlimit PID
host_victim "setpriority of a host process" intact renice PID
# SIGIO and SIGURG through a file's owner: sent by whoever makes the I/O happen, not by a kill.
host_victim --delivery "SIGIO to a host process owning a pipe (F_SETOWN)" signalled owner-signal pipe PID
host_victim --delivery "SIGIO to a host process owning a socket (F_SETOWN)" signalled owner-signal socket PID
host_victim --delivery "SIGURG to a host process owning a socket (out-of-band data)" signalled owner-signal oob PID
host_victim --delivery "F_SETSIG's SIGTERM to a host process (F_SETOWN_EX)" gone owner-signal setown-ex PID
host_victim --delivery "SIGIO to a host process group (F_SETOWN -PGID)" signalled owner-signal group PID
host_victim --delivery "SIGIO to a host process group (F_SETOWN_EX)" signalled owner-signal group-ex PID
host_victim --delivery "SIGIO to a host process owning a socket (FIOSETOWN)" signalled owner-signal ioctl PID
# The BPF backends remember 262,144 owned files (every container together): once full, the next owner is
# refused, never left unjudged. Without a policy the signal arrives (the control). A small guest's file table
# (fs.file-max, about 92,000 in 1 GiB) would stop the fill first: raised where it is lower than the fill.
[ "$(cat /proc/sys/fs/file-max)" -ge 400000 ] || echo 400000 > /proc/sys/fs/file-max
host_victim --full "SIGIO to a host process once the remembered owners are full (F_SETOWN)" signalled \
    owner-fill 270000 pipe PID
host_victim --full "SIGIO to a host process once the remembered owners are full (FIOSETOWN)" signalled \
    owner-fill 270000 ioctl PID

# The same acts on the agent's own child, inside the container, under the policy.
inside() {
    check="$1"
    shift
    vm_expect_output "$check" ok reach_run "$policy" "$p victim 20 >/tmp/v & sleep 0.3
        line=\$(cat /tmp/v); pid=\${line#pid=}; pid=\${pid%% *}; addr=\${line#*addr=}; addr=\${addr%% *}
        fd=\${line##*fd=}; exec $p $(echo "$*" | sed 's/PID/$pid/; s/ADDR/$addr/; s/FD/$fd/')"
}
inside "process_vm_writev into the agent's own child" poke PID ADDR
inside "PTRACE_POKEDATA into the agent's own child" ptrace-poke PID ADDR
inside "a write to the agent's own child's /proc/PID/mem" proc-mem PID ADDR
inside "pidfd_getfd of the agent's own child's descriptor" getfd PID FD
inside "SIGTERM to the agent's own child" signal PID
for how in pipe socket oob setown-ex group group-ex ioctl; do
    vm_expect_output "a signal through a file's owner ($how) to the agent's own child" ok \
        reach_run "$policy" "exec $p owner-signal-child $how"
done
cannot_hold landlock "prlimit of the agent's own child" \
    "seccomp cannot tell the container's processes from others by number: refused for any but the caller" ||
    inside "prlimit of the agent's own child" prlimit PID

# The kernel's shared objects: the host root's user keyring (no user namespace), userfaultfd.
vm_expect_contains "control, the host root's user keyring, without a policy" "_uid.0" reach_run "" "$p user-keyring"
# The landlock backend refuses keyctl (EPERM); the BPF hooks refuse the search for the keyring, which
# keyctl answers as ENOKEY: either way the keyring is not described.
vm_run reach_run "$policy" "$p user-keyring"
case "$VM_STDOUT" in
*_uid.*) vm_fail "the host root's user keyring" "described: $(vm__said)" ;;
*EPERM* | *ENOKEY*) vm_ok "the host root's user keyring" ;;
*) vm_fail "the host root's user keyring" "expected EPERM or ENOKEY; $(vm__said)" ;;
esac
vm_expect_output "control, userfaultfd, without a policy" ok reach_run "" "$p userfaultfd"
vm_expect_errno "userfaultfd" EPERM reach_run "$policy" "$p userfaultfd"

# From one container into another that shares its pid namespace: a plain container whose init is the victim,
# and a second one joining its pid namespace.
other_run() {
    policy_or_plain_bundle "$bundle" "$1" sh -c "$2" || return 99
    bundle_edit "$bundle" '.linux.namespaces |= map(if .type == "pid" then .path = $ns else . end) |
        .process.capabilities |= with_entries(.value += ["CAP_SYS_PTRACE"])' --arg ns "/proc/$other_init/ns/pid" ||
        return 99
    vm_run_bundle "$bundle"
}
for policed in "" "$policy"; do
    other_id="reach-other-$$-${policed:+policed}"
    make_bundle "$other_bundle" "$p" victim 20 && : >"$victim_out" &&
        cerberus create --bundle "$other_bundle" "$other_id" >"$victim_out" 2>&1 </dev/null &&
        cerberus start "$other_id" && wait_victim || { vm_fail "another container's process" "its victim did not start"; break; }
    other_init="$(cerberus state "$other_id" | jq -r .pid)"
    vm_run other_run "$policed" "$p poke $pid $addr"
    sleep 0.2
    if grep -q overwritten "$victim_out"; then became=overwritten; else became=intact; fi
    cerberus delete --force "$other_id" >/dev/null 2>&1
    if [ -z "$policed" ]; then
        if [ "$VM_STDOUT:$became" = ok:overwritten ]; then vm_ok "control, process_vm_writev into another container's process, without a policy"
        else vm_fail "control, process_vm_writev into another container's process, without a policy" "victim $became; $(vm__said)"; fi
    else
        case "$VM_STDOUT:$became" in
        *EPERM*:intact) vm_ok "process_vm_writev into another container's process" ;;
        *) vm_fail "process_vm_writev into another container's process" "victim $became; $(vm__said)" ;;
        esac
    fi
done

rm -rf "$bundle" "$other_bundle" "$victim_out"
exit 0

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The CVE-2019-5736 attack on the runtime's own binary, as scenarios shared by the integration tier
# (natively) and the VM lane (under each policy). An agent in a container lays a trap (its /bin/sh
# becomes "#!/proc/self/exe ..."), waits for the runtime to enter the container, holds the runtime's
# binary through /proc/PID/exe (or /proc/PID/fd) and tries to overwrite it; or it waits for a runtime
# process that is still setting up and opens its /proc/PID/mem, exe, fd and environ.
#
# Usage: exe_escape.sh SCENARIO RUNTIME ATTACKER WORKDIR [POLICY_JSON]
#   SCENARIO  exec-trap | exec-trap-symlink | exec-trap-memfd | run-trap | exec-setup | init-setup |
#             hook-setup | control-copy (exec-trap-memfd keeps the state root inside the binary's directory, where
#             overlayfs refuses the layers and the runtime falls back to a sealed memfd copy)
#   RUNTIME   the cerberus binary; the attack targets a copy of it in WORKDIR (the "host binary")
#   ATTACKER  the static cerberus-exe-attack helper
# Prints one line per check, "ESCAPE ok SCENARIO: CHECK" or "ESCAPE fail SCENARIO: CHECK: DETAIL", and
# exits 1 when a check failed. Runs under bash and busybox ash; needs jq, sha256sum and busybox.
set -u
scenario=$1 runtime_src=$2 attacker=$3 work=$4 policy=${5:-}

rt="$work/hostbin/cerberus"
busybox=$(for b in /bin/busybox /usr/bin/busybox; do [ -x "$b" ] && echo "$b" && break; done)
root="$work/state"
[ "$scenario" != exec-trap-memfd ] || root="$work/hostbin/state"
marker="$work/payload-ran"
ids=""
verdict_tag=ESCAPE
. "$(dirname "$0")/verdict.sh"
rtc() { "$rt" --root "$root" "$@"; }
# A runtime command that walks into a trap waits until the attacker lets it go: never forever.
rtc_bounded() { timeout 120 "$rt" --root "$root" "$@"; }

# new_bundle DIR ARG...: a busybox root with the attacker, a writable root, ARG... as the process.
new_bundle() {
    dir=$1
    shift
    mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/sys" "$dir/rootfs/dev" "$dir/rootfs/tmp" \
        "$dir/rootfs/etc" "$dir/rootfs/workspace"
    cp "$busybox" "$dir/rootfs/bin/busybox"
    for applet in sh true cat sleep ln cp; do ln -sf busybox "$dir/rootfs/bin/$applet"; done
    cp "$attacker" "$dir/rootfs/bin/exe-attack"
    (cd "$dir" && "$rt" spec) || return 1
    args=$(for a in "$@"; do printf '%s' "$a" | jq -Rs .; done | jq -sc .)
    jq --argjson args "$args" --arg policy "$policy" \
        '.process.terminal = false | .root.readonly = false | .process.args = $args
         | if $policy != "" then .annotations["io.cerberus.policy"] = $policy else . end' \
        "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json"
}

# wait_for FILE TEXT SECONDS: until FILE contains TEXT.
wait_for() {
    i=0
    while [ "$i" -lt "$(($3 * 10))" ]; do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# start_agent ID SCRIPT: runs SCRIPT (sh -c) detached in a new container; its root is $work/$ID/rootfs.
start_agent() {
    new_bundle "$work/$1" /bin/busybox sh -c "$2" || return 1
    ids="$ids $1"
    rtc run -d -b "$work/$1" "$1" </dev/null >"$work/$1.out" 2>&1
}

pid_of() { rtc state "$1" | jq -r .pid; }

# The second container joins the agent's pid namespace and, sharing its root, runs its trap.
joined_bundle() {
    new_bundle "$work/$2" "$3" || return 1
    ids="$ids $2"
    jq --arg ns "/proc/$(pid_of "$1")/ns/pid" --arg rootfs "$work/$1/rootfs" \
        '.root.path = $rootfs | .linux.namespaces = [.linux.namespaces[] | if .type == "pid" then .path = $ns else . end]' \
        "$work/$2/config.json" >"$work/$2/config.json.new" && mv "$work/$2/config.json.new" "$work/$2/config.json"
}

cleanup() {
    for id in $ids; do rtc delete --force "$id" >/dev/null 2>&1; done
}
trap cleanup EXIT

# The checks every trap scenario ends with: the agent held the runtime's binary (the control: it is
# the same size as the host binary) from its sealed handle, and yet the host binary is unchanged and the
# payload never ran. A policy that keeps the runtime's binary from running in the container at all
# (allowed_bins, or a files policy that does not list it) stops the trap earlier: the runtime's exec
# fails with EACCES and the agent holds nothing; the same trap without a policy is then the control.
# In run-trap the runtime is a neighbour container's: a policy that keeps processes outside the
# container out of reach refuses the agent its binary.
judge_trap() {
    report=$1 sum_before=$2 runtime_said=$3 # and $size, the host binary's
    if [ -n "$policy" ] && grep -qi "permission denied" "$runtime_said" && ! grep -q "^held exe:" "$report"; then
        ok "the policy kept the runtime's binary from running in the container"
    elif [ -n "$policy" ] && [ "$scenario" = run-trap ] && wait_for "$report" "held exe:" 15 &&
        grep -Eq '^held exe: errno=(EACCES|EPERM)$' "$report"; then
        # The neighbour's init is in another container's cgroup: a policy keeps it out of the agent's
        # reach (/proc/PID/exe is a ptrace check), so the agent holds nothing.
        ok "the policy kept the neighbour's process out of the agent's reach"
    else
        wait_for "$report" "write exe:" 15 || wait_for "$report" "errno=" 1
        check "agent held the runtime's binary (control)" "$(cat "$report" "$runtime_said" 2>&1)" \
            grep -q "^held exe: pid=[0-9]* size=$size\$" "$report"
        if [ "$scenario" = exec-trap-memfd ]; then
            check "the runtime ran from its sealed memfd copy" "$(grep '^exe link:' "$report")" \
                grep -q '^exe link: /memfd:cerberus-sealed' "$report"
        else
            check "the runtime ran from its read-only overlayfs" "$(grep '^exe link:' "$report")" \
                grep -qx "exe link: /cerberus" "$report"
        fi
        check "agent could not write it" "$(cat "$report" 2>&1)" \
            sh -c "grep -q '^write exe: .*errno=' '$report' && ! grep -q ': ok\$' '$report'"
    fi
    "$rt" --version >/dev/null 2>&1 # the operator's next command runs whatever the file now holds
    sum_after=$(sha256sum <"$rt")
    check "host binary unchanged" "sha256 $sum_before -> $sum_after" [ "$sum_after" = "$sum_before" ]
    check "payload never ran on the host" "$marker exists" [ ! -e "$marker" ]
}

# judge_setup REPORT COMM: the agent saw a runtime process still setting up (the control that it got
# hold of it), could open nothing of it, and could open everything of its own process.
judge_setup() {
    report=$1
    check "agent saw the runtime's process still setting up (control)" "$(cat "$report" 2>&1)" grep -q "^saw $2: pid=" "$report"
    for entry in mem exe fd environ; do
        # An fd can also be gone between the listing and the open (ENOENT), and the memory with a process
        # that is exiting (ESRCH, while its name still reads the same): still nothing opened.
        refusals='EACCES|EPERM|ESRCH'
        [ "$entry" = fd ] && refusals='EACCES|EPERM|ESRCH|ENOENT'
        check "runtime $entry not opened" "$(grep "^runtime $entry:" "$report")" \
            grep -Eq "^runtime $entry: errno=($refusals)" "$report"
        check "own process $entry opens (control)" "$(grep "^control $entry:" "$report")" \
            grep -q "^control $entry: ok" "$report"
    done
}

rm -rf "$work" && mkdir -p "$work/hostbin" "$root" || exit 1
cp "$runtime_src" "$rt"
sum=$(sha256sum <"$rt")
size=$(wc -c <"$rt" | tr -d ' ')
payload="touch $marker"

case "$scenario" in
exec-trap | exec-trap-symlink | exec-trap-memfd)
    interp=/proc/self/exe
    link=""
    if [ "$scenario" = exec-trap-symlink ]; then
        interp=/tmp/rt
        link="ln -s /proc/self/exe /tmp/rt && "
    fi
    start_agent agent "${link}exe-attack trap /bin/sh $interp /tmp/hold >/tmp/trap.out 2>&1 &&
        exe-attack exe $interp /tmp/hold 60 '$payload' >/tmp/report 2>&1; exec sleep 600" ||
        fail "agent started" "$(cat "$work/agent.out")"
    wait_for "$work/agent/rootfs/tmp/trap.out" "trap: set" 10 || fail "trap set" "$(cat "$work/agent/rootfs/tmp/trap.out" 2>&1)"
    rtc_bounded exec agent /bin/sh -c true >"$work/exec.out" 2>&1 # this is docker exec: it walks into the trap
    judge_trap "$work/agent/rootfs/tmp/report" "$sum" "$work/exec.out"
    ;;
run-trap)
    start_agent agent "exe-attack trap /bin/sh /proc/self/exe /tmp/hold >/tmp/trap.out 2>&1 &&
        exe-attack exe /proc/self/exe /tmp/hold 60 '$payload' >/tmp/report 2>&1; exec sleep 600" ||
        fail "agent started" "$(cat "$work/agent.out")"
    wait_for "$work/agent/rootfs/tmp/trap.out" "trap: set" 10 || fail "trap set" "$(cat "$work/agent/rootfs/tmp/trap.out" 2>&1)"
    joined_bundle agent victim /bin/sh || fail "second bundle" "joining the agent's pid namespace"
    rtc_bounded run -b "$work/victim" victim </dev/null >"$work/victim.out" 2>&1 # its init execs the trap
    judge_trap "$work/agent/rootfs/tmp/report" "$sum" "$work/victim.out"
    ;;
exec-setup)
    start_agent agent "exec exe-attack setup cerberus:exec 30 >/tmp/report 2>&1" ||
        fail "agent started" "$(cat "$work/agent.out")"
    sleep 0.5
    n=0
    while [ "$n" -lt 40 ] && ! grep -q "^control environ" "$work/agent/rootfs/tmp/report" 2>/dev/null; do
        rtc exec agent /bin/true >/dev/null 2>&1
        n=$((n + 1))
    done
    wait_for "$work/agent/rootfs/tmp/report" "control environ" 5
    judge_setup "$work/agent/rootfs/tmp/report" cerberus:exec
    ;;
init-setup)
    start_agent agent "exe-attack setup cerberus:init 60 >/tmp/report 2>&1; exec sleep 600" ||
        fail "agent started" "$(cat "$work/agent.out")"
    joined_bundle agent victim /bin/true || fail "second bundle" "joining the agent's pid namespace"
    # Created, not started: its init waits for `start` in the agent's pid namespace.
    rtc create -b "$work/victim" victim </dev/null >"$work/victim.out" 2>&1 || fail "victim created" "$(cat "$work/victim.out")"
    wait_for "$work/agent/rootfs/tmp/report" "control environ" 15
    started=0
    rtc start victim >"$work/start.out" 2>&1 || started=$?
    check "the victim starts after the attack" "$(cat "$work/start.out")" [ "$started" -eq 0 ]
    judge_setup "$work/agent/rootfs/tmp/report" cerberus:init
    ;;
hook-setup)
    # A createContainer hook is a host binary run in the container's namespaces before pivot_root, with
    # the runtime's full capabilities; an agent sharing the pid namespace tries to open it as above.
    cp "$busybox" "$work/hostbin/hook-sleep"
    hook_sum=$(sha256sum <"$work/hostbin/hook-sleep")
    start_agent agent "exe-attack setup hook-sleep 60 >/tmp/report 2>&1; exec sleep 600" ||
        fail "agent started" "$(cat "$work/agent.out")"
    joined_bundle agent victim /bin/true || fail "second bundle" "joining the agent's pid namespace"
    jq --arg hook "$work/hostbin/hook-sleep" '.hooks.createContainer = [{"path": $hook, "args": ["busybox", "sleep", "2"]}]' \
        "$work/victim/config.json" >"$work/victim/config.json.new" && mv "$work/victim/config.json.new" "$work/victim/config.json"
    rtc create -b "$work/victim" victim </dev/null >"$work/victim.out" 2>&1 || fail "victim created" "$(cat "$work/victim.out")"
    wait_for "$work/agent/rootfs/tmp/report" "control environ" 15
    judge_setup "$work/agent/rootfs/tmp/report" hook-sleep
    check "host hook binary unchanged" "sha256 changed" [ "$(sha256sum <"$work/hostbin/hook-sleep")" = "$hook_sum" ]
    ;;
control-copy)
    # The same attack on a writable copy of the same binary, inside the container, must succeed:
    # it shows that the attack works here, so the other scenarios' refusals are the runtime's doing.
    start_agent agent "sleep 600" || fail "agent started" "$(cat "$work/agent.out")"
    cp "$rt" "$work/agent/rootfs/workspace/runtime-copy"
    rtc_bounded exec agent /bin/busybox sh -c "exe-attack trap /tmp/t /workspace/runtime-copy /tmp/hold >/tmp/trap.out 2>&1 &&
        { exe-attack exe /workspace/runtime-copy /tmp/hold 10 'echo pwned' >/tmp/report 2>&1 & } && sleep 0.2 &&
        /tmp/t; wait" >"$work/exec.out" 2>&1
    report="$work/agent/rootfs/tmp/report"
    check "agent held its copy" "$(cat "$report" 2>&1)" grep -q "^held exe: pid=" "$report"
    check "agent overwrote its copy" "$(cat "$report" 2>&1)" grep -q "^write exe: ok" "$report"
    check "the copy now holds the payload" "$(head -c 64 "$work/agent/rootfs/workspace/runtime-copy")" \
        grep -q "echo pwned" "$work/agent/rootfs/workspace/runtime-copy"
    check "host binary unchanged" "sha256 changed" [ "$(sha256sum <"$rt")" = "$sum" ]
    ;;
*)
    echo "exe_escape.sh: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
exit "$failed"

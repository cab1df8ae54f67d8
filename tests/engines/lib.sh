# SPDX-License-Identifier: Apache-2.0
# Helpers for tests/engines/run.sh: result counting, expectations, the test
# image, and cleanup of what the run started. Sourced, not run; the systemd VM
# lane's engine cases source it too (POSIX sh: dash runs them there).

passed=0 failed=0 skipped=0
policy_outcome="" # how this host answers a policy: "fail-closed" or "enforced"

ok() {
    passed=$((passed + 1))
    echo "ok    $1"
}

not_ok() {
    failed=$((failed + 1))
    echo "FAIL  $1"
    [ -s "$work/out" ] && tail -n 15 "$work/out" | sed 's/^/      | /'
    return 0
}

skip() {
    skipped=$((skipped + 1))
    echo "skip  $1: $2"
}

# Runs a command with a time limit, its output (stdout and stderr) in $work/out.
# A shell function runs as it is (its commands set their own limits).
run_captured() {
    if declare -F "$1" >/dev/null; then
        "$@" >"$work/out" 2>&1
    else
        timeout 90 "$@" >"$work/out" 2>&1
    fi
}

# expect_success NAME TEXT CMD...: exits 0 and prints TEXT.
expect_success() {
    local name=$1 text=$2
    shift 2
    if run_captured "$@" && grep -qF -- "$text" "$work/out"; then ok "$name"; else not_ok "$name"; fi
}

# expect_failure NAME TEXT CMD...: exits non-zero and TEXT reaches the user.
expect_failure() {
    local name=$1 text=$2
    shift 2
    if ! run_captured "$@" && grep -qF -- "$text" "$work/out"; then ok "$name"; else not_ok "$name"; fi
}

# The container under a policy must never run unprotected: either cerberus
# refuses it with its fail-closed error (a kernel without the BPF LSM), or it
# runs and the connect the policy denies fails with EPERM. Every engine must
# see the same outcome. The address is outside the container's own network
# namespace (its loopback stays reachable under a policy) and in a
# documentation range: without a policy the connect fails with "Network is
# unreachable".
policy_container_script='nc -w 1 203.0.113.9 9 </dev/null; echo policy-container-ran'
denying_policy='{"mode":"enforce","allowed_hosts":["192.0.2.1:443"]}'

expect_policy_outcome() {
    local name=$1 outcome=""
    shift
    if run_captured "$@"; then
        grep -q "Operation not permitted" "$work/out" && grep -q policy-container-ran "$work/out" && outcome=enforced
    else
        grep -qF "refusing to run the container unprotected" "$work/out" && outcome=fail-closed
    fi
    judge_policy_outcome "$name" "$outcome"
}

# judge_policy_outcome NAME OUTCOME: OUTCOME ("enforced", "fail-closed" or
# empty: neither) must be the one every engine before saw.
judge_policy_outcome() {
    local name=$1 outcome=$2
    if [ -z "$outcome" ]; then
        not_ok "$name (neither the fail-closed error nor a denied connect)"
    elif [ -n "$policy_outcome" ] && [ "$outcome" != "$policy_outcome" ]; then
        not_ok "$name ($outcome here, $policy_outcome before)"
    else
        policy_outcome=$outcome
        ok "$name ($outcome)"
    fi
}

bad_policy='{"allowed_hosts":["10.0.0.0/33"]}'
bad_policy_error='policy.allowed_hosts[0]: bad CIDR "10.0.0.0/33"'

# Podman parses --annotation values as CSV: the JSON is quoted (docs/engines/podman.md).
csv_quoted() {
    printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"
}

# docs/engines/images.md, step 1: a busybox root file system as
# $work/rootfs.tar, with the passwd lines HOME comes from.
make_rootfs() {
    local rootfs=$work/rootfs applet
    mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/tmp" "$rootfs/root" "$rootfs/home/agent" "$rootfs/proc" \
        "$rootfs/sys" "$rootfs/dev"
    cp /bin/busybox "$rootfs/bin/busybox"
    for applet in $("$rootfs/bin/busybox" --list); do
        [ "$applet" = busybox ] || ln -s busybox "$rootfs/bin/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000::/home/agent:/bin/sh\n' >"$rootfs/etc/passwd"
    printf 'root:x:0:\nagent:x:1000:\n' >"$rootfs/etc/group"
    chown 1000:1000 "$rootfs/home/agent"
    echo copied-up >"$rootfs/tmp/seed" # what a tmpfs with tmpcopyup must show
    tar -C "$rootfs" -cf "$work/rootfs.tar" .
}

# Daemons this run started, by PID: stopped last first (dockerd before its
# containerd) with SIGTERM, then SIGKILL.
started_pids=""

stop_started() {
    local pid
    for pid in $(printf '%s\n' $started_pids | tac); do
        stop_started_pid "$pid"
    done
}

# stop_started_pid PID: one of them, before the end; it leaves the list.
stop_started_pid() {
    local pid=$1 i
    started_pids=$(printf '%s\n' $started_pids | grep -vx -- "$pid" | tr '\n' ' ')
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# Waits until a command succeeds (a daemon answers on its socket), up to 30 s.
wait_until() {
    local i
    for i in $(seq 150); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# Mounts left under the work directory (overlay roots of the engines),
# deepest first.
unmount_under() {
    local target
    awk -v prefix="$1/" 'index($5, prefix) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r target; do umount -l "$target" 2>/dev/null || true; done
}

# Host paths the engines create outside their configured roots; removed at
# the end if this run created them.
engine_host_paths="/etc/docker/key.json /run/docker /run/containerd /run/libpod /run/containers
    /var/lib/containers /etc/cni/net.d/cni.lock /run/netns /var/lib/cni"
preexisting_paths=""

note_host_paths() {
    local p
    for p in $engine_host_paths; do
        [ -e "$p" ] && preexisting_paths="$preexisting_paths $p"
    done
    return 0
}

remove_created_host_paths() {
    local p
    for p in $engine_host_paths; do
        case " $preexisting_paths " in *" $p "*) continue ;; esac
        [ -e "$p" ] || continue
        unmount_under "$p"
        rm -rf "$p"
    done
}

# --- host names (the DNS gate) ---------------------------------------------------------------------------
# The policy, the script and the resolver an engine's names test uses: the resolver (dnsmasq on 192.0.2.53,
# added to the loopback of the network namespace NETNS) answers svc.test and evil.test; under names_policy
# the DNS gate answers the first, whose address the agent then reaches (no EPERM: nothing routes there),
# and refuses the second, whose address stays refused.
names_policy='{"allowed_hosts": ["svc.test:80"]}'
names_script='nslookup svc.test; nslookup evil.test; nc -w 1 198.51.100.1 80 </dev/null; nc -w 1 198.51.100.66 80 </dev/null; true'

# start_names_resolver NETNS DIR: dnsmasq in NETNS (its pid joins $started_pids); DIR/resolv.conf names it.
start_names_resolver() {
    local netns=$1 dir=$2
    nsenter --net="$netns" ip link set lo up
    nsenter --net="$netns" ip addr add 192.0.2.53/32 dev lo
    start_resolver "$netns" "$dir" 192.0.2.53 '198.51.100.1 svc.test\n198.51.100.66 evil.test\n'
}

# start_resolver NETNS DIR ADDRESS HOSTS: dnsmasq in NETNS on ADDRESS (already there), answering the names of
# HOSTS (hosts-file lines, printf's escapes) and no others; its pid joins $started_pids and is in $resolver_pid.
start_resolver() {
    local netns=$1 dir=$2 address=$3 hosts=$4
    mkdir -p "$dir"
    printf "$hosts" >"$dir/hosts"
    echo "nameserver $address" >"$dir/resolv.conf"
    nsenter --net="$netns" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
        --addn-hosts="$dir/hosts" --listen-address="$address" --bind-interfaces --user=root --group=root \
        --pid-file="$dir/dnsmasq.pid" >"$dir/dnsmasq.log" 2>&1 &
    resolver_pid=$!
    started_pids="$started_pids $!"
    sleep 0.5
}

# expect_names_outcome NAME CMD...: CMD runs names_script under names_policy: svc.test answered and its
# address not refused, evil.test REFUSED and its address refused (one EPERM).
expect_names_outcome() {
    local name=$1
    shift
    if run_captured "$@" && grep -q "Address: 198.51.100.1" "$work/out" && grep -q REFUSED "$work/out" &&
        [ "$(grep -c "Operation not permitted" "$work/out")" = 1 ] &&
        ! grep -q "198.51.100.1).*not permitted" "$work/out"; then
        ok "$name"
    else
        not_ok "$name"
    fi
}

# expect_names_control NAME CMD...: CMD runs names_script without a policy: both names resolve, nothing
# is refused.
expect_names_control() {
    local name=$1
    shift
    if run_captured "$@" && grep -q "Address: 198.51.100.66" "$work/out" && ! grep -q "not permitted" "$work/out"
    then
        ok "$name"
    else
        not_ok "$name"
    fi
}

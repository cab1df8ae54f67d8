# SPDX-License-Identifier: Apache-2.0
# Shared by the scenarios of tests/security/cve_escape.sh (sourced; busybox ash and bash): verdicts, the
# runtime under test, bundles made from one config of our own (so runc, crun and cerberus run the same
# container), and the attacker container that races a victim through a shared directory.

ids=""
verdict_tag=CVE
. "$here/verdict.sh"

# tally CHECK ATTEMPTS WON [MORE]: the attack's result over a number of attempts; fails when it won any.
tally() {
    if [ "$3" -eq 0 ]; then
        ok "$1" "attacker won 0 of $2${4:+ ($4)}"
    else
        fail "$1" "attacker won $3 of $2${4:+ ($4)}"
    fi
}

# The runtime under test; every command bounded, so an attack that hangs it ends the check.
rt() { timeout 60 $RUNTIME_VIEW "$runtime" --root "$state" "$@"; }

# kill_container ID: gone, whatever state it was in.
kill_container() {
    rt kill "$1" KILL >/dev/null 2>&1
    rt delete --force "$1" >/dev/null 2>&1 || rt delete "$1" >/dev/null 2>&1
    return 0
}
cleanup() {
    for id in $ids; do kill_container "$id"; done
}
trap cleanup EXIT

busybox=$(for b in /bin/busybox /usr/bin/busybox; do [ -x "$b" ] && echo "$b" && break; done)

# new_bundle DIR ARG...: a busybox root and our config with ARG... as the process: the usual namespaces
# and mounts of an engine, no terminal, a writable root, the capabilities Docker gives.
new_bundle() {
    dir=$1
    shift
    mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/sys" "$dir/rootfs/dev" "$dir/rootfs/tmp" \
        "$dir/rootfs/etc" || return 1
    cp "$busybox" "$dir/rootfs/bin/busybox"
    for applet in sh cat ls stat readlink mkdir test grep echo sleep true hostname touch head tr wc cut sed; do
        ln -sf busybox "$dir/rootfs/bin/$applet"
    done
    [ -z "$RACE_ATTACK" ] || cp "$RACE_ATTACK" "$dir/rootfs/bin/race-attack"
    args=$(for a in "$@"; do printf '%s' "$a" | jq -Rs .; done | jq -sc .)
    jq -n --argjson args "$args" '
        ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID",
         "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",
         "CAP_AUDIT_WRITE"] as $caps
        | {ociVersion: "1.0.2",
           process: {terminal: false, user: {uid: 0, gid: 0}, args: $args, cwd: "/",
                     env: ["PATH=/bin:/usr/bin:/sbin:/usr/sbin", "HOME=/"],
                     capabilities: {bounding: $caps, effective: $caps, permitted: $caps}},
           root: {path: "rootfs", readonly: false},
           hostname: "cve",
           mounts: [
             {destination: "/proc", type: "proc", source: "proc"},
             {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "strictatime", "mode=755", "size=65536k"]},
             {destination: "/dev/pts", type: "devpts", source: "devpts",
              options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
             {destination: "/dev/shm", type: "tmpfs", source: "shm", options: ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
             {destination: "/dev/mqueue", type: "mqueue", source: "mqueue", options: ["nosuid", "noexec", "nodev"]},
             {destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]},
             {destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: ["nosuid", "noexec", "nodev", "relatime", "ro"]}],
           linux: {namespaces: [{type: "pid"}, {type: "network"}, {type: "ipc"}, {type: "uts"}, {type: "mount"}],
                   maskedPaths: ["/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/acpi", "/sys/firmware"],
                   readonlyPaths: ["/proc/sys", "/proc/sysrq-trigger", "/proc/bus", "/proc/irq"]}}' >"$dir/config.json"
}

# edit DIR JQ-FILTER [JQ-ARGS...]: rewrites DIR/config.json.
edit() {
    dir=$1 filter=$2
    shift 2
    jq "$@" "$filter" "$dir/config.json" >"$dir/config.json.new" && mv "$dir/config.json.new" "$dir/config.json"
}

# add_mount DIR SOURCE DESTINATION [TYPE [OPTIONS-JSON]]: appends a mount (a bind by default).
add_mount() {
    edit "$1" '.mounts += [{source: $src, destination: $dst, type: $type, options: $opts}]' \
        --arg src "$2" --arg dst "$3" --arg type "${4:-bind}" --argjson opts "${5:-[\"rbind\"]}"
}

# run_once DIR ID: `run` in the foreground; sets out (stdout and stderr) and rc.
run_once() {
    ids="$ids $2"
    out=$(rt run --bundle "$1" "$2" </dev/null 2>&1)
    rc=$?
    kill_container "$2"
}

# wait_file FILE SECONDS: until FILE exists.
wait_file() {
    i=0
    while [ ! -e "$1" ] && [ "$i" -lt "$(($2 * 20))" ]; do
        sleep 0.05
        i=$((i + 1))
    done
    [ -e "$1" ]
}

# A relative path that climbs from anywhere in a root to "/": in the container's root it stops at the
# container's "/", on the host it reaches the host's.
up="../../../../../../../../../../../../../../../../../../../../../../../../../../../../../../"

# start_attacker ID DIR ARG...: an attacker container that has DIR at /shared and runs ARG...
start_attacker() {
    aid=$1 shared=$2
    shift 2
    new_bundle "$work/$aid" "$@" || return 1
    add_mount "$work/$aid" "$shared" /shared
    ids="$ids $aid"
    rt run --detach --bundle "$work/$aid" "$aid" </dev/null >"$work/$aid.out" 2>&1
}

# The racer's switch: it swaps while $shared/.go exists and settles every name back when it goes.
race_go() { : >"$1/.go"; }
race_settle() {
    rm -f "$1/.go"
    wait_file "$1/.settled" 10
}

# race_budget: attempts end when either runs out (CVE_RACE_SECONDS, CVE_RACE_ATTEMPTS).
race_seconds=${CVE_RACE_SECONDS:-4}
race_attempts=${CVE_RACE_ATTEMPTS:-40}
race_deadline() { echo $(($(date +%s) + race_seconds)); }
race_more() { [ "$1" -lt "$race_attempts" ] && [ "$(date +%s)" -lt "$2" ]; }

# race_control DIR NAME: the racer really flips DIR/NAME, sampled from the host while it runs (its kinds
# change, or a check-then-use by name, as a runtime that mounts by path does, finds another object).
race_control() {
    race_go "$1"
    sampled=$("$RACE_ATTACK" sample 0.3 "$1/$2")
    naive=$("$RACE_ATTACK" checkuse 0.3 "$1/$2")
    race_settle "$1" || fail "control, the racer settles" "no $1/.settled"
    kinds=0
    for kind in dir link other; do
        [ "$(echo "$sampled" | sed -n "s/.* $kind=\([0-9]*\).*/\1/p")" = 0 ] || kinds=$((kinds + 1))
    done
    won=$(echo "$naive" | sed -n 's/.* won=\([0-9]*\).*/\1/p')
    if [ "$kinds" -ge 2 ] || [ "${won:-0}" -gt 0 ]; then
        ok "control, the racer flips $2" "$sampled; $naive"
    else
        fail "control, the racer flips $2" "$sampled; $naive"
    fi
}

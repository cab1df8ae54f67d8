# SPDX-License-Identifier: Apache-2.0
# Scenarios of tests/security/cve_escape.sh on the container's process (sourced): its working directory,
# its capabilities, and the cgroup file system it is given.

# CVE-2024-21626: a working directory of /proc/self/fd/N is a descriptor the runtime still holds at the
# process's chdir; if that descriptor is a directory of the host, a relative path climbs out of the root.
# MODE: exec (exec --cwd), exec-process (exec --process with such a cwd) or create (process.cwd).
# The host's canary must never be read through it; a refusal must name the working directory.
scenario_cwd() {
    mode=$1
    secret="canary-$$-$(date +%s)"
    mkdir -p "$work/canary" && echo "$secret" >"$work/canary/secret"
    climb="$up${work#/}/canary/secret"
    read_canary="cat $climb 2>/dev/null; echo"
    check "control, the climb from a host directory reads the host's canary" "$work/canary/secret" \
        sh -c "cd '$work' && cat '$climb' | grep -qx '$secret'"
    if [ "$mode" != create ]; then
        new_bundle "$work/victim" sleep 600 || return
        ids="$ids victim"
        rt run --detach --bundle "$work/victim" victim </dev/null >"$work/victim.out" 2>&1 ||
            { fail "victim started" "$(cat "$work/victim.out")"; return; }
        said=$(rt exec --cwd /tmp victim sh -c "pwd; $read_canary" 2>&1)
        check "control, exec --cwd /tmp runs there, and the climb stops at the container's root" "$said" \
            sh -c "[ \"\$(echo '$said' | head -n1)\" = /tmp ] && ! echo '$said' | grep -q '$secret'"
    fi
    tried=0 reached="" unnamed=""
    n=3
    while [ "$n" -le 20 ]; do
        cwd="/proc/self/fd/$n"
        case "$mode" in
        exec)
            said=$(rt exec --cwd "$cwd" victim sh -c "$read_canary" 2>&1)
            rc=$?
            ;;
        exec-process)
            jq -n --arg cwd "$cwd" --arg cmd "$read_canary" \
                '{terminal: false, user: {uid: 0, gid: 0}, args: ["sh", "-c", $cmd], cwd: $cwd,
                  env: ["PATH=/bin:/usr/bin"]}' >"$work/process.json"
            said=$(rt exec --process "$work/process.json" victim 2>&1)
            rc=$?
            ;;
        create)
            new_bundle "$work/b$n" sh -c "$read_canary" || return
            edit "$work/b$n" '.process.cwd = $cwd' --arg cwd "$cwd"
            run_once "$work/b$n" "cwd-$n"
            said=$out
            ;;
        esac
        tried=$((tried + 1))
        if echo "$said" | grep -q "$secret"; then
            reached="$reached $n"
        elif [ "$rc" -ne 0 ] && ! echo "$said" | grep -qF "$cwd"; then
            unnamed="$unnamed $n:$(echo "$said" | head -n1)"
        fi
        n=$((n + 1))
    done
    tally "no process of $mode got a working directory outside the root (/proc/self/fd/3..20)" "$tried" \
        "$(echo $reached | wc -w)" "${reached:+reached the host at N=$reached}"
    if [ -z "$unnamed" ]; then
        ok "each refusal names the working directory"
    else
        fail "each refusal names the working directory" "$unnamed"
    fi
}

# cap_bit STATUS FIELD BIT: 1 when the hex capability set FIELD of a /proc/PID/status text has BIT.
cap_bit() {
    hex=$(echo "$1" | sed -n "s/^$2:[[:space:]]*//p")
    echo $(((0x${hex:-0} >> $3) & 1))
}
cap_set() { echo "$1" | sed -n "s/^$2:[[:space:]]*//p"; }

# CVE-2022-29162: exec --cap (and an exec'd process or an init whose config names no inheritable set)
# must not get a non-empty inheritable set, which an exec of a file with inheritable file capabilities
# would turn into permitted ones.
scenario_caps() {
    new_bundle "$work/victim" sleep 600 || return
    ids="$ids victim"
    rt run --detach --bundle "$work/victim" victim </dev/null >"$work/victim.out" 2>&1 ||
        { fail "victim started" "$(cat "$work/victim.out")"; return; }
    added=$(rt exec --cap CAP_NET_ADMIN victim cat /proc/self/status 2>&1)
    check "control, exec --cap CAP_NET_ADMIN gives the process CAP_NET_ADMIN" "$(cap_set "$added" CapEff)" \
        [ "$(cap_bit "$added" CapEff 12)" = 1 ]
    jq -n '["CAP_CHOWN", "CAP_KILL", "CAP_NET_ADMIN"] as $caps
        | {terminal: false, user: {uid: 0, gid: 0}, args: ["cat", "/proc/self/status"], cwd: "/",
           env: ["PATH=/bin"], capabilities: {bounding: $caps, effective: $caps, permitted: $caps}}' \
        >"$work/process.json"
    by_process=$(rt exec --process "$work/process.json" victim 2>&1)
    init=$(rt exec victim cat /proc/1/status 2>&1)
    for which in added by_process init; do
        eval "text=\$$which"
        inh=$(cap_set "$text" CapInh) amb=$(cap_set "$text" CapAmb)
        case "$which" in
        added) what="exec --cap" ;;
        by_process) what="exec --process with no inheritable set" ;;
        *) what="the container's init" ;;
        esac
        check "$what leaves the inheritable and ambient sets empty" "CapInh=$inh CapAmb=$amb" \
            [ "$inh" = 0000000000000000 ] && [ "$amb" = 0000000000000000 ]
    done
}

# CVE-2023-25809: without a cgroup namespace, in a user namespace, the container is given the host's
# cgroup hierarchy (KIND cgroup: the cgroup mount the config asks read-only), or the host's /sys with
# all its submounts (KIND sysfs: the host's network namespace, where sysfs cannot be mounted, and no
# cgroup mount). Every mount there must be read-only; checked on the mount table, nothing is written.
scenario_cgroupfs() {
    kind=$1
    new_bundle "$work/victim" cat /proc/self/mountinfo || return
    edit "$work/victim" '.linux.namespaces += [{type: "user"}]
        | .linux.uidMappings = [{containerID: 0, hostID: 0, size: 65536}]
        | .linux.gidMappings = [{containerID: 0, hostID: 0, size: 65536}]'
    prefix=/sys/fs/cgroup
    if [ "$kind" = sysfs ]; then
        prefix=/sys
        edit "$work/victim" '.linux.namespaces |= map(select(.type != "network"))
            | .mounts |= map(select(.type != "cgroup"))'
    fi
    run_once "$work/victim" victim
    if [ "$rc" -ne 0 ]; then
        ok "every mount under $prefix is read-only" "the runtime refused the config: $(echo "$out" | tail -n1)"
        return
    fi
    counts=$(echo "$out" | awk -v p="$prefix" '$5 == p || index($5, p "/") == 1 {
        n++; if ($6 !~ /(^|,)ro(,|$)/) { w++; list = list " " $5 } } END { print n + 0, w + 0, list }')
    total=${counts%% *}
    rest=${counts#* }
    writable=${rest%% *}
    check "control, the container got the host's $prefix ($total mounts)" "$(echo "$out" | grep " $prefix")" \
        [ "$total" -ge 1 ]
    tally "every mount under $prefix is read-only" "$total" "$writable" "${rest#* }"
}

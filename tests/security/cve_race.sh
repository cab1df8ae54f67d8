# SPDX-License-Identifier: Apache-2.0
# Scenarios of tests/security/cve_escape.sh where an attacker container races the runtime through a
# directory it shares with the victim (a volume, or the victim's root) (sourced). The attacker swaps a
# name between a directory and a symlink (or another directory) while the runtime creates the victim,
# and settles every name back before the victim starts, so the victim's checks see stable names. Each
# race makes creates until its budget runs out, and counts what the attacker won; its control shows that
# the racer really flips the name and beats a runtime that checks a path and then uses it by name.

# race_loop SHARED BUNDLE RESET JUDGE: one create per attempt while the attacker swaps, then settle,
# start, wait for the victim's /tmp/result ("done" at its end) and JUDGE (which adds to attempts and
# wins). RESET runs before each attempt, while the attacker is settled.
race_loop() {
    shared=$1 bundle=$2 reset=$3 judge=$4
    creates=0 refused=0 attempts=0 wins=0 first_refusal="" silent=0
    deadline=$(race_deadline)
    while race_more "$creates" "$deadline"; do
        creates=$((creates + 1))
        id="victim-$creates"
        $reset
        rm -f "$bundle/rootfs/tmp/result"
        race_go "$shared"
        ids="$ids $id"
        rt create ${create_args:-} --bundle "$bundle" "$id" </dev/null >"$work/create.out" 2>&1
        created=$?
        race_settle "$shared" || fail "the racer settles" "no $shared/.settled"
        if [ "$created" -ne 0 ]; then
            refused=$((refused + 1))
            [ -n "$first_refusal" ] || first_refusal=$(grep -v '^$' "$work/create.out" | tail -n1 | cut -c1-200)
            $judge refused
        else
            i=0
            rt start "$id" >/dev/null 2>&1 || i=200
            while ! grep -q '^done$' "$bundle/rootfs/tmp/result" 2>/dev/null && [ "$i" -lt 200 ]; do
                sleep 0.05
                i=$((i + 1))
            done
            if grep -q '^done$' "$bundle/rootfs/tmp/result" 2>/dev/null; then
                $judge ran
            else
                # Its process never ran to its end (the runtime stopped it, or the attacker broke
                # the root they share): it cannot have used what the attacker did.
                silent=$((silent + 1))
                $judge refused
            fi
        fi
        kill_container "$id"
        sed "s/^/$id: /" "$work/create.out" >>"$work/create.log"
    done
}

race_summary() {
    echo "$creates creates, $refused refused${first_refusal:+ (\"$first_refusal\")}, $silent started but did not run to the end"
}

# victim_script TEXT: the victim's process runs TEXT and writes its output, then "done", to /tmp/result.
victim_script() { printf '{ %s\n} >/tmp/result 2>&1; echo >>/tmp/result; echo done >>/tmp/result' "$1"; }

start_racer() {
    shared=$1
    shift
    start_attacker attacker "$shared" race-attack exchange /shared/.go /shared/.settled $((race_seconds + 300)) "$@" ||
        { fail "control, the attacker container started" "$(cat "$work/attacker.out")"; return 1; }
    wait_file "$shared/.settled" 10 || { fail "control, the attacker container started" "no racer"; return 1; }
}

# outside_pair NAME: in the volume, NAME a directory and NAME-alt a symlink that climbs out of the root to
# the host's $work/outside/NAME, which the racer swaps; adds them to $pairs.
outside_pair() {
    mkdir -p "$vol/$1" "$work/outside/$1"
    ln -s "$up${work#/}/outside/$1" "$vol/$1-alt"
    pairs="$pairs /shared/$1 /shared/$1-alt"
}

# CVE-2021-30465, CVE-2019-19921: the victim mounts a host directory at /shared/fI, inside a volume the
# attacker shares, who swaps fI with a symlink that climbs out of the root to the host's $work/outside/fI.
# A mount that follows it lands outside the container: the victim cannot find its mark anywhere.
scenario_dest_race() {
    k=8 vol="$work/vol" victim="$work/victim" pairs="" look=""
    mkdir -p "$vol" "$work/payload" && echo mark >"$work/payload/MARK"
    new_bundle "$victim" true || return
    add_mount "$victim" "$vol" /shared
    i=0
    while [ "$i" -lt "$k" ]; do
        outside_pair "f$i"
        add_mount "$victim" "$work/payload" "/shared/f$i"
        look="$look [ -e /shared/f$i/MARK ] || [ -e /shared/f$i-alt/MARK ] || [ -e $work/outside/f$i/MARK ] || echo lost f$i;"
        i=$((i + 1))
    done
    edit "$victim" '.process.args = ["sh", "-c", $s]' --arg s "$(victim_script "$look")"
    start_racer "$vol" $pairs || return
    race_control "$vol" f0
    race_loop "$vol" "$victim" : judge_dest
    tally "every mount landed inside the container's root" "$attempts" "$wins" "$(race_summary)"
}
judge_dest() {
    attempts=$((attempts + k))
    [ "$1" = ran ] || return 0
    wins=$((wins + $(grep -c '^lost ' "$victim/rootfs/tmp/result" 2>/dev/null)))
}

# CVE-2024-45310: the victim's mounts need directories (and a file) made below /shared/gI; the attacker
# swaps gI with a symlink to the host's $work/outside/gI while the runtime makes them. Nothing may appear
# in the host's directory.
scenario_mkdir_race() {
    k=8 vol="$work/vol" victim="$work/victim" pairs=""
    mkdir -p "$vol" "$work/payload" && echo mark >"$work/payload/MARK"
    new_bundle "$victim" sh -c "$(victim_script true)" || return
    add_mount "$victim" "$vol" /shared
    i=0
    while [ "$i" -lt "$k" ]; do
        outside_pair "g$i"
        add_mount "$victim" tmpfs "/shared/g$i/made/deeper" tmpfs '["nosuid"]'
        add_mount "$victim" "$work/payload/MARK" "/shared/g$i/file" bind '["bind"]'
        i=$((i + 1))
    done
    start_racer "$vol" $pairs || return
    race_control "$vol" g0
    race_loop "$vol" "$victim" reset_mkdir judge_mkdir
    tally "nothing made on the host through the racing volume" "$attempts" "$wins" "$(race_summary)"
}
reset_mkdir() {
    i=0
    while [ "$i" -lt "$k" ]; do
        rm -rf "$vol/g$i/made" "$vol/g$i/file" "$work/outside/g$i"/* 2>/dev/null
        i=$((i + 1))
    done
}
judge_mkdir() {
    i=0
    while [ "$i" -lt "$k" ]; do
        attempts=$((attempts + 2))
        wins=$((wins + $(ls -A "$work/outside/g$i" | wc -l)))
        i=$((i + 1))
    done
}

# CVE-2025-52881 (racing): the victim binds a host directory at /shared/s, which the attacker swaps with
# a symlink into procfs (../proc/sys/kernel), and sets kernel.domainname. A mount that lands there sends
# the runtime's sysctl write into the host's directory.
scenario_sysctl_race() {
    vol="$work/vol" victim="$work/victim"
    mkdir -p "$vol/s" "$work/trap"
    ln -s ../proc/sys/kernel "$vol/s-alt"
    new_bundle "$victim" sh -c "$(victim_script 'stat -f -c %T /proc/sys/kernel; cat /proc/sys/kernel/domainname')" || return
    edit "$victim" '.linux.sysctl = {"kernel.domainname": "cve-victim"}'
    add_mount "$victim" "$vol" /shared
    add_mount "$victim" "$work/trap" /shared/s
    start_racer "$vol" /shared/s /shared/s-alt || return
    race_control "$vol" s
    race_loop "$vol" "$victim" reset_sysctl judge_sysctl
    tally "the sysctl reaches the container's kernel, never a file of the host" "$attempts" "$wins" "$(race_summary)"
}
reset_sysctl() { echo trap >"$work/trap/domainname"; }
judge_sysctl() {
    attempts=$((attempts + 1))
    if [ "$(cat "$work/trap/domainname")" != trap ]; then
        wins=$((wins + 1))
    elif [ "$1" = ran ] && [ "$(head -n2 "$victim/rootfs/tmp/result" | tr '\n' ' ')" != "proc cve-victim " ]; then
        wins=$((wins + 1))
    fi
}

# CVE-2019-19921, CVE-2023-27561 with the victim's root itself shared (a volume of the attacker's), and
# CVE-2025-52881's write redirection: the attacker swaps /proc with a directory of its own holding a fake
# proc tree. Wherever procfs lands, it must be masked and read-only where the config says, and the sysctl
# written to it; the fake tree must stay untouched.
scenario_proc_race() {
    victim="$work/victim"
    new_bundle "$victim" true || return
    root="$victim/rootfs"
    mkdir -p "$root/proc-alt/sys/kernel" "$root/proc-alt/acpi"
    masked=""
    for f in kcore keys timer_list; do
        [ -e "/proc/$f" ] && masked="$masked $f" && : >"$root/proc-alt/$f"
    done
    readonly=""
    for f in sys sysrq-trigger; do
        [ -e "/proc/$f" ] && readonly="$readonly $f"
    done
    : >"$root/proc-alt/sysrq-trigger"
    look='P=; for p in /proc /proc-alt; do [ "$(stat -f -c %T $p)" = proc ] && P=$p; done
        [ -n "$P" ] || echo lost procfs
        for f in '"$masked"'; do [ "$(stat -c %t:%T $P/$f)" = 1:3 ] || echo lost mask $f; done
        for r in '"$readonly"'; do
            awk -v m=$P/$r '"'"'$5 == m && $6 ~ /(^|,)ro(,|$)/ { f = 1 } END { exit !f }'"'"' $P/self/mountinfo ||
                echo lost read-only $r
        done
        [ "$(cat $P/sys/kernel/domainname)" = cve-victim ] || echo lost sysctl'
    edit "$victim" '.process.args = ["sh", "-c", $s] | .linux.sysctl = {"kernel.domainname": "cve-victim"}' \
        --arg s "$(victim_script "$look")"
    start_racer "$root" /shared/proc /shared/proc-alt || return
    race_control "$root" proc
    race_loop "$root" "$victim" reset_proc judge_proc
    tally "procfs masked, read-only and given the sysctl wherever it lands" "$attempts" "$wins" \
        "$(race_summary)${first_win:+; first won: $first_win}"
}
reset_proc() { echo fake >"$root/proc-alt/sys/kernel/domainname"; }
judge_proc() {
    attempts=$((attempts + 1))
    if [ "$(cat "$root/proc-alt/sys/kernel/domainname" 2>/dev/null)" != fake ] ||
        { [ "$1" = ran ] && grep -q '^lost ' "$root/tmp/result"; }; then
        wins=$((wins + 1))
        [ -n "${first_win:-}" ] ||
            first_win="$(grep '^lost ' "$root/tmp/result" 2>/dev/null | tr '\n' ' ')fake: $(cat "$root/proc-alt/sys/kernel/domainname")"
    fi
}

# CVE-2025-31133: /dev is a volume the attacker shares; it swaps the null device the runtime made with a
# symlink to the container's hostname file. Masked paths must stay covered by the null device (1:3),
# never by what the symlink names.
scenario_devnull_race() {
    dev="$work/devvol" victim="$work/victim"
    mkdir -p "$dev"
    masked=""
    for f in kcore keys timer_list; do [ -e "/proc/$f" ] && masked="$masked $f"; done
    new_bundle "$victim" sh -c "$(victim_script "for f in $masked; do [ \"\$(stat -c %t:%T /proc/\$f)\" = 1:3 ] || echo lost \$f; done")" ||
        return
    edit "$victim" '.mounts |= map(if .destination == "/dev" then {destination: "/dev", type: "bind", source: $d, options: ["rbind"]} else . end)' \
        --arg d "$dev"
    start_racer "$dev" /shared/null /shared/null-alt || return
    reset_devnull
    race_control "$dev" null
    race_loop "$dev" "$victim" reset_devnull judge_devnull
    tally "masked paths covered by the null device" "$attempts" "$wins" "$(race_summary)"
}
# A null device in the volume, as a /dev a runtime does not fill itself (runc's, for a bound /dev) has.
reset_devnull() {
    rm -f "$dev/null" "$dev/null-alt"
    mknod "$dev/null" c 1 3
    ln -s /proc/sys/kernel/hostname "$dev/null-alt"
}
judge_devnull() {
    attempts=$((attempts + 1))
    [ "$1" = ran ] && grep -q '^lost ' "$victim/rootfs/tmp/result" && wins=$((wins + 1))
    return 0
}


# CVE-2025-52565 (the pty's peer): with a terminal, /dev is a volume the attacker shares; it swaps the
# devpts mount point pts with a directory whose entries are symlinks to the container's hostname file. A
# runtime that opens the pty's peer by its name /dev/pts/N, or binds that name over /dev/console, hands
# that file to the process as its terminal or console, and what the process writes there becomes its
# hostname (a write gadget into procfs).
scenario_console_race() {
    [ -x "$RECVTTY" ] || { fail "control, a console socket receiver" "RECVTTY not set"; return; }
    dev="$work/devvol" victim="$work/victim"
    mkdir -p "$dev/pts" "$dev/pts-alt"
    i=0
    while [ "$i" -lt 256 ]; do
        ln -s /proc/sys/kernel/hostname "$dev/pts-alt/$i"
        i=$((i + 1))
    done
    new_bundle "$victim" sh -c "echo pwned; echo pwned >/dev/console; $(victim_script 'cat /proc/sys/kernel/hostname')" ||
        return
    edit "$victim" '.process.terminal = true
        | .mounts |= map(if .destination == "/dev" then {destination: "/dev", type: "bind", source: $d, options: ["rbind"]} else . end)' \
        --arg d "$dev"
    start_racer "$dev" /shared/pts /shared/pts-alt || return
    race_control "$dev" pts
    race_loop "$dev" "$victim" reset_console judge_console
    stop_console
    create_args=""
    tally "the process's terminal is always its own pty" "$attempts" "$wins" "$(race_summary)"
}
stop_console() {
    [ -z "${tty_pid:-}" ] || { kill "$tty_pid" 2>/dev/null; wait "$tty_pid" 2>/dev/null; }
    tty_pid=""
}
reset_console() {
    stop_console
    sock="$work/console.sock"
    rm -f "$sock"
    "$RECVTTY" "$sock" >"$work/console.out" 2>&1 &
    tty_pid=$!
    wait_file "$sock" 5
    create_args="--console-socket $sock"
}
judge_console() {
    attempts=$((attempts + 1))
    [ "$1" = ran ] && grep -qx pwned "$victim/rootfs/tmp/result" && wins=$((wins + 1))
    return 0
}

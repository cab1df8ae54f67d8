# SPDX-License-Identifier: Apache-2.0
# Scenarios of tests/security/cve_escape.sh on the container's file system made by a malicious image or
# config, without a race (sourced): procfs and sysfs mounted through a symlink or covered, a mount that
# resolves into procfs, /dev a symlink to the host, and the terminal's /dev/console and pty.

first_line() { echo "$1" | grep -v '^$' | tail -n1 | cut -c1-200; }

# CVE-2023-28642, CVE-2023-27561: the image makes /proc (or /sys) a symlink to a directory of its own.
# A runtime that mounts through it leaves the file system its masks and writes go to up to the image.
scenario_proc_symlink() {
    new_bundle "$work/plain" sh -c 'stat -f -c %T /proc /sys; [ -L /proc ] || [ -L /sys ] || echo plain' || return
    run_once "$work/plain" plain
    check "control, with plain directories /proc and /sys are procfs and sysfs" "$out" \
        [ "$(echo "$out" | tr '\n' ' ')" = "proc sysfs plain " ]
    for fs in proc sys; do
        new_bundle "$work/$fs" sh -c "stat -f -c %T /$fs; readlink /$fs" || return
        rm -rf "$work/$fs/rootfs/$fs"
        mkdir "$work/$fs/rootfs/bad-$fs"
        ln -s "/bad-$fs" "$work/$fs/rootfs/$fs"
        run_once "$work/$fs" "link-$fs"
        if [ "$rc" -ne 0 ]; then
            ok "/$fs a symlink is not mounted through" "refused: $(first_line "$out")"
        else
            fail "/$fs a symlink is not mounted through" "the container ran with /$fs -> $(echo "$out" | tr '\n' ' ')"
        fi
    done
}

# CVE-2019-16884: a config (e.g. an image's VOLUME /proc) covers /proc with another file system after
# procfs was mounted, so the runtime's later masks and writes under /proc go to that one. Here a bind of
# a host directory holding a fake proc tree, and a tmpfs; the runtime's sysctl write must not land in the
# host's directory, and the container must not run with either as its /proc.
scenario_proc_over() {
    new_bundle "$work/plain" sh -c 'stat -f -c %T /proc; cat /proc/sys/kernel/domainname' || return
    edit "$work/plain" '.linux.sysctl = {"kernel.domainname": "cve-victim"}'
    run_once "$work/plain" plain
    check "control, without the cover /proc is procfs and takes the sysctl" "$out" \
        [ "$(echo "$out" | tr '\n' ' ')" = "proc cve-victim " ]
    mkdir -p "$work/fakeproc/sys/kernel"
    for cover in bind tmpfs; do
        echo fake >"$work/fakeproc/sys/kernel/domainname"
        new_bundle "$work/$cover" sh -c 'stat -f -c %T /proc' || return
        edit "$work/$cover" '.linux.sysctl = {"kernel.domainname": "cve-victim"}'
        if [ "$cover" = bind ]; then
            add_mount "$work/$cover" "$work/fakeproc" /proc
        else
            add_mount "$work/$cover" tmpfs /proc tmpfs '["nosuid"]'
        fi
        run_once "$work/$cover" "over-$cover"
        host=$(cat "$work/fakeproc/sys/kernel/domainname")
        if [ "$host" != fake ]; then
            fail "a $cover over /proc takes no write" "the host's fake domainname now holds $host"
        elif [ "$rc" -eq 0 ] && [ "$out" != proc ]; then
            fail "a $cover over /proc takes no write" "the container ran with /proc of type $out"
        else
            ok "a $cover over /proc takes no write" \
                "$([ "$rc" -eq 0 ] && echo "ran with procfs" || echo "refused: $(first_line "$out")")"
        fi
    done
}

# CVE-2025-52881 (without a race): a mount whose destination is a symlink the image points into procfs
# (/data -> /proc/sys/kernel) puts a host directory over /proc/sys/kernel, and the runtime's sysctl
# write then goes to a file of the host.
scenario_sysctl_symlink() {
    new_bundle "$work/plain" cat /proc/sys/kernel/domainname || return
    edit "$work/plain" '.linux.sysctl = {"kernel.domainname": "cve-victim"}'
    run_once "$work/plain" plain
    check "control, the sysctl is written to the container's kernel" "$out" [ "$out" = cve-victim ]
    mkdir -p "$work/trap"
    echo trap >"$work/trap/domainname"
    new_bundle "$work/victim" sh -c 'stat -f -c %T /proc/sys/kernel; cat /proc/sys/kernel/domainname' || return
    edit "$work/victim" '.linux.sysctl = {"kernel.domainname": "cve-victim"}'
    ln -s /proc/sys/kernel "$work/victim/rootfs/data"
    add_mount "$work/victim" "$work/trap" /data
    run_once "$work/victim" victim
    host=$(cat "$work/trap/domainname")
    if [ "$host" != trap ]; then
        fail "the sysctl never reaches a file of the host" "the host's $work/trap/domainname now holds $host"
    elif [ "$rc" -eq 0 ] && [ "$(echo "$out" | tr '\n' ' ')" != "proc cve-victim " ]; then
        fail "the sysctl never reaches a file of the host" "the container ran with /proc/sys/kernel: $out"
    else
        ok "the sysctl never reaches a file of the host" \
            "$([ "$rc" -eq 0 ] && echo "ran: $out" | tr '\n' ' ' || echo "refused: $(first_line "$out")")"
    fi
}

# CVE-2026-41579: the image makes /dev a symlink to a host directory and the config mounts nothing on
# /dev; the runtime's own /dev entries (fd, stdin, ptmx, ...) made by path before pivot_root land there.
scenario_dev_symlink() {
    hostdev="$work/hostdev"
    mkdir -p "$hostdev/pts"
    echo host-file >"$hostdev/ptmx"
    : >"$hostdev/pts/ptmx"
    new_bundle "$work/victim" true || return
    edit "$work/victim" '.mounts |= map(select(.destination | startswith("/dev") | not))'
    rm -rf "$work/victim/rootfs/dev"
    ln -s "$hostdev" "$work/victim/rootfs/dev"
    before=$(cd "$hostdev" && ls -lAR)
    check "control, the image's /dev leads to the host's directory when followed on the host" \
        "$(readlink -f "$work/victim/rootfs/dev")" [ "$(readlink -f "$work/victim/rootfs/dev")" = "$hostdev" ]
    run_once "$work/victim" victim
    after=$(cd "$hostdev" && ls -lAR)
    if [ "$before" = "$after" ]; then
        ok "nothing made or removed in the host's directory" "exit $rc: $(first_line "$out")"
    else
        fail "nothing made or removed in the host's directory" "$(ls -A "$hostdev" | tr '\n' ' ')"
    fi
}

# console_run DIR ID: create with a terminal on a console socket, start, wait for /tmp/result in its
# root. Sets rc (create's status) and out (what create said).
console_run() {
    sock="$work/$2.sock"
    rm -f "$sock" "$1/rootfs/tmp/result"
    "$RECVTTY" "$sock" >"$work/$2.tty" 2>&1 &
    tty_pid=$!
    wait_file "$sock" 5
    ids="$ids $2"
    out=$(rt create --console-socket "$sock" --bundle "$1" "$2" </dev/null 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ]; then
        rt start "$2" >/dev/null 2>&1
        wait_file "$1/rootfs/tmp/done" 10
    fi
    kill_container "$2"
    kill "$tty_pid" 2>/dev/null
    wait "$tty_pid" 2>/dev/null
}

console_bundle() {
    new_bundle "$1" sh -c "$2; touch /tmp/done" || return 1
    edit "$1" '.process.terminal = true'
}

# CVE-2025-52565 (the symlink form): with a terminal, the runtime binds the pty over /dev/console. The
# config gives /dev as a host directory (a volume) where /dev/console is a symlink to a file of the root;
# a runtime that follows it truncates that file or mounts the pty over it.
scenario_console_symlink() {
    [ -x "$RECVTTY" ] || { fail "control, a console socket receiver" "RECVTTY not set"; return; }
    console_bundle "$work/plain" 'stat -c "%F %t" /dev/console >/tmp/result' || return
    console_run "$work/plain" plain
    check "control, with a terminal, /dev/console is the pty (major 136)" "exit $rc: $(first_line "$out"); $(cat "$work/plain/rootfs/tmp/result" 2>&1)" \
        grep -qx "character special file 88" "$work/plain/rootfs/tmp/result"
    mkdir -p "$work/vdev"
    ln -s /victim-file "$work/vdev/console"
    console_bundle "$work/victim" 'grep " /victim-file " /proc/self/mountinfo >/tmp/result' || return
    edit "$work/victim" '.mounts |= map(if .destination == "/dev" then {destination: "/dev", type: "bind", source: $v, options: ["rbind"]} else . end)' \
        --arg v "$work/vdev"
    echo intact >"$work/victim/rootfs/victim-file"
    console_run "$work/victim" victim
    file=$(cat "$work/victim/rootfs/victim-file")
    mounted=$(cat "$work/victim/rootfs/tmp/result" 2>/dev/null)
    if [ "$file" = intact ] && [ -z "$mounted" ]; then
        ok "the pty never lands on the symlink's target" "exit $rc: $(first_line "$out")"
    else
        fail "the pty never lands on the symlink's target" "victim-file: '$file', mounted: $mounted"
    fi
}

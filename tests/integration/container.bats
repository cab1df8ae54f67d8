#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# What the process inside the container sees: the config.json it was given.

load helpers

setup() { setup_bundle; }
teardown() { teardown_bundle; }

@test "hostname, domainname, env and cwd come from the config" {
    edit_config '.hostname = "agent-7" | .domainname = "example.test" | .process.env += ["GREETING=hi"] | .process.cwd = "/tmp/work"'
    run_container sh -c 'echo "$(hostname) $(cat /proc/sys/kernel/domainname) $GREETING $(pwd)"'
    [ "$status" -eq 0 ]
    [ "$output" = "agent-7 example.test hi /tmp/work" ]
}

@test "user, groups and umask are applied" {
    edit_config '.process.user = {"uid": 1000, "gid": 1001, "additionalGids": [2000, 2001], "umask": 63}'
    run_container sh -c 'probe ids; umask'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "uid=1000 gid=1001 groups=2000,2001" ]
    [ "${lines[1]}" = "0077" ]
}

@test "capabilities: exactly the configured sets" {
    edit_config '.process.capabilities = {"bounding": ["CAP_NET_BIND_SERVICE", "CAP_KILL"], "effective": ["CAP_KILL"], "permitted": ["CAP_KILL"], "inheritable": [], "ambient": []}'
    run_container grep -E '^Cap(Bnd|Eff|Prm|Inh|Amb)' /proc/self/status
    [ "$status" -eq 0 ]
    [[ "$output" == *"CapBnd:	0000000000000420"* ]]
    [[ "$output" == *"CapEff:	0000000000000020"* ]]
    [[ "$output" == *"CapInh:	0000000000000000"* ]]
}

@test "noNewPrivileges is set when asked" {
    run_container grep NoNewPrivs /proc/self/status
    [[ "$output" == *"NoNewPrivs:	1"* ]]
    edit_config '.process.noNewPrivileges = false'
    run_container grep NoNewPrivs /proc/self/status
    [[ "$output" == *"NoNewPrivs:	0"* ]]
}

@test "rlimits are applied" {
    edit_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 123, "hard": 456}, {"type": "RLIMIT_NPROC", "soft": 77, "hard": 77}]'
    run_container sh -c 'ulimit -n; ulimit -Hn; ulimit -u'
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '123\n456\n77')" ]
}

@test "the rootfs is read-only when root.readonly is set, writable otherwise" {
    run_container touch /newfile
    [ "$status" -ne 0 ]
    [[ "$output" == *"Read-only file system"* ]]
    edit_config '.root.readonly = false'
    run_container touch /newfile
    [ "$status" -eq 0 ]
    [ -f "$BUNDLE/rootfs/newfile" ]
}

@test "masked paths are empty and readonly paths refuse writes" {
    run_container sh -c 'wc -c < /proc/timer_list; echo 1 > /proc/sys/kernel/domainname'
    [ "${lines[0]}" = 0 ]
    [[ "$output" == *"Read-only file system"* ]]
}

@test "masked directories are empty, read-only and share one tmpfs" {
    mkdir -p "$BUNDLE/rootfs/masked-a" "$BUNDLE/rootfs/masked-b"
    touch "$BUNDLE/rootfs/masked-a/secret" "$BUNDLE/rootfs/masked-b/secret"
    edit_config '.linux.maskedPaths = ["/masked-a", "/proc/timer_list", "/masked-b"] | .root.readonly = false'
    run_container sh -c 'ls -A /masked-a /masked-b; touch /masked-b/new; stat -f -c %T /masked-b; stat -c %d /masked-a /masked-b /'
    [ "$status" -eq 0 ]
    [[ "$output" != *secret* ]]
    [[ "$output" == *"/masked-b/new: Read-only file system"* ]]
    [ "${lines[-4]}" = tmpfs ]
    [ "${lines[-3]}" = "${lines[-2]}" ]
    [ "${lines[-3]}" != "${lines[-1]}" ]
}

@test "the container runs in its own pid, uts, ipc, net and mount namespaces" {
    run_container sh -c 'echo $$; for ns in pid uts ipc net mnt; do readlink /proc/self/ns/$ns; done'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = 1 ]
    for ns in pid uts ipc net mnt; do
        [[ "$output" != *"$(readlink /proc/self/ns/$ns)"* ]]
    done
}

@test "a namespace given by path is joined" {
    ip netns add "cerb-$$-join"
    edit_config '.linux.namespaces |= map(if .type == "network" then .path = "/run/netns/cerb-'$$'-join" else . end)'
    run_container readlink /proc/self/ns/net
    expected=$(ip netns exec "cerb-$$-join" readlink /proc/self/ns/net)
    ip netns delete "cerb-$$-join"
    [ "$status" -eq 0 ]
    [ "$output" = "$expected" ]
}

@test "bind mounts with options, tmpfs and the default /dev" {
    mkdir -p "$BATS_TEST_TMPDIR/data"
    echo from-host > "$BATS_TEST_TMPDIR/data/file"
    edit_config '.mounts += [{"destination": "/data", "type": "bind", "source": "'"$BATS_TEST_TMPDIR/data"'", "options": ["rbind", "ro"]}, {"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m", "mode=700"]}]'
    run_container sh -c 'cat /data/file; touch /data/x 2>&1; stat -c %a /scratch; grep " /scratch " /proc/mounts; ls /dev; readlink /dev/fd; readlink /dev/ptmx'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = from-host ]
    [[ "${lines[1]}" == *"Read-only file system"* ]]
    [ "${lines[2]}" = 700 ]
    [[ "$output" == *"tmpfs /scratch tmpfs rw"*"size=1024k"* ]]
    for dev in null zero full random urandom tty pts shm mqueue; do [[ "$output" == *"$dev"* ]]; done
    [[ "$output" == *"/proc/self/fd"* ]]
    [[ "$output" == *"pts/ptmx"* ]]
}

@test "rro makes a bind mount read-only with every mount below it; ro alone only the top one" {
    mkdir -p "$BATS_TEST_TMPDIR/data/sub"
    mount -t tmpfs -o size=1m tmpfs "$BATS_TEST_TMPDIR/data/sub"
    edit_config --arg d "$BATS_TEST_TMPDIR/data" '.mounts += [{destination: "/ro", type: "bind", source: $d, options: ["rbind", "ro"]}, {destination: "/rro", type: "bind", source: $d, options: ["rbind", "rro", "rnosuid"]}]'
    run_container sh -c 'for d in /ro /rro; do for f in top sub/x; do touch $d/$f 2>/dev/null && echo "$d $f writable" || echo "$d $f read-only"; done; done; grep " /rro/sub " /proc/mounts'
    umount "$BATS_TEST_TMPDIR/data/sub"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "/ro top read-only" ]
    [ "${lines[1]}" = "/ro sub/x writable" ] # the control: ro reaches only the top mount
    [ "${lines[2]}" = "/rro top read-only" ]
    [ "${lines[3]}" = "/rro sub/x read-only" ]
    [[ "${lines[4]}" == *" ro,nosuid"* ]]
}

@test "a read-only mount holding later mounts and /dev's nodes turns read-only once they are in" {
    # runc's order: the mount points below go in first (a read-only /dev holds pts, shm, mqueue and the nodes).
    edit_config '.mounts |= map(if .destination == "/dev" then .options += ["ro"] else . end) | .mounts += [{destination: "/data", type: "tmpfs", source: "tmpfs", options: ["ro", "nosuid"]}, {destination: "/data/inner", type: "tmpfs", source: "tmpfs", options: ["size=1m"]}]'
    run_container sh -c 'grep -E " /dev | /data | /data/inner " /proc/mounts | cut -d" " -f2,4 | cut -d, -f1-2; touch /dev/x /data/x 2>&1; touch /data/inner/x && echo inner writable; echo ok > /dev/null && ls /dev/pts/ptmx'
    [ "$status" -eq 0 ]
    [[ "$output" == *"/dev ro,nosuid"* ]]
    [[ "$output" == *"/data ro,nosuid"* ]]
    [[ "$output" == *"/data/inner rw"* ]] # the control: the mount below keeps its own flags
    [[ "$output" == *"/dev/x"*"Read-only file system"* ]]
    [[ "$output" == *"/data/x"*"Read-only file system"* ]]
    [[ "$output" == *"inner writable"* ]]
    [[ "$output" == *"/dev/pts/ptmx"* ]]
}

@test "a symlink in the rootfs cannot point a mount outside it" {
    ln -s / "$BUNDLE/rootfs/escape"
    edit_config '.mounts += [{"destination": "/escape/cerberus-escape-test", "type": "tmpfs", "source": "tmpfs"}]'
    run_container true
    [ "$status" -eq 0 ]
    [ ! -e /cerberus-escape-test ]
    [ -d "$BUNDLE/rootfs/cerberus-escape-test" ]
}

@test "devices from linux.devices are created with their mode and owner" {
    edit_config '.linux.devices = [{"type": "c", "path": "/dev/mynull", "major": 1, "minor": 3, "fileMode": 438, "uid": 5, "gid": 6}] | .linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"}]'
    run_container sh -c 'stat -c "%t:%T %a %u:%g" /dev/mynull; echo x > /dev/mynull && echo written'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "1:3 666 5:6" ]
    [ "${lines[1]}" = written ]
}

@test "sysctls are written in the container's namespaces" {
    edit_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.msgmax": "4096"}'
    run_container sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/msgmax'
    [ "$status" -eq 0 ]
    [ "$output" = "$(printf '1\n4096')" ]
}

@test "a new user namespace maps ids" {
    # The mapped root must be able to reach the rootfs through the test's dirs.
    chmod 755 "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$BATS_TEST_TMPDIR" "$BUNDLE"
    chown -R 100000:100000 "$BUNDLE/rootfs"
    edit_config '.linux.namespaces += [{"type": "user"}] | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
    run_container sh -c 'probe ids; cat /proc/self/uid_map'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "uid=0 gid=0 groups=" ]
    [[ "${lines[1]}" == *"0     100000      65536"* ]]
}

@test "no runtime fd leaks into the container; --preserve-fds passes extra ones" {
    run_container probe fds
    [ "$status" -eq 0 ]
    [ "$output" = "fds=0" ]
    set_args probe fds
    run cerb run -b "$BUNDLE" --preserve-fds 1 "$ID" 3</dev/null
    [ "$output" = "fd3 fds=1" ]
}

@test "oomScoreAdj is applied" {
    edit_config '.process.oomScoreAdj = 123'
    run_container cat /proc/self/oom_score_adj
    [ "$output" = 123 ]
}

@test "the cgroup namespace is rooted at the container's cgroup" {
    edit_config '.linux.namespaces |= map(select(.type != "cgroup")) + [{"type": "cgroup"}]'
    run_container cat /proc/self/cgroup
    [ "$status" -eq 0 ]
    [[ "$output" == *"0::/"* ]]
    [[ "$output" != *"cerberus-test"* ]]
    # Control: without one, the process sees its cgroup's path from the host's root, as under runc.
    edit_config '.linux.namespaces |= map(select(.type != "cgroup"))'
    run_container cat /proc/self/cgroup
    [ "$status" -eq 0 ]
    [[ "$output" == *"0::/cerberus-test/$ID"* ]]
}

@test "cerberus spec gives a cgroup namespace on a cgroup2-only host only, as crun's spec does" {
    local expected=false
    [ "$(cgroup_layout)" = hybrid ] || expected=true
    mkdir "$BATS_TEST_TMPDIR/fresh"
    (cd "$BATS_TEST_TMPDIR/fresh" && "$CERBERUS" spec)
    [ "$(jq '.linux.namespaces | any(.type == "cgroup")' "$BATS_TEST_TMPDIR/fresh/config.json")" = "$expected" ]
}

@test "--no-pivot leaves no full proc of the host's in reach of a fresh proc mount" {
    # The kernel lets a process mount proc where a full one is in its mount namespace.
    ln -sf busybox "$BUNDLE/rootfs/bin/unshare"
    edit_config '.process.capabilities.bounding += ["CAP_SETFCAP"] | .process.capabilities.permitted += ["CAP_SETFCAP"]'
    set_args unshare -mrpf sh -c 'mount -t proc none /proc && echo mounted'
    local linux
    linux=$(jq -c .linux "$BUNDLE/config.json")
    # Control: the container's own /proc with nothing over it, a fresh one may be mounted.
    edit_config '.linux.maskedPaths = [] | .linux.readonlyPaths = []'
    run cerb run -b "$BUNDLE" "$ID"
    [ "$status" -eq 0 ]
    [[ "$output" == *mounted* ]]
    # Masked, it is not a full one; with no pivot_root the host's /proc would be.
    edit_config --argjson linux "$linux" '.linux = $linux'
    run cerb run --no-pivot -b "$BUNDLE" "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"mount: permission denied"* ]]
}

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, the remaining bypasses: the dynamic loader run directly on an unlisted program, a setuid-root
# binary bringing forbidden capabilities back, and AF_UNIX connects to path-named sockets outside
# allowed_paths (directly, through a symlink, "..", a relative path). Each has a control showing the action
# itself works (a listed program, no policy, audit mode), so a denial is the policy's doing.
# vm-timeout: 300
# rule-kinds: allowed_bins exec_mappings forbidden_caps unix_sockets
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-bypass
p=/bin/cerberus-probe
loader=/lib64/ld-linux-x86-64.so.2
dynprobe="${VM_DYNPROBE:-/usr/local/bin/cerberus-dynprobe}"
libc=/lib/x86_64-linux-gnu/libc.so.6

# --- the dynamic loader ---------------------------------------------------------------------------------

# loader_run POLICY ARG...: the rootfs also holds cerberus-dynprobe (listed), the same program unlisted in
# /workspace and under read-only /usr, and the loader and libc it needs.
loader_run() {
    policy="$1"
    shift
    policy_bundle "$bundle" "$policy" "$@" || return 99
    r="$bundle/rootfs"
    mkdir -p "$r/workspace" "$r/usr/bin" "$r$(dirname $loader)" "$r$(dirname $libc)"
    cp "$dynprobe" "$r/bin/cerberus-dynprobe"
    cp "$dynprobe" "$r/workspace/unlisted-prog"
    cp "$dynprobe" "$r/usr/bin/unlisted-prog"
    cp $loader "$r$loader"
    cp $libc "$r$libc"
    vm_run_bundle "$bundle"
}

# The loader may not be listed (create refuses it: run directly, it would map any file), so running it
# directly is an exec of an unlisted file; a listed dynamic program still runs through it.
bins='{"allowed_bins": ["/bin/busybox", "/bin/cerberus-dynprobe"],
       "read_only_paths": ["/bin", "/lib", "/lib64", "/usr", "/etc", "/proc"], "allowed_paths": ["/workspace", "/dev", "/tmp"]}'
bins_audit='{"mode": "audit", "allowed_bins": ["/bin/busybox"],
             "read_only_paths": ["/bin", "/lib", "/lib64", "/usr", "/etc", "/proc"], "allowed_paths": ["/workspace", "/dev"]}'

if [ -x "$dynprobe" ] && [ -f $loader ] && [ -f $libc ]; then
    vm_expect_output "listed dynamic program runs" "dynamic ok" loader_run "$bins" /bin/cerberus-dynprobe
    vm_expect_errno "unlisted dynamic program exec denied" EACCES loader_run "$bins" /workspace/unlisted-prog
    if [ "$POLICY_BACKEND" = landlock ]; then
        # The loader may run (listed programs need it) but cannot map a file of a noexec mount.
        vm_expect_refused "loader on an unlisted program" "failed to map segment" \
            loader_run "$bins" $loader /workspace/unlisted-prog
    else
        vm_expect_errno "loader on an unlisted program" EACCES loader_run "$bins" $loader /workspace/unlisted-prog
    fi
    cannot_hold landlock "loader on an unlisted program under read_only_paths" \
        "Landlock does not see executable mappings; files under read_only_paths are not noexec" ||
        vm_expect_errno "loader on an unlisted program under read_only_paths" EACCES \
            loader_run "$bins" $loader /usr/bin/unlisted-prog
    vm_run loader_run '{"allowed_bins": ["/bin/busybox", "/lib64/ld-linux-x86-64.so.2"]}' /bin/true
    case "$VM_STATUS:$VM_STDERR" in
    0:*) vm_fail "listing the loader is refused" "create succeeded" ;;
    *"dynamic loader"*) vm_ok "listing the loader is refused" ;;
    *) vm_fail "listing the loader is refused" "$VM_STDERR" ;;
    esac
    audit_or_refused "audit loader on an unlisted program runs" "dynamic ok" \
        loader_run "$bins_audit" $loader /workspace/unlisted-prog
else
    vm_skip "dynamic loader" "no cerberus-dynprobe, $loader or $libc in the VM"
fi

# --- a setuid-root binary ---------------------------------------------------------------------------------

# setuid_run POLICY|"" ARG...: runs as uid 1000 with no capabilities, but a bounding set that lets a
# setuid-root program gain CAP_CHOWN and CAP_SETUID, and noNewPrivileges false; /bin/probe-suid is a
# root-owned mode 4755 copy of the probe, /workspace/target a root-owned file.
setuid_run() {
    policy="$1"
    shift
    if [ -n "$policy" ]; then
        policy_bundle "$bundle" "$policy" "$@" || return 99
    else
        make_bundle "$bundle" "$@" && bundle_edit "$bundle" '.root.readonly = false' || return 99
    fi
    bundle_edit "$bundle" '.process.noNewPrivileges = false | .process.user = {"uid": 1000, "gid": 1000} |
        .process.capabilities = {"bounding": $c, "effective": [], "permitted": [], "inheritable": [], "ambient": []}' \
        --argjson c '["CAP_CHOWN", "CAP_SETUID", "CAP_SETGID", "CAP_FOWNER", "CAP_DAC_OVERRIDE"]' || return 99
    r="$bundle/rootfs"
    mkdir -p "$r/workspace"
    echo data >"$r/workspace/target"
    cp "$r/bin/cerberus-probe" "$r/bin/probe-suid"
    chown 0:0 "$r/bin/probe-suid" "$r/workspace/target"
    chmod 4755 "$r/bin/probe-suid"
    vm_run_bundle "$bundle"
}

# Fails unless the status lines hold NoNewPrivs 1 and no CAP_CHOWN (bit 0) or CAP_SETUID (bit 7) in any set.
no_forbidden_caps() {
    echo "$1" | grep -q '^NoNewPrivs:[[:space:]]*1$' || return 1
    for v in $(echo "$1" | awk '/^Cap(Inh|Prm|Eff|Bnd|Amb)/ { print $2 }'); do
        [ $((0x$v & 0x81)) -eq 0 ] || return 1
    done
}

caps='{"forbidden_caps": ["CAP_SETUID", "CAP_CHOWN"]}'
suid=/bin/probe-suid

# Control: without a policy the setuid bit works here, so the checks below test the policy.
vm_expect_output "setuid control without policy chown works" ok setuid_run "" $suid chown /workspace/target 1000 1000
vm_expect_errno "setuid binary chown denied" EPERM setuid_run "$caps" $suid chown /workspace/target 1000 1000
vm_run setuid_run "$caps" $suid status
if [ "$VM_STATUS" -eq 0 ] && no_forbidden_caps "$VM_STDOUT"; then
    vm_ok "setuid binary gets no forbidden cap and noNewPrivileges"
else
    vm_fail "setuid binary gets no forbidden cap and noNewPrivileges" "$(vm__said)"
fi

# --- AF_UNIX connects to path-named sockets -------------------------------------------------------------

# unix_run POLICY ARG...: a listener outside the container (not policed) bound at /data/sock as the
# container sees it, which the container's own file rules cannot create.
unix_run() {
    policy="$1"
    shift
    policy_bundle "$bundle" "$policy" "$@" || return 99
    mkdir -p "$bundle/rootfs/workspace" "$bundle/rootfs/data"
    cerberus-probe listen-unix "$bundle/rootfs/data/sock" >/dev/null &
    listener=$!
    tries=0
    while [ ! -S "$bundle/rootfs/data/sock" ] && [ "$tries" -lt 50 ]; do
        tries=$((tries + 1))
        sleep 0.1
    done
    vm_run_bundle "$bundle"
    status=$?
    kill "$listener" 2>/dev/null
    wait "$listener" 2>/dev/null
    return "$status"
}

paths='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/etc", "/proc"]}'
paths_audit='{"mode": "audit", "allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/etc", "/proc"]}'

vm_expect_output "unix connect inside allowed_paths" ok unix_run "$paths" sh -c \
    "$p listen-unix /workspace/sock >/dev/null &
     while [ ! -S /workspace/sock ]; do sleep 0.1; done
     exec $p connect-unix /workspace/sock"
unix_reason="Landlock (ABI 7) does not check a connect to a socket by its path"
cannot_hold landlock "unix connect outside allowed_paths" "$unix_reason" ||
    vm_expect_errno "unix connect outside allowed_paths" EPERM unix_run "$paths" $p connect-unix /data/sock
cannot_hold landlock "unix connect through a symlink" "$unix_reason" ||
    vm_expect_errno "unix connect through a symlink" EPERM unix_run "$paths" sh -c \
        "ln -s /data/sock /workspace/link && exec $p connect-unix /workspace/link"
cannot_hold landlock "unix connect with dotdot" "$unix_reason" ||
    vm_expect_errno "unix connect with dotdot" EPERM unix_run "$paths" $p connect-unix /workspace/../data/sock
cannot_hold landlock "unix connect by a relative path" "$unix_reason" ||
    vm_expect_errno "unix connect by a relative path" EPERM unix_run "$paths" $p connect-unix data/sock
audit_or_refused "audit unix connect outside allowed_paths" ok unix_run "$paths_audit" $p connect-unix /data/sock

rm -rf "$bundle"
exit 0

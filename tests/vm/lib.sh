# SPDX-License-Identifier: Apache-2.0
# Shell library for VM case scripts (busybox ash inside the VM). Source it: . "${VM_LIB:-/vm/lib.sh}"
# The policy cases also run natively (tests/policy/run-native.sh sets VM_LIB, VM_ROOTFS, CERBERUS_ROOT and
# CERBERUS_ENFORCEMENT, and puts wrappers of cerberus and cerberus-probe first on PATH).
#
# Every check prints exactly one verdict line on the console, which run.sh parses on the host:
#   VMTEST ok <case>: <check>
#   VMTEST fail <case>: <check>: <detail>
#   VMTEST skip <case>: <check>: <reason>
# <case> is the script name without its numeric prefix and .sh (set by /init as VM_CASE).
# Check names must not contain ':'; details are flattened to one line.

VM_CASE="${VM_CASE:-$(basename "$0" .sh | sed 's/^[0-9]*_//')}"

# Appends a verdict to the console and to the per-case results file /init reads after the case ends.
vm__emit() {
    echo "VMTEST $*"
    [ -n "$VM_RESULTS" ] && echo "VMTEST $*" >>"$VM_RESULTS"
    return 0
}

# Squeezes text to one line of at most 300 characters, for verdict details.
vm__oneline() {
    printf '%s' "$*" | tr '\n\r\t' '   ' | sed 's/   */ /g; s/^ //; s/ $//' | cut -c1-300
}

vm_ok() { vm__emit "ok $VM_CASE: $1"; }

vm_fail() {
    local check="$1"
    shift
    vm__emit "fail $VM_CASE: $check: $(vm__oneline "${*:-failed}")"
    return 1
}

vm_skip() { vm__emit "skip $VM_CASE: $1: $(vm__oneline "${2:-skipped}")"; }

# Diagnostic text for the console log (not a verdict).
vm_log() { echo "vm[$VM_CASE]: $*"; }

# Runs a command; sets VM_STATUS, VM_STDOUT and VM_STDERR (trailing newlines stripped). Returns its status.
vm_run() {
    local errfile="/tmp/.vm_stderr.$$"
    VM_STDOUT="$("$@" 2>"$errfile")"
    VM_STATUS=$?
    VM_STDERR="$(cat "$errfile" 2>/dev/null)"
    rm -f "$errfile"
    return "$VM_STATUS"
}

# What a failed vm_run said, for a verdict detail.
vm__said() {
    vm__oneline "exit $VM_STATUS; stdout: ${VM_STDOUT:-<empty>}; stderr: ${VM_STDERR:-<empty>}"
}

# ok when the command exits 0.
vm_check() {
    local check="$1"
    shift
    if vm_run "$@"; then vm_ok "$check"; else vm_fail "$check" "$(vm__said)"; fi
}

# ok when the command exits non-zero.
vm_check_fails() {
    local check="$1"
    shift
    if vm_run "$@"; then vm_fail "$check" "expected failure but it succeeded; $(vm__said)"; else vm_ok "$check"; fi
}

# ok when the command exits 0 and its stdout equals the expected text exactly.
vm_expect_output() {
    local check="$1" expected="$2"
    shift 2
    vm_run "$@"
    if [ "$VM_STATUS" -eq 0 ] && [ "$VM_STDOUT" = "$expected" ]; then
        vm_ok "$check"
    else
        vm_fail "$check" "expected stdout '$expected'; $(vm__said)"
    fi
}

# ok when the command exits 0 and its stdout or stderr contains the text.
vm_expect_contains() {
    local check="$1" needle="$2"
    shift 2
    vm_run "$@"
    case "$VM_STATUS:$VM_STDOUT$VM_STDERR" in
    0:*"$needle"*) vm_ok "$check" ;;
    *) vm_fail "$check" "expected output containing '$needle'; $(vm__said)" ;;
    esac
}

# ok when the command fails and its stdout or stderr contains the text (an error that reaches the user).
vm_expect_failure() {
    local check="$1" needle="$2"
    shift 2
    vm_run "$@"
    case "$VM_STATUS:$VM_STDOUT$VM_STDERR" in
    0:*) vm_fail "$check" "expected a failure saying '$needle'; $(vm__said)" ;;
    *"$needle"*) vm_ok "$check" ;;
    *) vm_fail "$check" "expected output containing '$needle'; $(vm__said)" ;;
    esac
}

# glibc's strerror text for an errno name; empty for names not listed.
vm_errno_text() {
    case "$1" in
    EPERM) echo "Operation not permitted" ;;
    ENOENT) echo "No such file or directory" ;;
    EINTR) echo "Interrupted system call" ;;
    EIO) echo "Input/output error" ;;
    E2BIG) echo "Argument list too long" ;;
    ENOEXEC) echo "Exec format error" ;;
    EBADF) echo "Bad file descriptor" ;;
    EAGAIN) echo "Resource temporarily unavailable" ;;
    ENOMEM) echo "Cannot allocate memory" ;;
    EACCES) echo "Permission denied" ;;
    EFAULT) echo "Bad address" ;;
    EBUSY) echo "Device or resource busy" ;;
    EEXIST) echo "File exists" ;;
    EXDEV) echo "Invalid cross-device link" ;;
    ENOTDIR) echo "Not a directory" ;;
    EISDIR) echo "Is a directory" ;;
    EINVAL) echo "Invalid argument" ;;
    EMFILE) echo "Too many open files" ;;
    ENOSPC) echo "No space left on device" ;;
    EROFS) echo "Read-only file system" ;;
    ENOSYS) echo "Function not implemented" ;;
    EOPNOTSUPP) echo "Operation not supported" ;;
    EAFNOSUPPORT) echo "Address family not supported by protocol" ;;
    EADDRINUSE) echo "Address in use" ;;
    ENETUNREACH) echo "Network is unreachable" ;;
    ECONNRESET) echo "Connection reset by peer" ;;
    ETIMEDOUT) echo "Connection timed out" ;;
    ECONNREFUSED) echo "Connection refused" ;;
    EHOSTUNREACH) echo "No route to host" ;;
    esac
}

# ok when the command fails and its output names the errno: the symbolic name (EACCES) or its strerror
# text in any letter case ("Permission denied", cerberus's "permission denied").
vm_expect_errno() {
    local check="$1" name="$2" text said
    shift 2
    text="$(vm_errno_text "$name" | tr '[:upper:]' '[:lower:]')"
    if vm_run "$@"; then
        vm_fail "$check" "expected $name but it succeeded; $(vm__said)"
        return
    fi
    said="$(printf '%s\n%s' "$VM_STDOUT" "$VM_STDERR" | tr '[:upper:]' '[:lower:]')"
    case "$said" in
    *"$(echo "$name" | tr '[:upper:]' '[:lower:]')"*) vm_ok "$check" ;;
    *"${text:-$name}"*) vm_ok "$check" ;;
    *) vm_fail "$check" "expected $name (${text:-no text known}); $(vm__said)" ;;
    esac
}

vm_has_cerberus() { command -v cerberus >/dev/null 2>&1; }
vm_has_probe() { command -v cerberus-probe >/dev/null 2>&1; }

# Creates the cgroup /sys/fs/cgroup/vmtest/NAME with every available controller enabled for it and prints
# its path. /init already enabled the controllers at the root, as systemd does on a real host.
vm_cgroup_new() {
    local parent=/sys/fs/cgroup/vmtest controllers
    mkdir -p "$parent" || return
    controllers="$(sed 's/\([^ ]*\)/+\1/g' "$parent/cgroup.controllers")"
    [ -z "$controllers" ] || echo "$controllers" >"$parent/cgroup.subtree_control" || return
    mkdir "$parent/$1" || return
    echo "$parent/$1"
}

# Kills every process in the cgroup and removes it (and the vmtest parent when it is empty).
vm_cgroup_remove() {
    local cg="$1" tries=0
    [ -d "$cg" ] || return 0
    echo 1 >"$cg/cgroup.kill"
    # Killed tasks leave the cgroup asynchronously; rmdir fails with EBUSY until they have.
    until rmdir "$cg" 2>/dev/null; do
        tries=$((tries + 1))
        [ "$tries" -lt 50 ] || { vm_log "cannot remove $cg: $(cat "$cg/cgroup.procs" | tr '\n' ' ')"; return 1; }
        sleep 0.1
    done
    rmdir /sys/fs/cgroup/vmtest 2>/dev/null
    return 0
}

# ok-able tests on a systemd host: the unit is not loaded and not listed (`vm_check "..." vm_unit_gone U`).
vm_unit_gone() {
    [ "$(systemctl show -P LoadState "$1")" = not-found ] && ! systemctl list-units --all --no-legend "$1" | grep -q .
}

# An awk program that grows a string by doubling to 64 MiB (about three times that at the peak) and then
# prints "survived": what a memory limit of a few MiB OOM-kills. Run as: awk "$vm_memory_hog"
vm_memory_hog='BEGIN { s = "x"; while (length(s) < 64 * 1024 * 1024) s = s s; print "survived" }'

# Reads one key from a flat keyed cgroup file (memory.events, pids.events): vm_cgroup_stat FILE KEY
vm_cgroup_stat() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# A runc-like default config.json, used while `cerberus spec` is not available.
vm__default_spec() {
    cat <<'EOF'
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": { "uid": 0, "gid": 0 },
    "args": [ "sh" ],
    "env": [ "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm" ],
    "cwd": "/",
    "capabilities": {
      "bounding": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ],
      "effective": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ],
      "permitted": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ],
      "ambient": [ "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE" ]
    },
    "rlimits": [ { "type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024 } ],
    "noNewPrivileges": true
  },
  "root": { "path": "rootfs", "readonly": true },
  "hostname": "cerberus-vm",
  "mounts": [
    { "destination": "/proc", "type": "proc", "source": "proc" },
    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs",
      "options": [ "nosuid", "strictatime", "mode=755", "size=65536k" ] },
    { "destination": "/dev/pts", "type": "devpts", "source": "devpts",
      "options": [ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620" ] },
    { "destination": "/dev/shm", "type": "tmpfs", "source": "shm",
      "options": [ "nosuid", "noexec", "nodev", "mode=1777", "size=65536k" ] },
    { "destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
      "options": [ "nosuid", "noexec", "nodev" ] },
    { "destination": "/sys", "type": "sysfs", "source": "sysfs",
      "options": [ "nosuid", "noexec", "nodev", "ro" ] },
    { "destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
      "options": [ "nosuid", "noexec", "nodev", "relatime", "ro" ] }
  ],
  "linux": {
    "resources": { "devices": [ { "allow": false, "access": "rwm" } ] },
    "namespaces": [
      { "type": "pid" }, { "type": "network" }, { "type": "ipc" },
      { "type": "uts" }, { "type": "mount" }, { "type": "cgroup" }
    ],
    "maskedPaths": [
      "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
      "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"
    ],
    "readonlyPaths": [
      "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"
    ]
  }
}
EOF
}

# Applies a jq filter to DIR/config.json in place: bundle_edit DIR FILTER [jq options...]
# e.g. bundle_edit "$b" '.annotations["x"] = $v' --arg v yes
bundle_edit() {
    local dir="$1" filter="$2"
    shift 2
    jq "$filter" "$@" <"$dir/config.json" >"$dir/config.json.tmp" && mv "$dir/config.json.tmp" "$dir/config.json"
}

# Prints the arguments as a JSON array of strings; any text (newlines, leading dashes) is kept exactly.
vm_json_array() {
    local json="" arg
    for arg in "$@"; do
        json="$json${json:+,}$(printf '%s' "$arg" | jq -Rs .)" || return
    done
    printf '[%s]\n' "$json" # not echo: dash's turns the JSON's \n escapes into newlines
}

# Sets process.args: bundle_set_args DIR ARG...
bundle_set_args() {
    local dir="$1" args
    shift
    args="$(vm_json_array "$@")" || return
    bundle_edit "$dir" '.process.args = $args' --argjson args "$args"
}

# Makes an OCI bundle in DIR: a copy of /rootfs (VM_ROOTFS natively) (busybox, cerberus-probe) and a config.json from
# `cerberus spec` when it works (else a built-in runc-like default), with terminal off and, when ARGs are
# given, process.args set to them. Usage: make_bundle DIR [ARG...]
make_bundle() {
    local dir="$1"
    shift
    mkdir -p "$dir" || return
    rm -rf "$dir/rootfs" "$dir/config.json"
    cp -a "${VM_ROOTFS:-/rootfs}" "$dir/rootfs" || return
    if ! { vm_has_cerberus && (cd "$dir" && cerberus spec >/dev/null 2>&1) && [ -s "$dir/config.json" ]; }; then
        vm_has_cerberus && vm_log "cerberus spec failed; using the built-in default config.json"
        vm__default_spec >"$dir/config.json" || return
    fi
    bundle_edit "$dir" '.process.terminal = false | .root.path = "rootfs"' || return
    [ "$#" -eq 0 ] || bundle_set_args "$dir" "$@"
}

# Runs the bundle in the foreground under a fresh container id, deletes the container, and returns the
# container's exit status; its output is the container's. Usage: vm_run_bundle DIR [cerberus run options...]
# Global options for both calls (e.g. --systemd-cgroup) come from $VM_CERBERUS_FLAGS.
vm_run_bundle() {
    local dir="$1" id status
    shift
    id="vmtest-$(cut -c1-8 /proc/sys/kernel/random/uuid)"
    # shellcheck disable=SC2086 # a list of words
    cerberus ${VM_CERBERUS_FLAGS:-} run "$@" --bundle "$dir" "$id"
    status=$?
    # shellcheck disable=SC2086
    cerberus ${VM_CERBERUS_FLAGS:-} delete --force "$id" >/dev/null 2>&1
    return "$status"
}

# policy_bundle DIR POLICY ARG...: a bundle whose container runs ARG... under
# the agent policy POLICY (JSON text), with a writable rootfs.
policy_bundle() {
    local dir="$1" policy="$2"
    shift 2
    make_bundle "$dir" "$@" &&
        bundle_edit "$dir" '.annotations["io.cerberus.policy"] = $p | .root.readonly = false' --arg p "$policy"
}

# policy_or_plain_bundle DIR POLICY|"" ARG...: policy_bundle, or with "" the same bundle without a policy,
# for the control.
policy_or_plain_bundle() {
    if [ -n "$2" ]; then
        policy_bundle "$@"
    else
        local dir="$1"
        shift 2
        make_bundle "$dir" "$@" && bundle_edit "$dir" '.root.readonly = false'
    fi
}

# net_policy_run DIR POLICY ARG...: runs ARG... in a fresh container (bundle DIR) under the policy, with
# CAP_NET_RAW granted (Docker grants it), so that a refusal is the policy's doing, not the capability's.
net_policy_run() {
    local dir="$1" policy="$2"
    shift 2
    policy_bundle "$dir" "$policy" "$@" || return 99
    bundle_edit "$dir" '.process.capabilities[] += ["CAP_NET_RAW"]'
    vm_run_bundle "$dir"
}

# vm_expect_not_denied CHECK CMD...: the policy let a network action through; the kernel may still refuse
# it later (no route in the container's network namespace), never with EPERM.
vm_expect_not_denied() {
    local check="$1"
    shift
    vm_run "$@"
    case "$VM_STDOUT" in
    *EPERM* | "") vm_fail "$check" "$(vm__said)" ;;
    *) vm_ok "$check" ;;
    esac
}

# --- the policy cases on every backend -------------------------------------------------------------------

# The enforcement backend the policy cases run under: natively landlock; in the VM lane auto's choice, the
# BPF LSM, or in the boot without bpf in lsm= (VM_BOOT, see run.sh) the same programs as fmod_ret.
if [ -n "$CERBERUS_ENFORCEMENT" ]; then
    POLICY_BACKEND="$CERBERUS_ENFORCEMENT"
elif [ "$VM_BOOT" = no-bpf-lsm ]; then
    POLICY_BACKEND=fmod-ret
elif [ "$VM_BOOT" = landlock ]; then
    POLICY_BACKEND=landlock
else
    POLICY_BACKEND=bpf-lsm
fi
# Where cerberus keeps container state (its --root).
CERBERUS_STATE="${CERBERUS_ROOT:-/run/cerberus}"

# denial_errno BPF_LSM_ERRNO LANDLOCK_ERRNO: the errno a denial gives under this backend. The landlock
# backend denies some actions through the file system (EROFS from read-only mounts, EXDEV and EBUSY from
# the mount over a denied path) before its access rules are asked.
denial_errno() {
    if [ "$POLICY_BACKEND" = landlock ]; then echo "$2"; else echo "$1"; fi
}

# cannot_hold BACKENDS CHECK REASON: true (and a skip verdict naming the backend) when the cases run under
# one of BACKENDS (space-separated), which cannot make CHECK hold; the coverage table in docs/policy.md
# shows it.
cannot_hold() {
    case " $1 " in
    *" $POLICY_BACKEND "*) vm_skip "$2" "cannot hold on $POLICY_BACKEND: $3" ;;
    *) return 1 ;;
    esac
}

# vm_expect_refused CHECK NEEDLE CMD...: ok when the command fails and its output names NEEDLE (a policy
# the backend cannot carry out is refused at create, naming the rule and the backend).
vm_expect_refused() {
    local check="$1" needle="$2"
    shift 2
    if vm_run "$@"; then
        vm_fail "$check" "expected a refusal naming '$needle' but it ran; $(vm__said)"
        return
    fi
    case "$VM_STDOUT$VM_STDERR" in
    *"$needle"*) vm_ok "$check" ;;
    *) vm_fail "$check" "expected a refusal naming '$needle'; $(vm__said)" ;;
    esac
}

# audit_runs [--contains] CHECK EXPECTED CMD...: in audit mode the action runs (stdout EXPECTED, or output
# containing it), on every backend (under landlock the calls are held for the audit collector and let through).
audit_runs() {
    local expect=vm_expect_output
    [ "$1" = --contains ] && expect=vm_expect_contains && shift
    $expect "$@"
}

# fmod_ret_case CHECK: true in the boot without bpf in lsm= with cerberus-fill-trampoline in the VM, where
# the cases about the fmod_ret programs' trampolines run; elsewhere a skip verdict for CHECK saying why.
fmod_ret_case() {
    if [ "$VM_BOOT" != no-bpf-lsm ]; then
        vm_skip "$1" "the fmod_ret programs' own case runs in the boot without bpf in lsm="
    elif ! command -v cerberus-fill-trampoline >/dev/null; then
        vm_skip "$1" "no cerberus-fill-trampoline in the VM"
    else
        return 0
    fi
    return 1
}

# pin_dir: where this build of cerberus pins its maps and programs (a directory named by its BPF layout).
pin_dir() {
    cerberus check 2>/dev/null | sed -n 's/^pin dir: *\([^ ]*\).*/\1/p'
}

# audit_run_dir: the audit collector's registry of this build (a directory named by its BPF layout).
audit_run_dir() {
    cerberus check 2>/dev/null | sed -n 's/^audit run dir: *\([^ ]*\).*/\1/p'
}

# policy_entries_of CGROUP_ID: how many entries of the pinned policy maps (the addresses the DNS gate
# admitted and its port among them) are keyed by the cgroup id.
policy_entries_of() {
    entries_of "$1" cerb_policies:0 cerb_paths:0 cerb_net4:4 cerb_net6:4 cerb_names:0 cerb_dns_gates:0
}

# names_entries_of CGROUP_ID: how many addresses the DNS gate admitted for the cgroup (cerb_names).
names_entries_of() {
    entries_of "$1" cerb_names:0
}

# entries_of CGROUP_ID MAP:OFFSET...: how many entries of the pinned maps have the cgroup id at the offset of their key.
entries_of() {
    local id="$1" hex="" i=0 total=0 map offset n maps
    shift
    maps="$(pin_dir)"
    while [ $i -lt 8 ]; do
        hex="$hex\"0x$(printf '%02x' $(((id >> (8 * i)) & 255)))\""
        [ $i -lt 7 ] && hex="$hex,"
        i=$((i + 1))
    done
    for spec in "$@"; do
        map="${spec%%:*}" offset="${spec#*:}"
        n="$(bpftool map dump pinned "$maps/$map" -j 2>/dev/null |
            jq --argjson want "[$hex]" --argjson o "$offset" \
                '[.[] | (.key // .formatted.key) | select(type == "array") | select(.[$o:$o + 8] == $want)] | length')"
        total=$((total + ${n:-0}))
    done
    echo "$total"
}

# cgroup_id_of ID: the cgroup v2 id (the directory's inode) of a running container's init.
cgroup_id_of() {
    local pid cg root
    pid="$(cerberus state "$1" | jq -r .pid)" || return 1
    cg="$(sed -n 's/^0:://p' "/proc/$pid/cgroup")"
    root="$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)"
    stat -c %i "$root$cg"
}

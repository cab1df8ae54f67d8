#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The real-kernel test lane: boots Debian's own kernel under qemu (TCG) from an initramfs holding busybox,
# cerberus, cerberus-probe and the case scripts, runs tests/vm/cases/*.sh there with BPF LSM and pure
# cgroup v2, and reports the verdicts the cases print on the serial console.
#
# The kernel is one of tests/vm/kernels.list (--kernel; default 6.1, Debian 12's), fetched by fetch-kernel.sh.
# Three boots share the initramfs (`make test` runs the first): `bpf-lsm` (bpf in lsm=) runs every selected
# case; `no-bpf-lsm` (lsm= without bpf, as Ubuntu ships its kernels: BPF trampolines but no BPF LSM) runs
# again the selected cases that say `# vm-boots: ... no-bpf-lsm`, under the fmod_ret programs; `landlock`
# (the same lsm=) those that say `landlock`, under the landlock backend. Verdicts of another boot than
# bpf-lsm, or of another kernel than 6.1, are named `<case> [<kernel> <boot>]` (each part only when not the
# default). A boot with no case to run is not started.
#
# Usage: tests/vm/run.sh [--systemd] [--kernel NAME] [--build BUILD_DIR] [--cases DIR_OR_GLOB] [--boots LIST]
#                        [--add SRC[:DEST]]... [--keep] [--console-log FILE] [--verdicts DIR]
#   --systemd boot the cached Debian root of systemd-root.sh (systemd as init, the engines installed) through
#             a throw-away overlay, and run the cases from a unit of it (default cases: tests/vm/systemd-cases)
#   --kernel  a kernel of tests/vm/kernels.list: 6.1, 6.12 or 7.x (default: $VM_KERNEL, else 6.1)
#   --build   where cerberus and cerberus-probe were built (default: <repo>/build); optional
#   --cases   a directory of case scripts or a glob of them (default: tests/vm/cases)
#   --boots   which boots to run, comma-separated: bpf-lsm, no-bpf-lsm, landlock, or all (default: bpf-lsm)
#   --add     extra file or directory to put in the VM at DEST (default: same path); ELF programs bring
#             their libraries
#   --keep    keep the work directory (initramfs, console logs); it is kept anyway when the lane fails
#   --console-log  copy the serial console logs of every boot, in order (carriage returns removed), to FILE
#   --verdicts  write each boot's verdict lines, named without the kernel and boot, to DIR/<kernel>/<boot>.txt
#             (scripts/coverage-table.sh reads them)
# Environment: VM_TIMEOUT (each boot, s; default 180, 600 with --systemd, plus each case's limit),
# VM_MEMORY (guest RAM, MiB, default 1024; 2048 with --systemd), VM_CASE_TIMEOUT (per case, s, default 120; a case may say
# `# vm-timeout: N`), VM_MODULES (kernel modules to load, default "overlay veth"; a case may add its own with
# `# vm-modules: a b`; `# vm-cri: yes` brings a containerd node and a CRI client, see add_cri_node),
# CERBERUS_CACHE (kernel and root image cache, default /var/cache/cerberus), VM_QEMU_ARGS (more qemu
# arguments, split on spaces, e.g. a `-drive` for a test disk), VM_APPEND (more kernel command line, e.g.
# systemd.log_level=debug systemd.log_target=console).
# Output: each VMTEST line, timings per boot, then `N passed, N failed`; exit status 1 on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

build_dir=""
cases_arg=""
systemd=0
keep=0
boots_arg="bpf-lsm"
kernel="${VM_KERNEL:-6.1}"
extra=()
console_copy=""
verdicts_dir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
    --systemd) systemd=1; shift ;;
    --build) build_dir="$2"; shift 2 ;;
    --cases) cases_arg="$2"; shift 2 ;;
    --boots) boots_arg="$2"; shift 2 ;;
    --kernel) kernel="$2"; shift 2 ;;
    --verdicts) verdicts_dir="$2"; shift 2 ;;
    --add) extra+=("$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    --console-log) console_copy="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -n "$build_dir" || ! -d "$repo/build" ]] || build_dir="$repo/build"
[[ -z "$build_dir" || -d "$build_dir" ]] || { echo "run.sh: no build directory $build_dir" >&2; exit 2; }

vm_memory="${VM_MEMORY:-$((systemd ? 2048 : 1024))}"
case_timeout="${VM_CASE_TIMEOUT:-120}"
modules_wanted="${VM_MODULES:-overlay veth}"
if [[ $systemd -eq 1 ]]; then
    cases_arg="${cases_arg:-$here/systemd-cases}"
    modules_wanted+=" virtio_pci virtio_blk crc32c_generic ext4" # the root disk
else
    cases_arg="${cases_arg:-$here/cases}"
fi

# The kernel's active LSMs in each boot: Debian's default list, with and without bpf.
lsm_of_boot() {
    case "$1" in
    bpf-lsm) echo "landlock,lockdown,yama,integrity,apparmor,bpf" ;;
    no-bpf-lsm | landlock) echo "landlock,lockdown,yama,integrity,apparmor" ;;
    *) return 1 ;;
    esac
}
[[ "$boots_arg" != all ]] || boots_arg=bpf-lsm,no-bpf-lsm,landlock
IFS=, read -r -a boots <<<"$boots_arg"
for boot in "${boots[@]}"; do
    lsm_of_boot "$boot" >/dev/null ||
        { echo "run.sh: unknown boot $boot (expected bpf-lsm, no-bpf-lsm or landlock)" >&2; exit 2; }
done

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
die() { echo "run.sh: $*" >&2; exit 1; }

is_static_busybox() {
    command -v busybox >/dev/null && ! ldd "$(command -v busybox)" >/dev/null 2>&1
}

# Installs what the lane needs on a fresh Debian 12 (CI runs as root, non-interactively).
ensure_tools() {
    local need=()
    command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
    command -v cpio >/dev/null || need+=(cpio)
    command -v gojq >/dev/null || need+=(gojq)
    is_static_busybox || need+=(busybox-static)
    [[ $systemd -eq 0 ]] || command -v qemu-img >/dev/null || need+=(qemu-utils)
    [[ ${#need[@]} -eq 0 ]] && return
    [[ $(id -u) -eq 0 ]] || die "missing ${need[*]}; install them or run as root"
    echo "run.sh: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${need[@]}" >&2 ||
        { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
}

# The case scripts selected by --cases, one path a line.
list_cases() {
    if [[ -d "$cases_arg" ]]; then
        ls "$cases_arg"/*.sh 2>/dev/null || true
    else
        # shellcheck disable=SC2086 # the argument is a glob on purpose
        ls -d $cases_arg 2>/dev/null || true
    fi
}

# Copies a host file to the same or given path under the root, with every library ldd names for it.
install_file() {
    local root="$1" src="$2" dest="${3:-$2}" lib
    mkdir -p "$root$(dirname "$dest")"
    cp -aL "$src" "$root$dest"
    [[ -f "$src" && -x "$src" ]] || return 0
    for lib in $(ldd "$src" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
        [[ -e "$root$lib" ]] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# busybox and a symlink for each of its applets, leaving any file already there (bin/busybox itself).
install_busybox() {
    local root="$1" applet
    install_file "$root" "$(command -v busybox)" /bin/busybox
    for applet in $(busybox --list-full); do
        [[ -e "$root/$applet" || -L "$root/$applet" ]] && continue
        [[ -d "$root/${applet%/*}" ]] || mkdir -p "$root/${applet%/*}"
        ln -s /bin/busybox "$root/$applet"
    done
}

# Module file for a name (dashes and underscores are the same to the kernel), relative to the modules dir;
# from 6.12 on Debian ships them xz-compressed.
module_path() {
    local name="$1" n pattern=()
    for n in "$name" "${name//_/-}" "${name//-/_}"; do
        pattern+=(-name "$n.ko" -o -name "$n.ko.xz" -o)
    done
    (cd "$moddir" && find kernel "${pattern[@]}" -false) | head -n1
}

# Appends the module and its dependencies (first) to the load list; modules not shipped are skipped
# (they are built in or absent).
add_module() {
    local name="$1" path dep
    grep -qx "$name" "$work/modules.seen" 2>/dev/null && return
    echo "$name" >>"$work/modules.seen"
    path="$(module_path "$name")"
    [[ -n "$path" ]] || return 0
    # busybox insmod hands the file to init_module as it is: compressed ones go in decompressed.
    mkdir -p "$root/lib/modules/$kver/$(dirname "$path")"
    case "$path" in
    *.xz) xz -dc "$moddir/$path" >"$root/lib/modules/$kver/${path%.xz}"; path="${path%.xz}" ;;
    *) cp "$moddir/$path" "$root/lib/modules/$kver/$path" ;;
    esac
    for dep in $(tr '\0' '\n' <"$root/lib/modules/$kver/$path" | sed -n 's/^depends=//p' | tr ',' ' '); do
        add_module "$dep"
    done
    echo "/lib/modules/$kver/$path" >>"$root/vm/modules.list"
}

# The libraries that the shared objects under a host directory (Python's extension modules, copied
# already) need, to the same paths under the root.
install_libraries_of() {
    local root="$1" dir="$2" lib
    for lib in $(find "$dir" -name '*.so*' -type f -exec ldd {} + 2>/dev/null |
        awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\// && $i !~ /:$/) print $i }' | sort -u); do
        [[ -e "$root$lib" ]] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

# For the cases that say `# vm-cri: yes` (tests/vm/cases/cri_pod.sh): a Kubernetes node without a
# kubelet, as the engine tier's (tests/engines/cri.sh) but where the kernel enforces: containerd, its
# runc shim and ctr, the shipped containerd snippet, the CRI client (tests/engines/cri_client.py) with
# Python, gRPC and the CRI API of this containerd compiled by protoc, and the sandbox's pause program.
# About 150 MB more in the initramfs, so only when such a case is selected.
add_cri_node() {
    local root="$1" proto bin
    for bin in containerd containerd-shim-runc-v2 ctr protoc; do
        command -v "$bin" >/dev/null || { echo "run.sh: no $bin here; the CRI cases emit nothing" >&2; return 0; }
    done
    [[ -x /usr/bin/python3 && -x "$build_dir/cerberus-pause" ]] || return 0
    proto="$("$repo/tests/engines/cri_api.sh")" || { echo "run.sh: no CRI API proto; the CRI cases emit nothing" >&2; return 0; }
    mkdir -p "$work/cri-proto" "$root/vm/cri"
    cp "$proto" "$work/cri-proto/api.proto"
    protoc --proto_path="$work/cri-proto" --python_out="$root/vm/cri" "$work/cri-proto/api.proto" || return 1
    install -m 0755 "$repo/tests/engines/cri_client.py" "$root/vm/cri/cri_client.py"
    install -m 0644 "$repo/config/containerd/config.toml" "$root/vm/cri/snippet.toml"
    install_file "$root" "$build_dir/cerberus-pause" /usr/local/bin/cerberus-pause
    for bin in containerd containerd-shim-runc-v2 ctr; do install_file "$root" "$(command -v "$bin")" "/usr/bin/$bin"; done
    install_file "$root" /usr/bin/python3 "$(readlink -f /usr/bin/python3)"
    ln -sf "$(basename "$(readlink -f /usr/bin/python3)")" "$root/usr/bin/python3"
    mkdir -p "$root/usr/lib/python3/dist-packages"
    tar -C / --exclude='test' --exclude='idlelib' --exclude='tkinter' --exclude='ensurepip' \
        -cf - "usr/lib/$(basename "$(readlink -f /usr/bin/python3)")" usr/lib/python3/dist-packages/grpc \
        usr/lib/python3/dist-packages/google | tar -C "$root" -xf -
    install_libraries_of "$root" "/usr/lib/$(basename "$(readlink -f /usr/bin/python3)")"
    install_libraries_of "$root" /usr/lib/python3/dist-packages/grpc
    install_libraries_of "$root" /usr/lib/python3/dist-packages/google
}

# Whether a case runs in a boot: every case in bpf-lsm, those that list the boot in `# vm-boots:` in others.
runs_in_boot() {
    local name="$1" boot="$2"
    [[ "$boot" == bpf-lsm ]] || sed -n 's/^# vm-boots://p' "$name" | tr ' ' '\n' | grep -qx "$boot"
}

build_initramfs() {
    local bin probe item src dest name
    rm -rf "$root"
    # The rootfs for OCI bundles (busybox, and cerberus-probe below); the VM's own root starts as a copy.
    mkdir -p "$root/rootfs"/{dev,proc,sys,tmp,run,etc,root}
    install_busybox "$root/rootfs"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$root/rootfs/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/rootfs/etc/group"
    cp -a "$root/rootfs/." "$root/"
    mkdir -p "$root"/{newroot,vm/cases,usr/local/bin}
    if [[ $(id -u) -eq 0 ]]; then
        mknod "$root/dev/console" c 5 1
        mknod "$root/dev/null" c 1 3
    fi
    # The cases' jq is gojq: jq 1.6 parses its builtins on every start, 220 ms under emulation (gojq 35 ms),
    # and every bundle a case makes is edited with it.
    install_file "$root" "$(command -v gojq)" /usr/bin/jq
    # For the cases that look into the pinned maps (bpftool is a build dependency, so it is there).
    ! command -v bpftool >/dev/null || install_file "$root" "$(command -v bpftool)" /usr/sbin/bpftool

    if [[ -n "$build_dir" ]]; then
        bin="$build_dir/cerberus"
        if [[ -x "$bin" ]]; then
            install_file "$root" "$bin" /usr/local/bin/cerberus
            # Without its debug information (about 90% of the file): what the VM's cases copy and hash
            # stays small under emulation, and the initramfs with it.
            objcopy --strip-debug "$root/usr/local/bin/cerberus"
        else
            echo "run.sh: no $bin; cases that need cerberus emit nothing" >&2
        fi
        probe="$(find "$build_dir" -maxdepth 3 -type f -name cerberus-probe -perm -u+x 2>/dev/null | head -n1)"
        if [[ -n "$probe" ]]; then
            install_file "$root" "$probe" /usr/local/bin/cerberus-probe
            install_file "$root/rootfs" "$probe" /bin/cerberus-probe
        fi
        # The attackers of the runtime's own binary and of its mounts, and the scenarios they play (tests/security/).
        [[ ! -x "$build_dir/cerberus-exe-attack" ]] ||
            install_file "$root" "$build_dir/cerberus-exe-attack" /usr/local/bin/cerberus-exe-attack
        [[ ! -x "$build_dir/cerberus-race-attack" ]] ||
            install_file "$root" "$build_dir/cerberus-race-attack" /usr/local/bin/cerberus-race-attack
        [[ ! -x "$build_dir/cerberus-recvtty" ]] ||
            install_file "$root" "$build_dir/cerberus-recvtty" /usr/local/bin/cerberus-recvtty
        # Kernel audit on and off without auditd (tests/vm/cases/policy_trail.sh).
        [[ ! -x "$build_dir/cerberus-audit-switch" ]] ||
            install_file "$root" "$build_dir/cerberus-audit-switch" /usr/local/bin/cerberus-audit-switch
        # The OCI hook, and runc to run it (tests/vm/cases/oci_hook_runc.sh).
        [[ ! -x "$build_dir/cerberus-hook" ]] ||
            install_file "$root" "$build_dir/cerberus-hook" /usr/local/bin/cerberus-hook
        ! command -v runc >/dev/null || install_file "$root" "$(command -v runc)" /usr/sbin/runc
        # The resolver the DNS gate forwards to (tests/vm/cases/policy_dns.sh).
        ! command -v dnsmasq >/dev/null || install_file "$root" "$(command -v dnsmasq)" /usr/sbin/dnsmasq
        # Fills a kernel function's BPF trampoline, as other tools could (tests/vm/cases/trampoline_full.sh).
        [[ ! -x "$build_dir/cerberus-fill-trampoline" ]] ||
            install_file "$root" "$build_dir/cerberus-fill-trampoline" /usr/local/bin/cerberus-fill-trampoline
        # What the kernel's verifier makes of each policy program (tests/vm/cases/bpf_verifier.sh).
        [[ ! -x "$build_dir/cerberus-verifier-stats" ]] ||
            install_file "$root" "$build_dir/cerberus-verifier-stats" /usr/local/bin/cerberus-verifier-stats
        for object in "$build_dir"/bpf-skel/cerberus_policy*.bpf.o; do
            [[ ! -f "$object" ]] || install -D -m 0644 "$object" "$root/vm/bpf/$(basename "$object")"
        done
        # Dynamically linked, for the loader tests: with its libraries in the VM, not in /rootfs.
        [[ ! -x "$build_dir/cerberus-dynprobe" ]] ||
            install_file "$root" "$build_dir/cerberus-dynprobe" /usr/local/bin/cerberus-dynprobe
    fi
    if [[ $systemd -eq 1 && -x "$build_dir/cerberus" ]]; then
        # As on a host after `make install`: the shim, the policies and the engines' snippets
        # (docs/engines/*.md), copied into the root by /init; the engine cases share the engine tier's helpers.
        make -s -C "$repo" -o build install BUILD="$build_dir" PREFIX=/usr/local DESTDIR="$root" >&2 ||
            die "make install into the VM failed"
        install -m 0644 "$repo/tests/engines/lib.sh" "$root/vm/engines-lib.sh"
    fi
    for item in "${extra[@]}"; do
        src="${item%%:*}"
        dest="${item#*:}"
        [[ "$item" == *:* ]] || dest="$(realpath "$src")"
        install_file "$root" "$src" "$dest"
    done

    if [[ -n "$build_dir" ]] && grep -qs '^# vm-cri: yes' "${cases[@]}"; then
        add_cri_node "$root" || die "cannot put the CRI node into the initramfs"
    fi

    install -m 0644 "$here/lib.sh" "$root/vm/lib.sh"
    cp -a "$repo/tests/security" "$root/vm/security"
    install -m 0755 "$here/init.sh" "$root/init"
    install -m 0755 "$here/run-cases.sh" "$root/vm/run-cases.sh"
    [[ $systemd -eq 0 ]] || : >"$root/vm/systemd-root"
    # The whole directory of the selected cases goes in, so cases can ship fixtures beside them.
    for name in "${cases[@]}"; do
        cp -a "$(dirname "$name")"/. "$root/vm/cases/"
    done
    : >"$root/vm/modules.list"
    for boot in "${boots[@]}"; do
        : >"$root/vm/run.$boot.list"
    done
    for name in "${cases[@]}"; do
        for boot in "${boots[@]}"; do
            ! runs_in_boot "$name" "$boot" || echo "/vm/cases/$(basename "$name")" >>"$root/vm/run.$boot.list"
        done
        modules_wanted+=" $(sed -n 's/^# vm-modules://p' "$name")"
    done
    rm -f "$work/modules.seen"
    for name in $modules_wanted; do add_module "$name"; done

    (cd "$root" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) | gzip -1 >"$work/initramfs.gz"
}

ensure_tools
mapfile -t cases < <(list_cases)
[[ ${#cases[@]} -gt 0 ]] || die "no case scripts match $cases_arg"

t_start="$(now)"
kernel_paths="$("$here/fetch-kernel.sh" "$kernel")" || die "cannot fetch the kernel $kernel"
vmlinuz="$(sed -n 1p <<<"$kernel_paths")"
moddir="$(sed -n 2p <<<"$kernel_paths")"
kver="$(basename "$moddir")"
t_fetched="$(now)"

qemu_disk=()
if [[ $systemd -eq 1 ]]; then
    image="$("$here/systemd-root.sh")" || die "cannot build the systemd root image"
fi
t_image="$(now)"

work="$(mktemp -d /tmp/cerberus-vm.XXXXXX)"
root="$work/root"
remove_work() { [[ $keep -eq 1 ]] || rm -rf "$work"; }
trap remove_work EXIT

build_initramfs
extra_append=""
if [[ $systemd -eq 1 ]]; then
    # norandmaps: the emulator translates guest code per virtual address; with the engines' large binaries
    # mapped at random addresses each new process is translated anew, which a real CPU does not pay.
    extra_append="loglevel=1 systemd.show_status=0 norandmaps"
fi
t_built="$(now)"

# boot_limit RUN_LIST: how long a boot may take, in s: the boot itself, and each case of the list up to its
# own limit (`# vm-timeout: N`, else the default), which /init enforces; so a boot that reaches it is stuck,
# never merely slow with many cases.
boot_limit() {
    local limit=$((systemd ? 600 : 180)) case_file case_limit
    while read -r case_file; do
        case_limit="$(sed -n 's/^# vm-timeout: *\([0-9][0-9]*\).*/\1/p' "$root$case_file" | head -n1)"
        limit=$((limit + ${case_limit:-$case_timeout}))
    done <"$1"
    echo "$limit"
}

# run_boot NAME: runs the VM once with that boot's LSMs and run list; its console goes to console.NAME.log.
# Keeps the boot's timing lines; counts its verdicts into passed/failed/skipped.
passed=0 failed=0 skipped=0 timings=()
run_boot() {
    local name="$1" log="$work/console.$1.log" status=0 t_boot t_done verdicts n_pass n_fail n_skip boot_s
    local systemd_ready case_times problem=""
    [[ -s "$root/vm/run.$name.list" ]] || return 0
    local vm_timeout="${VM_TIMEOUT:-$(boot_limit "$root/vm/run.$name.list")}"
    if [[ $systemd -eq 1 ]]; then
        # Every boot starts from the cached image: writes go to an overlay that is removed with the work dir.
        rm -f "$work/root.qcow2"
        qemu-img create -q -f qcow2 -b "$image" -F raw "$work/root.qcow2"
        qemu_disk=(-drive "file=$work/root.qcow2,if=virtio,format=qcow2")
    fi
    t_boot="$(now)"
    # shellcheck disable=SC2086 # VM_QEMU_ARGS is a list of words
    timeout -k 10 "$vm_timeout" qemu-system-x86_64 \
        -accel tcg,thread=multi -cpu max -m "$vm_memory" -smp 2 -nographic -no-reboot \
        -kernel "$vmlinuz" -initrd "$work/initramfs.gz" "${qemu_disk[@]}" ${VM_QEMU_ARGS:-} \
        -append "console=ttyS0 quiet lsm=$(lsm_of_boot "$name") panic=-1 $extra_append ${VM_APPEND:-} VM_CASE_TIMEOUT=$case_timeout VM_BOOT=$name VM_KERNEL=$kernel" \
        </dev/null >"$log" 2>&1 || status=$?
    t_done="$(now)"
    tr -d '\r' <"$log" >>"$work/console.log"

    verdicts="$(tr -d '\r' <"$log" | grep -aoE 'VMTEST (ok|fail|skip) .*|VMTEST done' || true)"
    grep -E '^VMTEST (ok|fail|skip) ' <<<"$verdicts" || true
    n_pass="$(grep -c '^VMTEST ok ' <<<"$verdicts" || true)"
    n_fail="$(grep -c '^VMTEST fail ' <<<"$verdicts" || true)"
    n_skip="$(grep -c '^VMTEST skip ' <<<"$verdicts" || true)"
    boot_s="$(tr -d '\r' <"$log" | sed -n 's/.*VMINFO boot_to_init \([0-9.]*\).*/\1/p' | head -n1)"
    systemd_ready="$(tr -d '\r' <"$log" | sed -n 's/.*VMINFO systemd_ready \([0-9.]*\).*/\1/p' | head -n1)"
    case_times="$(tr -d '\r' <"$log" | sed -n 's/.*VMINFO case \(.*\) \([0-9.]*\)$/\1 \2s/p' | paste -sd, - | sed 's/,/, /g')"
    if [[ $status -eq 124 || $status -eq 137 ]]; then
        problem="the VM did not finish within ${vm_timeout}s"
    elif ! grep -q '^VMTEST done$' <<<"$verdicts"; then
        problem="the VM stopped before VMTEST done (qemu exit status $status)"
    elif [[ $((n_pass + n_fail)) -eq 0 ]]; then
        problem="no check ran"
    fi
    if [[ -n "$problem" || $n_fail -gt 0 ]]; then
        keep=1
        echo "---- last 50 lines of the console log ($name) ----"
        tail -n 50 "$log" | tr -d '\r'
        echo "------------------------------------------"
        [[ -z "$problem" ]] || echo "VMTEST fail lane [$name]: $problem"
        [[ -z "$problem" ]] || n_fail=$((n_fail + 1))
    fi
    passed=$((passed + n_pass)) failed=$((failed + n_fail)) skipped=$((skipped + n_skip))
    if [[ -n "$verdicts_dir" ]]; then
        mkdir -p "$verdicts_dir/$kernel"
        grep -E '^VMTEST (ok|fail|skip) ' <<<"$verdicts" | sed 's/^\(VMTEST [a-z]* [^:]*\) \[[^]]*\]:/\1:/' \
            >"$verdicts_dir/$kernel/$name.txt" || true
        [[ -z "$problem" ]] || echo "VMTEST fail lane: $problem" >>"$verdicts_dir/$kernel/$name.txt"
    fi
    timings+=("boot $name (lsm=$(lsm_of_boot "$name")): to /init ${boot_s:-?}s${systemd_ready:+, to the cases unit ${systemd_ready}s} (guest clock), qemu $(elapsed "$t_boot" "$t_done")s")
    [[ -z "$case_times" ]] || timings+=("cases [$name]: $case_times")
}

: >"$work/console.log"
for name in "${boots[@]}"; do
    run_boot "$name"
done
[[ ${#timings[@]} -gt 0 ]] || die "no selected case runs in the boots $boots_arg"
t_done="$(now)"
[[ -z "$console_copy" ]] || cp "$work/console.log" "$console_copy"

echo "vm: kernel $kernel ($kver); fetch $(elapsed "$t_start" "$t_fetched")s," \
    "${image:+root image $(elapsed "$t_fetched" "$t_image")s, }" \
    "initramfs $(elapsed "$t_image" "$t_built")s ($(du -k "$work/initramfs.gz" | cut -f1) KiB)," \
    "total $(elapsed "$t_start" "$t_done")s"
for line in "${timings[@]}"; do
    echo "vm: $line"
done
[[ $keep -eq 0 ]] || echo "vm: console log and initramfs kept in $work"
summary="$passed passed, $failed failed"
[[ $skipped -eq 0 ]] || summary+=", $skipped skipped"
echo "$summary"
[[ $failed -eq 0 ]]

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real container engines running containers through cerberus: Podman,
# containerd (ctr --runc-binary, the named runtime io.containerd.runc.cerberus,
# the CRI snippet), Kubernetes' CRI (cri.sh: containerd's CRI plugin driven as
# the kubelet drives it), the OCI hook under runc and crun (oci_hook.sh) and
# Docker; then, per engine, the parity tier (parity.sh): the scenarios of
# parity-scenarios.txt under runc and under cerberus, which must look the
# same. Starts every daemon itself, with all state in one temporary directory
# and its own sockets (dockerd also in a network namespace of its own),
# installs cerberus there with `make install`, makes the busybox image as
# docs/engines/images.md says, and removes all of it at the end.
#
# usage (as root): tests/engines/run.sh [BUILD_DIR] [podman|containerd|cri|hook|docker ...]
# Installs the engines with apt-get when they are missing (Debian 12).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd) || exit 1
shift
engines=${*:-podman containerd cri hook docker}
started_at=$(date +%s)

[ "$(id -u)" -eq 0 ] || { echo "tests/engines/run.sh: run as root" >&2; exit 1; }
[ -x "$build/cerberus" ] || { echo "tests/engines/run.sh: no cerberus in $build: build first" >&2; exit 1; }

. "$repo/tests/engines/lib.sh"
. "$repo/tests/engines/podman.sh"
. "$repo/tests/engines/containerd.sh"
. "$repo/tests/engines/docker.sh"
. "$repo/tests/engines/parity.sh"
. "$repo/tests/engines/cri.sh"
. "$repo/tests/engines/oci_hook.sh"

wants() { case " $engines " in *" $1 "*) return 0 ;; esac; return 1; }

# Installs what is missing; a policy-rc.d keeps apt from starting the
# distribution's own dockerd and containerd services.
install_packages() {
    local packages="" guard=""
    command -v busybox >/dev/null || packages="$packages busybox-static"
    command -v script >/dev/null || packages="$packages bsdutils"
    # Podman also makes the image archive ctr imports (docs/engines/images.md).
    ! command -v podman >/dev/null && packages="$packages podman"
    { wants containerd || wants docker; } && ! command -v containerd >/dev/null && packages="$packages containerd"
    wants docker && ! [ -x /usr/bin/docker ] && packages="$packages docker.io"
    wants hook && ! command -v jq >/dev/null && packages="$packages jq"
    if wants cri; then
        command -v containerd >/dev/null || packages="$packages containerd"
        local p
        for p in python3-grpcio python3-protobuf protobuf-compiler jq containernetworking-plugins dnsmasq-base; do
            dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || packages="$packages $p"
        done
    fi
    [ -n "$packages" ] || return 0
    echo "installing:$packages"
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && guard=yes
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages
    local rc=$?
    [ -n "$guard" ] && rm -f /usr/sbin/policy-rc.d
    return $rc
}

cleanup() {
    [ -x "${work:-}/podman/pm" ] && { "$work/podman/pm" rm -af; "$work/podman/pm" pod rm -af; "$work/podman/pm" system reset -f; } >/dev/null 2>&1
    [ -d "${work:-}/hook/storage" ] && { hook_podman runc rm -af; hook_podman runc system reset -f; } >/dev/null 2>&1
    if [ -n "${ctd_socket:-}" ] && [ -S "$ctd_socket" ]; then
        [ -S "$work/docker/docker.sock" ] && "$work/docker/docker" rm -f $("$work/docker/docker" ps -aq) >/dev/null 2>&1
        containerd_clean
    fi
    cri_clean
    stop_started
    cri_clean_cgroups
    if [ -n "${work:-}" ]; then
        unmount_under "$work"
        rm -rf "$work"
    fi
    remove_created_host_paths
}

install_packages || { echo "tests/engines/run.sh: apt-get install failed" >&2; exit 1; }
note_host_paths
work=$(mktemp -d /tmp/cerberus-engines.XXXXXX)
chmod 0711 "$work" # root in a user namespace (--uidmap) must reach the roots under it
trap cleanup EXIT
trap 'exit 130' INT TERM

prefix=$work/prefix/usr/local
policy_dir=$work/prefix/etc/cerberus/policies
if ! make -s -C "$repo" -o build install BUILD="$build" PREFIX="$prefix" SYSCONFDIR="$work/prefix/etc" >"$work/out" 2>&1; then
    cat "$work/out"
    echo "tests/engines/run.sh: make install failed" >&2
    exit 1
fi
make_rootfs

# Without CAP_SYS_RESOURCE (some CI sandboxes) no runtime can raise
# RLIMIT_NOFILE/NPROC to the values Podman asks for as root: Podman's
# containers.conf asks for less (default_ulimits, docs/engines/podman.md).
low_ulimits=""
cap_eff=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
if (( ((16#$cap_eff) >> 24 & 1) == 0 )); then
    low_ulimits=yes
    echo "note: no CAP_SYS_RESOURCE here: podman runs with default_ulimits nofile=1024, nproc=4096"
fi

echo "== podman $(podman --version | awk '{ print $3 }')"
podman_setup
podman_images
if wants podman; then
    podman_test
    parity_test podman
fi
if wants hook; then
    echo "== OCI hook (podman $(podman --version | awk '{ print $3 }'), $(runc --version | awk "NR == 1"), $(crun --version | awk "NR == 1"))"
    oci_hook_test
fi
if wants cri; then
    echo "== cri (containerd $(containerd --version | awk '{ print $3 }'))"
    cri_test
fi
if wants containerd || wants docker; then
    echo "== containerd $(containerd --version | awk '{ print $3 }')"
    if start_containerd; then
        ok "containerd: starts with the CRI snippet in its config"
        if wants containerd; then
            containerd_test
            parity_test ctr
        fi
        if wants docker; then
            echo "== docker $(dockerd --version | awk '{ print $3 }' | tr -d ,)"
            docker_test && parity_test docker
        fi
    else
        not_ok "containerd: starts with the CRI snippet in its config"
        tail -n 20 "$work/containerd/containerd.log"
    fi
fi

echo "policy under a kernel like this one: ${policy_outcome:-not tested}"
echo "time: $(($(date +%s) - started_at)) s"
[ "$skipped" -eq 0 ] || echo "$skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

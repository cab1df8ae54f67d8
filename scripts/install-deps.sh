#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs everything Cerberus needs to build and test on Debian 12.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
    build-essential cmake pkg-config clang llvm libclang-rt-14-dev libbpf-dev bpftool libelf-dev zlib1g-dev
    libseccomp-dev libcap-ng-dev nlohmann-json3-dev libspdlog-dev doctest-dev libsystemd-dev
    # musl-gcc, which builds the command shim (runtime/shim/): small and static, cheap to exec.
    musl-tools
    # Landlock's kernel audit records read by libauparse; libaudit.a for the static PIE.
    libauparse-dev libaudit-dev
    busybox-static bats jq gojq iproute2 procps psmisc cpio qemu-system-x86 qemu-utils debootstrap e2fsprogs
    runc crun hyperfine time
    # The engine tier's CRI client (tests/engines/cri_client.py), its pods' CNI network, and curl
    # for the Docker Engine API (tests/engines/docker.sh).
    python3-grpcio python3-protobuf protobuf-compiler containernetworking-plugins curl
    # The resolver the DNS gate's tests forward to (tests/vm/cases/policy_dns.sh), dig for its benchmark.
    dnsmasq-base bind9-dnsutils
    # The egress proxy: OpenSSL for TLS, Boost.Beast (in libboost-dev) for HTTP/1.1, nghttp2 for HTTP/2;
    # git and wget are among the clients its tests drive through it (tests/integration/egress.sh).
    libssl-dev libboost-dev libnghttp2-dev git wget
    # The dashboard: cpp-httplib from its Debian source package (scripts/fetch-httplib.sh) and the
    # browser tier's headless chromium (tests/browser/).
    dpkg-dev chromium
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The browser tier drives chromium with playwright-core from npm, which asks for Node.js 20 (these
# machines have it); Debian 12's own nodejs (18) is the fallback where there is none.
command -v node >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# cpp-httplib, header-only, for the dashboard (see the script).
"$(dirname "$0")/fetch-httplib.sh" >/dev/null

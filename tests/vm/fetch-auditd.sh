#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Debian's auditd for the VM lane's audit_auditd case (tests/vm/kernel-cases/): downloaded with
# `apt-get download` into $CERBERUS_CACHE/auditd and unpacked there, never installed on the host. Prints
# the tests/vm/run.sh --add arguments that put auditd, auditctl, Debian's /etc/audit and the libraries the
# host lacks (libwrap0's) into the VM.
# Usage: tests/vm/fetch-auditd.sh   (then: tests/vm/run.sh ... $(tests/vm/fetch-auditd.sh))
set -euo pipefail

cache="${CERBERUS_CACHE:-/var/cache/cerberus}/auditd"
if [[ ! -x "$cache/root/sbin/auditd" ]]; then
    mkdir -p "$cache"
    (cd "$cache" && apt-get download -qq auditd libwrap0 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
    rm -rf "$cache/root"
    for deb in "$cache"/auditd_*.deb "$cache"/libwrap0_*.deb; do
        dpkg-deb -x "$deb" "$cache/root"
    done
fi
[[ -x "$cache/root/sbin/auditd" ]] || { echo "fetch-auditd.sh: no auditd in $cache" >&2; exit 1; }
lib=/lib/x86_64-linux-gnu
# libwrap.so.0 is not executable, so run.sh copies no library for it: its own two come by name.
printf -- '--add %s ' "$cache/root/sbin/auditd:/sbin/auditd" "$cache/root/sbin/auditctl:/sbin/auditctl" \
    "$cache/root/etc/audit:/etc/audit" "$cache/root/usr/lib/x86_64-linux-gnu/libwrap.so.0:$lib/libwrap.so.0" \
    "$lib/libnsl.so.2:$lib/libnsl.so.2" "$lib/libtirpc.so.3:$lib/libtirpc.so.3"
echo

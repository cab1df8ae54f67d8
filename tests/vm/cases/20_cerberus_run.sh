#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `cerberus run` of a busybox bundle prints the container's output. Emits nothing without a cerberus binary.
# vm-timeout: 60
. /vm/lib.sh

vm_has_cerberus || exit 0
bundle=/tmp/bundle-echo
make_bundle "$bundle" /bin/echo hello-from-vm || { vm_fail "bundle is made" "make_bundle $bundle failed"; exit 0; }
vm_expect_output "run prints the container's output" hello-from-vm cerberus run --bundle "$bundle" vmtest-echo
cerberus delete --force vmtest-echo >/dev/null 2>&1
rm -rf "$bundle"
exit 0

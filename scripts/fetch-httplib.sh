#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debian's cpp-httplib in header-only form, for the dashboard. The binary
# package (libcpp-httplib-dev) ships a header of declarations and a shared
# library built with OpenSSL, and no static library: the static PIE cannot link
# it. Debian's source package of the same library holds the header-only
# httplib.h; this fetches it with apt (its signed source index, read from a
# private list directory, so the host's apt sources are left as they are),
# applies Debian's patches, and keeps the header in the cache.
#
# Usage: scripts/fetch-httplib.sh   prints the directory holding httplib.h
# Environment: CERBERUS_CACHE (default /var/cache/cerberus)
set -euo pipefail
cache="${CERBERUS_CACHE:-/var/cache/cerberus}/cpp-httplib"
if [[ -f "$cache/include/httplib.h" ]]; then
    echo "$cache/include"
    exit 0
fi
command -v dpkg-source >/dev/null || { echo "fetch-httplib.sh: dpkg-source (dpkg-dev) is missing" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parts" "$work/lists/partial"
# The same archives the host's apt uses, as source indexes.
for suite in bookworm bookworm-updates bookworm-security; do
    uri=http://deb.debian.org/debian
    [[ $suite != *-security ]] || uri=http://deb.debian.org/debian-security
    printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n\n' \
        "$uri" "$suite" /usr/share/keyrings/debian-archive-keyring.gpg
done >"$work/parts/debian-src.sources"
apt_private=(-q -o Dir::Etc::SourceList=/nonexistent -o "Dir::Etc::SourceParts=$work/parts"
    -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
apt-get "${apt_private[@]}" update >&2
(cd "$work" && apt-get "${apt_private[@]}" source --download-only cpp-httplib >&2)
dsc="$(ls "$work"/cpp-httplib_*.dsc)"
dpkg-source -x "$dsc" "$work/src" >&2
grep -q '^#define CPPHTTPLIB_VERSION' "$work/src/httplib.h" ||
    { echo "fetch-httplib.sh: $dsc holds no header-only httplib.h" >&2; exit 1; }
mkdir -p "$cache/include"
install -m 0644 "$work/src/httplib.h" "$cache/include/httplib.h"
install -m 0644 "$work/src/LICENSE" "$cache/include/LICENSE"
basename "$dsc" .dsc >"$cache/include/SOURCE"
echo "$cache/include"

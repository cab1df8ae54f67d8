#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the path of the CRI API proto (runtime.v1) of the containerd installed
# here, taken from Debian's containerd source package (its vendored
# k8s.io/cri-api), downloaded once into the cache. apt reads a private deb-src
# list, so the host's apt configuration is left alone, and apt-helper checks
# the SHA256 that the signed Sources index gives (as tests/conformance/build.sh).
#
# The gogoproto import and file options are dropped: they steer only the Go
# generator, and Debian has gogo.proto only in a Go package. The check below
# fails when any other gogoproto use (a field option) would be lost with them.
#
# Usage: tests/engines/cri_api.sh     (as root)
# Env:   CERBERUS_CACHE (default /var/cache/cerberus), DEBIAN_MIRROR.
set -euo pipefail

readonly MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly IN_TARBALL=vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto

log() { echo "cri_api: $*" >&2; }

version=$(dpkg-query -W -f='${Version}' containerd 2>/dev/null) || { log "containerd is not installed"; exit 1; }
cache=${CERBERUS_CACHE:-/var/cache/cerberus}/cri-api/$version
if [[ -s $cache/api.proto ]]; then
    echo "$cache/api.proto"
    exit 0
fi

apt_dir=$(mktemp -d)
trap 'rm -rf "$apt_dir"' EXIT
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache"
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
{
    echo "deb-src $MIRROR $codename main"
    echo "deb-src $MIRROR $codename-updates main"
    echo "deb-src ${MIRROR%/debian}/debian-security $codename-security main"
} >"$apt_dir/sources.list"
log "reading the Sources index for containerd $version"
apt-get "${apt_opts[@]}" update -qq 2>/dev/null || true
read -r uri name _ checksum < <(apt-get "${apt_opts[@]}" source --print-uris "containerd=$version" 2>/dev/null |
    grep "\.orig\.tar\." | tr -d "'") || true
[[ -n ${uri:-} ]] || { log "no source package containerd $version on $MIRROR"; exit 1; }
log "downloading $name"
/usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$uri" "$apt_dir/$name" "$checksum" >/dev/null

tar -xf "$apt_dir/$name" -C "$apt_dir" --wildcards "*/$IN_TARBALL"
proto=$(echo "$apt_dir"/*/"$IN_TARBALL")
mkdir -p "$cache"
grep -v -e '^import "github.com/gogo/protobuf/gogoproto/gogo.proto";' -e '^option (gogoproto\.' \
    "$proto" >"$cache/api.proto.part"
if grep -n gogoproto "$cache/api.proto.part" >&2; then
    log "$IN_TARBALL uses gogoproto beyond file options (above): update this script"
    rm -f "$cache/api.proto.part"
    exit 1
fi
mv "$cache/api.proto.part" "$cache/api.proto"
echo "$cache/api.proto"

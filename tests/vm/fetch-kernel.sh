#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fetches one of the lane's kernels (tests/vm/kernels.list: a name, Debian suite, pinned version and packages
# per line) from Debian's mirror and unpacks it into a cache; prints two lines: the path of vmlinuz, then
# the path of its modules dir (.../lib/modules/<version>).
# Usage: fetch-kernel.sh [NAME]   (default 6.1, Debian 12's kernel)
# apt runs with a private sources list, lists and cache under ${CERBERUS_CACHE:-/var/cache/cerberus}/vm/apt
# (one suite per kernel: the machine's sources and state are never touched), and only when the pinned
# packages are not cached yet. Progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
name="${1:-6.1}"
cache_dir="${CERBERUS_CACHE:-/var/cache/cerberus}/vm"

log() { echo "fetch-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

read -r suite version packages < <(awk -v n="$name" '$1 == n { print $2, $3, $4 }' "$here/kernels.list") ||
    die "no kernel $name in $here/kernels.list (known: $(awk '!/^#/ && NF { printf "%s ", $1 }' "$here/kernels.list"))"
[[ -n "$packages" ]] || die "no kernel $name in $here/kernels.list"

apt_dir="$cache_dir/apt/$suite"
debs="$cache_dir/debs"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts" "$debs"
case "$suite" in
*-security) mirror=http://deb.debian.org/debian-security ;;
*) mirror=http://deb.debian.org/debian ;;
esac
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$apt_dir/sources.list"
apt_options=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o "Dir::Etc::sourceparts=$apt_dir/parts"
    -o "Dir::Etc::preferences=$apt_dir/preferences" -o "Dir::Etc::preferencesparts=$apt_dir/parts"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Default-Release=)

# The .deb file name of a package at a version (the epoch is not in file names).
deb_file() { echo "$debs/${1}_${2#*:}_amd64.deb"; }

all_cached() {
    local package
    for package in ${packages//,/ }; do
        [[ -f "$(deb_file "$package" "$version")" ]] || return 1
    done
}

apt_update() {
    log "apt-get update of $suite (private lists in $apt_dir)"
    apt-get -q "${apt_options[@]}" update >&2 || die "apt-get update of $suite failed"
}

known() { apt-cache "${apt_options[@]}" show "$1=$2" >/dev/null 2>&1; }

# When the mirror dropped the pinned version: the kernel the suite's linux-image-amd64 depends on now, split
# (binary + modules) when the image package is only a dependency holder.
follow_suite() {
    local image sub
    image="$(apt-cache "${apt_options[@]}" depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)"
    [[ -n "$image" ]] || die "$suite has no linux-image-amd64 to follow"
    version="$(apt-cache "${apt_options[@]}" show --no-all-versions "$image" | sed -n 's/^Version: //p' | head -n1)"
    packages="$image"
    sub="$(apt-cache "${apt_options[@]}" depends "$image" | sed -n 's/^ *Depends: \(linux-\(binary\|modules\)-[^ ]*\)$/\1/p' | sort -u | paste -sd,)"
    [[ -z "$sub" ]] || packages="$sub"
    log "WARNING: $name's pinned $1 is no longer on the mirror; using $packages $version (update tests/vm/kernels.list)"
}

if ! all_cached; then
    [[ -n "$(ls -A "$apt_dir/lists" 2>/dev/null | grep -v partial)" ]] || apt_update
    first="${packages%%,*}"
    known "$first" "$version" || apt_update
    known "$first" "$version" || follow_suite "$first=$version"
    for package in ${packages//,/ }; do
        deb="$(deb_file "$package" "$version")"
        [[ -f "$deb" ]] && continue
        log "downloading $package=$version from $suite"
        (cd "$debs" && apt-get -q "${apt_options[@]}" download "$package=$version" >&2) ||
            die "cannot download $package=$version from $suite"
        [[ -f "$deb" ]] || die "apt-get download left no $deb"
    done
fi

# Unpacked once per version, every package of the set into one tree.
dest="$cache_dir/unpacked/$name-$version"
if [[ ! -d "$dest" ]]; then
    rm -rf "$dest.tmp"
    mkdir -p "$dest.tmp"
    for package in ${packages//,/ }; do
        log "unpacking $package $version"
        dpkg -x "$(deb_file "$package" "$version")" "$dest.tmp"
    done
    mv "$dest.tmp" "$dest"
fi

# 6.1 and 6.12: /boot/vmlinuz-VER and /lib/modules/VER; 7.x: /usr/lib/modules/VER/vmlinuz beside its modules.
modules="$(ls -d "$dest"/lib/modules/*/ "$dest"/usr/lib/modules/*/ 2>/dev/null | head -n1 || true)"
modules="${modules%/}"
vmlinuz="$(ls "$dest"/boot/vmlinuz-* "$modules/vmlinuz" 2>/dev/null | head -n1 || true)"
[[ -f "$vmlinuz" && -d "$modules/kernel" ]] || die "no vmlinuz or modules under $dest"
echo "$vmlinuz"
echo "$modules"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fetches Debian's current kernel package (the one linux-image-amd64 depends on) and unpacks it into a cache.
# Prints two lines: the path of vmlinuz, then the path of its modules dir (lib/modules/<version>).
# Cached: a package already downloaded and unpacked is reused. Progress goes to stderr.
set -euo pipefail

cache_dir="${CERBERUS_CACHE:-/var/cache/cerberus}/vm"
mkdir -p "$cache_dir"
cd "$cache_dir"

log() { echo "fetch-kernel: $*" >&2; }

# The package linux-image-amd64 points at, e.g. linux-image-6.1.0-57-amd64; empty if apt has no lists.
resolve_package() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1
}

# Prints the .deb file apt would download for the package (name_version_arch.deb), if apt knows it.
deb_name() {
    apt-cache show --no-all-versions "$1" 2>/dev/null | awk -v p="$1" '
        /^Version:/ { v = $2 } /^Architecture:/ { a = $2 }
        END { if (v != "") { sub(/^[0-9]+:/, "", v); print p "_" v "_" a ".deb" } }'
}

# Newest unpacked kernel in the cache; lets the lane run offline once it has run once.
newest_cached() {
    ls -d unpacked/*/ 2>/dev/null | sort -V | tail -n1 | sed 's:/$::'
}

unpack() {
    local deb="$1" dest="unpacked/${1%.deb}"
    if [[ ! -d "$dest" ]]; then
        log "unpacking $deb"
        rm -rf "$dest.tmp"
        mkdir -p "$dest.tmp"
        dpkg -x "$deb" "$dest.tmp"
        mv "$dest.tmp" "$dest"
    fi
    echo "$dest"
}

package="$(resolve_package || true)"
if [[ -z "$package" ]]; then
    if cached="$(newest_cached)" && [[ -n "$cached" ]]; then
        log "apt cannot resolve linux-image-amd64; using cached $cached"
        dir="$cache_dir/$cached"
    else
        log "apt has no package lists; running apt-get update"
        apt-get update -qq >&2
        package="$(resolve_package || true)"
        [[ -n "$package" ]] || { log "cannot resolve linux-image-amd64 after apt-get update"; exit 1; }
    fi
fi

if [[ -n "$package" ]]; then
    deb="$(deb_name "$package")"
    if [[ -z "$deb" || ! -f "$deb" ]]; then
        log "downloading $package"
        if ! apt-get download -q "$package" >&2 2>/dev/null; then
            log "download failed; running apt-get update and retrying"
            apt-get update -qq >&2
            apt-get download -q "$package" >&2
        fi
        deb="$(deb_name "$package")"
        [[ -f "$deb" ]] || deb="$(ls -t "${package}"_*.deb | head -n1)"
    fi
    dir="$cache_dir/$(unpack "$deb")"
fi

vmlinuz="$(ls "$dir"/boot/vmlinuz-* | head -n1)"
modules="$(ls -d "$dir"/lib/modules/*/ | head -n1)"
[[ -f "$vmlinuz" && -d "$modules" ]] || { log "no vmlinuz or modules under $dir"; exit 1; }
echo "$vmlinuz"
echo "${modules%/}"

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the OCI runtime-tools validation suite (one program per test, plus the
# in-container checker `runtimetest` and the test rootfs) with Debian's Go and
# Debian's Go libraries, offline except for the Debian mirror.
#
# Debian's golang-github-opencontainers-runtime-tools-dev ships only the library
# packages (debian/rules excludes cmd/ and validation/), so the suite comes from
# the Debian source package's upstream tarball, which also carries the upstream
# rootfs-amd64.tar.gz. The bookworm tarball is not served by the mirror here;
# the trixie one is, and it builds against bookworm's libraries. The one library
# Debian lacks, github.com/mndrix/tap-go, is replaced by our tap-go/.
#
# Usage: tests/conformance/build.sh        (as root; prints the output dir)
# Env:   CERBERUS_CACHE (default /var/cache/cerberus), RUNTIME_TOOLS_DIR
#        (default $CERBERUS_CACHE/runtime-tools), DEBIAN_MIRROR.
set -euo pipefail

readonly SOURCE_PACKAGE=golang-github-opencontainers-runtime-tools
readonly SOURCE_VERSION=0.9.0.109.ge931285-1
readonly SOURCE_SUITE=trixie
readonly MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly BUILD_PACKAGES=(
	golang-go xz-utils
	golang-github-google-uuid-dev golang-github-hashicorp-go-multierror-dev
	golang-github-mrunalp-fileutils-dev golang-github-opencontainers-specs-dev
	golang-github-opencontainers-selinux-dev golang-github-sirupsen-logrus-dev
	golang-github-urfave-cli-dev golang-gocapability-dev golang-golang-x-sys-dev
)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${RUNTIME_TOOLS_DIR:-${CERBERUS_CACHE:-/var/cache/cerberus}/runtime-tools}
out=$cache/bin

log() { echo "conformance/build: $*" >&2; }
# shellcheck source=../tier_lib.sh
. "$here/../tier_lib.sh"

# Prints the path of the upstream tarball, downloading it once. apt reads a
# private deb-src list so the host's apt configuration is left alone, and
# apt-helper checks the SHA256 that the signed Sources index gives.
fetch_source_tarball() {
	local apt_dir=$cache/apt
	local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
	local existing
	existing=$(find "$cache/src" -maxdepth 1 -name "${SOURCE_PACKAGE}_${SOURCE_VERSION%-*}.orig.tar.*" 2>/dev/null | head -n1)
	if [[ -n $existing ]]; then
		echo "$existing"
		return
	fi
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache" "$cache/src"
	echo "deb-src $MIRROR $SOURCE_SUITE main" >"$apt_dir/sources.list"
	log "reading $SOURCE_SUITE Sources index from $MIRROR"
	apt-get "${apt_opts[@]}" update -qq
	local uri name size checksum
	read -r uri name size checksum < <(apt-get "${apt_opts[@]}" source --print-uris \
		"$SOURCE_PACKAGE=$SOURCE_VERSION" | grep "\.orig\.tar\." | tr -d "'")
	[[ -n ${uri:-} ]] || { log "no $SOURCE_PACKAGE $SOURCE_VERSION in $SOURCE_SUITE"; exit 1; }
	log "downloading $name ($size bytes)"
	/usr/lib/apt/apt-helper -o APT::Sandbox::User=root download-file "$uri" "$cache/src/$name.part" "$checksum" >/dev/null
	mv "$cache/src/$name.part" "$cache/src/$name"
	rm -rf "$apt_dir"
	echo "$cache/src/$name"
}

# Everything that decides the binaries: tarball, our TAP package, this script, Go.
build_key() {
	{
		sha256sum "$1" "$here/tap-go/tap.go" "${BASH_SOURCE[0]}" | cut -d' ' -f1
		go version
	} | sha256sum | cut -d' ' -f1
}

build() {
	local tarball=$1 work=$cache/work
	rm -rf "$work" "$out.new"
	local tree=$work/gopath/src/github.com/opencontainers/runtime-tools
	mkdir -p "$tree" "$work/gopath/src/github.com/mndrix" "$out.new/validation"
	tar -xf "$tarball" -C "$tree" --strip-components=1
	cp -r "$here/tap-go" "$work/gopath/src/github.com/mndrix/tap-go"

	# GOPATH mode: our tree first, then Debian's /usr/share/gocode. No module
	# downloads, no cgo (runtimetest runs inside the container and must be static).
	export GOPATH=$work/gopath:/usr/share/gocode GO111MODULE=off GOPROXY=off GOFLAGS='' \
		GOCACHE=$work/gocache CGO_ENABLED=0
	local flags=(-trimpath -ldflags '-s -w')
	log "building runtimetest and validation programs with $(go version | cut -d' ' -f3)"
	(cd "$tree" &&
		go build "${flags[@]}" -tags 'netgo osusergo' -o "$out.new/runtimetest" ./cmd/runtimetest &&
		go build "${flags[@]}" -o "$out.new/validation/" ./validation/...)
	cp "$tree/rootfs-amd64.tar.gz" "$out.new/"
	rm -rf "$out" "$work"
	mv "$out.new" "$out"
}

main() {
	install_missing_packages "${BUILD_PACKAGES[@]}"
	local tarball key
	tarball=$(fetch_source_tarball)
	key=$(build_key "$tarball")
	if [[ -f $out/build-key && $(cat "$out/build-key") == "$key" ]]; then
		log "up to date: $out"
	else
		build "$tarball"
		echo "$key" >"$out/build-key"
		log "built $(find "$out/validation" -type f | wc -l) validation programs in $out"
	fi
	echo "$out"
}

main "$@"

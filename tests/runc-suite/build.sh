#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares runc's own integration suite (tests/integration/*.bats of runc) at the
# version Debian 12 ships, offline except for the Debian mirror:
# - the source from Debian's source package runc 1.1.5+ds1-1+deb12u1 (Debian's
#   patches applied, the CVE-2024-21626 ones included), read through a private
#   deb-src list (the host's apt configuration is left alone);
# - the helper programs the tests call (recvtty, sd-helper, seccompagent), put
#   where the suite's helpers.bash looks for them. Debian's "+ds1" tarball has
#   no vendor/ tree, so they are built as Debian builds runc: Go 1.19 in GOPATH
#   mode against bookworm's golang-*-dev packages, no module downloads;
# - the two root file systems the suite downloads from the internet otherwise,
#   made locally: busybox from Debian's busybox-static (every applet, a passwd
#   and group), and, with --debian, a Debian one (debootstrap --variant=minbase
#   bookworm from the mirror; only hooks.bats uses it). The suite's
#   get-images.sh (which would download them) is replaced in the unpacked tree
#   by one that names these two files.
#
# Usage: tests/runc-suite/build.sh [--debian]   (as root; prints the source dir)
# Env:   CERBERUS_CACHE (default /var/cache/cerberus), RUNC_SUITE_DIR (default
#        $CERBERUS_CACHE/runc-suite), DEBIAN_MIRROR.
set -euo pipefail

readonly SOURCE_PACKAGE=runc
readonly SOURCE_VERSION=1.1.5+ds1-1+deb12u1
readonly SOURCE_SUITES=(bookworm bookworm-updates bookworm-security)
readonly DEBIAN_SUITE=bookworm
readonly MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly HELPERS=(recvtty sd-helper seccompagent)
# Go packages for the helpers (and the parts of runc's libcontainer they import);
# the rest is what the suite runs on the host: bats, jq, gawk, gcc for the seccomp and
# device tests' static programs, busybox for the image, debootstrap for the other.
readonly BUILD_PACKAGES=(
	golang-go dpkg-dev xz-utils libseccomp-dev gcc libc6-dev bats jq gawk busybox-static debootstrap
	golang-dbus-dev golang-github-containerd-console-dev golang-github-coreos-go-systemd-dev
	golang-github-cyphar-filepath-securejoin-dev golang-github-opencontainers-specs-dev
	golang-github-seccomp-libseccomp-golang-dev golang-github-sirupsen-logrus-dev
	golang-github-urfave-cli-dev golang-golang-x-sys-dev golang-github-moby-sys-dev
	golang-github-docker-go-units-dev golang-github-opencontainers-selinux-dev
	golang-github-cilium-ebpf-dev
)

cache=${RUNC_SUITE_DIR:-${CERBERUS_CACHE:-/var/cache/cerberus}/runc-suite}
tree=$cache/runc
images=$cache/images
want_debian=0

log() { echo "runc-suite/build: $*" >&2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tier_lib.sh
. "$here/../tier_lib.sh"

while (($#)); do
	case $1 in
	--debian) want_debian=1; shift ;;
	*) log "unknown argument $1"; exit 2 ;;
	esac
done

# Downloads the source package once into $cache/src (apt checks every file
# against the signed Sources index) and prints the path of its .dsc.
fetch_source_package() {
	local dsc=$cache/src/${SOURCE_PACKAGE}_${SOURCE_VERSION}.dsc
	if [[ -f $dsc ]]; then
		echo "$dsc"
		return
	fi
	local apt_dir=$cache/apt suite uri
	mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$cache/src.new"
	for suite in "${SOURCE_SUITES[@]}"; do
		uri=$MIRROR
		[[ $suite != *-security ]] || uri=${MIRROR%/debian}/debian-security
		printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n\n' \
			"$uri" "$suite" /usr/share/keyrings/debian-archive-keyring.gpg
	done >"$apt_dir/parts/debian-src.sources"
	local apt_private=(-q -o Dir::Etc::SourceList=/nonexistent -o "Dir::Etc::SourceParts=$apt_dir/parts"
		-o "Dir::State::Lists=$apt_dir/lists" -o APT::Sandbox::User=root)
	log "reading the Sources indexes of ${SOURCE_SUITES[*]} from $MIRROR"
	apt-get "${apt_private[@]}" update >/dev/null
	(cd "$cache/src.new" &&
		apt-get "${apt_private[@]}" source --download-only "$SOURCE_PACKAGE=$SOURCE_VERSION" >/dev/null)
	rm -rf "$cache/src" "$apt_dir"
	mv "$cache/src.new" "$cache/src"
	echo "$dsc"
}

# Everything that decides the tree and helpers: the source package, this script, Go.
build_key() {
	{
		sha256sum "$1" "${BASH_SOURCE[0]}" | cut -d' ' -f1
		go version
	} | sha256sum | cut -d' ' -f1
}

# Unpacks the source with Debian's patches and builds the helpers into it, at
# the paths helpers.bash names (contrib/cmd/<name>/<name>).
build_tree() {
	local dsc=$1 work=$cache/work
	rm -rf "$work" "$tree.new"
	dpkg-source --no-check --no-copy -x "$dsc" "$tree.new" >/dev/null
	# GOPATH mode: the runc tree as its own import path, then Debian's /usr/share/gocode.
	local import_dir=$work/gopath/src/github.com/opencontainers
	mkdir -p "$import_dir"
	ln -s "$tree.new" "$import_dir/runc"
	export GOPATH=$work/gopath:/usr/share/gocode GO111MODULE=off GOPROXY=off GOFLAGS='' GOCACHE=$work/gocache
	local helper
	for helper in "${HELPERS[@]}"; do
		log "building $helper with $(go version | cut -d' ' -f3)"
		# seccompagent is a stub unless built with the seccomp tag (cgo, libseccomp).
		(cd "$import_dir/runc" && go build -trimpath -tags seccomp -ldflags '-s -w' \
			-o "contrib/cmd/$helper/$helper" "./contrib/cmd/$helper")
	done
	rm -rf "$tree" "$work"
	mv "$tree.new" "$tree"
}

# busybox as the suite's busybox image has it: every applet in /bin, the usual
# users and groups (tests look for "nobody" as the unmapped owner, group 5 for
# devpts), and the directories tests write into.
make_busybox_image() {
	local out=$images/busybox-amd64.tar.xz
	[[ -f $out ]] && return
	local root=$images/busybox.work applet
	rm -rf "$root"
	mkdir -p "$root"/{bin,dev,etc,home,proc,root,sys,tmp,usr/sbin,var/spool/mail}
	chmod 1777 "$root/tmp"
	chmod 700 "$root/root"
	cp /bin/busybox "$root/bin/busybox"
	for applet in $("$root/bin/busybox" --list); do
		[[ -e $root/bin/$applet ]] || ln "$root/bin/busybox" "$root/bin/$applet"
	done
	cat >"$root/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		daemon:x:1:1:daemon:/usr/sbin:/bin/false
		bin:x:2:2:bin:/bin:/bin/false
		sys:x:3:3:sys:/dev:/bin/false
		mail:x:8:8:mail:/var/spool/mail:/bin/false
		nobody:x:65534:65534:nobody:/home:/bin/false
	EOF
	cat >"$root/etc/group" <<-'EOF'
		root:x:0:
		daemon:x:1:
		bin:x:2:
		sys:x:3:
		adm:x:4:
		tty:x:5:
		disk:x:6:
		mail:x:8:
		wheel:x:10:root
		users:x:100:
		nogroup:x:65534:
	EOF
	tar --numeric-owner -C "$root" -cf - . | xz -T2 -1 >"$out.part"
	mv "$out.part" "$out"
	rm -rf "$root"
	log "made $out from $(dpkg-query -W -f='busybox-static ${Version}' busybox-static)"
}

# A minimal Debian (what the suite's debian image is for: a shell, ldconfig and
# a libc); debootstrap fetches its packages from the mirror and checks them
# against the signed Release file.
make_debian_image() {
	local out=$images/debian-amd64.tar.xz
	[[ -f $out ]] && return
	local root=$images/debian.work
	rm -rf "$root"
	log "making a Debian $DEBIAN_SUITE root file system with debootstrap (a few minutes)"
	debootstrap --variant=minbase "$DEBIAN_SUITE" "$root" "$MIRROR" >"$images/debootstrap.log" 2>&1 ||
		{ log "debootstrap failed, see $images/debootstrap.log"; exit 1; }
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
	tar --numeric-owner -C "$root" -cf - . | xz -T2 -1 >"$out.part"
	mv "$out.part" "$out"
	rm -rf "$root"
	log "made $out"
}

# helpers.bash evals what get-images.sh prints; ours prints the local images
# (the Debian one may be missing: only hooks.bats needs it, and run.sh asks for
# it with --debian when that file is run).
write_get_images() {
	cat >"$tree/tests/integration/get-images.sh" <<-EOF
		#!/bin/sh
		# Written by cerberus's tests/runc-suite/build.sh: the images are made locally.
		echo BUSYBOX_IMAGE=$images/busybox-amd64.tar.xz
		echo DEBIAN_IMAGE=$images/debian-amd64.tar.xz
	EOF
}

main() {
	install_missing_packages "${BUILD_PACKAGES[@]}"
	local dsc key
	dsc=$(fetch_source_package)
	key=$(build_key "$dsc")
	if [[ -f $tree/build-key && $(cat "$tree/build-key") == "$key" ]]; then
		log "up to date: $tree"
	else
		build_tree "$dsc"
		echo "$key" >"$tree/build-key"
		log "built ${HELPERS[*]} in $tree/contrib/cmd"
	fi
	mkdir -p "$images"
	make_busybox_image
	((want_debian)) && make_debian_image
	write_get_images
	echo "$tree"
}

main "$@"

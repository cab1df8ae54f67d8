# SPDX-License-Identifier: Apache-2.0
# Shell helpers shared by the tiers that fetch and run outside suites
# (tests/conformance, tests/runc-suite). Source it; it defines functions only.

# Installs the Debian packages among the arguments that are not installed yet.
install_missing_packages() {
	local missing=() pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
	done
	((${#missing[@]} == 0)) && return
	echo "installing ${missing[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Removes a test's directory: first what is still mounted under it (deepest
# first, so that rm never reaches into those file systems), then the directory
# without crossing file systems.
remove_test_dir() {
	local dir=$1 target
	findmnt -rn -o TARGET | awk -v prefix="$dir/" 'index($0, prefix) == 1' | sort -r |
		while read -r target; do
			umount "$target" 2>/dev/null || umount -l "$target" ||
				echo "could not unmount $target" >&2
		done
	rm -rf --one-file-system "$dir"
}

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The root file system of the systemd lane: Debian 12 with systemd as init, pure cgroup v2, and the engines
# (Podman, Docker, containerd) and the peer runtimes (runc, crun). Built once with debootstrap into an ext4
# image under ${CERBERUS_CACHE:-/var/cache/cerberus}/vm, named after a hash of this file, so the image is
# rebuilt exactly when this recipe changes (older images are removed then). Prints the image's path.
# Boots read it through a throw-away qcow2 overlay (run.sh), so every boot starts from this state.
# Progress goes to stderr. Needs root, debootstrap and e2fsprogs (installed when missing).
set -euo pipefail

# What the cases use: systemd-run/systemctl, jq for bundles (debootstrap installs these), then the engines
# and peer runtimes at Debian's versions (apt-get in the new root: debootstrap cannot order their dependencies),
# and apparmor as on a stock Debian host (with AppArmor active, Docker loads its profile through apparmor_parser).
base_packages=(systemd systemd-sysv dbus kmod iproute2 procps psmisc jq busybox-static)
packages=(podman docker.io containerd runc crun apparmor)
# Units that slow the boot or wait for hardware the VM does not have; the engines' daemons are started
# by the cases, after their configuration is in place (as docs/engines/*.md tell a user to do).
disabled_units=(
    docker.service docker.socket containerd.service podman.service podman.socket
    apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer man-db.timer
    systemd-timesyncd.service systemd-networkd-wait-online.service
)
masked_units=(
    getty@tty1.service serial-getty@ttyS0.service getty.target console-getty.service
    systemd-firstboot.service systemd-random-seed.service systemd-update-utmp.service
    systemd-update-utmp-runlevel.service e2scrub_reap.service systemd-journal-flush.service
    systemd-logind.service
)
mirror="${CERBERUS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
image_size=6G # sparse: the overlays of the boots grow as engines pull and unpack images

log() { echo "systemd-root: $*" >&2; }

recipe_hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
cache_dir="${CERBERUS_CACHE:-/var/cache/cerberus}/vm"
image="$cache_dir/debian12-systemd-$recipe_hash.ext4"
if [[ -f "$image" ]]; then
    echo "$image"
    exit 0
fi

[[ $(id -u) -eq 0 ]] || { log "building the image needs root"; exit 1; }
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
if [[ ${#need[@]} -gt 0 ]]; then
    log "installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2 ||
        { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
fi

mkdir -p "$cache_dir"
work="$(mktemp -d "$cache_dir/build.XXXXXX")"
unmount_root() { umount "$root/proc" "$root/sys" "$root/dev" 2>/dev/null || true; }
# Kept when the build fails, for its logs.
trap 'status=$?; unmount_root; if [[ $status -eq 0 ]]; then rm -rf "$work"; else log "logs kept in $work"; fi' EXIT
root="$work/root"
started=$(date +%s)

log "debootstrap bookworm from $mirror, then ${packages[*]}; a few minutes, once per recipe"
debootstrap --variant=minbase --include="$(IFS=,; echo "${base_packages[*]}")" bookworm "$root" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -n 30 "$work/debootstrap.log" >&2; log "debootstrap failed"; exit 1; }
# No service starts in the new root while packages are installed.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mount --bind /dev "$root/dev"
if ! { chroot "$root" apt-get update -q && DEBIAN_FRONTEND=noninteractive chroot "$root" \
    apt-get install -y -q --no-install-recommends "${packages[@]}"; } >"$work/apt.log" 2>&1; then
    tail -n 30 "$work/apt.log" >&2
    log "apt-get install in the new root failed"
    exit 1
fi
unmount_root
rm "$root/usr/sbin/policy-rc.d"

# A fixed identity: an empty machine-id would make systemd run its first-boot presets on every boot.
echo cerberus-vm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 cerberus-vm\n::1 localhost\n' >"$root/etc/hosts"
: >"$root/etc/fstab"
chroot "$root" systemd-machine-id-setup >/dev/null 2>&1
chroot "$root" systemctl disable "${disabled_units[@]}" >/dev/null 2>&1 || true
chroot "$root" systemctl mask "${masked_units[@]}" >/dev/null 2>&1
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\nForwardToConsole=no\n' >"$root/etc/systemd/journald.conf.d/vm.conf"
# What the unit the lane adds at boot needs: the lane's files live under /vm.
mkdir -p "$root/vm" "$root/usr/local/bin"
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*

log "making the ext4 image ($(du -sh "$root" | cut -f1) of files)"
truncate -s "$image_size" "$work/image.ext4"
mkfs.ext4 -q -L cerberus-root -d "$root" "$work/image.ext4"
rm -f "$cache_dir"/debian12-systemd-*.ext4
mv "$work/image.ext4" "$image"
log "built $image in $(($(date +%s) - started)) s"
echo "$image"

# SPDX-License-Identifier: Apache-2.0
# containerd (ctr) with --runc-binary, and the named runtime
# io.containerd.runc.cerberus (containerd-shim/), and the CRI config snippet.
# Sourced by run.sh: needs $work, $prefix, $repo and lib.sh.

ctd_namespace=cerberus-engines-test

# Writes DIR/config.toml as docs/engines/containerd.md says (the full
# `containerd config default`, then the shipped CRI snippet appended), with
# every host path of it moved under DIR and the socket at SOCKET.
node_config() {
    local dir=$1 socket=$2
    mkdir -p "$dir/cni"
    containerd config default | sed -e "s|^root = .*|root = \"$dir/root\"|" -e "s|^state = .*|state = \"$dir/state\"|" \
        -e "s|address = \"/run/containerd/containerd.sock\"|address = \"$socket\"|" \
        -e "s|conf_dir = \"/etc/cni/net.d\"|conf_dir = \"$dir/cni\"|" \
        -e "s|path = \"/opt/containerd\"|path = \"$dir/opt\"|" \
        -e "s|disable_apparmor = false|disable_apparmor = true|" >"$dir/config.toml"
    sed "s|/usr/local/bin/cerberus|$prefix/bin/cerberus|" "$repo/config/containerd/config.toml" >>"$dir/config.toml"
}

# Starts containerd with node_config under $work/containerd, and the installed
# prefix first on its PATH (where it finds containerd-shim-runc-cerberus).
# Sets $ctd_socket and $c.
start_containerd() {
    local dir=$work/containerd
    ctd_socket=$dir/containerd.sock
    node_config "$dir" "$ctd_socket"
    PATH="$prefix/bin:$PATH" containerd --config "$dir/config.toml" >"$dir/containerd.log" 2>&1 &
    started_pids="$started_pids $!"
    # One command line for every call, also those made through script(1) and sh -c.
    printf '#!/bin/sh\nexec ctr --address %s --namespace %s "$@"\n' "$ctd_socket" "$ctd_namespace" >"$dir/ctr"
    chmod +x "$dir/ctr"
    c=$dir/ctr
    wait_until "$c" version
}

ctr_image=$podman_image # saved by podman_images, as docs/engines/images.md says

containerd_test() {
    local image=$ctr_image
    local by_binary="--runtime io.containerd.runc.v2 --runc-binary $prefix/bin/cerberus"
    local named="--runtime io.containerd.runc.cerberus"

    expect_success "containerd: import the busybox image (docs/engines/images.md)" "$image" \
        sh -c "$c image import $work/busybox.tar && $c image ls -q"
    expect_success "containerd: the CRI snippet gives pod_annotations" 'pod_annotations = ["io.cerberus.*", "io.cerberus.policy/*", "io.cerberus.policy.profile/*"]' \
        containerd --config "$work/containerd/config.toml" config dump
    expect_success "containerd: the CRI snippet gives BinaryName" "BinaryName = \"$prefix/bin/cerberus\"" \
        containerd --config "$work/containerd/config.toml" config dump
    expect_success "containerd: the CRI plugin is up with it" cri \
        sh -c "$c plugins ls | grep -E 'grpc\.v1 +cri .* ok'"

    expect_success "containerd: --runc-binary cerberus prints a line and exits 0" hello-from-ctr \
        "$c" run $by_binary --rm "$image" t1 echo hello-from-ctr
    expect_success "containerd: named runtime io.containerd.runc.cerberus prints a line and exits 0" hello-named \
        "$c" run $named --rm "$image" t2 echo hello-named
    # ctr sends the runc v2 shim's options only to runtimes named
    # io.containerd.runc.*: these failed under io.containerd.cerberus.v2 with
    # "type with url containerd.linux.runc.CreateOptions: not found".
    expect_success "containerd: named runtime takes --uidmap/--gidmap" "uid=0 in 100000" \
        "$c" run $named --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 "$image" t6 \
        sh -c 'set -- $(cat /proc/self/uid_map); echo "uid=$(id -u) in $2"'
    expect_success "containerd: named runtime takes --no-pivot" no-pivot-ok \
        "$c" run $named --rm --no-pivot "$image" t7 echo no-pivot-ok
    # The CRI snippet's options (BinaryName, Root): state under Root/NAMESPACE,
    # /run/containerd/cerberus/k8s.io for Kubernetes (docs/engines/containerd.md).
    expect_success "containerd: the CRI snippet's options keep state under Root/NAMESPACE" t9 \
        sh -c "$c run $by_binary --runc-root $work/cri-root -d $image t9 sleep 300 >/dev/null &&
            $prefix/bin/cerberus --root $work/cri-root/$ctd_namespace list"
    # The named runtime's shim calls the "runc" it finds first on its PATH:
    # cerberus must know the container (runc would not write cerberus state).
    expect_success "containerd: named runtime runs cerberus" '"status": "running"' \
        sh -c "$c run $named -d $image t3 sleep 300 >/dev/null &&
            $prefix/bin/cerberus --root /run/containerd/runc/$ctd_namespace state t3"
    expect_success "containerd: task exec" exec-ok "$c" task exec --exec-id e1 t3 echo exec-ok
    expect_success "containerd: task ps" PID "$c" task ps t3
    expect_success "containerd: task kill, rm" "" \
        sh -c "$c task kill -s KILL t3 && sleep 0.5 && $c task rm t3 && $c container rm t3"
    expect_success "containerd: run -t gets a terminal" tty-ok \
        script -qec "$c run $named --rm -t $image t4 sh -c 'tty | grep -q /dev/pts && echo tty-ok'" /dev/null
    expect_success "containerd: loopback is up in a new network namespace" 'Connection refused' \
        "$c" run $named --rm "$image" t5 sh -c 'nc -w 1 127.0.0.1 9 </dev/null; true'

    expect_policy_outcome "containerd: policy annotation (--runc-binary)" "$c" run $by_binary --rm \
        --annotation "io.cerberus.policy=$denying_policy" "$image" p1 sh -c "$policy_container_script"
    expect_policy_outcome "containerd: policy annotation (named runtime)" "$c" run $named --rm \
        --annotation "io.cerberus.policy=$denying_policy" "$image" p2 sh -c "$policy_container_script"
    expect_failure "containerd: a bad policy annotation fails with our error" "$bad_policy_error" \
        "$c" run $named --rm --annotation "io.cerberus.policy=$bad_policy" "$image" p3 echo never
}

# Removes every task, container and image of the test namespace.
containerd_clean() {
    local id
    for id in $("$c" task ls -q 2>/dev/null); do
        "$c" task kill -s KILL "$id" >/dev/null 2>&1
        sleep 0.3
        "$c" task rm -f "$id" >/dev/null 2>&1
    done
    for id in $("$c" container ls -q 2>/dev/null); do "$c" container rm "$id" >/dev/null 2>&1; done
    for id in $("$c" image ls -q 2>/dev/null); do "$c" image rm "$id" >/dev/null 2>&1; done
    "$c" namespace rm "$ctd_namespace" >/dev/null 2>&1
    rm -rf "/run/containerd/runc/$ctd_namespace"
}

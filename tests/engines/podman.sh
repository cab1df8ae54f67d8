# SPDX-License-Identifier: Apache-2.0
# Podman through the shipped containers.conf entry ("--runtime cerberus").
# Sourced by run.sh: needs $work, $prefix, $repo, $low_ulimits and lib.sh.

podman_image=localhost/cerberus-busybox:test

# The wrapper $pm: one command line for every call, also those made through
# script(1) and sh -c; the runtime is $RUNTIME (default cerberus), so the
# parity tier can run the same calls under runc. The test's containers.conf
# is the shipped snippet plus, as docs/engines/podman.md says for a host
# without CAP_SYS_RESOURCE, default_ulimits that any runtime can set.
podman_setup() {
    local conf=$work/podman/containers.conf
    pm=$work/podman/pm
    mkdir -p "$work/podman/tmp"
    sed "s|/usr/local/bin/cerberus|$prefix/bin/cerberus|" "$repo/config/containers.conf.d/cerberus.conf" >"$conf"
    if [ -n "$low_ulimits" ]; then
        printf '\n[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n' >>"$conf"
    fi
    printf '#!/bin/sh\nCONTAINERS_CONF=%s exec podman --root %s --runroot %s --tmpdir %s %s --runtime "${RUNTIME:-cerberus}" "$@"\n' \
        "$conf" "$work/podman/storage" "$work/podman/run" "$work/podman/tmp" \
        "--events-backend file --cgroup-manager cgroupfs" >"$pm"
    chmod +x "$pm"
}

# docs/engines/images.md, step 2: the image in Podman, and saved as the
# docker-archive $work/busybox.tar that ctr imports.
podman_images() {
    if run_captured "$pm" import --change 'CMD ["sh"]' "$work/rootfs.tar" "$podman_image" &&
        run_captured "$pm" save --format docker-archive -o "$work/busybox.tar" "$podman_image"; then
        ok "podman: import the busybox rootfs and save it for ctr (docs/engines/images.md)"
    else
        not_ok "podman: import the busybox rootfs and save it for ctr (docs/engines/images.md)"
    fi
}

podman_test() {
    local image=$podman_image
    local run_opts="--network none --log-driver k8s-file"

    expect_success "podman: the containers.conf entry names cerberus" "$prefix/bin/cerberus" \
        "$pm" info --format '{{.Host.OCIRuntime.Path}}'
    expect_success "podman: run prints a line and exits 0" hello-from-podman \
        "$pm" run --rm $run_opts "$image" echo hello-from-podman
    if run_captured "$pm" run --rm $run_opts "$image" sh -c 'exit 7' || [ $? -ne 7 ]; then
        not_ok "podman: run exits with the container's status (7)"
    else
        ok "podman: run exits with the container's status (7)"
    fi
    expect_success "podman: run -t gets a terminal" tty-ok \
        script -qec "$pm run --rm -t $run_opts $image sh -c 'tty | grep -q /dev/pts && echo tty-ok'" /dev/null
    expect_success "podman: run -i passes stdin" stdin-ok \
        sh -c "echo stdin-ok | $pm run --rm -i $run_opts $image cat"
    expect_success "podman: --read-only, its tmpfs mounts copied up (tmpcopyup)" copied-up \
        "$pm" run --rm --read-only $run_opts "$image" sh -c 'touch /tmp/x && ! touch /x 2>/dev/null && cat /tmp/seed'
    expect_success "podman: --uidmap (a user namespace, cgroupfs bound from the host)" "uid=0 in 100000" \
        "$pm" run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 $run_opts "$image" \
        sh -c 'set -- $(cat /proc/self/uid_map); echo "uid=$(id -u) in $2"; ls /sys/fs/cgroup >/dev/null'
    expect_success "podman: loopback is up in a new network namespace" 'Connection refused' \
        "$pm" run --rm $run_opts "$image" sh -c 'nc -w 1 127.0.0.1 9 </dev/null; true'

    expect_success "podman: run -d" "" "$pm" run -d --name agent $run_opts "$image" \
        sh -c 'trap "exit 0" TERM; echo detached-up; while :; do sleep 0.2; done'
    expect_success "podman: ps lists it running" "agent Up" "$pm" ps --format '{{.Names}} {{.Status}}'
    expect_success "podman: logs" detached-up "$pm" logs agent
    expect_success "podman: exec" exec-ok "$pm" exec agent echo exec-ok
    expect_success "podman: exec -t" exec-tty-ok \
        script -qec "$pm exec -t agent sh -c 'tty | grep -q /dev/pts && echo exec-tty-ok'" /dev/null
    expect_success "podman: pause" "agent Paused" \
        sh -c "$pm pause agent && $pm ps -a --format '{{.Names}} {{.Status}}'"
    expect_success "podman: unpause" "agent Up" \
        sh -c "$pm unpause agent && $pm ps --format '{{.Names}} {{.Status}}'"
    expect_success "podman: stop (SIGTERM reaches the container)" "agent Exited (0)" \
        sh -c "$pm stop -t 20 agent && $pm ps -a --format '{{.Names}} {{.Status}}'"
    expect_success "podman: rm" agent "$pm" rm agent
    if run_captured "$pm" ps -a --format '{{.Names}}' && ! grep -q agent "$work/out"; then
        ok "podman: ps -a no longer lists it"
    else
        not_ok "podman: ps -a no longer lists it"
    fi

    # podman parses --annotation values as CSV: the JSON is quoted (docs/engines/podman.md).
    expect_policy_outcome "podman: policy annotation" "$pm" run --rm $run_opts \
        --annotation "$(csv_quoted "io.cerberus.policy=$denying_policy")" "$image" sh -c "$policy_container_script"
    expect_policy_outcome "podman: profile annotation (offline)" \
        "$pm" --runtime-flag "policy-dir=$policy_dir" run --rm $run_opts \
        --annotation io.cerberus.policy.profile=offline "$image" sh -c "$policy_container_script"
    expect_failure "podman: a bad policy annotation fails with our error" "$bad_policy_error" \
        "$pm" run --rm $run_opts --annotation "$(csv_quoted "io.cerberus.policy=$bad_policy")" "$image" echo never

    podman_names_test
    run_captured "$pm" rm -af
}

# Host names in a policy through Podman: the container joins a network namespace this test makes, whose
# resolver its resolv.conf (bound in) names (lib.sh: start_names_resolver).
podman_names_test() {
    local dir=$work/podman/names
    unshare -n sleep 100000 &
    started_pids="$started_pids $!"
    local netns=/proc/$!/ns/net
    sleep 0.2
    start_names_resolver "$netns" "$dir"
    local opts="--network ns:$netns -v $dir/resolv.conf:/etc/resolv.conf:ro --log-driver k8s-file"
    expect_names_outcome "podman: names through the DNS gate: the allowed one answered and reached, another REFUSED and refused" \
        "$pm" run --rm $opts --annotation "$(csv_quoted "io.cerberus.policy=$names_policy")" "$image" sh -c "$names_script"
    expect_names_control "podman: control: without the policy both names resolve and nothing is refused" \
        "$pm" run --rm $opts "$image" sh -c "$names_script"
}

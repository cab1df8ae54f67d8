# SPDX-License-Identifier: Apache-2.0
# Docker: dockerd with the shipped daemon.json runtimes (a plain "cerberus",
# and default policies through runtimeArgs), on the containerd that run.sh
# started. dockerd runs in a network namespace of its own, so its bridge, and
# the ports containers publish with -p, change nothing on the host.
# Sourced by run.sh: needs $work, $prefix, $repo, $ctd_socket and lib.sh.

docker_cli=/usr/bin/docker # Debian's, the same version as dockerd

docker_image=cerberus-busybox:test

# Writes the test's daemon.json: the shipped runtimes with the test's paths,
# plus one runtime whose default policy is invalid and one whose policy names a host.
docker_config() {
    local dir=$work/docker
    printf '%s\n' "$bad_policy" >"$dir/bad-policy.json"
    printf '%s\n' "$names_policy" >"$dir/names-policy.json"
    sed -e "s|/usr/local/bin/cerberus|$prefix/bin/cerberus|g" \
        -e "s|/etc/cerberus/policies|$policy_dir|g" \
        -e "/\"runtimes\": {/a\\
    \"cerberus-badpolicy\": {\"path\": \"$prefix/bin/cerberus\", \"runtimeArgs\": [\"--default-policy\", \"$dir/bad-policy.json\"]},\\
    \"cerberus-names\": {\"path\": \"$prefix/bin/cerberus\", \"runtimeArgs\": [\"--default-policy\", \"$dir/names-policy.json\"]}," \
        "$repo/config/docker/daemon.json" >"$dir/daemon.json"
}

# As docs/engines/docker.md starts it by hand, plus the test's own paths, in
# a new network namespace (whose loopback it brings up first): the default
# bridge and docker-proxy live there, and fetch() reaches published ports
# through $published_netns.
start_dockerd() {
    local dir=$work/docker
    unshare --net sh -c 'ip link set lo up && exec "$@"' dockerd dockerd \
        --config-file "$dir/daemon.json" --data-root "$dir/data" --exec-root "$dir/exec" \
        --pidfile "$dir/dockerd.pid" --host "unix://$dir/docker.sock" --containerd "$ctd_socket" \
        --iptables=false --ip-masq=false >"$dir/dockerd.log" 2>&1 &
    local pid=$!
    started_pids="$started_pids $pid"
    published_netns=/proc/$pid/ns/net
    wait_until "$docker_cli" --host "unix://$dir/docker.sock" version && return 0
    kill -0 "$pid" 2>/dev/null || wait "$pid" 2>/dev/null
    return 1
}

# Sets $d, the docker wrapper; returns non-zero when dockerd does not run.
docker_test() {
    local dir=$work/docker image=$docker_image
    mkdir -p "$dir"
    docker_config
    if ! start_dockerd; then
        skip "docker" "dockerd does not run on this machine: $(grep -E 'level=(error|fatal)' "$dir/dockerd.log" |
            tail -n 1)"
        return 1
    fi
    d=$dir/docker
    printf '#!/bin/sh\nexec %s --host unix://%s "$@"\n' "$docker_cli" "$dir/docker.sock" >"$d"
    chmod +x "$d"
    local run_opts="--network none"

    expect_success "docker: import the busybox rootfs (docs/engines/images.md)" "$image" \
        sh -c "$d import --change 'CMD [\"sh\"]' $work/rootfs.tar $image >/dev/null && $d image ls --format '{{.Repository}}:{{.Tag}}'"
    expect_success "docker: the daemon.json runtimes are known" cerberus-offline "$d" info --format '{{json .Runtimes}}'
    expect_success "docker: run prints a line and exits 0" hello-from-docker \
        "$d" run --rm --runtime=cerberus $run_opts "$image" echo hello-from-docker
    if run_captured "$d" run --rm --runtime=cerberus $run_opts "$image" sh -c 'exit 7' || [ $? -ne 7 ]; then
        not_ok "docker: run exits with the container's status (7)"
    else
        ok "docker: run exits with the container's status (7)"
    fi
    expect_success "docker: run -t gets a terminal" tty-ok script -qec "$d run --rm -t --runtime=cerberus \
        $run_opts $image sh -c 'tty | grep -q /dev/pts && echo tty-ok'" /dev/null
    expect_success "docker: run -d" "" "$d" run -d --name agent --runtime=cerberus $run_opts "$image" \
        sh -c 'trap "exit 0" TERM; echo detached-up; while :; do sleep 0.2; done'
    expect_success "docker: ps lists it running" "agent Up" "$d" ps --format '{{.Names}} {{.Status}}'
    expect_success "docker: logs" detached-up "$d" logs agent
    expect_success "docker: exec" exec-ok "$d" exec agent echo exec-ok
    expect_success "docker: top" "sleep" "$d" top agent
    expect_success "docker: stop (SIGTERM reaches the container)" "agent Exited (0)" \
        sh -c "$d stop -t 20 agent >/dev/null && $d ps -a --format '{{.Names}} {{.Status}}'"
    expect_success "docker: rm" agent "$d" rm agent

    # Docker 20.10 has no per-container annotations: the policy is the runtime's default.
    expect_policy_outcome "docker: runtime cerberus-agent (default policy agent.json)" \
        "$d" run --rm --runtime=cerberus-agent $run_opts "$image" sh -c "$policy_container_script"
    expect_policy_outcome "docker: runtime cerberus-offline (default policy offline.json)" \
        "$d" run --rm --runtime=cerberus-offline $run_opts "$image" sh -c "$policy_container_script"
    expect_failure "docker: a bad default policy fails with our error" "$bad_policy_error" \
        "$d" run --rm --runtime=cerberus-badpolicy $run_opts "$image" echo never

    docker_annotation_test
    docker_names_test

    "$d" rm -f $("$d" ps -aq) >/dev/null 2>&1
    return 0
}

# Per-container annotations came with Engine API 1.43 (Docker 24,
# HostConfig.Annotations, `docker run --annotation`). An older daemon drops
# the field without a word, so an annotated policy never reaches cerberus:
# the container runs under its runtime entry's default policy only.
docker_annotation_test() {
    local dir=$work/docker image=$docker_image api id bundle
    api=$("$dir/docker" version --format '{{.Server.APIVersion}}')
    if [ "$(printf '%s\n1.43\n' "$api" | sort -V | awk 'NR == 1')" = 1.43 ]; then
        expect_policy_outcome "docker: --annotation io.cerberus.policy reaches cerberus (API $api)" \
            "$dir/docker" run --rm --runtime=cerberus --network none \
            --annotation "io.cerberus.policy=$denying_policy" "$image" sh -c "$policy_container_script"
        return 0
    fi
    id=$(curl -sf --unix-socket "$dir/docker.sock" -H 'Content-Type: application/json' \
        -d "$(jq -cn --arg image "$image" --arg policy "$denying_policy" '{Image: $image, Cmd: ["sleep", "300"],
            HostConfig: {Runtime: "cerberus", NetworkMode: "none", Annotations: {"io.cerberus.policy": $policy}}}')" \
        "http://localhost/v$api/containers/create" | jq -r .Id)
    bundle=$work/containerd/state/io.containerd.runtime.v2.task/moby/$id
    if [ -n "$id" ] && "$dir/docker" start "$id" >/dev/null 2>&1 && [ -s "$bundle/config.json" ] &&
        jq -e '.annotations["io.cerberus.policy"] == null' "$bundle/config.json" >/dev/null; then
        ok "docker: API $api (before 1.43) drops HostConfig.Annotations: the container runs without the policy"
    else
        not_ok "docker: API $api (before 1.43) drops HostConfig.Annotations: the container runs without the policy"
    fi
    [ -n "$id" ] && "$dir/docker" rm -f "$id" >/dev/null 2>&1
    return 0
}

# Host names through Docker (a runtime entry's default policy: 20.10 has no annotations): the resolver runs
# in dockerd's network namespace, which the default bridge routes the containers to; --dns names it.
docker_names_test() {
    start_names_resolver "$published_netns" "$work/docker/names"
    expect_names_outcome "docker: names through the DNS gate: the allowed one answered and reached, another REFUSED and refused" \
        "$d" run --rm --runtime=cerberus-names --dns 192.0.2.53 "$image" sh -c "$names_script"
    expect_names_control "docker: control: without the policy both names resolve and nothing is refused" \
        "$d" run --rm --runtime=cerberus --dns 192.0.2.53 "$image" sh -c "$names_script"
}

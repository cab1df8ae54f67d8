# SPDX-License-Identifier: Apache-2.0
# Kubernetes without a kubelet: containerd's CRI plugin driven as the kubelet
# drives it (cri_client.py, built from the CRI API proto of the containerd in
# use), on a node set up as docs/engines/kubernetes.md says: `containerd config
# default` with the shipped snippet (config/containerd/config.toml) appended.
# This containerd runs in a network namespace of its own, where the CNI bridge
# plugin gives each pod its eth0: the host's network is never touched.
# Sourced by run.sh: needs $work, $prefix, $repo, $build, $pm, lib.sh and
# containerd.sh (node_config).

cri_app_image=$podman_image # saved by podman_images as $work/busybox.tar (docs/engines/images.md)
cri_pause_image=localhost/cerberus-pause:test
cri_cgroup_parent=/cerberus-cri-test # the kubelet's /kubepods, for this test's pods

# The app image and the sandbox image (/pause only, as registry.k8s.io/pause),
# imported into the CRI's k8s.io namespace as docs/engines/images.md says.
cri_images() {
    local dir=$work/cri pause_rootfs=$work/cri/pause-rootfs
    mkdir -p "$pause_rootfs"
    cp "$build/cerberus-pause" "$pause_rootfs/pause"
    tar -C "$pause_rootfs" -cf "$dir/pause-rootfs.tar" .
    "$pm" import --change 'ENTRYPOINT ["/pause"]' "$dir/pause-rootfs.tar" "$cri_pause_image" &&
        "$pm" save --format docker-archive -o "$dir/pause.tar" "$cri_pause_image" &&
        "$cri_ctr" image import "$work/busybox.tar" && "$cri_ctr" image import "$dir/pause.tar"
}

# Starts containerd configured as the node set-up says, its host paths moved
# under $work/cri: the snippet's BinaryName and Root (the state dir of the
# pods' cerberus containers, $cri_root/k8s.io), the sandbox image (no
# registry here) and the CNI bridge on 192.0.2.0/24 (TEST-NET-1), only inside
# containerd's own network namespace; pods get addresses up to .127 (the rest is
# cri_names_test's). Sets $cri_socket, $cri_root, $cri_ctr, $cri, $cri_netns.
start_cri_containerd() {
    local dir=$work/cri
    mkdir -p "$dir/logs"
    cri_socket=$dir/containerd.sock
    cri_root=$dir/cerberus
    node_config "$dir" "$cri_socket"
    sed -i -e "s|bin_dir = \"/opt/cni/bin\"|bin_dir = \"/usr/lib/cni\"|" \
        -e "s|sandbox_image = .*|sandbox_image = \"$cri_pause_image\"|" \
        -e "s|/run/containerd/cerberus|$cri_root|" "$dir/config.toml"
    # This host's init is not systemd: the kubelet would use cgroupfs, as the snippet says to match.
    sed -i "s|SystemdCgroup = true|SystemdCgroup = false|" "$dir/config.toml"
    # Without CAP_SYS_RESOURCE (as for Podman's ulimits in run.sh) no runtime may set the
    # sandbox's oom_score_adj of -998: containerd clamps it to its own instead.
    [ -n "$low_ulimits" ] && sed -i "s|restrict_oom_score_adj = false|restrict_oom_score_adj = true|" "$dir/config.toml"
    cat >"$dir/cni/10-cerberus-test.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "cerberus-cri-test",
 "plugins": [{"type": "bridge", "bridge": "cerbcri0", "isGateway": false, "ipMasq": false,
              "ipam": {"type": "host-local", "ranges": [[{"subnet": "192.0.2.0/24", "rangeEnd": "192.0.2.127"}]], "dataDir": "$dir/cni-ipam"}}]}
EOF
    unshare --net sh -c 'ip link set lo up && exec "$@"' containerd \
        containerd --config "$dir/config.toml" >"$dir/containerd.log" 2>&1 &
    started_pids="$started_pids $!"
    cri_netns=/proc/$!/ns/net # unshare and sh exec containerd: the pid stays its own
    printf '#!/bin/sh\nexec ctr --address %s --namespace k8s.io "$@"\n' "$cri_socket" >"$dir/ctr"
    printf '#!/bin/sh\nCRI_PROTO_DIR=%s exec /usr/bin/python3 %s %s "$@"\n' \
        "$dir/proto" "$repo/tests/engines/cri_client.py" "$cri_socket" >"$dir/cri"
    chmod +x "$dir/ctr" "$dir/cri"
    cri_ctr=$dir/ctr
    cri=$dir/cri
    wait_until "$cri" Version
}

# The CRI API proto of this containerd (cri_api.sh), compiled for Python.
cri_proto() {
    local proto
    mkdir -p "$work/cri/proto"
    proto=$("$repo/tests/engines/cri_api.sh") &&
        cp "$proto" "$work/cri/proto/api.proto" &&
        protoc --proto_path="$work/cri/proto" --python_out="$work/cri/proto" "$work/cri/proto/api.proto" &&
        echo "$work/cri/proto/api_pb2.py"
}

# A PodSandboxConfig as the kubelet sends it (cgroupfs driver): NAME,
# ANNOTATIONS (a JSON object). The uid is the name, unique in this test.
pod_config() {
    local name=$1 annotations=${2:-"{}"}
    jq -cn --arg name "$name" --arg logs "$work/cri/logs/$name" --arg parent "$cri_cgroup_parent/pod$name" \
        --argjson annotations "$annotations" '{
        metadata: {name: $name, uid: $name, namespace: "default", attempt: 0},
        hostname: $name, log_directory: $logs, annotations: $annotations,
        labels: {"io.kubernetes.pod.name": $name, "io.kubernetes.pod.namespace": "default"},
        linux: {cgroup_parent: $parent, security_context: {namespace_options: {network: "POD", pid: "CONTAINER", ipc: "POD"}}}}'
}

# RunPodSandbox of HANDLER with a pod config; prints the sandbox id.
run_pod() {
    local handler=$1 config=$2
    "$cri" RunPodSandbox "$(jq -cn --argjson config "$config" --arg handler "$handler" \
        '{config: $config, runtime_handler: $handler}')" >"$work/cri/reply" || return 1
    jq -r .pod_sandbox_id "$work/cri/reply"
}

# CreateContainer + StartContainer of a busybox container NAME running
# COMMAND (sh -c) in POD, with ANNOTATIONS; prints the container id.
run_container() {
    local pod=$1 config=$2 name=$3 command=$4 annotations=${5:-"{}"} id
    "$cri" CreateContainer "$(jq -cn --arg pod "$pod" --argjson sandbox "$config" --arg name "$name" \
        --arg image "$cri_app_image" --arg command "$command" --argjson annotations "$annotations" '{
        pod_sandbox_id: $pod, sandbox_config: $sandbox,
        config: {metadata: {name: $name, attempt: 0}, image: {image: $image}, command: ["sh", "-c", $command],
                 log_path: ($name + ".log"), annotations: $annotations, linux: {}}}')" >"$work/cri/reply" || return 1
    id=$(jq -r .container_id "$work/cri/reply")
    "$cri" StartContainer "{\"container_id\": \"$id\"}" >/dev/null || return 1
    echo "$id"
}

# The OCI annotations containerd gave the runtime for ID, one key=value a line.
oci_annotations() {
    jq -r '.annotations | to_entries[] | "\(.key)=\(.value)"' \
        "$work/cri/state/io.containerd.runtime.v2.task/k8s.io/$1/config.json"
}

remove_pod() {
    "$cri" StopPodSandbox "{\"pod_sandbox_id\": \"$1\"}" >/dev/null && "$cri" RemovePodSandbox "{\"pod_sandbox_id\": \"$1\"}" >/dev/null
}

cerberus_lists() {
    "$prefix/bin/cerberus" --root "$cri_root/k8s.io" list
}

# A pod of the cerberus handler: is it refused with the fail-closed error, or
# does it run with the app's denied connect visible through ExecSync? Either
# way the same as the other engines saw (expect_policy_outcome).
expect_cri_policy_outcome() {
    local name=$1 annotations=$2 outcome="" config pod app
    config=$(pod_config "$3" "$annotations")
    if pod=$(run_pod cerberus "$config" 2>"$work/out"); then
        app=$(run_container "$pod" "$config" agent 'sleep 300' 2>"$work/out") &&
            run_captured "$cri" ExecSync "{\"container_id\": \"$app\", \"cmd\": [\"sh\", \"-c\", \"$policy_container_script\"], \"timeout\": 10}" &&
            grep -q "Operation not permitted" "$work/out" && grep -q policy-container-ran "$work/out" && outcome=enforced
        remove_pod "$pod"
    else
        grep -qF "refusing to run the container unprotected" "$work/out" && outcome=fail-closed
    fi
    judge_policy_outcome "$name" "$outcome"
}

cri_test() {
    local config pod app runc_pod ids
    expect_success "cri: the CRI API proto of this containerd, compiled" api_pb2.py cri_proto
    if ! [ -s "$work/cri/proto/api_pb2.py" ]; then
        not_ok "cri: no CRI client without the proto"
        return
    fi
    if ! start_cri_containerd; then
        not_ok "cri: containerd with the node set-up answers on the CRI"
        tail -n 20 "$work/cri/containerd.log"
        return
    fi
    expect_success "cri: containerd with the node set-up answers on the CRI" runtime_api_version "$cri" Version
    expect_success "cri: the CRI status is ready (runtime and CNI network)" true \
        sh -c "$cri Status | jq -e '[.status.conditions[] | select(.status == true)] | length == 2'"
    expect_success "cri: images in the k8s.io namespace (app and sandbox)" "$cri_pause_image" cri_images
    expect_success "cri: the CRI lists them" "$cri_pause_image" "$cri" ListImages

    # A pod without a policy: its pause and app containers are cerberus's.
    config=$(pod_config plain '{"io.cerberus.test-pod": "pod", "io.cerberus.test-both": "pod", "example.org/kept-out": "x"}')
    if pod=$(run_pod cerberus "$config" 2>"$work/out"); then
        ok "cri: RunPodSandbox with runtime_handler cerberus"
    else
        not_ok "cri: RunPodSandbox with runtime_handler cerberus"
        return
    fi
    if app=$(run_container "$pod" "$config" app 'echo app-up; exec sleep 300' \
        '{"io.cerberus.test-container": "app", "io.cerberus.test-both": "container", "example.org/kept-out-too": "y"}' 2>"$work/out"); then
        ok "cri: CreateContainer + StartContainer in it"
    else
        not_ok "cri: CreateContainer + StartContainer in it"
        return
    fi
    expect_success "cri: cerberus's state dir lists the pause container" "$pod" cerberus_lists
    expect_success "cri: cerberus's state dir lists the app container" "$app" cerberus_lists
    expect_success "cri: PodSandboxStatus is ready" SANDBOX_READY "$cri" PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
    expect_success "cri: ContainerStatus is running" CONTAINER_RUNNING "$cri" ContainerStatus "{\"container_id\": \"$app\"}"
    expect_success "cri: the app's log reaches the pod's log directory" app-up cat "$work/cri/logs/plain/app.log"
    expect_success "cri: ExecSync (kubectl exec) runs in the app container" '"stdout": "exec-ok' \
        "$cri" ExecSync "{\"container_id\": \"$app\", \"cmd\": [\"echo\", \"exec-ok\"], \"timeout\": 10}"
    expect_success "cri: ExecSync returns the command's exit code" '"exit_code": 3' \
        "$cri" ExecSync "{\"container_id\": \"$app\", \"cmd\": [\"sh\", \"-c\", \"exit 3\"], \"timeout\": 10}"
    expect_success "cri: the app has the pod's eth0 (CNI, in containerd's own netns)" "192.0.2." \
        "$cri" ExecSync "{\"container_id\": \"$app\", \"cmd\": [\"ip\", \"-4\", \"addr\", \"show\", \"eth0\"], \"timeout\": 10}"
    # The pod's network has no route to the policy check's documentation address: the control
    # connects on loopback, which refuses at once when nothing listens.
    expect_success "cri: loopback works in the pod without a policy (the control)" "Connection refused" \
        "$cri" ExecSync "{\"container_id\": \"$app\", \"cmd\": [\"sh\", \"-c\", \"nc -w 1 127.0.0.1 9 </dev/null; echo ran\"], \"timeout\": 10}"

    # Which annotations reach the runtime (docs/engines/kubernetes.md).
    expect_success "cri: the sandbox gets the pod's io.cerberus.* annotations" io.cerberus.test-pod=pod oci_annotations "$pod"
    expect_success "cri: the app gets the pod's io.cerberus.* annotations" io.cerberus.test-pod=pod oci_annotations "$app"
    expect_success "cri: the app gets its own io.cerberus.* annotations" io.cerberus.test-container=app oci_annotations "$app"
    expect_success "cri: a key on both: the container's value wins for the app" io.cerberus.test-both=container oci_annotations "$app"
    expect_success "cri: a key on both: the sandbox keeps the pod's" io.cerberus.test-both=pod oci_annotations "$pod"
    if oci_annotations "$pod" >"$work/out" && grep -q io.kubernetes.cri.container-type=sandbox "$work/out" &&
        ! grep -q -e io.cerberus.test-container -e example.org "$work/out" &&
        oci_annotations "$app" >"$work/out" && ! grep -q example.org "$work/out"; then
        ok "cri: nothing else reaches them (container annotations skip the sandbox, other prefixes are filtered)"
    else
        not_ok "cri: nothing else reaches them (container annotations skip the sandbox, other prefixes are filtered)"
    fi

    # Container-level policies, in the running pod: the sandbox stays up.
    expect_failure "cri: a bad container-level policy fails StartContainer with our error" "$bad_policy_error" \
        run_container "$pod" "$config" bad-policy 'echo never' "{\"io.cerberus.policy\": $(jq -Rn --arg p "$bad_policy" '$p')}"
    expect_failure "cri: a container whose annotations carry both policy keys is refused (a pod's and its own meet there)" \
        "are mutually exclusive" run_container "$pod" "$config" both-keys 'echo never' \
        "{\"io.cerberus.policy.profile\": \"agent\", \"io.cerberus.policy\": $(jq -Rn --arg p "$denying_policy" '$p')}"
    if run_container "$pod" "$config" policed 'sleep 300' "{\"io.cerberus.policy\": $(jq -Rn --arg p "$denying_policy" '$p')}" \
        >"$work/cri/policed" 2>"$work/out"; then
        if run_captured "$cri" ExecSync "{\"container_id\": \"$(cat "$work/cri/policed")\", \"cmd\": [\"sh\", \"-c\", \"$policy_container_script\"], \"timeout\": 10}" &&
            grep -q "Operation not permitted" "$work/out" && [ "${policy_outcome:-enforced}" = enforced ]; then
            ok "cri: a container-level policy applies to that container (enforced)"
        else
            not_ok "cri: a container-level policy applies to that container (enforced)"
        fi
    elif grep -qF "refusing to run the container unprotected" "$work/out" && [ "${policy_outcome:-fail-closed}" = fail-closed ]; then
        ok "cri: a container-level policy applies to that container (fail-closed)"
    else
        not_ok "cri: a container-level policy applies to that container"
    fi
    expect_success "cri: the pod's sandbox is still ready after its containers' refusals" SANDBOX_READY \
        "$cri" PodSandboxStatus "{\"pod_sandbox_id\": \"$pod\"}"
    expect_success "cri: the running app is untouched by them" exec-ok \
        "$cri" ExecSync "{\"container_id\": \"$app\", \"cmd\": [\"echo\", \"exec-ok\"], \"timeout\": 10}"

    # The default handler's pod is runc's (the control for the handler).
    if runc_pod=$(run_pod runc "$(pod_config by-runc)" 2>"$work/out"); then
        if cerberus_lists >"$work/out" && ! grep -q "$runc_pod" "$work/out"; then
            ok "cri: a pod of the default handler (runc) is not cerberus's"
        else
            not_ok "cri: a pod of the default handler (runc) is not cerberus's"
        fi
        remove_pod "$runc_pod"
    else
        not_ok "cri: a pod of the default handler (runc) runs"
    fi

    if remove_pod "$pod"; then ok "cri: StopPodSandbox + RemovePodSandbox"; else not_ok "cri: StopPodSandbox + RemovePodSandbox"; fi
    if cerberus_lists >"$work/out" && ! grep -q -e "$pod" -e "$app" "$work/out"; then
        ok "cri: cerberus's state dir no longer lists them"
    else
        not_ok "cri: cerberus's state dir no longer lists them"
    fi

    # Pod-level policies: they reach every container of the pod, the sandbox first.
    expect_cri_policy_outcome "cri: a pod with io.cerberus.policy" \
        "{\"io.cerberus.policy\": $(jq -Rn --arg p "$denying_policy" '$p')}" policed-pod
    expect_failure "cri: a pod with a bad policy fails RunPodSandbox with our error" "$bad_policy_error" \
        run_pod cerberus "$(pod_config bad-pod "{\"io.cerberus.policy\": $(jq -Rn --arg p "$bad_policy" '$p')}")"
    ids=$(cerberus_lists | awk 'NR > 1 { print $1 }')
    if [ -z "$ids" ]; then
        ok "cri: nothing left in cerberus's state dir after the refused pods"
    else
        not_ok "cri: nothing left in cerberus's state dir after the refused pods ($ids)"
    fi
    cri_names_test
}

# ExecSync ID SCRIPT: SCRIPT run by sh in container ID, as kubectl exec runs it.
cri_exec() {
    "$cri" ExecSync "$(jq -cn --arg id "$1" --arg script "$2" '{container_id: $id, cmd: ["sh", "-c", $script], timeout: 10}')"
}

# The cgroups left under pod NAME's cgroup parent, in every hierarchy (the parent itself is the kubelet's).
pod_cgroups() {
    local mount
    for mount in $(findmnt -n -t cgroup,cgroup2 -o TARGET); do
        [ -d "$mount$cri_cgroup_parent/pod$1" ] && find "$mount$cri_cgroup_parent/pod$1" -mindepth 1 -type d
    done
    return 0
}

# The DNS gate's registration file of container ID (its cgroup v2 id names it), while it runs.
gate_registration() {
    local layout pid
    layout=$(grep -a -m1 -o '/sys/fs/bpf/cerberus/[0-9a-f]\{12\}' "$prefix/bin/cerberus" | head -1)
    pid=$("$prefix/bin/cerberus" --root "$cri_root/k8s.io" state "$1" | jq -r .pid)
    echo "/run/cerberus-dns/${layout##*/}/containers/$(stat -c %i "$(findmnt -n -t cgroup2 -o TARGET | head -1)$(sed -n 's/^0:://p' "/proc/$pid/cgroup")").json"
}

# An annotation (KEY, default io.cerberus.policy) with a policy allowing HOST only.
names_annotation() { # names_annotation HOST [KEY]
    jq -cn --arg host "$1" --arg key "${2:-io.cerberus.policy}" '{($key): ({allowed_hosts: [$host]} | tojson)}'
}

# A pod of two policed containers, each with host names of its own (one.example, two.example), the first
# in its container annotation, the second in the pod's annotation for it by name, in the one network
# namespace of the pod. The pod's dns_config names a resolver
# (dnsmasq) on the CNI bridge, in containerd's network namespace, which answers both names with
# addresses there, where a listener answers a connect with the address it reached.
cri_names_test() {
    local dir=$work/cri/names config pod one two listener registrations=""
    # The second container's policy is the pod's annotation for it by name, as a Kubernetes pod gives it;
    # the first's its own container annotation, as other CRI clients can.
    config=$(pod_config names "$(names_annotation two.example:80 io.cerberus.policy/two)" |
        jq -c '.dns_config = {servers: ["192.0.2.1"]}')
    if ! pod=$(run_pod cerberus "$config" 2>"$work/out"); then
        not_ok "cri: a pod whose dns_config names the test's resolver"
        return
    fi
    # The bridge exists once a pod is on it; .1 is host-local's gateway, never a pod's; .201 and .202 are
    # past its range.
    nsenter --net="$cri_netns" ip addr add 192.0.2.1/24 dev cerbcri0
    nsenter --net="$cri_netns" ip addr add 192.0.2.201/32 dev cerbcri0
    nsenter --net="$cri_netns" ip addr add 192.0.2.202/32 dev cerbcri0
    start_resolver "$cri_netns" "$dir" 192.0.2.1 '192.0.2.201 one.example\n192.0.2.202 two.example\n'
    nsenter --net="$cri_netns" /usr/bin/python3 -c 'import socket, sys
server = socket.create_server(("0.0.0.0", 80))
open(sys.argv[1], "w").close()
while True:
    connection, _ = server.accept()
    connection.sendall(b"reached %s\n" % connection.getsockname()[0].encode())
    connection.close()' "$dir/listening" >"$dir/listener.log" 2>&1 &
    listener=$!
    started_pids="$started_pids $listener"
    wait_until test -e "$dir/listening"

    if one=$(run_container "$pod" "$config" one 'sleep 300' "$(names_annotation one.example:80)" 2>"$work/out") &&
        two=$(run_container "$pod" "$config" two 'sleep 300' 2>"$work/out"); then
        ok "cri: two containers in the pod, one allowed one.example (its annotation), the other two.example (the pod's io.cerberus.policy/two)"
        expect_success "cri: the pod's dns_config is their resolv.conf" "nameserver 192.0.2.1" cri_exec "$one" 'cat /etc/resolv.conf'
        expect_success "cri: the first resolves its own name" "Address: 192.0.2.201" cri_exec "$one" 'nslookup -type=a one.example'
        expect_success "cri: and connects to it" "reached 192.0.2.201" cri_exec "$one" 'nc -w 2 192.0.2.201 80 </dev/null'
        expect_success "cri: the second resolves its own name" "Address: 192.0.2.202" cri_exec "$two" 'nslookup -type=a two.example'
        expect_success "cri: and connects to it" "reached 192.0.2.202" cri_exec "$two" 'nc -w 2 192.0.2.202 80 </dev/null'
        # Each denial beside its control: the same name or address, from the container that owns it (which has
        # resolved it by now: the address is admitted, for that container). A queries only: the resolver itself,
        # with no upstream, answers REFUSED to AAAA queries for these names.
        expect_success "cri: the first is refused the second's name" REFUSED cri_exec "$one" 'nslookup -type=a two.example'
        expect_success "cri: control: which the second still resolves" "Address: 192.0.2.202" cri_exec "$two" 'nslookup -type=a two.example'
        expect_success "cri: the first is refused the second's address" "Operation not permitted" \
            cri_exec "$one" 'nc -w 2 192.0.2.202 80 </dev/null'
        expect_success "cri: control: which the second still reaches" "reached 192.0.2.202" \
            cri_exec "$two" 'nc -w 2 192.0.2.202 80 </dev/null'
        expect_success "cri: the second is refused the first's name" REFUSED cri_exec "$two" 'nslookup -type=a one.example'
        expect_success "cri: control: which the first still resolves" "Address: 192.0.2.201" cri_exec "$one" 'nslookup -type=a one.example'
        expect_success "cri: the second is refused the first's address" "Operation not permitted" \
            cri_exec "$two" 'nc -w 2 192.0.2.201 80 </dev/null'
        expect_success "cri: control: which the first still reaches" "reached 192.0.2.201" \
            cri_exec "$one" 'nc -w 2 192.0.2.201 80 </dev/null'
        registrations="$(gate_registration "$one") $(gate_registration "$two")"
        expect_success "cri: control: while they run, the DNS gate has both registrations" .json ls $registrations
        if pod_cgroups names >"$work/out" && grep -q "$one" "$work/out" && grep -q "$two" "$work/out"; then
            ok "cri: control: while they run, each has its cgroup"
        else
            not_ok "cri: control: while they run, each has its cgroup"
        fi
    else
        not_ok "cri: two containers in the pod, one allowed one.example (its annotation), the other two.example (the pod's io.cerberus.policy/two)"
    fi
    if remove_pod "$pod"; then ok "cri: the pod with names removed"; else not_ok "cri: the pod with names removed"; fi
    if [ -n "$registrations" ] && ! ls $registrations 2>/dev/null | tee "$work/out" | grep -q .; then
        ok "cri: no registration of them is left in the gate's run dir"
    else
        not_ok "cri: no registration of them is left in the gate's run dir"
    fi
    if [ -z "$(pod_cgroups names | tee "$work/out")" ]; then
        ok "cri: no cgroup of the pod is left"
    else
        not_ok "cri: no cgroup of the pod is left"
    fi
    if cerberus_lists >"$work/out" && ! grep -q -e "$pod" -e "$one" -e "$two" "$work/out"; then
        ok "cri: cerberus's state dir no longer lists them"
    else
        not_ok "cri: cerberus's state dir no longer lists them"
    fi
    stop_started_pid "$listener"
    stop_started_pid "$resolver_pid"
}

# Removes every pod, then (after containerd is stopped) the pods' cgroups.
cri_clean() {
    local pod
    if [ -n "${cri:-}" ] && [ -S "${cri_socket:-}" ]; then
        for pod in $("$cri" ListPodSandbox 2>/dev/null | jq -r '.items[]?.id'); do remove_pod "$pod" 2>/dev/null; done
    fi
}

cri_clean_cgroups() {
    find /sys/fs/cgroup -depth -type d -path "*$cri_cgroup_parent*" -exec rmdir {} + 2>/dev/null
    return 0
}

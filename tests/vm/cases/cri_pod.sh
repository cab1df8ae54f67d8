#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Kubernetes where the kernel enforces: containerd's CRI plugin on a node set up as
# docs/engines/kubernetes.md says (`containerd config default` and the shipped snippet), driven as the
# kubelet drives it by the engine tier's CRI client (tests/engines/cri_client.py). A pod of the cerberus
# handler with io.cerberus.policy: the app's connect, run through ExecSync (kubectl exec), is denied and
# the denial is in its trail; the same ExecSync in a pod without a policy reaches the closed port (the
# control). After the pods are removed, cerberus lists no container and no map or registry entry is left.
# The pods use the node's network (no CNI plugin in the VM), which the policy polices all the same.
# vm-timeout: 400
# vm-cri: yes
. /vm/lib.sh

vm_has_cerberus && [ -x /vm/cri/cri_client.py ] && command -v containerd >/dev/null || exit 0
dir=/tmp/cri
socket=/run/containerd/containerd.sock
policy='{"allowed_hosts": ["192.0.2.1:443"]}'
connect_script='nc -w 1 127.0.0.1 9 </dev/null; echo connect-tried'

cri() { CRI_PROTO_DIR=/vm/cri /usr/bin/python3 /vm/cri/cri_client.py "$socket" "$@"; }

# An image of /rootfs (busybox, cerberus-probe) and the pause program, as `podman save` writes one
# (docs/engines/images.md), imported into the CRI's namespace: make_image TAG ENTRYPOINT_JSON
make_image() {
    local tag="$1" entrypoint="$2" image="$dir/image-$1" diff_id
    mkdir -p "$image/rootfs" && cp -a /rootfs/. "$image/rootfs/" && cp /usr/local/bin/cerberus-pause "$image/rootfs/pause" &&
        tar -C "$image/rootfs" -cf "$image/layer.tar" . || return
    diff_id="sha256:$(sha256sum "$image/layer.tar" | cut -d' ' -f1)"
    jq -n --arg diff "$diff_id" --argjson entrypoint "$entrypoint" '{architecture: "amd64", os: "linux",
        config: {Entrypoint: $entrypoint, Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
        rootfs: {type: "layers", diff_ids: [$diff]}}' >"$image/config.json" &&
        jq -n --arg tag "localhost/cerberus-vm:$tag" '[{Config: "config.json", RepoTags: [$tag], Layers: ["layer.tar"]}]' \
            >"$image/manifest.json" &&
        tar -C "$image" -cf "$image.tar" manifest.json config.json layer.tar &&
        ctr --address "$socket" -n k8s.io image import "$image.tar" >/dev/null
}

# A PodSandboxConfig as the kubelet sends it for a hostNetwork pod (no hostname: the pod has the
# node's UTS namespace): pod_config NAME ANNOTATIONS_JSON
pod_config() {
    jq -cn --arg name "$1" --argjson annotations "$2" '{
        metadata: {name: $name, uid: $name, namespace: "default", attempt: 0},
        log_directory: ("/tmp/cri/logs/" + $name), annotations: $annotations,
        linux: {cgroup_parent: ("/cerberus-cri-vm/pod" + $name),
                security_context: {namespace_options: {network: "NODE", pid: "CONTAINER", ipc: "POD"}}}}'
}

# A pod of the cerberus handler running `sleep 300` as its app: start_pod NAME ANNOTATIONS_JSON.
# Sets $pod and $app.
start_pod() {
    local config
    pod=""
    config="$(pod_config "$1" "$2")" || return
    pod="$(cri RunPodSandbox "$(jq -cn --argjson c "$config" '{config: $c, runtime_handler: "cerberus"}')" |
        jq -r .pod_sandbox_id)" && [ -n "$pod" ] || return 1
    app="$(cri CreateContainer "$(jq -cn --arg pod "$pod" --argjson c "$config" '{pod_sandbox_id: $pod, sandbox_config: $c,
        config: {metadata: {name: "agent", attempt: 0}, image: {image: "localhost/cerberus-vm:app"},
                 command: ["sh", "-c", "sleep 300"], log_path: "agent.log", linux: {}}}')" |
        jq -r .container_id)" && [ -n "$app" ] || return 1
    cri StartContainer "{\"container_id\": \"$app\"}" >/dev/null
}

exec_in_app() {
    cri ExecSync "$(jq -cn --arg id "$app" --arg script "$connect_script" \
        '{container_id: $id, cmd: ["sh", "-c", $script], timeout: 30}')"
}

remove_pod() {
    cri StopPodSandbox "{\"pod_sandbox_id\": \"$1\"}" >/dev/null && cri RemovePodSandbox "{\"pod_sandbox_id\": \"$1\"}" >/dev/null
}

mkdir -p "$dir/logs" /etc
# containerd gives a pod of the node's network the node's resolv.conf and hosts.
[ -e /etc/resolv.conf ] || : >/etc/resolv.conf
[ -e /etc/hosts ] || echo "127.0.0.1 localhost" >/etc/hosts
containerd config default | sed -e 's|disable_apparmor = false|disable_apparmor = true|' \
    -e 's|sandbox_image = .*|sandbox_image = "localhost/cerberus-vm:pause"|' >"$dir/config.toml"
# The VM's init is not systemd: cgroupfs, as the snippet says to set where the kubelet uses it.
sed 's|SystemdCgroup = true|SystemdCgroup = false|' /vm/cri/snippet.toml >>"$dir/config.toml"
containerd --config "$dir/config.toml" >"$dir/containerd.log" 2>&1 &
containerd_pid=$!
tries=0
until cri Version >/dev/null 2>&1; do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || break
    sleep 1
done
vm_expect_contains "containerd with the node set-up answers on the CRI" '"runtime_name": "containerd"' cri Version
images() { make_image pause '["/pause"]' && make_image app null; }
vm_check "the app and sandbox images in the CRI's namespace" images

# The control: a pod of the cerberus handler without a policy; the connect reaches the closed port.
if start_pod plain '{}' 2>"$dir/error"; then
    vm_ok "a pod of the cerberus handler without a policy runs its app"
    vm_expect_contains "without a policy, ExecSync's connect is refused by the closed port (the control)" \
        "Connection refused" exec_in_app
    remove_pod "$pod"
else
    vm_fail "a pod of the cerberus handler without a policy runs its app" "$(cat "$dir/error")"
    [ -z "$pod" ] || remove_pod "$pod"
fi

if start_pod policed "$(jq -cn --arg p "$policy" '{"io.cerberus.policy": $p}')" 2>"$dir/error"; then
    vm_ok "a pod with io.cerberus.policy runs its app (the sandbox under the same policy)"
    vm_expect_contains "with the pod's policy, ExecSync's connect is denied" "Operation not permitted" exec_in_app
    vm_expect_contains "the exec'd shell went on after the denial (only the connect was refused)" connect-tried exec_in_app
    vm_expect_contains "cerberus lists the policed app container" "$app" cerberus --root /run/containerd/cerberus/k8s.io list
    policed_app=$app
    remove_pod "$pod"
    vm_expect_contains "the denial is in the app's trail" '"op":"connect"' cat "/var/log/cerberus/$policed_app.jsonl"
else
    vm_fail "a pod with io.cerberus.policy runs its app (the sandbox under the same policy)" "$(cat "$dir/error")"
    [ -z "$pod" ] || remove_pod "$pod"
fi

vm_expect_output "cerberus lists no container after the pods are removed" "" \
    sh -c 'cerberus --root /run/containerd/cerberus/k8s.io list | tail -n +2'
for map in cerb_policies cerb_net4 cerb_net6 cerb_paths; do
    vm_expect_output "no $map entry left after RemovePodSandbox" 0 \
        sh -c "bpftool map dump pinned $(pin_dir)/$map -j | jq length"
done
vm_check "no registry entry left" sh -c "[ -z \"\$(ls -A $(audit_run_dir)/containers 2>/dev/null)\" ]"
kill "$containerd_pid"
wait "$containerd_pid" 2>/dev/null
exit 0

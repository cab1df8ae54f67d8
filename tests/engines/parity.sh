# SPDX-License-Identifier: Apache-2.0
# The parity tier: every scenario of tests/engines/parity-scenarios.txt runs
# through each engine twice in this run, once with cerberus and once with
# runc; a scenario passes when both print the same (stdout and the exit
# status) and that output holds the scenario's expected text.
# Sourced by run.sh: needs $work, lib.sh, and the engines' wrappers
# ($pm, $c, $d) of the engines that run.

parity_scenarios=$repo/tests/engines/parity-scenarios.txt

# The verbs a scenario uses. $engine and $runtime say which engine and which
# runtime; the engine's CLI is $cli.
#   run [OPTIONS] -- CMD...          a container to its end (removed after)
#   start NAME [OPTIONS] -- CMD...   a detached container
#   inside NAME CMD...               exec in it
#   state NAME                       running, paused or exited
#   pause NAME, unpause NAME
#   engine ARGS...                   the engine's own command line (NAME there is parity-NAME)
#   fetch PORT                       GET http://127.0.0.1:PORT/ where the engine publishes ports
# $image, $volume_dir (holds the file "file") and $runtime_opt are set too.
engine() { "$cli" "$@"; }

split_options() { # sets opts=(...) and cmd=(...) from OPTIONS -- CMD...
    opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    cmd=("$@")
}

# Containers join no network unless the scenario publishes a port or names
# one: Podman's default CNI bridge would change the host's network, and
# Docker's bridge (in dockerd's own network namespace) costs seconds a run.
default_network() {
    case " ${opts[*]} " in *" --pod "* | *" --network "* | *" -p "*) return 0 ;; esac
    opts+=(--network none)
}

run() {
    split_options "$@"
    if [ "$engine" = ctr ]; then
        "$cli" run --rm $runtime_opt "${opts[@]}" "$image" "parity-run-$((++ctr_serial))" "${cmd[@]}"
    else
        default_network
        "$cli" run --rm $runtime_opt "${opts[@]}" "$image" "${cmd[@]}"
    fi
}

# Names a scenario gives are short; engines want more than one character.
container_name() { echo "parity-$1"; }

start() {
    local short=$1 name i
    name=$(container_name "$1")
    shift
    split_options "$@"
    if [ "$engine" = ctr ]; then
        "$cli" run -d $runtime_opt "${opts[@]}" "$image" "$name" "${cmd[@]}" >/dev/null
    else
        default_network
        "$cli" run -d --name "$name" $runtime_opt "${opts[@]}" "$image" "${cmd[@]}" >/dev/null
    fi
    for i in $(seq 50); do
        [ "$(state "$short")" = running ] && return 0
        sleep 0.1
    done
    return 1
}

inside() {
    local name
    name=$(container_name "$1")
    shift
    if [ "$engine" = ctr ]; then
        "$cli" task exec --exec-id "parity-exec-$((++ctr_serial))" "$name" "$@"
    else
        "$cli" exec "$name" "$@"
    fi
}

state() {
    local name
    name=$(container_name "$1")
    if [ "$engine" = ctr ]; then
        "$cli" task ls | awk -v id="$name" '$1 == id { print tolower($3) }'
    else
        "$cli" inspect --format '{{.State.Status}}' "$name"
    fi
}

pause() {
    if [ "$engine" = ctr ]; then "$cli" task pause "$(container_name "$1")"; else "$cli" pause "$(container_name "$1")" >/dev/null; fi
}

unpause() {
    if [ "$engine" = ctr ]; then "$cli" task resume "$(container_name "$1")"; else "$cli" unpause "$(container_name "$1")" >/dev/null; fi
}

fetch() {
    local i
    for i in $(seq 50); do
        nsenter --net="$published_netns" wget -qO- "http://127.0.0.1:$1/" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# Everything a scenario left: containers, pods, volumes (images stay).
parity_clean() {
    local id
    case $engine in
    podman)
        "$cli" rm -af -t 0 >/dev/null 2>&1
        "$cli" pod rm -af >/dev/null 2>&1
        "$cli" volume rm -af >/dev/null 2>&1
        ;;
    docker)
        "$cli" rm -f $("$cli" ps -aq) >/dev/null 2>&1
        "$cli" volume prune -f >/dev/null 2>&1
        ;;
    ctr)
        for id in $("$cli" task ls -q 2>/dev/null); do
            "$cli" task kill -s KILL "$id" >/dev/null 2>&1
            "$cli" task rm -f "$id" >/dev/null 2>&1
        done
        for id in $("$cli" container ls -q 2>/dev/null); do "$cli" container rm "$id" >/dev/null 2>&1; done
        ;;
    esac
}

# parity_run_one SCENARIO RUNTIME OUT: the scenario's stdout and its exit
# status ("exit=N") in OUT, its stderr in OUT.err.
parity_run_one() {
    local scenario=$1 runtime=$2 out=$3 runtime_opt="" ctr_serial=0
    case $engine/$runtime in
    podman/*) export RUNTIME=$runtime ;;
    docker/*) runtime_opt="--runtime $runtime" ;;
    ctr/cerberus) runtime_opt="--runtime io.containerd.runc.cerberus" ;;
    ctr/runc) runtime_opt="--runtime io.containerd.runc.v2" ;;
    esac
    (eval "$scenario") </dev/null >"$out" 2>"$out.err"
    echo "exit=$?" >>"$out"
    unset RUNTIME
    parity_clean
}

# parity_test ENGINE: every scenario that names ENGINE.
parity_test() {
    local engine=$1 cli image name engines expected scenario scenario_started took started=$(date +%s)
    case $engine in
    podman) cli=$pm image=$podman_image ;;
    docker) cli=$d image=$docker_image ;;
    ctr) cli=$c image=$ctr_image ;;
    esac
    parity_clean # what the engine's own tests left
    volume_dir=$work/parity-volume
    mkdir -p "$volume_dir"
    echo from-host >"$volume_dir/file"
    while IFS='|' read -r name engines expected scenario; do
        name=$(echo $name) engines=" $(echo $engines) " expected=$(echo $expected)
        case $name in '' | '#'*) continue ;; esac
        case $engines in *" $engine "*) ;; *) continue ;; esac
        scenario_started=$(date +%s%N)
        parity_run_one "$scenario" runc "$work/parity.runc"
        parity_run_one "$scenario" cerberus "$work/parity.cerberus"
        took=$((($(date +%s%N) - scenario_started) / 1000000))
        : >"$work/out" # not_ok shows no earlier output: the diff says it all
        if ! cmp -s "$work/parity.runc" "$work/parity.cerberus"; then
            not_ok "parity $engine: $name (cerberus differs from runc)"
            diff "$work/parity.runc" "$work/parity.cerberus" | sed 's/^/      | /'
            sed 's/^/      | runc stderr: /' "$work/parity.runc.err" | head -n 4
            sed 's/^/      | cerberus stderr: /' "$work/parity.cerberus.err" | head -n 4
        elif [ -n "$expected" ] && ! grep -qF -- "$expected" "$work/parity.cerberus"; then
            not_ok "parity $engine: $name (both lack \"$expected\")"
            sed 's/^/      | /' "$work/parity.cerberus" | tail -n 4
            sed 's/^/      | stderr: /' "$work/parity.cerberus.err" | head -n 4
        else
            ok "parity $engine: $name ($took ms)"
        fi
    done <"$parity_scenarios"
    echo "parity $engine: $(($(date +%s) - started)) s"
}

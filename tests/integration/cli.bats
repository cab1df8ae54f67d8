#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The command line as a user meets it: --help everywhere, the same failure
# for the same missing thing, and `make install`/`uninstall` leaving nothing.

load helpers

setup() {
    ROOT="$BATS_TEST_TMPDIR/state"
    mkdir -p "$ROOT"
}

# Every command listed by `cerberus --help`.
listed_commands() {
    "$CERBERUS" --help | awk '/^commands:/ { listing = 1; next } listing && NF == 0 { exit } listing { print $1 }'
}

@test "every command answers --help and -h with its usage, exit 0" {
    commands=$(listed_commands)
    [ "$(echo "$commands" | wc -w)" -ge 15 ]
    for command in $commands; do
        for flag in --help -h; do
            run "$CERBERUS" --root "$ROOT" "$command" "$flag"
            echo "$command $flag: status=$status $output"
            [ "$status" -eq 0 ]
            [[ "$output" == "usage: cerberus $command"* ]]
        done
    done
    # After the container id, -h belongs to the command run in the container.
    run "$CERBERUS" --root "$ROOT" exec nosuch ls -h
    [ "$status" -eq 255 ]
    [[ "$output" == *"does not exist"* ]]
}

@test "events --denials fails the same with and without --follow for an unknown container" {
    run cerb --audit-dir "$BATS_TEST_TMPDIR/audit" events --denials nosuch
    [ "$status" -eq 1 ]
    without_follow=$output
    [[ "$without_follow" == *"audit trail"*"no such file or directory"* ]]
    run timeout 10 "$CERBERUS" --root "$ROOT" --audit-dir "$BATS_TEST_TMPDIR/audit" events --denials --follow nosuch
    [ "$status" -eq 1 ]
    [ "$output" = "$without_follow" ]
}

@test "make uninstall removes everything make install put there" {
    repo=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
    build=$(dirname "$CERBERUS")
    dest="$BATS_TEST_TMPDIR/dest"
    make -s -C "$repo" -o build install BUILD="$build" DESTDIR="$dest"
    [ -x "$dest/usr/local/bin/cerberus" ]
    [ -x "$dest/usr/local/bin/containerd-shim-runc-cerberus" ]
    [ -L "$dest/usr/local/libexec/cerberus/runc" ]
    make -s -C "$repo" uninstall BUILD="$build" DESTDIR="$dest"
    # What is left: only the directories a Debian system has anyway.
    left=$(cd "$dest" && find . -mindepth 1 | sort | tr '\n' ' ')
    echo "left: $left"
    [ "$left" = "./etc ./usr ./usr/local ./usr/local/bin ./usr/local/share " ]
}

# SPDX-License-Identifier: Apache-2.0
# What the tests of asks share (broker_ask.bats, dns_ask.sh): $CERBERUS and the container's $ID.

# wait_ask [NOT-ID]: the id of this container's pending ask (other than NOT-ID), once there is one (10 s).
wait_ask() {
    local id
    for _ in $(seq 100); do
        id=$("$CERBERUS" ask list --format json |
            jq -r --arg c "$ID" --arg not "${1:-}" 'map(select(.container == $c and .id != $not)) | .[0].id // empty')
        [ -n "$id" ] && { echo "$id"; return 0; }
        sleep 0.1
    done
    return 1
}

# pending_asks: how many asks of this container are pending.
pending_asks() {
    "$CERBERUS" ask list --format json | jq --arg c "$ID" 'map(select(.container == $c)) | length'
}

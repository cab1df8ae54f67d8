// SPDX-License-Identifier: Apache-2.0
// The host-wide audit collector (`cerberus audit-collector`, started by
// audit::ensure_collector). Holds run_dir/collector.lock, so exactly one
// runs; reads the pinned ring buffer, writes each event to its container's
// trail, tells the BPF programs what it has read (cerb_event_acct, so a
// container's share of the buffer frees up) and writes lost counts. Answers
// "finish <cgroup id>" on collector.sock for delete. Exits once no policed
// container is registered.
#pragma once

namespace cerberus::audit {

// Runs until no container is registered; returns the process exit status
// (0 also when another collector already runs).
int run_collector();

} // namespace cerberus::audit

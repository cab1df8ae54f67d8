// SPDX-License-Identifier: Apache-2.0
// The DNS gate (`cerberus dns-gate`, started by dns_gate.hpp's clients): one
// process per host and one event loop for every container it serves. For
// each registered container it holds UDP and TCP sockets on 127.53.0.1 and
// [::1] in the container's network namespace, on a port of the container's
// own (dns_gate_ports.hpp: containers sharing a namespace each have theirs),
// where the socket programs steer every DNS query of the container; it
// answers names the policy does not allow with REFUSED, forwards the others
// to the nameservers of the container's resolv.conf (as read at create) and
// writes the addresses of the answer to CERB_MAP_NAMES before the answer goes
// back. It never blocks on a nameserver: queries wait in a table with
// deadlines. Exits once no container is registered.
#pragma once

namespace cerberus::dns {

// Runs until no container is registered; returns the process exit status
// (0 also when another gate already runs).
int run_gate();

} // namespace cerberus::dns

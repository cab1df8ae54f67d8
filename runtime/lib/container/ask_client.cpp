// SPDX-License-Identifier: Apache-2.0
#include "container/ask_client.hpp"

#include "base/daemon.hpp"
#include "base/error.hpp"
#include "broker/broker_registry.hpp"
#include "dns/dns_gate_registry.hpp"

#include <algorithm>
#include <cctype>

namespace cerberus::container {
namespace {

// An id fits the holders' request (128 bytes) and says nothing else: letters, digits and "-".
void check_id(const std::string& id, const char* what)
{
    bool plain = !id.empty() && id.size() <= 32 &&
                 std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isalnum(c) || c == '-'; });
    if (!plain)
        throw Error("\"" + id + "\" is not " + what + " (see cerberus ask list, cerberus ask grants)", EINVAL);
}

daemon::Daemon holder_of(const audit::AskSubject& subject)
{
    return subject.is_host() ? dns::gate_daemon() : broker::broker_daemon();
}

// The holder's "ok: ..." words; throws with its "error: ..." ones.
std::string send(const daemon::Daemon& holder, const std::string& request)
{
    auto answer = daemon::ask_running(holder, request, 5);
    if (!answer)
        throw Error("no " + holder.what.substr(4) +
                        " runs (nothing it asked is pending, nothing it granted is in use)",
                    ESRCH);
    if (answer->starts_with("ok: "))
        return answer->substr(4);
    throw Error(answer->starts_with("error: ") ? answer->substr(7) : *answer, EINVAL);
}

} // namespace

std::string answer_pending_ask(const std::string& id, const audit::AskAnswer& answer)
{
    check_id(id, "an ask id");
    std::string request = "ask " + id + " " + audit::ask_answer_text(answer);
    if (auto ask = audit::read_pending_ask(id))
        return send(holder_of(ask->subject), request);
    // Answered already, or never asked: the holder that remembers it says which.
    for (const auto& holder : {broker::broker_daemon(), dns::gate_daemon()}) {
        if (!daemon::listening(holder))
            continue;
        try {
            return send(holder, request);
        } catch (const Error& e) {
            if (!std::string(e.what()).starts_with("no pending ask"))
                throw;
        }
    }
    throw Error("no pending ask " + id + " (see cerberus ask list)", EINVAL);
}

std::string revoke_grant(const std::string& grant_id)
{
    check_id(grant_id, "a grant id");
    auto grants = audit::read_grants(audit::grants_path());
    auto it = std::find_if(grants.begin(), grants.end(), [&](const audit::Grant& g) { return g.id == grant_id; });
    if (it == grants.end())
        throw Error("no grant " + grant_id + " (see cerberus ask grants)", EINVAL);
    return send(holder_of(it->subject), "revoke " + grant_id);
}

} // namespace cerberus::container

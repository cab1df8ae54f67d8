// SPDX-License-Identifier: Apache-2.0
#include "broker/ask_client.hpp"

#include "base/daemon.hpp"
#include "base/error.hpp"
#include "broker/broker_registry.hpp"

#include <algorithm>
#include <cctype>

namespace cerberus::broker {
namespace {

// An id fits the broker's request (128 bytes) and says nothing else: letters, digits and "-".
void check_id(const std::string& id, const char* what)
{
    bool plain = !id.empty() && id.size() <= 32 &&
                 std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isalnum(c) || c == '-'; });
    if (!plain)
        throw Error("\"" + id + "\" is not " + what + " (see cerberus ask list, cerberus ask grants)", EINVAL);
}

std::string send(const std::string& request)
{
    auto answer = daemon::ask_running(broker_daemon(), request, 5);
    if (!answer)
        throw Error("no command broker runs (nothing is asked, nothing granted is in use)", ESRCH);
    if (answer->starts_with("ok: "))
        return answer->substr(4);
    throw Error(answer->starts_with("error: ") ? answer->substr(7) : *answer, EINVAL);
}

} // namespace

std::string answer_pending_ask(const std::string& id, const AskAnswer& answer)
{
    check_id(id, "an ask id");
    return send("ask " + id + " " + ask_answer_text(answer));
}

std::string revoke_grant(const std::string& grant_id)
{
    check_id(grant_id, "a grant id");
    return send("revoke " + grant_id);
}

} // namespace cerberus::broker

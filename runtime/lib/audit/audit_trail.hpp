// SPDX-License-Identifier: Apache-2.0
// Reading a container's audit trail (<audit dir>/<id>.jsonl): for `cerberus
// events --denials` (once, or following it as the collector appends), for
// learn mode and policy check (its records), and for the dashboard (many
// trails followed at once).
#pragma once

#include "base/fd.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace cerberus::audit {

enum class TrailFormat { json, text };

// Reads what was appended to a trail since the last call and hands over the
// complete lines; a line the collector is still writing waits for its newline.
class TrailTail {
public:
    explicit TrailTail(std::string path) : path_(std::move(path)) {}

    // False while the trail does not exist.
    bool read_new(const std::function<void(const std::string&)>& emit);

    const std::string& path() const { return path_; }

private:
    std::string path_;
    UniqueFd fd_;
    std::string partial_;
};

// Appends records to a trail, for the daemons that write their own records
// (the DNS gate's dns, the command broker's command): opened on the first
// record, each record one write of one line. A record it cannot write is
// logged and lost, never thrown.
class TrailWriter {
public:
    explicit TrailWriter(std::string path) : path_(std::move(path)) {}
    void append(const nlohmann::ordered_json& record) noexcept;

private:
    std::string path_;
    UniqueFd fd_;
};

// Emits each complete line of the trail, converted to the format. Throws
// ENOENT when the container has no trail.
void print_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit);

// Prints the trail, then each line as it is appended (checked every 100 ms),
// for as long as keep_following() holds; then what is left. The trail may
// appear after this starts.
void follow_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit,
                  const std::function<bool()>& keep_following);

// Every record of the trail, parsed; a line that is not JSON is left out.
// Throws ENOENT when there is no trail.
std::vector<nlohmann::json> read_records(const std::string& path);

} // namespace cerberus::audit

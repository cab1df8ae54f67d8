// SPDX-License-Identifier: Apache-2.0
// Reading a container's audit trail (<audit dir>/<id>.jsonl) for
// `cerberus events --denials`: once, or following it as the collector appends.
#pragma once

#include <functional>
#include <string>

namespace cerberus::audit {

enum class TrailFormat { json, text };

// Emits each complete line of the trail, converted to the format. Throws
// ENOENT when the container has no trail.
void print_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit);

// Prints the trail, then each line as it is appended (checked every 100 ms),
// for as long as keep_following() holds; then what is left. The trail may
// appear after this starts.
void follow_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit,
                  const std::function<bool()>& keep_following);

} // namespace cerberus::audit

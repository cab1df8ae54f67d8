// SPDX-License-Identifier: Apache-2.0
// Logging set-up: text or JSON lines (the logrus shape containerd's shim and
// podman read: {"level":"error","msg":"...","time":"..."}) to --log or stderr.
#pragma once

#include <string>

namespace cerberus::log {

enum class Format { text, json };

// path empty: stderr. debug: also log debug messages.
void init(const std::string& path, Format format, bool debug);

// Nothing is logged from here on: for a process about to close every
// inherited fd, the log's included.
void silence();

} // namespace cerberus::log

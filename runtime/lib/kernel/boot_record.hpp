// SPDX-License-Identifier: Apache-2.0
// What a probe of the kernel found, kept under /run/cerberus-enforcement for
// the rest of the boot: whether the kernel loads a set of programs is the same
// for every runtime until the next boot, and finding out costs a load.
#pragma once

#include <optional>
#include <string>

namespace cerberus::kernel {

// The record's body, when the record was written during this boot.
std::optional<std::string> read_boot_record(const std::string& path);

// Writes body as this boot's record; a failure only costs the next runtime the probe.
void write_boot_record(const std::string& path, const std::string& body);

} // namespace cerberus::kernel

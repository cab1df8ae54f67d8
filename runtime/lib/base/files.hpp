// SPDX-License-Identifier: Apache-2.0
// Small file helpers whose errors name the path.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cerberus::files {

std::string read_file(const std::string& path);
// Same, but nullopt when the file does not exist.
std::optional<std::string> read_file_if_exists(const std::string& path);
void write_file(const std::string& path, const std::string& content);

// Replaces path atomically: readers see the old or the new content, never a
// mix, even while other processes write the same path.
void write_file_atomic(const std::string& path, const std::string& content, unsigned mode = 0600);

bool exists(const std::string& path);

// A host-side file the runtime's daemons trust (credentials, a tool's policy, their configuration): its text,
// or nullopt when there is none; throws unless it is a regular file of root's that no one else may write
// (what: "a credentials file", in the message).
std::optional<std::string> read_host_file(const std::string& path, const std::string& what);

struct DirEntry {
    std::string name;
    unsigned char type; // DT_DIR, DT_REG...; DT_UNKNOWN where the file system does not say
};

// A directory's entries but "." and "..", in no order; none when the
// directory does not exist.
std::vector<DirEntry> list_dir(const std::string& path);
// Same for an open directory, which is left as it was; where names it in errors.
std::vector<DirEntry> list_dir(int dir_fd, const std::string& where);

// mkdir -p.
void make_dirs(const std::string& path, unsigned mode = 0755);

} // namespace cerberus::files

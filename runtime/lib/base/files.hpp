// Small file helpers whose errors name the path.
#pragma once

#include <optional>
#include <string>

namespace cerberus::files {

std::string read_file(const std::string& path);
// Same, but nullopt when the file does not exist.
std::optional<std::string> read_file_if_exists(const std::string& path);
void write_file(const std::string& path, const std::string& content);

// Replaces path atomically: readers see the old or the new content, never a mix.
void write_file_atomic(const std::string& path, const std::string& content, unsigned mode = 0600);

bool exists(const std::string& path);

// mkdir -p.
void make_dirs(const std::string& path, unsigned mode = 0755);

} // namespace cerberus::files

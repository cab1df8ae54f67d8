// SPDX-License-Identifier: Apache-2.0
// Licences: Apache-2.0 for the runtime (LICENSE), GPL-2.0 for the BPF programs
// (bpf/LICENSE; the kernel gives GPL-compatible programs the helpers they
// call). Every source file says which in an SPDX line among its first three:
// the source tree is scanned, so a file without one fails the unit tier.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

bool starts_with_shebang(const fs::path& file)
{
    std::ifstream in(file);
    char head[2] = {};
    in.read(head, 2);
    return head[0] == '#' && head[1] == '!';
}

// C, C++, headers, shell scripts (by extension or shebang), awk, Go, CMake and the Makefile.
bool is_source(const fs::path& file)
{
    static const std::set<std::string> extensions = {".c", ".cpp", ".h", ".hpp", ".go", ".sh",
                                                     ".bash", ".bats", ".awk", ".cmake"};
    std::string name = file.filename().string();
    return extensions.count(file.extension().string()) || name == "CMakeLists.txt" || name == "Makefile" ||
           ((fs::status(file).permissions() & fs::perms::owner_exec) != fs::perms::none && starts_with_shebang(file));
}

// The identifier a file must carry: its folder's licence.
std::string expected_license(const fs::path& relative)
{
    if (*relative.begin() != "bpf")
        return "Apache-2.0";
    // The headers shared with the runtime are under both.
    bool shared = relative.filename() == "cerberus_policy.h" || relative.filename() == "cerberus_calls.h";
    return shared ? "GPL-2.0-only OR Apache-2.0" : "GPL-2.0-only";
}

// "" when one of the first three lines is "... SPDX-License-Identifier: <expected> ...".
std::string license_problem(const fs::path& file, const std::string& expected)
{
    std::ifstream in(file);
    std::string line;
    for (int n = 0; n < 3 && std::getline(in, line); ++n) {
        size_t at = line.find("SPDX-License-Identifier: ");
        if (at == std::string::npos)
            continue;
        std::string id = line.substr(at + 25);
        id = id.substr(0, id.find(" */"));
        return id == expected ? "" : "SPDX-License-Identifier is \"" + id + "\", expected \"" + expected + "\"";
    }
    return "no SPDX-License-Identifier line among the first three (expected " + expected + ")";
}

// Every source file below root but .git, the build directories and node_modules.
std::vector<std::string> scan(const fs::path& root, size_t& checked)
{
    std::vector<std::string> problems;
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
        fs::path relative = fs::relative(it->path(), root);
        std::string top = relative.begin()->string();
        // node_modules: the browser tier's npm packages, under their own licences.
        if (it->is_directory() &&
            (top == ".git" || top.rfind("build", 0) == 0 || it->path().filename() == "node_modules")) {
            it.disable_recursion_pending();
            continue;
        }
        if (!it->is_regular_file() || !is_source(it->path()))
            continue;
        ++checked;
        if (std::string problem = license_problem(it->path(), expected_license(relative)); !problem.empty())
            problems.push_back(relative.string() + ": " + problem);
    }
    std::sort(problems.begin(), problems.end());
    return problems;
}

bool file_contains(const fs::path& file, const std::string& text)
{
    std::ifstream in(file);
    std::string content((std::istreambuf_iterator<char>(in)), {});
    return content.find(text) != std::string::npos;
}

} // namespace

TEST_CASE("license: the licence texts are where the SPDX lines point")
{
    const fs::path root = CERBERUS_SOURCE_DIR;
    CHECK(file_contains(root / "LICENSE", "Apache License\n                           Version 2.0, January 2004"));
    CHECK(file_contains(root / "bpf/LICENSE", "GNU GENERAL PUBLIC LICENSE\n                       Version 2, June 1991"));
}

TEST_CASE("license: every source file carries its folder's SPDX identifier")
{
    size_t checked = 0;
    std::vector<std::string> problems = scan(CERBERUS_SOURCE_DIR, checked);
    CHECK(checked > 200); // the scan found the tree
    for (const auto& problem : problems)
        ADD_FAIL_CHECK_AT(__FILE__, __LINE__, problem);
    CHECK(problems.empty());
}

TEST_CASE("license: the check fails a file without its identifier")
{
    char pattern[] = "/tmp/cerberus-license-XXXXXX";
    REQUIRE(::mkdtemp(pattern));
    fs::path root = pattern;
    fs::create_directories(root / "runtime" / "lib");
    fs::create_directories(root / "bpf");
    fs::create_directories(root / "build" / "x");
    std::ofstream(root / "runtime/lib/good.cpp") << "// SPDX-License-Identifier: Apache-2.0\n";
    std::ofstream(root / "runtime/lib/bare.hpp") << "#pragma once\n";
    std::ofstream(root / "bpf/prog.bpf.c") << "// SPDX-License-Identifier: Apache-2.0\n";
    std::ofstream(root / "bpf/cerberus_policy.h") << "/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */\n";
    std::ofstream(root / "tool") << "#!/bin/sh\necho\n";
    fs::permissions(root / "tool", fs::perms::owner_all);
    std::ofstream(root / "notes.txt") << "not a source file\n";
    std::ofstream(root / "build/x/generated.c") << "int x;\n"; // build output is not scanned
    size_t checked = 0;
    std::vector<std::string> problems = scan(root, checked);
    fs::remove_all(root);
    CHECK(checked == 5);
    CHECK(problems == std::vector<std::string>{
                          "bpf/prog.bpf.c: SPDX-License-Identifier is \"Apache-2.0\", expected \"GPL-2.0-only\"",
                          "runtime/lib/bare.hpp: no SPDX-License-Identifier line among the first three (expected "
                          "Apache-2.0)",
                          "tool: no SPDX-License-Identifier line among the first three (expected Apache-2.0)",
                      });
}

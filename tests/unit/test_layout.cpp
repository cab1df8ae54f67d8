// SPDX-License-Identifier: Apache-2.0
// The library's floor plan (docs/architecture.md): every file of runtime/lib sits in a
// concern folder, every include of a library header names its folder, and no include
// climbs against the dependency order. The source tree itself is scanned, so a climbing
// include fails the unit tier.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// A folder may include itself and folders of a lower rank. rootfs, cgroup and seccomp
// are siblings; process sits above them because the init applies all three in the child.
const std::map<std::string, int> rank_of_folder = {
    {"base", 0},   {"oci", 1},   {"rootfs", 2}, {"cgroup", 2},    {"seccomp", 2}, {"kernel", 2},
    {"process", 3}, {"policy", 4}, {"audit", 4}, {"container", 5},
};
constexpr int cli_rank = 6;

struct Scan {
    size_t files = 0;
    std::vector<std::string> violations;
};

bool is_source(const fs::path& p)
{
    static const std::set<std::string> extensions = {".c", ".cpp", ".h", ".hpp"};
    return extensions.count(p.extension().string()) != 0;
}

// Checks one file's includes against the rank of the folder it sits in. The cli's
// own headers sit beside it; a library header is always named with its folder.
void check_includes(const fs::path& file, const std::string& shown, const std::string& folder, int rank,
                    const std::set<std::string>& library_headers, Scan& scan)
{
    static const std::regex include(R"(^\s*#\s*include\s*(["<])([^">]+)[">])");
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include))
            continue;
        std::string name = m[2];
        size_t slash = name.find('/');
        auto target = rank_of_folder.find(name.substr(0, slash));
        if (slash != std::string::npos && target != rank_of_folder.end()) {
            if (target->first != folder && target->second >= rank)
                scan.violations.push_back(shown + " includes \"" + name + "\": " + folder + " may not include " +
                                          target->first);
        } else if (m[1] == "\"" && library_headers.count(name) &&
                   !(folder == "cli" && fs::exists(file.parent_path() / name))) {
            scan.violations.push_back(shown + " includes \"" + name + "\": name its folder");
        }
    }
}

// Scans root/runtime/lib (one folder per concern) and root/runtime/cli (above them all).
Scan scan_layout(const fs::path& root)
{
    Scan scan;
    const fs::path lib = root / "runtime/lib";
    std::set<std::string> library_headers;
    std::vector<std::pair<fs::path, std::string>> sources; // a file and its folder
    for (const auto& entry : fs::recursive_directory_iterator(lib)) {
        fs::path relative = fs::relative(entry.path(), lib);
        std::string folder = relative.begin()->string();
        if (entry.is_directory() && relative == folder && !rank_of_folder.count(folder))
            scan.violations.push_back("runtime/lib/" + folder + "/: a folder the dependency order does not place");
        if (!entry.is_regular_file() || !is_source(entry.path()))
            continue;
        library_headers.insert(entry.path().filename().string());
        if (relative == folder)
            scan.violations.push_back("runtime/lib/" + folder + ": outside a concern folder");
        else if (rank_of_folder.count(folder))
            sources.emplace_back(entry.path(), folder);
    }
    for (const auto& entry : fs::recursive_directory_iterator(root / "runtime/cli"))
        if (entry.is_regular_file() && is_source(entry.path()))
            sources.emplace_back(entry.path(), "cli");
    for (const auto& [file, folder] : sources) {
        int rank = folder == "cli" ? cli_rank : rank_of_folder.at(folder);
        check_includes(file, fs::relative(file, root).string(), folder, rank, library_headers, scan);
        ++scan.files;
    }
    return scan;
}

struct TempTree {
    fs::path root;
    TempTree()
    {
        char pattern[] = "/tmp/cerberus-layout-test.XXXXXX";
        REQUIRE(mkdtemp(pattern));
        root = pattern;
    }
    ~TempTree() { fs::remove_all(root); }
    void write(const std::string& path, const std::string& text) const
    {
        fs::create_directories((root / path).parent_path());
        std::ofstream(root / path) << text;
    }
};

} // namespace

TEST_CASE("layout: every runtime/lib file in a concern folder, no include against the dependency order")
{
    Scan scan = scan_layout(CERBERUS_SOURCE_DIR);
    CHECK(scan.files > 100); // the scan found the tree (library and cli)
    for (const auto& v : scan.violations)
        FAIL_CHECK(v);
}

TEST_CASE("layout: the check names each climbing include, file outside a folder and unplaced folder")
{
    TempTree tree;
    tree.write("runtime/lib/base/error.hpp", "#include <string>\n");
    tree.write("runtime/lib/cgroup/cgroup.hpp", "#include \"base/error.hpp\"\n");
    tree.write("runtime/lib/policy/policy.cpp", "#include \"cgroup/cgroup.hpp\"\n#include \"cerberus_policy.h\"\n");
    tree.write("runtime/lib/process/init.cpp", "#include \"cgroup/cgroup.hpp\"\n#include \"process/init.hpp\"\n");
    tree.write("runtime/cli/main.cpp", "#include \"policy/policy.hpp\"\n#include \"options.hpp\"\n");
    tree.write("runtime/cli/options.hpp", "#include \"base/error.hpp\"\n");

    SUBCASE("includes that follow the order pass")
    {
        Scan scan = scan_layout(tree.root);
        CHECK(scan.files == 6);
        CHECK(scan.violations.empty());
    }
    SUBCASE("an include of a higher folder")
    {
        tree.write("runtime/lib/base/error.cpp", "#include \"base/error.hpp\"\n#include \"policy/policy.hpp\"\n");
        CHECK(scan_layout(tree.root).violations ==
              std::vector<std::string>{"runtime/lib/base/error.cpp includes \"policy/policy.hpp\": "
                                       "base may not include policy"});
    }
    SUBCASE("an include of a sibling folder")
    {
        tree.write("runtime/lib/seccomp/seccomp.cpp", "  #  include <cgroup/cgroup.hpp>\n");
        CHECK(scan_layout(tree.root).violations ==
              std::vector<std::string>{"runtime/lib/seccomp/seccomp.cpp includes \"cgroup/cgroup.hpp\": "
                                       "seccomp may not include cgroup"});
    }
    SUBCASE("a library header without its folder, even beside it")
    {
        tree.write("runtime/cli/run.cpp", "#include \"error.hpp\"\n");
        tree.write("runtime/lib/cgroup/cgroup.cpp", "#include \"cgroup.hpp\"\n");
        auto violations = scan_layout(tree.root).violations;
        std::sort(violations.begin(), violations.end());
        CHECK(violations == std::vector<std::string>{"runtime/cli/run.cpp includes \"error.hpp\": name its folder",
                                                     "runtime/lib/cgroup/cgroup.cpp includes \"cgroup.hpp\": "
                                                     "name its folder"});
    }
    SUBCASE("a file outside a folder, and a folder the order does not place")
    {
        tree.write("runtime/lib/flat.cpp", "");
        tree.write("runtime/lib/misc/helper.cpp", "#include \"policy/policy.hpp\"\n");
        auto violations = scan_layout(tree.root).violations;
        std::sort(violations.begin(), violations.end());
        CHECK(violations == std::vector<std::string>{"runtime/lib/flat.cpp: outside a concern folder",
                                                     "runtime/lib/misc/: a folder the dependency order does not place"});
    }
}

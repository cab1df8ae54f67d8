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
#include <optional>
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
    {"process", 3}, {"policy", 4}, {"audit", 4}, {"egress", 5}, {"broker", 5}, {"dns", 6}, {"container", 7},
};
// The entry points over the library, ranked above it all and beside each other: the
// command line, the OCI hook (a thin entry point over policy/ and audit/) and the
// dashboard's HTTP server and page (its data is audit/dashboard_hub).
const std::map<std::string, std::string> entry_points = {
    {"runtime/cli", "cli"}, {"oci-hooks", "oci-hooks"}, {"runtime/dashboard", "dashboard"}, {"runtime/shim", "shim"}};
constexpr int entry_point_rank = 8;
// The one include between entry points: `cerberus dashboard` starts the dashboard's server.
const std::set<std::pair<std::string, std::string>> entry_point_includes = {{"cli", "dashboard"}};

// The rank of a folder an include names first ("policy" of "policy/policy.hpp").
std::optional<int> rank_of(const std::string& folder)
{
    if (auto it = rank_of_folder.find(folder); it != rank_of_folder.end())
        return it->second;
    for (const auto& [dir, name] : entry_points)
        if (name == folder)
            return entry_point_rank;
    return std::nullopt;
}

struct Scan {
    size_t files = 0;
    std::vector<std::string> violations;
};

bool is_source(const fs::path& p)
{
    static const std::set<std::string> extensions = {".c", ".cpp", ".h", ".hpp"};
    return extensions.count(p.extension().string()) != 0;
}

// Checks one file's includes against the rank of the folder it sits in. An entry
// point's own headers sit beside it; a library header is always named with its folder.
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
        std::string target = name.substr(0, slash);
        auto target_rank = rank_of(target);
        if (slash != std::string::npos && target_rank) {
            if (target != folder && *target_rank >= rank && !entry_point_includes.count({folder, target}))
                scan.violations.push_back(shown + " includes \"" + name + "\": " + folder + " may not include " +
                                          target);
        } else if (m[1] == "\"" && library_headers.count(name) &&
                   !(rank == entry_point_rank && fs::exists(file.parent_path() / name))) {
            scan.violations.push_back(shown + " includes \"" + name + "\": name its folder");
        }
    }
}

// Scans root/runtime/lib (one folder per concern) and the entry points (above them all).
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
    for (const auto& [dir, name] : entry_points) {
        if (!fs::exists(root / dir))
            continue;
        for (const auto& entry : fs::recursive_directory_iterator(root / dir))
            if (entry.is_regular_file() && is_source(entry.path()))
                sources.emplace_back(entry.path(), name);
    }
    for (const auto& [file, folder] : sources) {
        int rank = *rank_of(folder);
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
    tree.write("oci-hooks/main.cpp", "#include \"policy/policy.hpp\"\n#include \"hook_stages.hpp\"\n");
    tree.write("oci-hooks/hook_stages.hpp", "#include \"base/error.hpp\"\n");

    SUBCASE("includes that follow the order pass")
    {
        Scan scan = scan_layout(tree.root);
        CHECK(scan.files == 8);
        CHECK(scan.violations.empty());
    }
    SUBCASE("an include of a higher folder")
    {
        tree.write("runtime/lib/base/error.cpp", "#include \"base/error.hpp\"\n#include \"policy/policy.hpp\"\n");
        CHECK(scan_layout(tree.root).violations ==
              std::vector<std::string>{"runtime/lib/base/error.cpp includes \"policy/policy.hpp\": "
                                       "base may not include policy"});
    }
    SUBCASE("the dashboard beside the cli may include the library; only the cli may include it, and it not the cli")
    {
        tree.write("runtime/dashboard/server.cpp", "#include \"container/state.hpp\"\n#include \"dashboard/server.hpp\"\n");
        CHECK(scan_layout(tree.root).violations.empty());
        tree.write("runtime/cli/cmd_dashboard.cpp", "#include \"dashboard/server.hpp\"\n");
        CHECK(scan_layout(tree.root).violations.empty());
        tree.write("runtime/lib/audit/hub.cpp", "#include \"dashboard/server.hpp\"\n");
        tree.write("oci-hooks/hook.cpp", "#include \"dashboard/server.hpp\"\n");
        tree.write("runtime/dashboard/cli_use.cpp", "#include \"cli/options.hpp\"\n");
        auto violations = scan_layout(tree.root).violations;
        std::sort(violations.begin(), violations.end());
        CHECK(violations == std::vector<std::string>{
                                "oci-hooks/hook.cpp includes \"dashboard/server.hpp\": oci-hooks may not include dashboard",
                                "runtime/dashboard/cli_use.cpp includes \"cli/options.hpp\": dashboard may not include cli",
                                "runtime/lib/audit/hub.cpp includes \"dashboard/server.hpp\": audit may not include dashboard"});
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
        tree.write("oci-hooks/stage.cpp", "#include \"error.hpp\"\n");
        auto violations = scan_layout(tree.root).violations;
        std::sort(violations.begin(), violations.end());
        CHECK(violations == std::vector<std::string>{"oci-hooks/stage.cpp includes \"error.hpp\": name its folder",
                                                     "runtime/cli/run.cpp includes \"error.hpp\": name its folder",
                                                     "runtime/lib/cgroup/cgroup.cpp includes \"cgroup.hpp\": "
                                                     "name its folder"});
    }
    SUBCASE("the library including an entry point")
    {
        tree.write("runtime/lib/policy/policy.hpp", "#include \"oci-hooks/hook_stages.hpp\"\n");
        tree.write("runtime/lib/audit/audit.cpp", "#include \"cli/options.hpp\"\n");
        auto violations = scan_layout(tree.root).violations;
        std::sort(violations.begin(), violations.end());
        CHECK(violations == std::vector<std::string>{"runtime/lib/audit/audit.cpp includes \"cli/options.hpp\": "
                                                     "audit may not include cli",
                                                     "runtime/lib/policy/policy.hpp includes "
                                                     "\"oci-hooks/hook_stages.hpp\": policy may not include oci-hooks"});
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

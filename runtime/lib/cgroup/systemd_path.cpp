// SPDX-License-Identifier: Apache-2.0
#include "cgroup/systemd_path.hpp"

#include "base/error.hpp"

#include <algorithm>

namespace cerberus::cgroups::systemd {

namespace {

constexpr std::string_view slice_suffix = ".slice";
constexpr std::string_view scope_suffix = ".scope";
constexpr size_t unit_name_max = 255; // systemd's UNIT_NAME_MAX less the terminating NUL

bool ends_with(const std::string& text, std::string_view suffix)
{
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The characters systemd accepts in a unit name (besides '@' of templates, which
// a transient scope cannot be).
bool unit_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ':' || c == '-' ||
           c == '_' || c == '.' || c == '\\';
}

void check_unit_name(const std::string& unit, const std::string& what)
{
    auto bad = std::find_if_not(unit.begin(), unit.end(), unit_name_char);
    if (bad != unit.end())
        throw Error(what + " \"" + unit + "\" has the character '" + std::string(1, *bad) +
                        "', which systemd does not allow in a unit name",
                    EINVAL);
    if (unit.size() > unit_name_max)
        throw Error(what + " \"" + unit + "\" is longer than systemd's " + std::to_string(unit_name_max) +
                        " characters",
                    EINVAL);
}

} // namespace

std::string expand_slice(const std::string& slice)
{
    const std::string bad = "\"" + slice + "\" is not a slice name";
    if (!ends_with(slice, slice_suffix) || slice.size() == slice_suffix.size() ||
        slice.find('/') != std::string::npos)
        throw Error(bad + " (NAME.slice, no '/')", EINVAL);
    std::string stem = slice.substr(0, slice.size() - slice_suffix.size());
    if (stem == "-")
        return "";
    // Each dash starts a child slice: a-b.slice lives in a.slice.
    std::string path, prefix;
    size_t start = 0;
    while (true) {
        size_t dash = stem.find('-', start);
        std::string component = stem.substr(start, dash == std::string::npos ? std::string::npos : dash - start);
        if (component.empty())
            throw Error(bad + " (an empty part between dashes)", EINVAL);
        path += "/" + prefix + component + std::string(slice_suffix);
        if (dash == std::string::npos)
            break;
        prefix += component + "-";
        start = dash + 1;
    }
    return path;
}

ScopePath parse_scope_path(const std::string& cgroups_path, const std::string& container_id)
{
    const std::string field = "linux.cgroupsPath \"" + cgroups_path + "\"";
    std::string slice, prefix, name;
    if (cgroups_path.empty()) {
        prefix = "cerberus";
        name = container_id;
    } else {
        size_t first = cgroups_path.find(':');
        size_t second = first == std::string::npos ? first : cgroups_path.find(':', first + 1);
        if (second == std::string::npos || cgroups_path.find(':', second + 1) != std::string::npos)
            throw Error(field + ": the systemd cgroup driver expects the form slice:prefix:name "
                                "(e.g. system.slice:docker:<id>)",
                        EINVAL);
        slice = cgroups_path.substr(0, first);
        prefix = cgroups_path.substr(first + 1, second - first - 1);
        name = cgroups_path.substr(second + 1);
    }
    if (name.empty())
        throw Error(field + ": the name part is empty", EINVAL);
    if (ends_with(name, slice_suffix))
        throw Error(field + ": the name is a slice; cerberus runs a container in a scope unit, so name it "
                            "without .slice",
                    EINVAL);

    ScopePath out;
    out.slice = slice.empty() ? "system.slice" : slice;
    out.unit = (prefix.empty() ? "" : prefix + "-") + name + std::string(scope_suffix);
    with_context(field, [&] {
        check_unit_name(out.slice, "slice");
        check_unit_name(out.unit, "unit");
        out.cgroup = expand_slice(out.slice) + "/" + out.unit;
    });
    return out;
}

} // namespace cerberus::cgroups::systemd

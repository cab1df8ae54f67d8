// SPDX-License-Identifier: Apache-2.0
// The dashboard's page, script and style sheet (dashboard/page/),
// embedded at build time by cmake/embed_assets.cmake: no build step for the
// page, nothing fetched from anywhere.
#pragma once

#include <optional>
#include <string_view>

namespace cerberus::dashboard {

struct Asset {
    std::string_view content;
    const char* content_type;
};

// "index.html", "app.js", "app.css"; nullopt for any other name.
std::optional<Asset> dashboard_asset(std::string_view name);

} // namespace cerberus::dashboard

// SPDX-License-Identifier: Apache-2.0
#include "base/error.hpp"
#include "oci/spec_parse.hpp"

#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

using namespace cerberus;

// Found by tests/fuzz (target config): a number too large to hold escaped load_bundle as
// nlohmann's own exception instead of an error naming the file.
TEST_CASE("spec: a config.json number too large to hold is refused, naming the file")
{
    char pattern[] = "/tmp/cerberus-spec-test.XXXXXX";
    REQUIRE(mkdtemp(pattern));
    std::string bundle = pattern;
    auto load = [&](const std::string& text) -> std::string {
        std::ofstream(bundle + "/config.json", std::ios::trunc) << text;
        try {
            spec::load_bundle(bundle);
        } catch (const Error& e) {
            CHECK(e.errnum() == EINVAL);
            return e.what();
        }
        return "loaded";
    };
    CHECK(load(R"({"ociVersion": "1.0.2", "process": {"user": {"uid": 1)" + std::string(400, '0') + "}}}")
              .rfind(bundle + "/config.json: invalid JSON", 0) == 0);
    CHECK(load(R"({"ociVersion": 7.9E9200})").rfind(bundle + "/config.json: invalid JSON", 0) == 0);
    CHECK(load(R"({"ociVersion": "1.0.2"})") == "loaded"); // control
    std::filesystem::remove_all(bundle);
}

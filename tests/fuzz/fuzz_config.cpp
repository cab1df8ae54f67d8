// SPDX-License-Identifier: Apache-2.0
// config.json: reading, parsing and validation, as create does. Any file
// either becomes a Spec or is refused with a cerberus::Error; anything else
// escaping is a bug.
#include "base/error.hpp"
#include "oci/spec_parse.hpp"
#include "oci/spec_validate.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {
std::string bundle;
}

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    char pattern[] = "/tmp/cerberus-fuzz-config.XXXXXX";
    if (!mkdtemp(pattern))
        std::abort();
    bundle = pattern;
    std::atexit([] { std::filesystem::remove_all(bundle); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::ofstream(bundle + "/config.json", std::ios::trunc | std::ios::binary)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    try {
        auto spec = cerberus::spec::load_bundle(bundle);
        cerberus::spec::resolve_rootfs(spec, bundle);
        cerberus::spec::validate(spec, "/");
    } catch (const cerberus::Error&) {
    }
    return 0;
}

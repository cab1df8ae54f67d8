// SPDX-License-Identifier: Apache-2.0
// A directory under /tmp for one test case, removed with all it holds.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

struct TempDir {
    std::string path;
    TempDir()
    {
        char pattern[] = "/tmp/cerberus-unit-XXXXXX";
        REQUIRE(::mkdtemp(pattern));
        path = pattern;
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

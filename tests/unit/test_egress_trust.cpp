// SPDX-License-Identifier: Apache-2.0
#include "egress/egress_trust.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace cerberus;

TEST_CASE("egress trust: the image's bundles are its regular files only; a link or a FIFO there is passed over")
{
    auto rootfs = std::filesystem::temp_directory_path() / ("cerb-trust-" + std::to_string(getpid()));
    std::filesystem::create_directories(rootfs / "etc/ssl/certs");
    std::filesystem::create_directories(rootfs / "etc/pki/tls/certs");
    std::ofstream(rootfs / "etc/ssl/certs/ca-certificates.crt") << "bundle\n";
    // Alpine's second name for its bundle, and a FIFO, which opening for reading would wait on.
    std::filesystem::create_symlink("certs/ca-certificates.crt", rootfs / "etc/ssl/cert.pem");
    REQUIRE(mkfifo((rootfs / "etc/pki/tls/certs/ca-bundle.crt").c_str(), 0644) == 0);
    CHECK(egress::image_bundles(rootfs) == std::vector<std::string>{"/etc/ssl/certs/ca-certificates.crt"});
    // Control: the same FIFO's path as a regular file is found.
    std::filesystem::remove(rootfs / "etc/pki/tls/certs/ca-bundle.crt");
    std::ofstream(rootfs / "etc/pki/tls/certs/ca-bundle.crt") << "bundle\n";
    CHECK(egress::image_bundles(rootfs) ==
          std::vector<std::string>{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"});
    std::filesystem::remove_all(rootfs);
}

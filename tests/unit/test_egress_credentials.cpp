// SPDX-License-Identifier: Apache-2.0
#include "base/error.hpp"
#include "egress/egress_config.hpp"
#include "egress/secret_scrub.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace cerberus;

namespace {

// The Error parse_host_config throws for text ("" when it throws none).
std::string refusal_of(const std::string& text)
{
    try {
        egress::parse_host_config(text);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

std::string credential_with(const std::string& fields)
{
    return R"({"credentials": {"github": {"host": "api.github.com", "header": "Authorization", )" + fields + "}}}";
}

} // namespace

TEST_CASE("egress credentials: the host's entry read with its defaults, the secret in the header's value")
{
    auto config = egress::parse_host_config(credential_with(R"("secret": "ghp_0123456789", "env": "GITHUB_TOKEN")"));
    REQUIRE(config.credentials.size() == 1);
    const auto& credential = config.credentials[0];
    CHECK(credential.host == "api.github.com");
    CHECK(credential.value == "Bearer ghp_0123456789");
    CHECK(credential.placeholder == "cerberus-credential-github");
    CHECK(credential.env == "GITHUB_TOKEN");
    auto basic = egress::parse_host_config(
        credential_with(R"("secret": "eC1hY2Nlc3M6dG9r", "value": "Basic {secret}", "placeholder": "p-1")"));
    CHECK(basic.credentials[0].value == "Basic eC1hY2Nlc3M6dG9r");
    CHECK(basic.credentials[0].placeholder == "p-1");
}

TEST_CASE("egress credentials: a bad entry is refused naming its field")
{
    CHECK(refusal_of(credential_with(R"("secret": "ghp_0123456789")")).empty()); // control
    CHECK(refusal_of(credential_with(R"("secret": "short")")).find("credentials.github: the secret is shorter") !=
          std::string::npos);
    CHECK(refusal_of(credential_with(R"("secret": "ghp_0123456789", "secret_file": "/x")"))
              .find("needs exactly one of secret and secret_file") != std::string::npos);
    CHECK(refusal_of(credential_with(R"("secret": "ghp_0123456789", "value": "Bearer")"))
              .find("credentials.github.value: must hold {secret} once") != std::string::npos);
    CHECK(refusal_of(credential_with(R"("secret": "ghp_0123456789", "secret_fle": "/x")"))
              .find("credentials.github.secret_fle: unknown key") != std::string::npos);
    CHECK(refusal_of(credential_with(R"("secret": "ghp_0123456789", "env": "1X")"))
              .find("credentials.github.env") != std::string::npos);
    CHECK(refusal_of(credential_with(R"("secret": "ghp_01234\r\n56789")")).find("must be one line") !=
          std::string::npos);
    CHECK(refusal_of(credential_with(R"("secret": "ghp_0123456789", "placeholder": "x-ghp_0123456789")"))
              .find("credentials.github.placeholder: must not hold the secret") != std::string::npos);
    CHECK(refusal_of(R"({"credentials": {"h": {"host": "api.github.com", "header": "Host", "secret": "0123456789"}}})")
              .find("credentials.h.header") != std::string::npos);
    CHECK(refusal_of(R"({"credentials": {"h": {"host": "192.0.2.1", "header": "X-Key", "secret": "0123456789"}}})")
              .find("credentials.h.host: must be a host name") != std::string::npos);
    CHECK(refusal_of(R"({"credential": {}})").find("credential: unknown key") != std::string::npos);
}

TEST_CASE("egress credentials: a secret file must be root's and written by no one else")
{
    auto path = std::filesystem::temp_directory_path() / ("cerb-secret-" + std::to_string(getpid()));
    std::ofstream(path) << "s3cr3t-from-file\n";
    chmod(path.c_str(), 0600);
    auto config = egress::parse_host_config(credential_with(R"("secret_file": ")" + path.string() + "\""));
    CHECK(config.credentials[0].secret == "s3cr3t-from-file"); // its line, the newline cut
    chmod(path.c_str(), 0666);
    CHECK(refusal_of(credential_with(R"("secret_file": ")" + path.string() + "\"")).find("no one else may write") !=
          std::string::npos);
    std::filesystem::remove(path);
    CHECK(refusal_of(credential_with(R"("secret_file": ")" + path.string() + "\"")).find("does not exist") !=
          std::string::npos);
}

TEST_CASE("egress credentials: chosen by the container's annotations, and by host, the exact name first")
{
    auto config = egress::parse_host_config(R"({"credentials": {
        "all": {"host": "*.example.com", "header": "X-Key", "secret": "wildcard-secret"},
        "exact": {"host": "api.example.com", "header": "X-Key", "secret": "exact-secret",
                  "annotations": {"io.kubernetes.cri.sandbox-namespace": "agents"}}}})");
    auto agents = egress::credentials_for(config.credentials, {{"io.kubernetes.cri.sandbox-namespace", "agents"}});
    auto others = egress::credentials_for(config.credentials, {{"io.kubernetes.cri.sandbox-namespace", "prod"}});
    CHECK(agents.size() == 2);
    REQUIRE(others.size() == 1);
    CHECK(others[0].name == "all");
    CHECK(egress::credential_for_host(agents, "api.example.com")->name == "exact");
    CHECK(egress::credential_for_host(others, "api.example.com")->name == "all");
    CHECK(egress::credential_for_host(agents, "www.example.com")->name == "all");
    CHECK(egress::credential_for_host(agents, "example.com") == nullptr);
    CHECK(egress::credential_for_host(agents, "example.org") == nullptr);
}

TEST_CASE("egress credentials: the scrub masks the secret wherever the stream is cut, lengths kept")
{
    const std::string secret = "s3cr3t-value";
    const std::string body = "a s3cr3t-value b s3cr3t-values3cr3t-value s3cr3t-valu";
    const std::string masked = "a ************ b ************************ s3cr3t-valu";
    CHECK(egress::SecretScrub(secret).scrubbed(body) == masked);
    for (size_t first = 0; first <= body.size(); ++first)
        for (size_t second = first; second <= body.size(); second += 3) {
            egress::SecretScrub scrub(secret);
            std::string out(scrub.feed(std::string_view(body).substr(0, first)));
            out += scrub.feed(std::string_view(body).substr(first, second - first));
            out += scrub.feed(std::string_view(body).substr(second));
            out += scrub.finish();
            CHECK_MESSAGE(out == masked, "cut at " << first << " and " << second);
        }
    // Control: a stream without the secret passes unchanged.
    egress::SecretScrub scrub(secret);
    std::string out(scrub.feed("nothing to see, s3cr3t-"));
    out += scrub.feed("valve");
    out += scrub.finish();
    CHECK(out == "nothing to see, s3cr3t-valve");
}

TEST_CASE("egress credentials: the scrub masks the secret's encodings a server may echo, at any alignment")
{
    const std::string secret = "k3y?v@lue/9>~";
    egress::SecretScrub scrub(secret);
    // Base64 within a longer string (a Basic credential "user:<secret>"): the characters of the secret's bits alone.
    CHECK(scrub.scrubbed("Basic dXNlcjprM3k/dkBsdWUvOT5+") == "Basic dXNlcjp*****************");
    CHECK(scrub.scrubbed("azN5P3ZAbHVlLzk+fg==") == "*****************g==");
    CHECK(scrub.scrubbed("dWszeT92QGx1ZS85Pn4=") == "dW" + std::string(16, '*') + "4=");
    CHECK(scrub.scrubbed("token=dXNrM3k_dkBsdWUvOT5-") == "token=dXN*****************"); // base64url
    CHECK(scrub.scrubbed("q=k3y%3Fv%40lue%2F9%3E~&r=k3y%3fv%40lue%2f9%3e~") == "q=" + std::string(21, '*') + "&r=" +
                                                                                 std::string(21, '*'));
    CHECK(scrub.scrubbed("6b33793f76406c75652f393e7e") == std::string(26, '*'));
    // Controls: another secret's base64, and the secret's encodings cut short, pass unchanged.
    CHECK(scrub.scrubbed("Basic dXNlcjpvdGhlci1zZWNyZXQ=") == "Basic dXNlcjpvdGhlci1zZWNyZXQ=");
    CHECK(scrub.scrubbed("dXNlcjprM3k/dkBsdWUvOT5") == "dXNlcjprM3k/dkBsdWUvOT5");
    CHECK(scrub.scrubbed("k3y%3Fv%40lue%2F9%3E") == "k3y%3Fv%40lue%2F9%3E");
    // Streamed, cut anywhere: the same masks.
    const std::string body = "a dXNlcjprM3k/dkBsdWUvOT5+ b k3y%3Fv%40lue%2F9%3E~ c";
    const std::string masked = "a dXNlcjp***************** b " + std::string(21, '*') + " c";
    for (size_t cut = 0; cut <= body.size(); ++cut) {
        egress::SecretScrub streamed(secret);
        std::string out(streamed.feed(std::string_view(body).substr(0, cut)));
        out += streamed.feed(std::string_view(body).substr(cut));
        out += streamed.finish();
        CHECK_MESSAGE(out == masked, "cut at " << cut);
    }
}

// SPDX-License-Identifier: Apache-2.0
// Keeps a secret the egress proxy sends upstream from coming back to the
// agent: each occurrence in a response, as written or in an encoding a server
// may echo it in (percent-encoded, hex, base64 or base64url at any alignment
// within a longer encoded string), is masked with as many '*', so lengths
// (Content-Length, chunk sizes) stay true. The body is scrubbed as it
// streams, in chunks cut anywhere: the last bytes of a chunk that could begin
// one of those forms are held until the next one shows whether they do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cerberus::egress {

// The secret and the encodings of it the scrub looks for, each once (longest first).
std::vector<std::string> secret_forms(const std::string& secret);

class SecretScrub {
public:
    explicit SecretScrub(const std::string& secret);

    // text with every occurrence masked (a header value).
    std::string scrubbed(std::string text) const;

    // The bytes of the stream that may go on once data is added: all but a
    // held tail shorter than the longest form. Valid until the next call.
    std::string_view feed(std::string_view data);
    // The held tail, at the stream's end.
    std::string_view finish();

private:
    void mask(std::string& text) const;

    std::vector<std::string> forms_;
    size_t longest_ = 0;
    std::string held_;
    std::string out_;
};

} // namespace cerberus::egress

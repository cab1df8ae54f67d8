// SPDX-License-Identifier: Apache-2.0
#include "egress/secret_scrub.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>

namespace cerberus::egress {

namespace {

std::string percent_encoded(const std::string& text, const char* digits)
{
    std::string out;
    for (unsigned char c : text) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
            continue;
        }
        out += '%';
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string hex(const std::string& text, const char* digits)
{
    std::string out;
    for (unsigned char c : text) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

std::string base64(const std::string& bytes)
{
    std::string out(4 * ((bytes.size() + 2) / 3), '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<size_t>(n));
    return out;
}

// The base64 characters that depend on the secret's bytes alone, when it starts `offset` bytes into a
// 3-byte group of a longer encoded string (a Basic credential "user:secret", a token in a JWT).
std::string base64_core(const std::string& secret, size_t offset)
{
    std::string encoded = base64(std::string(offset, '\0') + secret);
    size_t first = (8 * offset + 5) / 6, end = (8 * (offset + secret.size())) / 6;
    return encoded.substr(first, end - first);
}

} // namespace

std::vector<std::string> secret_forms(const std::string& secret)
{
    std::vector<std::string> forms{secret,
                                   percent_encoded(secret, "0123456789ABCDEF"),
                                   percent_encoded(secret, "0123456789abcdef"),
                                   hex(secret, "0123456789abcdef"),
                                   hex(secret, "0123456789ABCDEF")};
    for (size_t offset = 0; offset < 3; ++offset) {
        std::string core = base64_core(secret, offset);
        forms.push_back(core);
        std::replace(core.begin(), core.end(), '+', '-');
        std::replace(core.begin(), core.end(), '/', '_');
        forms.push_back(core);
    }
    std::sort(forms.begin(), forms.end(),
              [](const auto& a, const auto& b) { return a.size() != b.size() ? a.size() > b.size() : a < b; });
    forms.erase(std::unique(forms.begin(), forms.end()), forms.end());
    return forms;
}

SecretScrub::SecretScrub(const std::string& secret) : forms_(secret_forms(secret)), longest_(forms_.front().size())
{
}

void SecretScrub::mask(std::string& text) const
{
    for (const std::string& form : forms_)
        for (size_t at = text.find(form); at != std::string::npos; at = text.find(form, at + form.size()))
            text.replace(at, form.size(), form.size(), '*');
}

std::string SecretScrub::scrubbed(std::string text) const
{
    mask(text);
    return text;
}

std::string_view SecretScrub::feed(std::string_view data)
{
    held_.append(data);
    mask(held_);
    // An occurrence that ends in data begins within longest_ - 1 bytes of held_'s end at most.
    size_t keep = std::min(held_.size(), longest_ - 1);
    out_.assign(held_, 0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out_;
}

std::string_view SecretScrub::finish()
{
    out_.swap(held_);
    held_.clear();
    return out_;
}

} // namespace cerberus::egress

// SPDX-License-Identifier: Apache-2.0
#include "audit/audit_trail.hpp"

#include "audit/audit_format.hpp"
#include "base/error.hpp"
#include "base/fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace cerberus::audit {
namespace {

// Reads what was appended since the last call and emits the complete lines;
// a line the collector is still writing waits for its newline.
class TrailReader {
public:
    TrailReader(std::string path, TrailFormat format, const std::function<void(const std::string&)>& emit)
        : path_(std::move(path)), format_(format), emit_(emit)
    {
    }

    // False while the trail does not exist.
    bool read_new()
    {
        if (!fd_) {
            fd_.reset(open(path_.c_str(), O_RDONLY | O_CLOEXEC));
            if (!fd_) {
                if (errno == ENOENT)
                    return false;
                throw_errno("opening " + path_);
            }
        }
        char buf[65536];
        ssize_t n;
        while ((n = read(fd_.get(), buf, sizeof(buf))) > 0) {
            partial_.append(buf, static_cast<size_t>(n));
            size_t start = 0;
            for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
                std::string line = partial_.substr(start, nl - start);
                emit_(format_ == TrailFormat::text ? text_line(line) : line);
            }
            partial_.erase(0, start);
        }
        if (n < 0)
            throw_errno("reading " + path_);
        return true;
    }

private:
    std::string path_;
    TrailFormat format_;
    const std::function<void(const std::string&)>& emit_;
    UniqueFd fd_;
    std::string partial_;
};

} // namespace

void print_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit)
{
    TrailReader reader(path, format, emit);
    if (!reader.read_new())
        throw_errno("opening audit trail " + path, ENOENT); // no policy, or nothing denied yet
}

void follow_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit,
                  const std::function<bool()>& keep_following)
{
    TrailReader reader(path, format, emit);
    while (keep_following()) {
        reader.read_new();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    reader.read_new(); // what the collector wrote while the container was deleted
}

} // namespace cerberus::audit

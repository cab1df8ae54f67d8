// SPDX-License-Identifier: Apache-2.0
#include "audit/audit_trail.hpp"

#include "audit/audit_format.hpp"
#include "base/error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace cerberus::audit {
namespace {

std::function<void(const std::string&)> converting(TrailFormat format, const std::function<void(const std::string&)>& emit)
{
    if (format == TrailFormat::json)
        return emit;
    return [&emit](const std::string& line) { emit(text_line(line)); };
}

} // namespace

void TrailWriter::append(const nlohmann::ordered_json& record) noexcept
{
    if (!fd_) {
        fd_.reset(open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
        if (!fd_) {
            spdlog::warn("opening the trail {}: {}; a {} record is lost", path_, std::strerror(errno),
                         record.value("type", ""));
            return;
        }
    }
    std::string line = dump_line(record) + "\n";
    if (write(fd_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        spdlog::warn("writing the trail {}: {}", path_, std::strerror(errno));
}

bool TrailTail::read_new(const std::function<void(const std::string&)>& emit)
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
        for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1)
            emit(partial_.substr(start, nl - start));
        partial_.erase(0, start);
    }
    if (n < 0)
        throw_errno("reading " + path_);
    return true;
}

void print_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit)
{
    TrailTail tail(path);
    if (!tail.read_new(converting(format, emit)))
        throw_errno("opening audit trail " + path, ENOENT); // no policy, or another --audit-dir
}

void follow_trail(const std::string& path, TrailFormat format, const std::function<void(const std::string&)>& emit,
                  const std::function<bool()>& keep_following)
{
    TrailTail tail(path);
    auto convert = converting(format, emit);
    while (keep_following()) {
        tail.read_new(convert);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    tail.read_new(convert); // what the collector wrote while the container was deleted
}

std::vector<nlohmann::json> read_records(const std::string& path)
{
    std::vector<nlohmann::json> records;
    print_trail(path, TrailFormat::json, [&](const std::string& line) {
        auto record = nlohmann::json::parse(line, nullptr, false);
        if (!record.is_discarded())
            records.push_back(std::move(record));
    });
    return records;
}

} // namespace cerberus::audit

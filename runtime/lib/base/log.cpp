// SPDX-License-Identifier: Apache-2.0
#include "base/log.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <ctime>

namespace cerberus::log {
namespace {

class JsonFormatter : public spdlog::formatter {
public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override
    {
        auto since_epoch = msg.time.time_since_epoch();
        auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
        auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count();
        std::time_t t = seconds.count();
        struct tm tm;
        ::gmtime_r(&t, &tm);
        char time[64];
        size_t n = std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%S", &tm);
        std::snprintf(time + n, sizeof time - n, ".%09lldZ", static_cast<long long>(nanos));
        auto level = spdlog::level::to_string_view(msg.level);
        nlohmann::json line = {
            {"level", std::string(level.data(), level.size())},
            {"msg", std::string(msg.payload.data(), msg.payload.size())},
            {"time", time},
        };
        std::string text = line.dump() + "\n";
        dest.append(text.data(), text.data() + text.size());
    }

    std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

} // namespace

void init(const std::string& path, Format format, bool debug)
{
    std::shared_ptr<spdlog::logger> logger;
    if (path.empty())
        logger = std::make_shared<spdlog::logger>("cerberus", std::make_shared<spdlog::sinks::stderr_sink_st>());
    else
        logger = std::make_shared<spdlog::logger>("cerberus",
                                                  std::make_shared<spdlog::sinks::basic_file_sink_st>(path, false));
    if (format == Format::json)
        logger->set_formatter(std::make_unique<JsonFormatter>());
    else
        logger->set_pattern(path.empty() ? "cerberus: %l: %v" : "%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);
    logger->set_level(debug ? spdlog::level::debug : spdlog::level::warn);
    logger->flush_on(spdlog::level::trace);
    spdlog::set_default_logger(logger);
}

void silence()
{
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("cerberus"));
}

} // namespace cerberus::log

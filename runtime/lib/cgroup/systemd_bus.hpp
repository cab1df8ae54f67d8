// SPDX-License-Identifier: Apache-2.0
// A connection to systemd (PID 1) through libsystemd's sd-bus, for the units of
// the systemd cgroup driver. libsystemd is loaded when the first connection is
// made (dlopen of libsystemd.so.0), so the static cerberus binary runs on hosts
// without it and only `--systemd-cgroup` needs it.
#pragma once

#include "cgroup/systemd_properties.hpp"

#include <string>
#include <utility>
#include <vector>

struct sd_bus;

namespace cerberus::cgroups::systemd {

class Bus {
public:
    // Connects as systemctl does for root: systemd's private socket, else the
    // system bus. Throws, saying why, when systemd is not the init, the caller
    // is not root (rootless is not supported), libsystemd cannot be loaded, or
    // neither socket answers.
    static Bus connect();

    Bus(Bus&& other) noexcept;
    Bus& operator=(Bus&&) = delete;
    Bus(const Bus&) = delete;
    Bus& operator=(const Bus&) = delete;
    ~Bus();

    // StartTransientUnit, then waits for its job to finish. A failed unit of the
    // same name left from an earlier container is reset and the start retried once.
    void start_unit(const std::string& unit, const std::vector<UnitProperty>& properties);

    // SetUnitProperties, for the running unit (not persisted).
    void set_properties(const std::string& unit, const std::vector<UnitProperty>& properties);

    // StopUnit, waiting for its job, then ResetFailedUnit so that no failed unit
    // stays behind. A unit systemd no longer knows is already stopped.
    void stop_unit(const std::string& unit);

private:
    explicit Bus(sd_bus* bus, bool direct) : bus_(bus), direct_(direct) {}

    sd_bus* bus_;
    bool direct_; // the private socket: messages carry no sender
};

// Stops the unit when destroyed, unless released: a create that fails after the
// scope started leaves no unit behind.
class UnitGuard {
public:
    UnitGuard(Bus& bus, std::string unit) : bus_(&bus), unit_(std::move(unit)) {}
    UnitGuard(UnitGuard&& other) noexcept : bus_(std::exchange(other.bus_, nullptr)), unit_(std::move(other.unit_)) {}
    UnitGuard& operator=(UnitGuard&&) = delete;
    UnitGuard(const UnitGuard&) = delete;
    UnitGuard& operator=(const UnitGuard&) = delete;
    ~UnitGuard();

    void release() noexcept { bus_ = nullptr; }

private:
    Bus* bus_;
    std::string unit_;
};

} // namespace cerberus::cgroups::systemd

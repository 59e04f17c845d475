// SPDX-License-Identifier: Apache-2.0
#pragma once
// PID 1 as memqosd sees it: a small interface so the daemon can be tested
// with a mock, and one implementation over D-Bus (org.freedesktop.systemd1).
// Every call is asynchronous: the callback runs later on the io thread, never
// inside the call. systemd is the single writer of the cgroup tree: memqosd
// sets memory properties only through setUnitProperties(runtime=true).

#include "memqos/core/types.hpp"
#include "memqos/core/unit_memory.hpp"
#include "memqos/util/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memqos::io {


// Memory properties of a unit (they live in the core: the reconciler is
// pure and decides on them).
using core::MemoryProperties;
using core::unconfiguredMemory;

struct UnitInfo {
    std::string name;         // "nginx.service"
    std::string loadState;    // "loaded", "not-found", "masked", …
    std::string activeState;  // "active", "inactive", …
    std::string controlGroup; // "/system.slice/nginx.service"; empty when not running
    // The unit's memory properties as systemd has them now (all five set),
    // for services, scopes and slices; nullopt when systemd did not say.
    // Before memqos's first change this is what the unit's own
    // configuration gives: memqos remembers it to give it back.
    std::optional<MemoryProperties> memory;
    // Created by StartTransientUnit (systemd-run): once stopped it does not
    // come back with the same properties; a new start is a new unit.
    bool transient = false;
};

class SystemdManager {
public:
    using Done = std::function<void(Status)>;
    template <typename T>
    using Then = std::function<void(Result<T>)>;

    // What memqosd wants to hear about (subscribed once with subscribe()).
    struct Events {
        // systemd finished a daemon-reload (Reloading(false)).
        std::function<void()> reloaded;
        // A job of the unit finished successfully (JobRemoved, result "done"):
        // it (re)started, or stopped; look it up to know which.
        std::function<void(const std::string& unit)> unitStarted;
        // systemd created a unit object (UnitNew). Also sent when a LoadUnit
        // call loads a unit that has no file: reacting to it with another
        // look-up can loop (load, garbage-collect, load …), so the daemon
        // leaves it unset.
        std::function<void(const std::string& unit)> unitLoaded;
        // A unit was removed from memory (UnitRemoved).
        std::function<void(const std::string& unit)> unitRemoved;
    };

    virtual ~SystemdManager() = default;

    virtual void subscribe(Events events, Done done) = 0;
    // LoadUnit + its state and ControlGroup. A unit systemd has no file for
    // yields loadState "not-found" (not an error).
    virtual void getUnit(const std::string& unit, Then<UnitInfo> then) = 0;
    // Loaded units whose name ends in .service, .scope or .slice.
    virtual void listUnits(Then<std::vector<UnitInfo>> then) = 0;
    // SetUnitProperties(unit, runtime=true, props).
    virtual void setUnitProperties(const std::string& unit, const MemoryProperties& props,
                                   Done done) = 0;
    // The same call, sent at once: never queued behind other calls, as
    // KillUnit. For pressure actions (a class cap): behind a reconcile storm
    // of up to 1000 queued writes it would come too late.
    virtual void setUnitPropertiesUrgent(const std::string& unit, const MemoryProperties& props,
                                         Done done) = 0;
    // StartTransientUnit(unit, "fail", [Slice, ExecStart, memory props]).
    virtual void startTransientService(const std::string& unit, const std::string& slice,
                                       const MemoryProperties& props,
                                       const std::vector<std::string>& argv, Done done) = 0;
    // StartTransientUnit(unit, "fail", [Description, Slice, PIDs,
    // MemoryAccounting, memory props]): moves running processes (a
    // hypervisor's qemu, started outside systemd's view) into a new scope of
    // their own. `unit` must end in ".scope" and `pids` must not be empty
    // (invalid_argument, without a call); an empty `slice` leaves systemd's
    // default. A unit of that name that already exists is reported as an
    // error with code std::errc::file_exists, so the caller can tell it from
    // other failures (the scope may be its own from an earlier run).
    virtual void startTransientScope(const std::string& unit, const std::string& slice,
                                     const std::vector<std::uint32_t>& pids,
                                     const MemoryProperties& props,
                                     const std::string& description, Done done) = 0;
    // StartTransientUnit(slice, "fail", [Description, MemoryAccounting]):
    // the slice of a class added in the configuration (the default classes'
    // slices are unit files). A slice that already exists is not an error.
    virtual void startTransientSlice(const std::string& slice, Done done) = 0;
    // KillUnit(unit, "all", signal).
    virtual void killUnit(const std::string& unit, int signal, Done done) = 0;
    // Reload(): a daemon-reload. systemd answers once it has re-read every
    // unit's configuration and applied it; memqos calls it after removing
    // its own runtime drop-ins, so that a unit gets back what its own
    // configuration says now (doc/DESIGN.md §2.5).
    virtual void reload(Done done) = 0;
};

} // namespace memqos::io

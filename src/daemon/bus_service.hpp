// SPDX-License-Identifier: Apache-2.0
#pragma once
// org.memqos1 on the bus: the Manager object at /org/memqos1 and the Class
// and Workload objects below it (fallback vtables: the objects follow the
// Manager's state, nothing to register per workload), under an
// org.freedesktop.DBus.ObjectManager at /org/memqos1. dbus/*.xml is the
// contract; the bus suite compares it with this code's introspection. The
// names are memqos/io/bus_names.hpp's.

#include "manager.hpp"

#include "memqos/io/bus.hpp"
#include "memqos/util/log_limit.hpp"

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace memqos::daemon {

std::string classObjectPath(const std::string& name);
std::string workloadObjectPath(const std::string& id);

class BusService final : public Listener {
public:
    BusService(sd_bus* bus, io::BusPump& pump, Manager& manager);
    ~BusService() override;
    BusService(const BusService&) = delete;
    BusService& operator=(const BusService&) = delete;

    // Registers the objects and requests the name (at start-up, synchronous).
    Status start();

    void managerPropertiesChanged(const std::vector<const char*>& names) override;
    void pressureLevelChanged(std::uint32_t level, const std::string& reason) override;
    void workloadKilled(const io::KillRecord& record) override;
    void workloadChanged(const std::string& id) override;
    void ticked() override {
        syncObjects();
        // Changes memqosd makes on its own (a rule's class after a SIGHUP
        // reload, an adoption) are few: all properties are compared every
        // kAnnounceTicks ticks, not every tick (at 1000 workloads that is
        // some 17 000 values).
        if (tickDirty_ || ++ticksSinceAnnounce_ >= kAnnounceTicks) {
            tickDirty_ = false;
            ticksSinceAnnounce_ = 0;
            announceChanges();
        }
    }
    static constexpr unsigned kAnnounceTicks = 10;

    // Emits InterfacesAdded/InterfacesRemoved for the class and workload
    // objects that appeared or vanished since the last call. Runs after
    // every dispatch of bus messages and after every tick, which is where
    // the Manager's workloads and classes change.
    void syncObjects() { syncObjects(true); }
    // PropertiesChanged for every Class and Workload property declared to
    // emit it (EmitsChangedSignal=true) whose value changed since the last
    // call: after the dispatch of a call that may change them (the
    // root-only methods, markDirty) and at the tick after it, for one
    // workload when the Manager says it changed (balloon, reclaim), and
    // every kAnnounceTicks ticks for what memqosd changes on its own.
    void announceChanges();
    // A reply sent after its call's dispatch (the call waited on systemd or
    // on a state write): the objects and properties are compared again
    // once this turn of the loop is done, and the reply is sent.
    void callAnswered();
    void markDirty() {
        callDirty_ = true; // compared after this dispatch
        tickDirty_ = true; // and at the next tick
    }

    // The uid the bus vouched for (the effective uid when the connection
    // was made, SO_PEERCRED) of a caller's unique name, once asked: the
    // root-only methods ask dbus-daemon (a blocking round trip) once per
    // connection, not once per call. A unique name is never given to
    // another connection while the bus runs, and a connection's credentials
    // do not change, so the answer stays true; at most kKnownUids names are
    // kept (then all are forgotten and asked again).
    std::optional<uid_t> knownUid(const std::string& sender) const {
        const auto it = knownUids_.find(sender);
        return it == knownUids_.end() ? std::nullopt : std::optional<uid_t>(it->second);
    }
    void rememberUid(const std::string& sender, uid_t uid) {
        if (knownUids_.size() >= kKnownUids) {
            knownUids_.clear();
        }
        knownUids_.emplace(sender, uid);
    }
    static constexpr std::size_t kKnownUids = 4096;

    // For the vtable trampolines.
    sd_bus* bus() const { return bus_; }
    io::BusPump& pump() { return pump_; }
    Manager& manager() { return manager_; }
    // The "Placement refused" line of VerifyPlacement (open to every user).
    util::LogLimit& placementLog() { return placementLog_; }
    static constexpr std::uint32_t kPlacementLogBurst = 10;

    // A workload's usage (memory.current, memory.swap.current,
    // memory.pressure) for the call being answered: a GetAll or
    // GetManagedObjects asks for its three usage properties one after the
    // other, and they are read once for all three, not once each (issue 25).
    // Read anew for every other call, and every time outside a call.
    Manager::CgroupUsage workloadUsage(const std::string& id, const ManagedWorkload& w);

private:
    // announce=false: take the current objects as known (at start-up,
    // before the name is ours: nobody saw them appear).
    void syncObjects(bool announce);

    sd_bus* bus_;
    io::BusPump& pump_;
    Manager& manager_;
    util::LogLimit placementLog_{kPlacementLogBurst, std::chrono::minutes(1)};
    std::vector<io::SlotPtr> slots_;
    // What the ObjectManager has announced: class names, workload ids.
    std::set<std::string> classNames_;
    std::set<std::string> workloadIds_;
    // Manager::workloadsRevision when workloadIds_ was last brought in line
    // (none yet: the manager's count starts at 0, an empty map).
    std::optional<std::uint64_t> workloadsRevision_;
    struct Snapshots;
    std::unique_ptr<Snapshots> snapshots_;
    std::unordered_map<std::string, uid_t> knownUids_;
    // The last workloadUsage: for which call (sender, cookie) and workload.
    struct UsageMemo {
        std::string sender;
        std::uint64_t cookie = 0;
        std::string id;
        Manager::CgroupUsage usage;
    };
    std::optional<UsageMemo> usageMemo_;
    bool callDirty_ = false;
    bool answerPosted_ = false;
    bool tickDirty_ = false;
    unsigned ticksSinceAnnounce_ = 0;
};

} // namespace memqos::daemon

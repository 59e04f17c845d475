// SPDX-License-Identifier: Apache-2.0
#pragma once
// A SystemdManager that records every call and answers later, when the test
// calls flush(): the same order of events as the real asynchronous client.

#include "memqos/io/drop_ins.hpp"
#include "memqos/io/systemd.hpp"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace memqos::test {

class FakeSystemd : public io::SystemdManager {
public:
    struct SetCall {
        std::string unit;
        io::MemoryProperties props;
        bool urgent = false; // setUnitPropertiesUrgent
    };

    std::map<std::string, io::UnitInfo> units;   // what getUnit/listUnits know
    std::vector<SetCall> setCalls;
    std::vector<std::string> started;            // startTransientService units
    std::vector<std::string> startedSlices;
    std::vector<std::vector<std::string>> startedArgv;
    std::vector<std::string> getUnitCalls;
    std::vector<std::string> startedSlicesOnly;  // startTransientSlice
    Status failSlice = okStatus();               // answer of startTransientSlice
    Status failSet = okStatus();                 // answer of setUnitProperties
    struct ScopeCall {
        std::string unit;
        std::string slice;
        std::vector<std::uint32_t> pids;
        io::MemoryProperties props;
        std::string description;
    };
    std::vector<ScopeCall> scopeCalls;           // startTransientScope (props also in setCalls)
    Status failScope = okStatus();               // answer of startTransientScope
    std::vector<std::pair<std::string, int>> killCalls; // killUnit (unit, signal)
    Status failKill = okStatus();                // answer of killUnit
    Events events;
    bool subscribed = false;
    // Like systemd's /run/systemd/system.control: when set, every
    // setUnitProperties writes one 50-<Property>.conf file per property
    // there, and reload() re-reads them.
    std::optional<std::filesystem::path> dropInDir;
    // What a unit's own configuration sets (its unit file): taken from its
    // memory at the first setUnitProperties unless a test set it. reload()
    // gives every unit this, then its runtime drop-ins, then `persistent`.
    std::map<std::string, io::MemoryProperties> configured;
    // An administrator's `systemctl set-property` (no --runtime): its file in
    // /etc/systemd/system.control wins over /run's of the same name.
    std::map<std::string, io::MemoryProperties> persistent;
    int reloads = 0;
    Status failReload = okStatus();
    // setUnitProperties of these units is answered only by releaseHeld().
    std::set<std::string> holdSet;
    std::vector<std::function<void()>> heldSets;
    // getUnit of these units is answered only by releaseHeld() too.
    std::set<std::string> holdGet;
    void releaseHeld() {
        for (auto& f : heldSets) {
            later(std::move(f));
        }
        heldSets.clear();
    }

    void addUnit(const std::string& name, const std::string& cgroup, const std::string& load = "loaded") {
        units[name] = io::UnitInfo{name, load, cgroup.empty() ? "inactive" : "active", cgroup,
                                   io::unconfiguredMemory(), false};
    }

    // Runs queued answers (and the answers they queue) until none is left.
    void flush() {
        while (!queue_.empty()) {
            auto f = std::move(queue_.front());
            queue_.pop_front();
            f();
        }
    }

    void subscribe(Events e, Done done) override {
        events = std::move(e);
        subscribed = true;
        later([done] { done(okStatus()); });
    }
    void getUnit(const std::string& unit, Then<io::UnitInfo> then) override {
        getUnitCalls.push_back(unit);
        io::UnitInfo info{unit, "not-found", "inactive", "", std::nullopt, false};
        if (auto it = units.find(unit); it != units.end()) {
            info = it->second;
        }
        if (holdGet.contains(unit)) {
            heldSets.emplace_back([then, info] { then(info); });
            return;
        }
        later([then, info] { then(info); });
    }
    void listUnits(Then<std::vector<io::UnitInfo>> then) override {
        std::vector<io::UnitInfo> out;
        for (const auto& [n, u] : units) {
            out.push_back(u);
        }
        later([then, out] { then(out); });
    }
    void setUnitProperties(const std::string& unit, const io::MemoryProperties& props,
                           Done done) override {
        setCalls.push_back({unit, props});
        Status st = failSet;
        if (auto it = units.find(unit); st && it != units.end() && it->second.memory) {
            configured.try_emplace(unit, *it->second.memory);
            writeDropIns(unit, props);
            // systemd keeps what it was told (runtime drop-ins)
            auto& m = *it->second.memory;
            m.memoryMin = props.memoryMin ? props.memoryMin : m.memoryMin;
            m.memoryLow = props.memoryLow ? props.memoryLow : m.memoryLow;
            m.memoryHigh = props.memoryHigh ? props.memoryHigh : m.memoryHigh;
            m.memoryMax = props.memoryMax ? props.memoryMax : m.memoryMax;
            m.memorySwapMax = props.memorySwapMax ? props.memorySwapMax : m.memorySwapMax;
        }
        if (holdSet.contains(unit)) {
            heldSets.push_back([done, st] { done(st); });
            return;
        }
        later([done, st] { done(st); });
    }
    void setUnitPropertiesUrgent(const std::string& unit, const io::MemoryProperties& props,
                                 Done done) override {
        setUnitProperties(unit, props, std::move(done));
        setCalls.back().urgent = true;
    }
    void startTransientService(const std::string& unit, const std::string& slice,
                               const io::MemoryProperties& props,
                               const std::vector<std::string>& argv, Done done) override {
        started.push_back(unit);
        startedSlices.push_back(slice);
        startedArgv.push_back(argv);
        setCalls.push_back({unit, props});
        later([done] { done(okStatus()); });
    }
    void startTransientScope(const std::string& unit, const std::string& slice,
                             const std::vector<std::uint32_t>& pids,
                             const io::MemoryProperties& props, const std::string& description,
                             Done done) override {
        scopeCalls.push_back({unit, slice, pids, props, description});
        setCalls.push_back({unit, props});
        Status st = failScope;
        later([done, st] { done(st); });
    }
    void startTransientSlice(const std::string& slice, Done done) override {
        startedSlicesOnly.push_back(slice);
        Status st = failSlice;
        later([done, st] { done(st); });
    }
    void killUnit(const std::string& unit, int signal, Done done) override {
        killCalls.emplace_back(unit, signal);
        Status st = failKill;
        later([done, st] { done(st); });
    }

    void reload(Done done) override {
        ++reloads;
        Status st = failReload;
        if (st) {
            for (auto& [name, u] : units) {
                if (!u.memory || !configured.contains(name)) {
                    continue; // never changed: what it has is its own
                }
                io::MemoryProperties m = configured[name];
                if (dropInDir) {
                    const io::RuntimeDropIns d(*dropInDir);
                    for (const auto key : io::kMemoryKeys) {
                        if (auto v = d.read(name, key).value) {
                            set(m, key, *v);
                        }
                    }
                }
                if (auto p = persistent.find(name); p != persistent.end()) {
                    overlay(m, p->second);
                }
                *u.memory = m;
            }
        }
        later([this, done, st] {
            done(st);
            if (st && events.reloaded) {
                events.reloaded(); // Reloading(false)
            }
        });
    }

    // Properties last sent to `unit`, or nullptr.
    const io::MemoryProperties* lastSet(const std::string& unit) const {
        for (auto it = setCalls.rbegin(); it != setCalls.rend(); ++it) {
            if (it->unit == unit) {
                return &it->props;
            }
        }
        return nullptr;
    }

    static void set(io::MemoryProperties& m, io::MemoryKey key, const Limit& v) {
        switch (key) {
        case io::MemoryKey::Min: m.memoryMin = v.value_or(kNoLimit); break;
        case io::MemoryKey::Low: m.memoryLow = v.value_or(kNoLimit); break;
        case io::MemoryKey::High: m.memoryHigh = v; break;
        case io::MemoryKey::Max: m.memoryMax = v; break;
        case io::MemoryKey::SwapMax: m.memorySwapMax = v; break;
        }
    }
    static void overlay(io::MemoryProperties& m, const io::MemoryProperties& p) {
        m.memoryMin = p.memoryMin ? p.memoryMin : m.memoryMin;
        m.memoryLow = p.memoryLow ? p.memoryLow : m.memoryLow;
        m.memoryHigh = p.memoryHigh ? p.memoryHigh : m.memoryHigh;
        m.memoryMax = p.memoryMax ? p.memoryMax : m.memoryMax;
        m.memorySwapMax = p.memorySwapMax ? p.memorySwapMax : m.memorySwapMax;
    }
    // As systemd's unit_write_settingf: the file of the property, replaced.
    void writeDropIns(const std::string& unit, const io::MemoryProperties& p) const {
        if (!dropInDir) {
            return;
        }
        const auto d = *dropInDir / (unit + ".d");
        std::filesystem::create_directories(d);
        auto write = [&](io::MemoryKey key, const Limit& v) {
            std::ofstream f(d / std::string(io::dropInName(key)), std::ios::trunc);
            f << "# This is a drop-in unit file extension, created via \"systemctl "
                 "set-property\"\n# or an equivalent operation. Do not edit.\n[Service]\n"
              << io::propertyName(key) << "=" << (v ? std::to_string(*v) : "infinity") << "\n";
        };
        if (p.memoryMin) write(io::MemoryKey::Min, Limit(*p.memoryMin));
        if (p.memoryLow) write(io::MemoryKey::Low, Limit(*p.memoryLow));
        if (p.memoryHigh) write(io::MemoryKey::High, *p.memoryHigh);
        if (p.memoryMax) write(io::MemoryKey::Max, *p.memoryMax);
        if (p.memorySwapMax) write(io::MemoryKey::SwapMax, *p.memorySwapMax);
    }

private:
    void later(std::function<void()> f) { queue_.push_back(std::move(f)); }
    std::deque<std::function<void()>> queue_;
};

} // namespace memqos::test

// SPDX-License-Identifier: Apache-2.0
#pragma once
// SystemdManager over D-Bus: org.freedesktop.systemd1 on one sd-bus
// connection pumped by a BusPump. Every method queues asynchronous calls
// (timeout 25 s) and returns at once; callbacks run later on the io thread,
// from the reply handler or from a handler posted to the io_context, never
// inside the call. A D-Bus error becomes an Error whose `what` reads
// "<Method> <unit>: <error name>: <error message>", e.g.
// "KillUnit foo.service: org.freedesktop.systemd1.NoSuchUnit: Unit foo.service
// not found.", and whose `code` is sd-bus's errno for that name (ENOENT for
// NoSuchUnit), EIO when it has none.
//
// Ownership: the bus and the pump (and its io_context) must outlive this object.
// Destroying it cancels outstanding calls and signal matches: their callbacks
// are never invoked (those already posted to the io_context still run; they
// do not touch this object).

#include "memqos/io/bus.hpp"
#include "memqos/io/systemd.hpp"

#include <systemd/sd-bus.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace memqos::io {

class SystemdDbus final : public SystemdManager {
public:
    static constexpr std::chrono::seconds kCallTimeout{25};
    // At most this many calls wait for a reply at once; more are queued in
    // order and sent as replies come in. dbus-daemon refuses a connection's
    // calls past its pending-reply limit (LimitsExceeded) and systemd answers
    // one at a time: a thousand units appearing at once must not become a
    // thousand calls at once. KillUnit and ListUnits are not held back (kills
    // are few and must not wait behind property writes; start-up waits for
    // ListUnits).
    static constexpr std::size_t kMaxCallsInFlight = 32;

    // Callbacks that must not run inside the call (argument errors, empty
    // property sets) are posted to pump.context().
    SystemdDbus(sd_bus* bus, BusPump& pump);
    ~SystemdDbus() override;
    SystemdDbus(const SystemdDbus&) = delete;
    SystemdDbus& operator=(const SystemdDbus&) = delete;

    // Adds matches for Reloading, UnitNew, JobRemoved and UnitRemoved of the
    // manager and for org.freedesktop.systemd1's NameOwnerChanged (a new
    // owner, as after daemon-reexec: Subscribe() again, then `reloaded`),
    // then calls Subscribe(). `done` gets the first error of those
    // (AlreadySubscribed counts as success), or ok when all succeeded. A
    // second subscribe() replaces the events and the matches of the first.
    // JobRemoved is passed on as unitStarted for every job whose result is
    // "done", stop jobs included: the daemon re-checks the unit.
    void subscribe(Events events, Done done) override;
    // LoadUnit -> Properties.GetAll(Unit) for Id, LoadState, ActiveState ->
    // Properties.Get(<Service|Scope|Slice>, ControlGroup) by the name's
    // suffix; a failed ControlGroup read (or another suffix) leaves it empty.
    void getUnit(const std::string& unit, Then<UnitInfo> then) override;
    // ListUnits(), keeping *.service, *.scope and *.slice (controlGroup empty).
    void listUnits(Then<std::vector<UnitInfo>> then) override;
    void setUnitProperties(const std::string& unit, const MemoryProperties& props,
                           Done done) override;
    void setUnitPropertiesUrgent(const std::string& unit, const MemoryProperties& props,
                                 Done done) override;
    // Properties: Description "memqos workload <unit>", Slice, ExecStart
    // [(argv[0], argv, false)], MemoryAccounting true, the memory properties;
    // empty argv: invalid_argument without a call.
    void startTransientSlice(const std::string& slice, Done done) override;
    void startTransientService(const std::string& unit, const std::string& slice,
                               const MemoryProperties& props, const std::vector<std::string>& argv,
                               Done done) override;
    // Properties: Description (as given; "memqos scope <unit>" when empty),
    // Slice (when not empty), PIDs, MemoryAccounting true, the memory
    // properties. UnitExists becomes code file_exists; its `what` still
    // names the D-Bus error.
    void startTransientScope(const std::string& unit, const std::string& slice,
                             const std::vector<std::uint32_t>& pids, const MemoryProperties& props,
                             const std::string& description, Done done) override;
    void killUnit(const std::string& unit, int signal, Done done) override;
    void reload(Done done) override;

    // Calls still waiting for a reply, and calls queued behind them (tests).
    std::size_t pendingCalls() const noexcept { return pending_.size(); }
    std::size_t queuedCalls() const noexcept { return queued_.size(); }

private:
    struct PendingCall;
    struct SubscribeState;
    using ReplyHandler = std::function<void(sd_bus_message* reply)>;

    enum class Urgency { Normal, Urgent };
    // Sends `m` with kCallTimeout, or queues it while kMaxCallsInFlight calls
    // are pending (Urgent: never queued); `handler` gets the reply or error
    // message. Returns the error (context: `what`) if it could not be sent or
    // queued; a queued call that later cannot be sent gets an error reply.
    Status send(sd_bus_message* m, ReplyHandler handler, const std::string& what,
                Urgency urgency = Urgency::Normal);
    Status sendNow(sd_bus_message* m, ReplyHandler handler, const std::string& what);
    // Sends queued calls while there is room.
    void sendQueued();
    // Runs `fn` on the io_context later.
    void post(std::function<void()> fn);
    void postDone(Done done, Status status);

    static int onReply(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onSignal(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onOwnerChanged(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    static int onMatchInstalled(sd_bus_message* m, void* userdata, sd_bus_error* error) noexcept;
    void subscribeStepDone(const std::shared_ptr<SubscribeState>& state, const Status& status);
    void dispatchSignal(sd_bus_message* m);
    void systemdOwnerChanged(sd_bus_message* m);
    void readUnitProperties(UnitInfo info, const std::string& path, const Then<UnitInfo>& then);
    void readControlGroup(UnitInfo info, const std::string& path, const Then<UnitInfo>& then);
    void sendUnitProperties(const std::string& unit, const MemoryProperties& props, Done done,
                            Urgency urgency);
    void callForStatus(const std::string& what, sd_bus_message* m, Done done,
                       Urgency urgency = Urgency::Normal);

    sd_bus* bus_;
    BusPump& pump_;
    std::unordered_map<const PendingCall*, std::unique_ptr<PendingCall>> pending_;
    struct QueuedCall {
        MessagePtr message;
        ReplyHandler handler;
        std::string what;
    };
    std::deque<QueuedCall> queued_;
    Events events_;
    // Between Reloading(true) and Reloading(false) systemd tears down and
    // re-creates every unit object, sending UnitRemoved for each (seen on
    // systemd 252 in the VM suite); those are not removals and are not
    // passed on. Units really gone by then are found by the refresh that
    // `reloaded` triggers.
    bool reloading_ = false;
    std::vector<SlotPtr> matches_;
    std::shared_ptr<SubscribeState> subscribing_;
};

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/systemd_dbus.hpp"

#include "memqos/io/log.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

namespace memqos::io {
namespace {

constexpr const char* kDestination = "org.freedesktop.systemd1";
constexpr const char* kManagerPath = "/org/freedesktop/systemd1";
constexpr const char* kManagerInterface = "org.freedesktop.systemd1.Manager";
constexpr const char* kUnitInterface = "org.freedesktop.systemd1.Unit";
constexpr const char* kPropertiesInterface = "org.freedesktop.DBus.Properties";
constexpr std::string_view kAlreadySubscribed = "org.freedesktop.systemd1.AlreadySubscribed";
constexpr const char* kUnitExists = "org.freedesktop.systemd1.UnitExists";
constexpr auto kCallTimeoutUsec =
    static_cast<std::uint64_t>(std::chrono::microseconds(SystemdDbus::kCallTimeout).count());

constexpr std::array<const char*, 4> kSignals = {"Reloading", "UnitNew", "JobRemoved",
                                                 "UnitRemoved"};
// systemd leaving and re-joining the bus: daemon-reexec (a new process that
// connects again), or a restart of dbus-daemon's connection to it.
constexpr const char* kOwnerMatch =
    "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
    "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.freedesktop.systemd1'";

// "<context>: <error name>: <error message>" with sd-bus's errno for the
// name (it knows systemd's names: NoSuchUnit -> ENOENT).
// A null reply is a call that could not be sent (see sendQueued()).
Error replyError(sd_bus_message* m, const std::string& context) {
    if (m == nullptr) {
        return makeError(std::errc::not_connected, context + ": could not be sent");
    }
    const sd_bus_error* e = sd_bus_message_get_error(m);
    int err = sd_bus_message_get_errno(m);
    if (err <= 0) {
        err = EIO;
    }
    std::string what = context + ": ";
    what += (e != nullptr && e->name != nullptr) ? e->name : "unknown D-Bus error";
    if (e != nullptr && e->message != nullptr && e->message[0] != '\0') {
        what += ": ";
        what += e->message;
    }
    return makeError(static_cast<std::errc>(err), std::move(what));
}

Error badReply(int r, const std::string& context) {
    return busError(r, context + ": unexpected reply");
}

bool isError(sd_bus_message* m) {
    return m == nullptr || sd_bus_message_is_method_error(m, nullptr) > 0;
}

Status replyStatus(sd_bus_message* m, const std::string& context) {
    if (isError(m)) {
        return replyError(m, context);
    }
    return okStatus();
}

bool hasNul(const std::string& s) {
    return s.find('\0') != std::string::npos;
}

// Appends to a message, remembering the first failure so that building code
// reads as a sequence; check ok() once at the end.
class Appender {
public:
    explicit Appender(sd_bus_message* m) : m_(m) {}
    template <typename... Args>
    Appender& append(const char* types, Args... args) {
        if (r_ >= 0) {
            r_ = sd_bus_message_append(m_, types, args...);
        }
        return *this;
    }
    Appender& string(const std::string& s) {
        if (r_ >= 0) {
            r_ = sd_bus_message_append_basic(m_, 's', s.c_str());
        }
        return *this;
    }
    Appender& open(char type, const char* contents) {
        if (r_ >= 0) {
            r_ = sd_bus_message_open_container(m_, type, contents);
        }
        return *this;
    }
    Appender& close() {
        if (r_ >= 0) {
            r_ = sd_bus_message_close_container(m_);
        }
        return *this;
    }
    int result() const { return r_; }

private:
    sd_bus_message* m_;
    int r_ = 0;
};

// The a(sv) entries of `props`, only the set ones; "no limit" is UINT64_MAX
// ("infinity" to systemd).
void appendMemoryProperties(Appender& a, const MemoryProperties& p) {
    core::forEachProperty(p, [&](const char* name, const Limit& value) {
        a.append("(sv)", name, "t", static_cast<std::uint64_t>(limitToBus(value)));
    });
}

Result<MessagePtr> newManagerCall(sd_bus* bus, const char* path, const char* interface,
                                  const char* member, const std::string& context) {
    sd_bus_message* raw = nullptr;
    const int r = sd_bus_message_new_method_call(bus, &raw, kDestination, path, interface, member);
    if (r < 0) {
        return busError(r, context);
    }
    return MessagePtr(raw);
}

// A Manager.`member` call with its arguments appended by `build(Appender&)`;
// the error names `context` when building fails.
template <typename Build>
Result<MessagePtr> buildManagerCall(sd_bus* bus, const char* member, const std::string& context,
                                    Build build) {
    auto m = newManagerCall(bus, kManagerPath, kManagerInterface, member, context);
    if (!m) {
        return m.error();
    }
    Appender a(m->get());
    build(a);
    if (a.result() < 0) {
        return busError(a.result(), context);
    }
    return m;
}

// StartTransientUnit(name, mode, properties, aux) for our units: `unit` in
// mode "fail", the a(sv) opened with Description= and, when `slice` is
// not empty, Slice=. The caller adds its own properties, then
// endTransientUnit().
void beginTransientUnit(Appender& a, const std::string& unit, const std::string& description,
                        const std::string& slice) {
    a.string(unit).append("s", "fail").open('a', "(sv)");
    a.append("(sv)", "Description", "s", description.c_str());
    if (!slice.empty()) {
        a.append("(sv)", "Slice", "s", slice.c_str());
    }
}

// MemoryAccounting=yes and the set ones of `props` close the a(sv); no
// auxiliary units.
void endTransientUnit(Appender& a, const MemoryProperties& props) {
    a.append("(sv)", "MemoryAccounting", "b", 1);
    appendMemoryProperties(a, props);
    a.close().append("a(sa(sv))", 0);
}

// The interface that carries ControlGroup for a unit of this name.
const char* cgroupInterface(std::string_view unit) {
    if (unit.ends_with(".service")) {
        return "org.freedesktop.systemd1.Service";
    }
    if (unit.ends_with(".scope")) {
        return "org.freedesktop.systemd1.Scope";
    }
    if (unit.ends_with(".slice")) {
        return "org.freedesktop.systemd1.Slice";
    }
    return nullptr;
}

bool isManagedType(std::string_view unit) {
    return unit.ends_with(".service") || unit.ends_with(".scope") || unit.ends_with(".slice");
}

// Walks a Properties.GetAll reply (a{sv}): `read(key)` reads the entry's
// variant and returns 1, or returns 0 to have it skipped, or a negative errno.
template <typename Read>
int readPropertyMap(sd_bus_message* m, Read read) {
    int r = sd_bus_message_enter_container(m, 'a', "{sv}");
    if (r < 0) {
        return r;
    }
    while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
        const char* key = nullptr;
        if ((r = sd_bus_message_read(m, "s", &key)) < 0) {
            return r;
        }
        if ((r = read(std::string_view(key))) < 0) {
            return r;
        }
        if (r == 0 && (r = sd_bus_message_skip(m, "v")) < 0) {
            return r;
        }
        if ((r = sd_bus_message_exit_container(m)) < 0) {
            return r;
        }
    }
    if (r < 0) {
        return r;
    }
    return sd_bus_message_exit_container(m);
}

// Properties.GetAll(Unit) reply: a{sv}; reads Id, LoadState, ActiveState,
// Transient.
int readUnitPropertyMap(sd_bus_message* m, UnitInfo& info) {
    return readPropertyMap(m, [&](std::string_view k) {
        if (k == "Transient") {
            int value = 0;
            const int r = sd_bus_message_read(m, "v", "b", &value);
            info.transient = value != 0;
            return r < 0 ? r : 1;
        }
        std::string* target = k == "Id"            ? &info.name
                              : k == "LoadState"   ? &info.loadState
                              : k == "ActiveState" ? &info.activeState
                                                   : nullptr;
        if (target == nullptr) {
            return 0;
        }
        const char* value = nullptr;
        const int r = sd_bus_message_read(m, "v", "s", &value);
        if (r >= 0) {
            *target = value;
        }
        return r < 0 ? r : 1;
    });
}

// ControlGroup and MemoryMin/Low/High/Max/SwapMax of a unit type's a{sv}
// (org.freedesktop.systemd1.Service, .Scope, .Slice). `info.memory` is set
// only when all five were there.
int readCgroupPropertyMap(sd_bus_message* m, UnitInfo& info) {
    std::optional<std::uint64_t> values[5];
    static constexpr std::string_view kNames[5] = {"MemoryMin", "MemoryLow", "MemoryHigh",
                                                   "MemoryMax", "MemorySwapMax"};
    const int r = readPropertyMap(m, [&](std::string_view k) {
        if (k == "ControlGroup") {
            const char* value = nullptr;
            const int rr = sd_bus_message_read(m, "v", "s", &value);
            if (rr >= 0) {
                info.controlGroup = value;
            }
            return rr < 0 ? rr : 1;
        }
        const auto* name = std::find(std::begin(kNames), std::end(kNames), k);
        if (name == std::end(kNames)) {
            return 0;
        }
        std::uint64_t value = 0;
        const int rr = sd_bus_message_read(m, "v", "t", &value);
        if (rr >= 0) {
            values[name - std::begin(kNames)] = value;
        }
        return rr < 0 ? rr : 1;
    });
    if (r < 0) {
        return r;
    }
    if (std::all_of(std::begin(values), std::end(values),
                    [](const auto& v) { return v.has_value(); })) {
        MemoryProperties p;
        p.memoryMin = static_cast<Bytes>(*values[0]);
        p.memoryLow = static_cast<Bytes>(*values[1]);
        p.memoryHigh = limitFromBus(*values[2]);
        p.memoryMax = limitFromBus(*values[3]);
        p.memorySwapMax = limitFromBus(*values[4]);
        info.memory = p;
    }
    return r;
}

} // namespace

struct SystemdDbus::PendingCall {
    SystemdDbus* owner = nullptr;
    SlotPtr slot;
    ReplyHandler handler;
};

// One subscribe(): the AddMatch calls and Subscribe() still outstanding.
struct SystemdDbus::SubscribeState {
    Done done;
    int remaining = 0;      // replies still expected, matches included
    int matchesPending = 0; // of which AddMatch replies
    std::optional<Error> firstError;
};

SystemdDbus::SystemdDbus(sd_bus* bus, BusPump& pump) : bus_(bus), pump_(pump) {}

// Unreferencing the slots removes their reply callbacks and matches from the
// connection, so nothing calls back into this object afterwards.
SystemdDbus::~SystemdDbus() = default;

void SystemdDbus::post(std::function<void()> fn) {
    boost::asio::post(pump_.context(), std::move(fn));
}

void SystemdDbus::postDone(Done done, Status status) {
    post([done = std::move(done), status = std::move(status)]() mutable {
        done(std::move(status));
    });
}

Status SystemdDbus::send(sd_bus_message* m, ReplyHandler handler, const std::string& what,
                         Urgency urgency) {
    if (urgency == Urgency::Normal && (pending_.size() >= kMaxCallsInFlight || !queued_.empty())) {
        queued_.push_back(QueuedCall{MessagePtr(sd_bus_message_ref(m)), std::move(handler), what});
        return okStatus();
    }
    return sendNow(m, std::move(handler), what);
}

Status SystemdDbus::sendNow(sd_bus_message* m, ReplyHandler handler, const std::string& what) {
    auto call = std::make_unique<PendingCall>();
    call->owner = this;
    call->handler = std::move(handler);
    sd_bus_slot* slot = nullptr;
    const int r =
        sd_bus_call_async(bus_, &slot, m, &SystemdDbus::onReply, call.get(), kCallTimeoutUsec);
    if (r < 0) {
        return busError(r, what);
    }
    call->slot.reset(slot);
    const PendingCall* key = call.get();
    pending_.emplace(key, std::move(call));
    pump_.kick();
    return okStatus();
}

void SystemdDbus::sendQueued() {
    while (!queued_.empty() && pending_.size() < kMaxCallsInFlight) {
        QueuedCall q = std::move(queued_.front());
        queued_.pop_front();
        ReplyHandler handler = q.handler; // kept for the failure below
        if (auto sent = sendNow(q.message.get(), std::move(q.handler), q.what); !sent) {
            log::warning("Cannot send {CALL}: {ERROR}", "CALL", q.what, "ERROR", sent.error().what);
            // A null reply: the handlers read it as "could not be sent".
            post([handler = std::move(handler)] { handler(nullptr); });
        }
    }
}

int SystemdDbus::onReply(sd_bus_message* m, void* userdata, sd_bus_error* /*error*/) noexcept {
    auto* call = static_cast<PendingCall*>(userdata);
    SystemdDbus* self = call->owner;
    ReplyHandler handler = std::move(call->handler);
    // Drops our slot reference; sd-bus holds its own while this runs.
    self->pending_.erase(call);
    // Room for a queued call; sent before the handler, which may destroy
    // `self`: nothing below uses it.
    self->sendQueued();
    handler(m);
    return 0;
}

void SystemdDbus::callForStatus(const std::string& what, sd_bus_message* m, Done done,
                                Urgency urgency) {
    auto sent = send(
        m, [done, what](sd_bus_message* reply) { done(replyStatus(reply, what)); }, what,
        urgency);
    if (!sent) {
        postDone(std::move(done), std::move(sent));
    }
}

// ---- subscribe --------------------------------------------------------------

void SystemdDbus::subscribe(Events events, Done done) {
    events_ = std::move(events);
    // A previous subscribe()'s matches go, and with them the install
    // callbacks it may still be waiting for: stop waiting for those.
    matches_.clear();
    if (auto previous = std::exchange(subscribing_, nullptr)) {
        previous->remaining -= previous->matchesPending;
        previous->matchesPending = 0;
        if (previous->remaining == 0 && previous->done) {
            postDone(std::move(previous->done),
                     previous->firstError ? Status(*previous->firstError) : okStatus());
        }
    }
    auto state = std::make_shared<SubscribeState>();
    state->done = std::move(done);
    subscribing_ = state;

    for (const char* member : kSignals) {
        sd_bus_slot* slot = nullptr;
        const int r = sd_bus_match_signal_async(bus_, &slot, kDestination, kManagerPath,
                                                kManagerInterface, member, &SystemdDbus::onSignal,
                                                &SystemdDbus::onMatchInstalled, this);
        if (r < 0) {
            if (!state->firstError) {
                state->firstError = busError(r, std::string("AddMatch ") + member);
            }
            continue;
        }
        matches_.emplace_back(slot);
        ++state->remaining;
        ++state->matchesPending;
    }

    {
        sd_bus_slot* slot = nullptr;
        const int r = sd_bus_add_match_async(bus_, &slot, kOwnerMatch, &SystemdDbus::onOwnerChanged,
                                             &SystemdDbus::onMatchInstalled, this);
        if (r < 0) {
            if (!state->firstError) {
                state->firstError = busError(r, "AddMatch NameOwnerChanged");
            }
        } else {
            matches_.emplace_back(slot);
            ++state->remaining;
            ++state->matchesPending;
        }
    }

    const std::string what = "Subscribe";
    auto m = newManagerCall(bus_, kManagerPath, kManagerInterface, "Subscribe", what);
    Status sent =
        m ? send(
                m->get(),
                [this, state, what](sd_bus_message* reply) {
                    Status status = okStatus();
                    const sd_bus_error* e =
                        reply != nullptr ? sd_bus_message_get_error(reply) : nullptr;
                    // A second Subscribe() from the same connection is fine.
                    if (isError(reply) && !(e != nullptr && e->name != nullptr &&
                                            std::string_view(e->name) == kAlreadySubscribed)) {
                        status = replyError(reply, what);
                    }
                    subscribeStepDone(state, status);
                },
                what)
          : Status(m.error());
    if (sent) {
        ++state->remaining;
    } else if (!state->firstError) {
        state->firstError = sent.error();
    }
    pump_.kick();
    if (state->remaining == 0) {
        // Nothing was queued: report the (first) error later, not inline.
        subscribing_.reset();
        Status status = state->firstError ? Status(*state->firstError) : okStatus();
        postDone(std::move(state->done), std::move(status));
    }
}

void SystemdDbus::subscribeStepDone(const std::shared_ptr<SubscribeState>& state,
                                    const Status& status) {
    if (!status && !state->firstError) {
        state->firstError = status.error();
    }
    if (--state->remaining > 0) {
        return;
    }
    if (subscribing_ == state) {
        subscribing_.reset();
    }
    Done done = std::move(state->done);
    if (done) {
        done(state->firstError ? Status(*state->firstError) : okStatus());
    }
}

int SystemdDbus::onMatchInstalled(sd_bus_message* m, void* userdata,
                                  sd_bus_error* /*error*/) noexcept {
    auto* self = static_cast<SystemdDbus*>(userdata);
    // Only the current subscribe()'s matches exist (older ones were
    // unreferenced, which cancels their install callbacks).
    if (auto state = self->subscribing_) {
        --state->matchesPending;
        self->subscribeStepDone(state, replyStatus(m, "AddMatch"));
    }
    return 0;
}

int SystemdDbus::onOwnerChanged(sd_bus_message* m, void* userdata,
                                sd_bus_error* /*error*/) noexcept {
    static_cast<SystemdDbus*>(userdata)->systemdOwnerChanged(m);
    return 0;
}

void SystemdDbus::systemdOwnerChanged(sd_bus_message* m) {
    const char* name = nullptr;
    const char* oldOwner = nullptr;
    const char* newOwner = nullptr;
    if (sd_bus_message_read(m, "sss", &name, &oldOwner, &newOwner) < 0) {
        return;
    }
    if (newOwner[0] == '\0') {
        log::info("systemd left the bus");
        return;
    }
    // A new systemd connection (daemon-reexec): it may have missed our
    // subscription and its Reloading(false) may never reach us; subscribe
    // again and treat it as a reload (the refresh re-applies every tier).
    log::info("systemd is on the bus again ({OWNER}); subscribing again", "OWNER", newOwner);
    reloading_ = false;
    const std::string what = "Subscribe";
    if (auto call = newManagerCall(bus_, kManagerPath, kManagerInterface, "Subscribe", what)) {
        auto sent = send(
            call->get(),
            [what](sd_bus_message* reply) {
                const sd_bus_error* e = reply != nullptr ? sd_bus_message_get_error(reply) : nullptr;
                if (isError(reply) && !(e != nullptr && e->name != nullptr &&
                                        std::string_view(e->name) == kAlreadySubscribed)) {
                    log::warning("Cannot subscribe to systemd again: {ERROR}", "ERROR",
                                 replyError(reply, what).what);
                }
            },
            what);
        if (!sent) {
            log::warning("Cannot subscribe to systemd again: {ERROR}", "ERROR", sent.error().what);
        }
    }
    if (events_.reloaded) {
        auto cb = events_.reloaded;
        cb();
    }
}

int SystemdDbus::onSignal(sd_bus_message* m, void* userdata, sd_bus_error* /*error*/) noexcept {
    static_cast<SystemdDbus*>(userdata)->dispatchSignal(m);
    return 0;
}

void SystemdDbus::dispatchSignal(sd_bus_message* m) {
    const char* raw = sd_bus_message_get_member(m);
    const std::string_view member = raw != nullptr ? raw : "";
    // Copies: a callback may call subscribe() and replace events_.
    if (member == "Reloading") {
        int starting = 0;
        if (sd_bus_message_read(m, "b", &starting) < 0) {
            return;
        }
        reloading_ = starting != 0;
        if (!reloading_ && events_.reloaded) {
            auto cb = events_.reloaded;
            cb();
        }
    } else if (member == "UnitNew" || member == "UnitRemoved") {
        const char* unit = nullptr;
        const char* path = nullptr;
        if (sd_bus_message_read(m, "so", &unit, &path) < 0) {
            return; // not systemd's signature: ignore
        }
        if (reloading_) {
            return; // see reloading_
        }
        auto cb = member == "UnitNew" ? events_.unitLoaded : events_.unitRemoved;
        if (cb) {
            cb(std::string(unit));
        }
    } else if (member == "JobRemoved") {
        std::uint32_t id = 0;
        const char* job = nullptr;
        const char* unit = nullptr;
        const char* result = nullptr;
        if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) < 0) {
            return;
        }
        if (std::string_view(result) == "done" && events_.unitStarted) {
            auto cb = events_.unitStarted;
            cb(std::string(unit));
        }
    }
}

// ---- getUnit / listUnits ----------------------------------------------------

void SystemdDbus::getUnit(const std::string& unit, Then<UnitInfo> then) {
    const std::string what = "LoadUnit " + unit;
    if (hasNul(unit)) {
        post([then, what] { then(invalid(what + ": unit name contains a NUL byte")); });
        return;
    }
    auto m = newManagerCall(bus_, kManagerPath, kManagerInterface, "LoadUnit", what);
    if (!m) {
        post([then, error = m.error()] { then(error); });
        return;
    }
    Appender a(m->get());
    if (a.string(unit).result() < 0) {
        post([then, error = busError(a.result(), what)] { then(error); });
        return;
    }
    auto sent = send(
        m->get(),
        [this, unit, then, what](sd_bus_message* reply) {
            if (isError(reply)) {
                then(replyError(reply, what));
                return;
            }
            const char* path = nullptr;
            if (const int r = sd_bus_message_read(reply, "o", &path); r < 0) {
                then(badReply(r, what));
                return;
            }
            readUnitProperties(
                UnitInfo{.name = unit, .loadState = {}, .activeState = {}, .controlGroup = {}, .memory = {}, .transient = false},
                path, then);
        },
        what);
    if (!sent) {
        post([then, error = sent.error()] { then(error); });
    }
}

// Runs in a reply handler, so `then` may be called directly.
void SystemdDbus::readUnitProperties(UnitInfo info, const std::string& path,
                                     const Then<UnitInfo>& then) {
    const std::string what = "GetAll " + info.name + " (" + path + ")";
    auto m = newManagerCall(bus_, path.c_str(), kPropertiesInterface, "GetAll", what);
    if (!m) {
        then(m.error());
        return;
    }
    Appender a(m->get());
    if (a.append("s", kUnitInterface).result() < 0) {
        then(busError(a.result(), what));
        return;
    }
    auto sent = send(
        m->get(),
        [this, info, path, then, what](sd_bus_message* reply) mutable {
            if (isError(reply)) {
                then(replyError(reply, what));
                return;
            }
            if (const int r = readUnitPropertyMap(reply, info); r < 0) {
                then(badReply(r, what));
                return;
            }
            readControlGroup(std::move(info), path, then);
        },
        what);
    if (!sent) {
        then(sent.error());
    }
}

// ControlGroup and the memory properties are optional: any failure leaves
// them empty.
void SystemdDbus::readControlGroup(UnitInfo info, const std::string& path,
                                   const Then<UnitInfo>& then) {
    const char* interface = cgroupInterface(info.name);
    if (interface == nullptr) {
        then(std::move(info));
        return;
    }
    const std::string what = "GetAll " + std::string(interface) + " " + info.name;
    auto m = newManagerCall(bus_, path.c_str(), kPropertiesInterface, "GetAll", what);
    if (!m) {
        then(std::move(info));
        return;
    }
    Appender a(m->get());
    if (a.append("s", interface).result() < 0) {
        then(std::move(info));
        return;
    }
    auto sent = send(
        m->get(),
        [info, then](sd_bus_message* reply) mutable {
            if (!isError(reply)) {
                (void)readCgroupPropertyMap(reply, info);
            }
            then(std::move(info));
        },
        what);
    if (!sent) {
        then(std::move(info));
    }
}

void SystemdDbus::listUnits(Then<std::vector<UnitInfo>> then) {
    const std::string what = "ListUnits";
    auto m = newManagerCall(bus_, kManagerPath, kManagerInterface, "ListUnits", what);
    if (!m) {
        post([then, error = m.error()] { then(error); });
        return;
    }
    auto sent = send(
        m->get(),
        [then, what](sd_bus_message* reply) {
            if (isError(reply)) {
                then(replyError(reply, what));
                return;
            }
            std::vector<UnitInfo> units;
            int r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
            while (r >= 0) {
                const char* name = nullptr;
                const char* description = nullptr;
                const char* load = nullptr;
                const char* active = nullptr;
                const char* sub = nullptr;
                const char* following = nullptr;
                const char* path = nullptr;
                std::uint32_t jobId = 0;
                const char* jobType = nullptr;
                const char* jobPath = nullptr;
                r = sd_bus_message_read(reply, "(ssssssouso)", &name, &description, &load, &active,
                                        &sub, &following, &path, &jobId, &jobType, &jobPath);
                if (r <= 0) {
                    break;
                }
                if (isManagedType(name)) {
                    units.push_back(UnitInfo{.name = name,
                                             .loadState = load,
                                             .activeState = active,
                                             .controlGroup = {}, .memory = {}, .transient = false});
                }
            }
            if (r < 0 || (r = sd_bus_message_exit_container(reply)) < 0) {
                then(badReply(r, what));
                return;
            }
            then(std::move(units));
        },
        what, Urgency::Urgent); // start-up waits for it: not behind queued property writes
    if (!sent) {
        post([then, error = sent.error()] { then(error); });
    }
}

// ---- writes -------------------------------------------------------------------

void SystemdDbus::setUnitProperties(const std::string& unit, const MemoryProperties& props,
                                    Done done) {
    sendUnitProperties(unit, props, std::move(done), Urgency::Normal);
}

void SystemdDbus::setUnitPropertiesUrgent(const std::string& unit, const MemoryProperties& props,
                                          Done done) {
    sendUnitProperties(unit, props, std::move(done), Urgency::Urgent);
}

void SystemdDbus::sendUnitProperties(const std::string& unit, const MemoryProperties& props,
                                     Done done, Urgency urgency) {
    if (props.empty()) {
        postDone(std::move(done), okStatus());
        return;
    }
    const std::string what = "SetUnitProperties " + unit;
    if (hasNul(unit)) {
        postDone(std::move(done), invalid(what + ": unit name contains a NUL byte"));
        return;
    }
    auto m = buildManagerCall(bus_, "SetUnitProperties", what, [&](Appender& a) {
        a.string(unit).append("b", 1).open('a', "(sv)"); // runtime = true
        appendMemoryProperties(a, props);
        a.close();
    });
    if (!m) {
        postDone(std::move(done), m.error());
        return;
    }
    callForStatus(what, m->get(), std::move(done), urgency);
}

void SystemdDbus::startTransientService(const std::string& unit, const std::string& slice,
                                        const MemoryProperties& props,
                                        const std::vector<std::string>& argv, Done done) {
    const std::string what = "StartTransientUnit " + unit;
    if (argv.empty()) {
        postDone(std::move(done), invalid(what + ": empty command line"));
        return;
    }
    bool nul = hasNul(unit) || hasNul(slice);
    for (const auto& arg : argv) {
        nul = nul || hasNul(arg);
    }
    if (nul) {
        postDone(std::move(done), invalid(what + ": argument contains a NUL byte"));
        return;
    }
    auto m = buildManagerCall(bus_, "StartTransientUnit", what, [&](Appender& a) {
        beginTransientUnit(a, unit, "memqos workload " + unit, slice);
        // ExecStart a(sasb): one command, path = argv[0], ignore-failure = false.
        a.open('r', "sv").append("s", "ExecStart").open('v', "a(sasb)").open('a', "(sasb)");
        a.open('r', "sasb").string(argv.front()).open('a', "s");
        for (const auto& arg : argv) {
            a.string(arg);
        }
        a.close().append("b", 0).close().close().close().close();
        endTransientUnit(a, props);
    });
    if (!m) {
        postDone(std::move(done), m.error());
        return;
    }
    callForStatus(what, m->get(), std::move(done));
}

void SystemdDbus::startTransientSlice(const std::string& slice, Done done) {
    const std::string what = "StartTransientUnit " + slice;
    if (hasNul(slice) || !slice.ends_with(".slice")) {
        postDone(std::move(done), invalid(what + ": not a slice name"));
        return;
    }
    auto m = buildManagerCall(bus_, "StartTransientUnit", what, [&](Appender& a) {
        beginTransientUnit(a, slice, "memqos class slice " + slice, {});
        endTransientUnit(a, MemoryProperties{});
    });
    if (!m) {
        postDone(std::move(done), m.error());
        return;
    }
    callForStatus(what, m->get(), [done = std::move(done)](Status st) {
        // Started before (by an earlier memqosd, or a unit file): fine.
        if (!st && st.error().what.find("UnitExists") != std::string::npos) {
            done(okStatus());
            return;
        }
        done(st);
    });
}

void SystemdDbus::startTransientScope(const std::string& unit, const std::string& slice,
                                      const std::vector<std::uint32_t>& pids,
                                      const MemoryProperties& props,
                                      const std::string& description, Done done) {
    const std::string what = "StartTransientUnit " + unit;
    if (hasNul(unit) || !unit.ends_with(".scope")) {
        postDone(std::move(done), invalid(what + ": not a scope name"));
        return;
    }
    // systemd refuses a scope without processes; say so before asking.
    if (pids.empty()) {
        postDone(std::move(done), invalid(what + ": no processes to move"));
        return;
    }
    if (hasNul(slice) || hasNul(description)) {
        postDone(std::move(done), invalid(what + ": argument contains a NUL byte"));
        return;
    }
    auto m = buildManagerCall(bus_, "StartTransientUnit", what, [&](Appender& a) {
        beginTransientUnit(a, unit, description.empty() ? "memqos scope " + unit : description,
                           slice);
        a.open('r', "sv").append("s", "PIDs").open('v', "au").open('a', "u");
        for (const std::uint32_t pid : pids) {
            a.append("u", pid);
        }
        a.close().close().close();
        endTransientUnit(a, props);
    });
    if (!m) {
        postDone(std::move(done), m.error());
        return;
    }
    auto sent = send(
        m->get(),
        [done, what](sd_bus_message* reply) {
            if (!isError(reply)) {
                done(okStatus());
                return;
            }
            Error error = replyError(reply, what);
            // Told apart by name, not by sd-bus's errno table for it.
            if (sd_bus_message_is_method_error(reply, kUnitExists) > 0) {
                error.code = std::errc::file_exists;
            }
            done(std::move(error));
        },
        what);
    if (!sent) {
        postDone(std::move(done), std::move(sent));
    }
}

void SystemdDbus::killUnit(const std::string& unit, int signal, Done done) {
    const std::string what = "KillUnit " + unit;
    if (hasNul(unit)) {
        postDone(std::move(done), invalid(what + ": unit name contains a NUL byte"));
        return;
    }
    auto m = buildManagerCall(bus_, "KillUnit", what,
                              [&](Appender& a) { a.string(unit).append("si", "all", signal); });
    if (!m) {
        postDone(std::move(done), m.error());
        return;
    }
    callForStatus(what, m->get(), std::move(done), Urgency::Urgent);
}

void SystemdDbus::reload(Done done) {
    const std::string what = "Reload";
    auto m = buildManagerCall(bus_, "Reload", what, [](Appender&) {});
    if (!m) {
        postDone(std::move(done), m.error());
        return;
    }
    // Behind queued property writes: they are memqos's, and a reload that
    // overtook them would only be followed by them.
    callForStatus(what, m->get(), std::move(done), Urgency::Normal);
}

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#include "bus_service.hpp"

#include "memqos/core/placement.hpp"
#include "memqos/io/bus_message.hpp"
#include "memqos/io/bus_names.hpp"
#include "memqos/io/log.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <map>
#include <set>
#include <string_view>
#include <type_traits>
#include <variant>

namespace memqos::daemon {

using io::bus_names::kBusName;
using io::bus_names::kClassInterface;
using io::bus_names::kClassPrefix;
using io::bus_names::kManagerInterface;
using io::bus_names::kManagerPath;
using io::bus_names::kWorkloadInterface;
using io::bus_names::kWorkloadPrefix;

namespace {

BusService& self(void* userdata) { return *static_cast<BusService*>(userdata); }

struct FreeDeleter {
    void operator()(char* p) const noexcept { std::free(p); } // NOLINT
};
using CString = std::unique_ptr<char, FreeDeleter>;

// Mutating members are for uid 0 only, whatever the bus policy says. The
// decision uses only what the bus vouches for, as systemd does
// (bus-polkit.c): the effective uid the bus driver recorded when the caller
// connected (SO_PEERCRED, which dbus-daemon and dbus-broker return as
// UnixUserID), never a field sd-bus would read from /proc/PID ("augmented"):
// between the call and that read the caller can change its uids, exec a
// setuid binary, or exit and have its PID reused.
bool requireRoot(sd_bus_message* m, sd_bus_error* err, void* ud) {
    const char* member = sd_bus_message_get_member(m);
    const char* sender = sd_bus_message_get_sender(m);
    if (sender != nullptr) {
        if (const auto uid = self(ud).knownUid(sender)) {
            if (*uid != 0) {
                sd_bus_error_setf(err, SD_BUS_ERROR_ACCESS_DENIED,
                                  "%s changes memqos state and is for root only (caller uid %u)",
                                  member, static_cast<unsigned>(*uid));
                return false;
            }
            self(ud).markDirty();
            return true;
        }
    }
    sd_bus_creds* raw = nullptr;
    int r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &raw);
    std::unique_ptr<sd_bus_creds, decltype(&sd_bus_creds_unref)> creds(raw, &sd_bus_creds_unref);
    if (r >= 0 && (sd_bus_creds_get_augmented_mask(raw) & SD_BUS_CREDS_EUID) != 0) {
        sd_bus_error_setf(err, SD_BUS_ERROR_ACCESS_DENIED,
                          "the bus did not vouch for the caller's uid (only /proc did); %s is "
                          "for root only",
                          member);
        return false;
    }
    uid_t uid = 1;
    if (r >= 0) {
        r = sd_bus_creds_get_euid(raw, &uid);
    }
    if (r < 0) {
        sd_bus_error_setf(err, SD_BUS_ERROR_ACCESS_DENIED,
                          "cannot determine the caller's uid (%s); %s is for root only",
                          std::strerror(-r), member);
        return false;
    }
    if (sender != nullptr) {
        self(ud).rememberUid(sender, uid);
    }
    if (uid != 0) {
        sd_bus_error_setf(err, SD_BUS_ERROR_ACCESS_DENIED,
                          "%s changes memqos state and is for root only (caller uid %u)", member,
                          static_cast<unsigned>(uid));
        return false;
    }
    self(ud).markDirty(); // a call that may change properties: compare them after it
    return true;
}

// An error message as the bus can carry it: valid UTF-8 as sd-bus checks it
// (a code point that is not a surrogate, not U+FDD0..U+FDEF, not U+xFFFE or
// U+xFFFF) with anything else as '?', and at most kMaxErrorMessage bytes.
// Messages quote what the caller sent, cut to a length that may split a
// character: sd-bus refuses to send such a string, and the caller would wait
// for a reply that never comes.
constexpr std::size_t kMaxErrorMessage = 1024;

std::size_t utf8Sequence(std::string_view s, std::size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    char32_t cp = 0;
    if (c >= 0x01 && c < 0x80) {
        return 1;
    }
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < n; ++k) {
        const auto cc = static_cast<unsigned char>(s[i + k]);
        if ((cc & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (cc & 0x3F);
    }
    constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp >= 0x110000 || (cp & 0xFFFFF800) == 0xD800 ||
        (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) {
        return 0;
    }
    return n;
}

std::string busText(std::string_view s) {
    std::string out;
    out.reserve(std::min(s.size(), kMaxErrorMessage));
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8Sequence(s, i);
        if (out.size() + std::max<std::size_t>(n, 1) > kMaxErrorMessage - 3) {
            out += "\xe2\x80\xa6"; // …
            break;
        }
        if (n == 0) {
            out += '?';
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

// Keeps a method call alive until its asynchronous reply.
struct PendingCall {
    sd_bus_message* m;
    BusService* service;
    explicit PendingCall(sd_bus_message* msg, BusService& s)
        : m(sd_bus_message_ref(msg)), service(&s) {}
    PendingCall(const PendingCall& o) : m(sd_bus_message_ref(o.m)), service(o.service) {}
    PendingCall& operator=(const PendingCall&) = delete;
    ~PendingCall() { sd_bus_message_unref(m); }
    // After the reply was queued: send it, and compare the properties (the
    // call's effect may have come after its dispatch: a systemd answer, a
    // state write).
    void answered() const { service->callAnswered(); }
    void error(const ApiError& e) const {
        sd_bus_error be{}; // SD_BUS_ERROR_NULL, without its C99 compound literal
        sd_bus_error_set(&be, e.name.c_str(), busText(e.message).c_str());
        sd_bus_reply_method_error(m, &be);
        sd_bus_error_free(&be);
        answered();
    }
    // The answer of a call with no out-arguments: its error, or an empty
    // return.
    void done(const ApiResult<Done>& res) const {
        if (!res.ok()) {
            error(res.error());
            return;
        }
        sd_bus_reply_method_return(m, "");
        answered();
    }
};

int setError(sd_bus_error* err, const ApiError& e) {
    return sd_bus_error_set(err, e.name.c_str(), busText(e.message).c_str());
}

// Replies to the call `m` with its one out-argument, an array of `contents`
// holding one element per item (io::appendArray's `each`), and sends it.
template <typename Items, typename Each>
int replyArray(sd_bus_message* m, const char* contents, const Items& items, Each&& each) {
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_return(m, &raw);
    if (r < 0) {
        return r;
    }
    io::MessagePtr reply(raw);
    if ((r = io::appendArray(raw, contents, items, std::forward<Each>(each))) < 0) {
        return r;
    }
    return sd_bus_send(nullptr, raw, nullptr);
}

// ---------------------------------------------------------------- Manager

int getVersion(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply, void*,
               sd_bus_error*) {
    return sd_bus_message_append(reply, "s", MEMQOS_VERSION);
}

template <typename F>
int appendT(sd_bus_message* reply, F value) {
    return sd_bus_message_append(reply, "t", static_cast<std::uint64_t>(value));
}

#define MEMQOS_T_GETTER(fn, expr)                                                               \
    int fn(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply, void* ud,     \
           sd_bus_error*) {                                                                     \
        auto& mgr = self(ud).manager();                                                         \
        return appendT(reply, (expr));                                                          \
    }
MEMQOS_T_GETTER(getMemoryTotal, mgr.memoryTotal())
MEMQOS_T_GETTER(getMemoryAvailable, mgr.memoryAvailable())
MEMQOS_T_GETTER(getReclaimedAllocatable, mgr.reclaimedAllocatable())
MEMQOS_T_GETTER(getSwapTotal, mgr.swapTotal())
MEMQOS_T_GETTER(getSwapFree, mgr.swapFree())
MEMQOS_T_GETTER(getNodeReserved, mgr.nodeReserved())
MEMQOS_T_GETTER(getUpInstancesMaxMemory, mgr.upInstancesMaxMemory())
#undef MEMQOS_T_GETTER

int getMemoryRatio(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply, void* ud,
                   sd_bus_error*) {
    return sd_bus_message_append(reply, "d", self(ud).manager().config().overcommit.memoryRatio);
}
int getMemoryPressureSome(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply,
                          void* ud, sd_bus_error*) {
    return sd_bus_message_append(reply, "d", self(ud).manager().memoryPressureSome());
}
int getMemoryPressureFull(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply,
                          void* ud, sd_bus_error*) {
    return sd_bus_message_append(reply, "d", self(ud).manager().memoryPressureFull());
}
int getPressureLevel(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply,
                     void* ud, sd_bus_error*) {
    return sd_bus_message_append(reply, "u", self(ud).manager().pressureLevel());
}
int getAdmissionOpen(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply,
                     void* ud, sd_bus_error*) {
    return sd_bus_message_append(reply, "b", static_cast<int>(self(ud).manager().admissionOpen()));
}
int getDryRun(sd_bus*, const char*, const char*, const char*, sd_bus_message* reply, void* ud,
              sd_bus_error*) {
    return sd_bus_message_append(reply, "b", static_cast<int>(self(ud).manager().dryRun()));
}

int listClasses(sd_bus_message* m, void* ud, sd_bus_error*) {
    auto classes = self(ud).manager().config().classes;
    std::sort(classes.begin(), classes.end(),
              [](const auto& a, const auto& b) { return a.rank > b.rank; });
    return replyArray(m, "(so)", classes, [](sd_bus_message* reply, const auto& c) {
        return sd_bus_message_append(reply, "(so)", c.name.c_str(),
                                     classObjectPath(c.name).c_str());
    });
}

int listWorkloads(sd_bus_message* m, void* ud, sd_bus_error*) {
    return replyArray(m, "(ssso)", self(ud).manager().workloads(),
                      [](sd_bus_message* reply, const auto& entry) {
                          const auto& [id, w] = entry;
                          const std::string kind(core::toString(w.workload.kind));
                          return sd_bus_message_append(reply, "(ssso)", id.c_str(), kind.c_str(),
                                                       w.workload.className.c_str(),
                                                       workloadObjectPath(id).c_str());
                      });
}

int assignWorkload(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    const char* id = nullptr;
    const char* cls = nullptr;
    std::uint64_t request = 0;
    std::uint64_t limit = 0;
    int persist = 0;
    int r = sd_bus_message_read(m, "ssttb", &id, &cls, &request, &limit, &persist);
    if (r < 0) {
        return r;
    }
    PendingCall call(m, self(ud));
    self(ud).manager().assign(id, cls, request, limit, persist != 0,
                              [call](ApiResult<std::string> res) {
                                  if (!res.ok()) {
                                      call.error(res.error());
                                      return;
                                  }
                                  sd_bus_reply_method_return(
                                      call.m, "o", workloadObjectPath(res.value()).c_str());
                                  call.answered();
                              });
    return 1;
}

int unassignWorkload(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    const char* id = nullptr;
    int r = sd_bus_message_read(m, "s", &id);
    if (r < 0) {
        return r;
    }
    PendingCall call(m, self(ud));
    self(ud).manager().unassign(id, [call](ApiResult<Done> res) { call.done(res); });
    return 1;
}

int release(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    PendingCall call(m, self(ud));
    self(ud).manager().releaseAll([call](ApiResult<std::vector<std::string>> res) {
        if (!res.ok()) {
            call.error(res.error());
            return;
        }
        sd_bus_message* reply = nullptr;
        int r = sd_bus_message_new_method_return(call.m, &reply);
        if (r >= 0) {
            r = sd_bus_message_open_container(reply, 'a', "s");
        }
        for (const auto& id : res.value()) {
            if (r >= 0) {
                r = sd_bus_message_append(reply, "s", id.c_str());
            }
        }
        if (r >= 0) {
            r = sd_bus_message_close_container(reply);
        }
        if (r >= 0) {
            r = sd_bus_send(nullptr, reply, nullptr);
        }
        sd_bus_message_unref(reply);
        if (r < 0) {
            log::warning("Cannot answer Release: {ERROR}", "ERROR", std::strerror(-r));
        }
        call.answered();
    });
    return 1;
}

int reclaimWorkload(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    const char* id = nullptr;
    std::uint64_t bytes = 0;
    int r = sd_bus_message_read(m, "st", &id, &bytes);
    if (r < 0) {
        return r;
    }
    PendingCall call(m, self(ud));
    self(ud).manager().reclaimNow(id, bytes, [call](ApiResult<Bytes> res) {
        if (!res.ok()) {
            call.error(res.error());
            return;
        }
        sd_bus_reply_method_return(call.m, "t", static_cast<std::uint64_t>(res.value()));
        call.answered();
    });
    return 1;
}

int runWorkload(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    const char* name = nullptr;
    const char* cls = nullptr;
    std::uint64_t request = 0;
    std::uint64_t limit = 0;
    int r = sd_bus_message_read(m, "sstt", &name, &cls, &request, &limit);
    if (r < 0) {
        return r;
    }
    char** strv = nullptr;
    if ((r = sd_bus_message_read_strv(m, &strv)) < 0) {
        return r;
    }
    std::vector<std::string> argv;
    for (char** p = strv; p != nullptr && *p != nullptr; ++p) {
        argv.emplace_back(*p);
        std::free(*p); // NOLINT
    }
    std::free(strv); // NOLINT
    PendingCall call(m, self(ud));
    self(ud).manager().run(name, cls, request, limit, argv, [call](ApiResult<std::string> res) {
        if (!res.ok()) {
            call.error(res.error());
            return;
        }
        sd_bus_reply_method_return(call.m, "o", workloadObjectPath(res.value()).c_str());
        call.answered();
    });
    return 1;
}

int appendNumbers(sd_bus_message* raw, const core::Numbers& numbers) {
    return io::appendArray(raw, "{st}", numbers, [](sd_bus_message* m, const auto& entry) {
        const auto& [k, v] = entry;
        return sd_bus_message_append(m, "{st}", k.c_str(), static_cast<std::uint64_t>(v));
    });
}

int verifyPlacement(sd_bus_message* m, void* ud, sd_bus_error* err) {
    std::uint64_t memory = 0;
    std::uint64_t minMemory = 0;
    int r = sd_bus_message_read(m, "tt", &memory, &minMemory);
    if (r < 0) {
        return r;
    }
    Manager::PlacementRequest request;
    if ((r = sd_bus_message_enter_container(m, 'a', "{sv}")) < 0) {
        return r;
    }
    constexpr const char* kKnown =
        " (known: failover_reserve t, refuse_soft b, instance s, class s)";
    while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
        const char* key = nullptr;
        if ((r = sd_bus_message_read(m, "s", &key)) < 0) {
            return r;
        }
        const std::string k(key);
        const auto wrongType = [&](const char* type) {
            return setError(err, apiError("InvalidArgument", "option " + k + " must be of type " +
                                                                 type + kKnown));
        };
        if (k == "failover_reserve") {
            std::uint64_t v = 0;
            if (sd_bus_message_read(m, "v", "t", &v) < 0) {
                return wrongType("t (uint64, bytes)");
            }
            request.failoverReserve = v;
        } else if (k == "refuse_soft") {
            int v = 0;
            if (sd_bus_message_read(m, "v", "b", &v) < 0) {
                return wrongType("b (boolean)");
            }
            request.refuseSoft = v != 0;
        } else if (k == "instance") {
            const char* v = nullptr;
            if (sd_bus_message_read(m, "v", "s", &v) < 0) {
                return wrongType("s (string)");
            }
            if (auto ok = core::validateInstanceName(v); !ok) {
                return setError(err, apiError("InvalidArgument", "option instance: " +
                                                                     ok.error().what));
            }
            request.instance = v;
        } else if (k == "class") {
            const char* v = nullptr;
            if (sd_bus_message_read(m, "v", "s", &v) < 0) {
                return wrongType("s (string)");
            }
            if (*v != '\0') {
                if (auto unknown = self(ud).manager().unknownClass(v)) {
                    return setError(err, *unknown);
                }
            }
            request.className = v;
        } else {
            return setError(err, apiError("InvalidArgument",
                                          "unknown option '" + k.substr(0, 80) + "'" + kKnown));
        }
        if ((r = sd_bus_message_exit_container(m)) < 0) {
            return r;
        }
    }
    if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0) {
        return r;
    }
    if (memory == 0 || memory == kNoLimit) {
        return setError(err, apiError("InvalidArgument",
                                      "memory must be a size in bytes above 0 and below 'max'"));
    }
    if (minMemory > memory) {
        return setError(err, apiError("InvalidArgument", "min_memory " + std::to_string(minMemory) +
                                                             " is above memory " +
                                                             std::to_string(memory)));
    }
    const auto v = self(ud).manager().verifyPlacement(memory, minMemory, request);
    sd_bus_message* raw = nullptr;
    if ((r = sd_bus_message_new_method_return(m, &raw)) < 0) {
        return r;
    }
    io::MessagePtr reply(raw);
    const std::string kind(core::toString(v.kind));
    if ((r = sd_bus_message_append(raw, "ss", kind.c_str(), v.message.c_str())) < 0) {
        return r;
    }
    if ((r = appendNumbers(raw, v.numbers)) < 0) {
        return r;
    }
    if (v.kind == core::VerdictKind::Hard) {
        // Anyone may ask: rate-limited, so that a loop of calls cannot use up
        // journald's rate limit for memqosd and crowd out kill records.
        const auto a = self(ud).placementLog().admit(util::LogLimit::Clock::now());
        if (a.log && a.suppressed > 0) {
            log::notice("Placement refused: {MESSAGE} ({SUPPRESSED} refusals before it not "
                        "logged: at most {BURST} a minute)",
                        "MESSAGE", v.message, "SUPPRESSED", a.suppressed, "BURST",
                        self(ud).placementLog().burst(), "MESSAGE_ID",
                        log::kMessagePlacementRefused);
        } else if (a.log) {
            log::notice("Placement refused: {MESSAGE}", "MESSAGE", v.message, "MESSAGE_ID",
                        log::kMessagePlacementRefused);
        } else if (a.firstDropped) {
            log::notice("Further placement refusals this minute are not logged (at most {BURST} "
                        "a minute; the next logged one says how many)",
                        "BURST", self(ud).placementLog().burst());
        }
    }
    return sd_bus_send(nullptr, raw, nullptr);
}

int verify(sd_bus_message* m, void* ud, sd_bus_error*) {
    const auto findings = self(ud).manager().verify();
    return replyArray(m, "(sss)", findings, [](sd_bus_message* reply, const auto& f) {
        return sd_bus_message_append(reply, "(sss)", f.severity.c_str(), f.code.c_str(),
                                     f.message.c_str());
    });
}

int recordInstance(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    const char* name = nullptr;
    std::uint64_t minMemory = 0;
    std::uint64_t maxMemory = 0;
    int up = 0;
    int r = sd_bus_message_read(m, "sttb", &name, &minMemory, &maxMemory, &up);
    if (r < 0) {
        return r;
    }
    PendingCall call(m, self(ud));
    self(ud).manager().recordInstance(name, minMemory, maxMemory, up != 0,
                                      [call](ApiResult<Done> res) { call.done(res); });
    return 1;
}

int forgetInstance(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    const char* name = nullptr;
    int r = sd_bus_message_read(m, "s", &name);
    if (r < 0) {
        return r;
    }
    PendingCall call(m, self(ud));
    self(ud).manager().forgetInstance(name, [call](ApiResult<Done> res) { call.done(res); });
    return 1;
}

int listInstances(sd_bus_message* m, void* ud, sd_bus_error*) {
    return replyArray(m, "(sttb)", self(ud).manager().instances(),
                      [](sd_bus_message* reply, const auto& entry) {
                          const auto& [name, i] = entry;
                          return sd_bus_message_append(reply, "(sttb)", name.c_str(),
                                                       static_cast<std::uint64_t>(i.minMemory),
                                                       static_cast<std::uint64_t>(i.maxMemory),
                                                       static_cast<int>(i.up));
                      });
}

// One (tsssa{st}) of ListKills.
int appendKill(sd_bus_message* m, const io::KillRecord& k) {
    int r = sd_bus_message_open_container(m, 'r', "tsssa{st}");
    if (r < 0 ||
        (r = sd_bus_message_append(m, "tsss", static_cast<std::uint64_t>(k.timeUsec), k.id.c_str(),
                                   k.className.c_str(), k.reason.c_str())) < 0 ||
        (r = appendNumbers(m, k.numbers)) < 0) {
        return r;
    }
    return sd_bus_message_close_container(m);
}

int listKills(sd_bus_message* m, void* ud, sd_bus_error*) {
    return replyArray(m, "(tsssa{st})", self(ud).manager().kills(), appendKill);
}

int reload(sd_bus_message* m, void* ud, sd_bus_error* err) {
    if (!requireRoot(m, err, ud)) {
        return -EACCES;
    }
    auto res = self(ud).manager().reload();
    if (!res.ok()) {
        return setError(err, res.error());
    }
    // The keys that need a restart ("Manager.StateDirectory needs a restart: ...").
    std::vector<const char*> strv;
    for (const auto& n : res.value()) {
        strv.push_back(n.c_str());
    }
    strv.push_back(nullptr);
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_return(m, &raw);
    if (r < 0) {
        return r;
    }
    io::MessagePtr reply(raw);
    if ((r = sd_bus_message_append_strv(raw, const_cast<char**>(strv.data()))) < 0) {
        return r;
    }
    return sd_bus_send(nullptr, raw, nullptr);
}

// The root-only methods: each handler's requireRoot() is the one check (the
// uid the bus vouches for, asked once per connection). sd-bus's own check
// for methods without SD_BUS_VTABLE_UNPRIVILEGED (sd_bus_query_sender_
// privilege: root, or CAP_SYS_ADMIN) would ask dbus-daemon again on every
// call, a blocking round trip on the loop, and let CAP_SYS_ADMIN in too.
// Every handler of a method with this flag starts with requireRoot (the bus
// suite calls each as uid 65534 with the bus policy opened).
constexpr std::uint64_t kRootOnly = SD_BUS_VTABLE_UNPRIVILEGED;

const sd_bus_vtable kManagerVtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Version", "s", getVersion, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("MemoryTotal", "t", getMemoryTotal, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("MemoryAvailable", "t", getMemoryAvailable, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SwapTotal", "t", getSwapTotal, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SwapFree", "t", getSwapFree, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("NodeReserved", "t", getNodeReserved, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("MemoryRatio", "d", getMemoryRatio, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("PressureLevel", "u", getPressureLevel, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("AdmissionOpen", "b", getAdmissionOpen, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("DryRun", "b", getDryRun, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ReclaimedAllocatable", "t", getReclaimedAllocatable, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("MemoryPressureSome", "d", getMemoryPressureSome, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("MemoryPressureFull", "d", getMemoryPressureFull, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("UpInstancesMaxMemory", "t", getUpInstancesMaxMemory, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_NAMES("ListClasses", "", , "a(so)", SD_BUS_PARAM(classes), listClasses,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("ListWorkloads", "", , "a(ssso)", SD_BUS_PARAM(workloads),
                             listWorkloads, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("AssignWorkload", "ssttb",
                             SD_BUS_PARAM(id) SD_BUS_PARAM(class) SD_BUS_PARAM(request)
                                 SD_BUS_PARAM(limit) SD_BUS_PARAM(persist),
                             "o", SD_BUS_PARAM(workload), assignWorkload, kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("UnassignWorkload", "s", SD_BUS_PARAM(id), "", , unassignWorkload,
                             kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("Release", "", , "as", SD_BUS_PARAM(released), release, kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("RunWorkload", "ssttas",
                             SD_BUS_PARAM(name) SD_BUS_PARAM(class) SD_BUS_PARAM(request)
                                 SD_BUS_PARAM(limit) SD_BUS_PARAM(argv),
                             "o", SD_BUS_PARAM(workload), runWorkload, kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("VerifyPlacement", "tta{sv}",
                             SD_BUS_PARAM(memory) SD_BUS_PARAM(min_memory) SD_BUS_PARAM(options),
                             "ssa{st}",
                             SD_BUS_PARAM(verdict) SD_BUS_PARAM(message) SD_BUS_PARAM(numbers),
                             verifyPlacement, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Verify", "", , "a(sss)", SD_BUS_PARAM(findings), verify,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Reload", "", , "as", SD_BUS_PARAM(restart_needed), reload, kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("RecordInstance", "sttb",
                             SD_BUS_PARAM(name) SD_BUS_PARAM(min_memory) SD_BUS_PARAM(max_memory)
                                 SD_BUS_PARAM(up),
                             "", , recordInstance, kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("ForgetInstance", "s", SD_BUS_PARAM(name), "", , forgetInstance,
                             kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("Reclaim", "st", SD_BUS_PARAM(id) SD_BUS_PARAM(bytes), "t",
                             SD_BUS_PARAM(reclaimed), reclaimWorkload, kRootOnly),
    SD_BUS_METHOD_WITH_NAMES("ListInstances", "", , "a(sttb)", SD_BUS_PARAM(instances),
                             listInstances, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("ListKills", "", , "a(tsssa{st})", SD_BUS_PARAM(kills), listKills,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_NAMES("PressureLevelChanged", "us", SD_BUS_PARAM(level) SD_BUS_PARAM(reason),
                             0),
    SD_BUS_SIGNAL_WITH_NAMES("WorkloadKilled", "sssa{st}",
                             SD_BUS_PARAM(id) SD_BUS_PARAM(class) SD_BUS_PARAM(reason)
                                 SD_BUS_PARAM(numbers),
                             0),
    SD_BUS_VTABLE_END,
};

// ---------------------------------------------------------------- objects

// A fallback vtable's find callback: 1 with the BusService as the object's
// userdata when the object exists, else 0 (sd-bus answers UnknownObject).
int foundObject(bool exists, void* ud, void** found) {
    if (!exists) {
        return 0;
    }
    *found = ud;
    return 1;
}

// A node enumerator's answer: the path `pathOf(item)` of each item as a
// NULL-terminated strv that sd-bus frees.
template <typename Items, typename PathOf>
int objectPaths(const Items& items, char*** nodes, PathOf pathOf) {
    auto** out = static_cast<char**>(std::calloc(items.size() + 1, sizeof(char*))); // NOLINT
    if (out == nullptr) {
        return -ENOMEM;
    }
    std::size_t i = 0;
    for (const auto& item : items) {
        out[i++] = strdup(pathOf(item).c_str());
    }
    *nodes = out;
    return 0;
}

// ---------------------------------------------------------------- Class

const core::ClassPolicy* classAt(void* ud, const char* path) {
    const std::string p(path);
    const std::string prefix = std::string(kClassPrefix) + "/";
    if (!p.starts_with(prefix)) {
        return nullptr;
    }
    return core::findClass(self(ud).manager().config().classes, p.substr(prefix.size()));
}

int findClassObject(sd_bus*, const char* path, const char*, void* ud, void** found, sd_bus_error*) {
    return foundObject(classAt(ud, path) != nullptr, ud, found);
}

int enumerateClasses(sd_bus*, const char*, void* ud, char*** nodes, sd_bus_error*) {
    return objectPaths(self(ud).manager().config().classes, nodes,
                       [](const auto& c) { return classObjectPath(c.name); });
}

// ------------------------------------------ Class and Workload properties
// Each property is declared once, in a table: name, signature, what
// memqosd says about its changes, and its value. The vtable, the getter and
// the change lists all come from the tables. `Change` properties are
// announced by PropertiesChanged (BusService::announceChanges compares them
// after every tick and after every call that may change them); `No` ones
// are samples that change every tick and are never announced
// (EmitsChangedSignal=false: read them when needed); `Const` never change
// for the object's life.

using PropValue =
    std::variant<std::string, std::uint64_t, std::uint32_t, double, bool, std::vector<std::string>>;
enum class Emits { Const, Change, No };

struct ClassProp {
    const char* name;
    const char* signature;
    Emits emits;
    PropValue (*value)(const core::ClassPolicy& c, const Manager& m);
};

struct WorkloadProp {
    const char* name;
    const char* signature;
    Emits emits;
    PropValue (*value)(const ManagedWorkload& w, const Manager& m);
    // The usage properties (Emits::No): from the cgroup's usage, read once
    // for all of them in one call (BusService::workloadUsage); value is
    // then nullptr.
    PropValue (*fromUsage)(const Manager::CgroupUsage& u) = nullptr;
    // The proactive reclaim properties: from the workload's reclaim state
    // (nullptr: none), looked up once for all of them; value is nullptr.
    PropValue (*fromReclaim)(const core::WorkloadReclaim* r) = nullptr;
};

PropValue u64(std::uint64_t v) { return PropValue(v); }
PropValue str(std::string_view v) { return PropValue(std::string(v)); }

const ClassProp kClassProps[] = {
    {"Name", "s", Emits::Const, [](const auto& c, const auto&) { return str(c.name); }},
    {"Rank", "u", Emits::Change, [](const auto& c, const auto&) { return PropValue(c.rank); }},
    {"Protection", "s", Emits::Change,
     [](const auto& c, const auto&) { return str(core::toString(c.protection)); }},
    {"ThrottlingFactor", "d", Emits::Change,
     [](const auto& c, const auto&) {
         return PropValue(c.throttlingFactor ? static_cast<double>(*c.throttlingFactor) / 10000.0
                                             : 0.0);
     }},
    {"Killable", "b", Emits::Change, [](const auto& c, const auto&) { return PropValue(c.killable); }},
    {"Slice", "s", Emits::Const, [](const auto& c, const auto&) { return str(c.slice()); }},
    {"Workloads", "ao", Emits::Change,
     [](const auto& c, const auto& m) {
         std::vector<std::string> paths;
         for (const auto& id : m.workloadsOfClass(c.name)) {
             paths.push_back(workloadObjectPath(id));
         }
         return PropValue(std::move(paths));
     }},
    {"MemoryCurrent", "t", Emits::No,
     [](const auto& c, const auto& m) { return u64(m.classMemoryCurrent(c.name)); }},
    {"SwapCurrent", "t", Emits::No,
     [](const auto& c, const auto& m) { return u64(m.classSwapCurrent(c.name)); }},
    {"MemoryPressure", "d", Emits::No,
     [](const auto& c, const auto& m) { return PropValue(m.classMemoryPressure(c.name)); }},
};

const WorkloadProp kWorkloadProps[] = {
    {"Id", "s", Emits::Const, [](const auto& w, const auto&) { return str(w.workload.id); }},
    {"Kind", "s", Emits::Const,
     [](const auto& w, const auto&) { return str(core::toString(w.workload.kind)); }},
    {"Class", "s", Emits::Change, [](const auto& w, const auto&) { return str(w.workload.className); }},
    {"Unit", "s", Emits::Change, [](const auto& w, const auto&) { return str(w.unit); }},
    {"Request", "t", Emits::Change, [](const auto& w, const auto&) { return u64(w.workload.request); }},
    {"Limit", "t", Emits::Change,
     [](const auto& w, const auto&) { return u64(limitToBus(w.workload.limit)); }},
    {"MemoryMin", "t", Emits::Change, [](const auto& w, const auto&) { return u64(w.tiers.memoryMin); }},
    {"MemoryLow", "t", Emits::Change, [](const auto& w, const auto&) { return u64(w.tiers.memoryLow); }},
    {"MemoryHigh", "t", Emits::Change,
     [](const auto& w, const auto&) { return u64(limitToBus(w.tiers.memoryHigh)); }},
    {"MemoryMax", "t", Emits::Change,
     [](const auto& w, const auto&) { return u64(limitToBus(w.tiers.memoryMax)); }},
    {"MemorySwapMax", "t", Emits::Change,
     [](const auto& w, const auto&) { return u64(limitToBus(w.tiers.swapMax)); }},
    // Read when asked, not by a tick (issue 25).
    {"MemoryCurrent", "t", Emits::No, nullptr,
     [](const Manager::CgroupUsage& u) { return u64(u.memoryCurrent); }},
    {"SwapCurrent", "t", Emits::No, nullptr,
     [](const Manager::CgroupUsage& u) { return u64(u.swapCurrent); }},
    {"MemoryPressure", "d", Emits::No, nullptr,
     [](const Manager::CgroupUsage& u) { return PropValue(u.memoryPressure); }},
    {"Persistent", "b", Emits::Change, [](const auto& w, const auto&) { return PropValue(w.persistent); }},
    {"Source", "s", Emits::Change, [](const auto& w, const auto&) { return str(toString(w.source)); }},
    {"BalloonActual", "t", Emits::Change,
     [](const auto& w, const auto&) { return u64(w.vm ? w.vm->balloonActual.value_or(0) : 0); }},
    {"BalloonTarget", "t", Emits::Change,
     [](const auto& w, const auto&) { return u64(w.vm ? w.vm->balloonTarget.value_or(0) : 0); }},
    {"ReclaimedBytes", "t", Emits::Change, nullptr, nullptr,
     [](const core::WorkloadReclaim* r) { return u64(r ? r->reclaimed : 0); }},
    {"ReclaimStall", "d", Emits::Change, nullptr, nullptr,
     [](const core::WorkloadReclaim* r) { return PropValue(r ? r->stall : 0.0); }},
    {"ReclaimState", "s", Emits::Change, nullptr, nullptr,
     [](const core::WorkloadReclaim* r) {
         return str(core::toString(r ? r->phase : core::ReclaimPhase::Off));
     }},
};

// A workload property's value (the usage ones are not asked here).
PropValue workloadValue(const WorkloadProp& p, const ManagedWorkload& w,
                        const core::WorkloadReclaim* r, const Manager& m) {
    return p.fromReclaim != nullptr ? p.fromReclaim(r) : p.value(w, m);
}

int appendValue(sd_bus_message* reply, const char* signature, const PropValue& v) {
    return std::visit(
        [&](const auto& x) -> int {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return sd_bus_message_append(reply, signature, x.c_str());
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                return io::appendArray(reply, signature + 1, x,
                                       [&](sd_bus_message* msg, const std::string& e) {
                                           return sd_bus_message_append(msg, signature + 1,
                                                                        e.c_str());
                                       });
            } else if constexpr (std::is_same_v<T, bool>) {
                return sd_bus_message_append(reply, signature, static_cast<int>(x));
            } else {
                return sd_bus_message_append(reply, signature, x);
            }
        },
        v);
}

template <typename Prop>
const Prop* findProp(const auto& table, std::string_view name) {
    for (const auto& p : table) {
        if (name == p.name) {
            return &p;
        }
    }
    return nullptr;
}

sd_bus_vtable propertyEntry(const char* name, const char* signature, sd_bus_property_get_t get,
                            Emits emits) {
    switch (emits) {
    case Emits::Const:
        return SD_BUS_PROPERTY(name, signature, get, 0, SD_BUS_VTABLE_PROPERTY_CONST);
    case Emits::Change:
        return SD_BUS_PROPERTY(name, signature, get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE);
    case Emits::No:
        break;
    }
    return SD_BUS_PROPERTY(name, signature, get, 0, 0);
}

std::vector<sd_bus_vtable> makeVtable(const auto& table, sd_bus_property_get_t get) {
    std::vector<sd_bus_vtable> v;
    v.push_back(SD_BUS_VTABLE_START(0));
    for (const auto& p : table) {
        v.push_back(propertyEntry(p.name, p.signature, get, p.emits));
    }
    v.push_back(SD_BUS_VTABLE_END);
    return v;
}

int classProperty(sd_bus*, const char* path, const char*, const char* property,
                  sd_bus_message* reply, void* ud, sd_bus_error* err) {
    const auto* c = classAt(ud, path);
    if (c == nullptr) {
        return sd_bus_error_setf(err, SD_BUS_ERROR_UNKNOWN_OBJECT, "no class at %s", path);
    }
    const auto* p = findProp<ClassProp>(kClassProps, property);
    return p == nullptr ? -ENOENT
                        : appendValue(reply, p->signature, p->value(*c, self(ud).manager()));
}

const std::vector<sd_bus_vtable> kClassVtable = makeVtable(kClassProps, classProperty);

// ---------------------------------------------------------------- Workload

const std::pair<const std::string, ManagedWorkload>* workloadEntryAt(void* ud, const char* path) {
    char* external = nullptr;
    if (sd_bus_path_decode(path, kWorkloadPrefix, &external) <= 0) {
        return nullptr;
    }
    CString id(external);
    const auto& all = self(ud).manager().workloads();
    auto it = all.find(id.get());
    return it == all.end() ? nullptr : &*it;
}

const ManagedWorkload* workloadAt(void* ud, const char* path) {
    const auto* entry = workloadEntryAt(ud, path);
    return entry == nullptr ? nullptr : &entry->second;
}

int findWorkloadObject(sd_bus*, const char* path, const char*, void* ud, void** found,
                       sd_bus_error*) {
    return foundObject(workloadAt(ud, path) != nullptr, ud, found);
}

int enumerateWorkloads(sd_bus*, const char*, void* ud, char*** nodes, sd_bus_error*) {
    return objectPaths(self(ud).manager().workloads(), nodes,
                       [](const auto& entry) { return workloadObjectPath(entry.first); });
}

int workloadProperty(sd_bus*, const char* path, const char*, const char* property,
                     sd_bus_message* reply, void* ud, sd_bus_error* err) {
    const auto* entry = workloadEntryAt(ud, path);
    if (entry == nullptr) {
        return sd_bus_error_setf(err, SD_BUS_ERROR_UNKNOWN_OBJECT, "no workload at %s", path);
    }
    const auto* p = findProp<WorkloadProp>(kWorkloadProps, property);
    if (p == nullptr) {
        return -ENOENT;
    }
    if (p->fromUsage != nullptr) {
        return appendValue(reply, p->signature,
                           p->fromUsage(self(ud).workloadUsage(entry->first, entry->second)));
    }
    const Manager& m = self(ud).manager();
    return appendValue(reply, p->signature,
                       workloadValue(*p, entry->second, m.reclaimState(entry->first), m));
}

const std::vector<sd_bus_vtable> kWorkloadVtable = makeVtable(kWorkloadProps, workloadProperty);

} // namespace

std::string classObjectPath(const std::string& name) {
    return std::string(kClassPrefix) + "/" + name;
}

std::string workloadObjectPath(const std::string& id) {
    char* out = nullptr;
    if (sd_bus_path_encode(kWorkloadPrefix, id.c_str(), &out) < 0 || out == nullptr) {
        return std::string(kWorkloadPrefix) + "/_";
    }
    CString owned(out);
    return owned.get();
}

// The `Change` properties' values as last announced, per object.
struct BusService::Snapshots {
    std::map<std::string, std::vector<PropValue>> classes;
    std::map<std::string, std::vector<PropValue>> workloads;
};

namespace {

template <typename Obj>
std::vector<PropValue> changing(const auto& table, const Obj& o, const Manager& m) {
    std::vector<PropValue> out;
    for (const auto& p : table) {
        if (p.emits == Emits::Change) {
            out.push_back(p.value(o, m));
        }
    }
    return out;
}

// Names of the `Change` properties whose value differs (nullptr-ended).
std::vector<char*> changedNames(const auto& table, const std::vector<PropValue>& before,
                                const std::vector<PropValue>& now) {
    std::vector<char*> out;
    std::size_t i = 0;
    for (const auto& p : table) {
        if (p.emits != Emits::Change) {
            continue;
        }
        if (i >= before.size() || i >= now.size() || !(before[i] == now[i])) {
            out.push_back(const_cast<char*>(p.name)); // NOLINT: sd-bus does not write
        }
        ++i;
    }
    if (!out.empty()) {
        out.push_back(nullptr);
    }
    return out;
}

} // namespace

BusService::BusService(sd_bus* bus, io::BusPump& pump, Manager& manager)
    : bus_(bus), pump_(pump), manager_(manager), snapshots_(std::make_unique<Snapshots>()) {}

Manager::CgroupUsage BusService::workloadUsage(const std::string& id, const ManagedWorkload& w) {
    sd_bus_message* call = sd_bus_get_current_message(bus_);
    std::uint64_t cookie = 0;
    if (call == nullptr || sd_bus_message_get_cookie(call, &cookie) < 0) {
        usageMemo_.reset(); // outside a call: read anew
        return manager_.workloadUsage(w, true);
    }
    const char* sender = sd_bus_message_get_sender(call);
    const std::string_view from = sender == nullptr ? std::string_view() : sender;
    if (usageMemo_ && usageMemo_->cookie == cookie && usageMemo_->sender == from &&
        usageMemo_->id == id) {
        return usageMemo_->usage;
    }
    usageMemo_ = UsageMemo{std::string(from), cookie, id, manager_.workloadUsage(w, true)};
    return usageMemo_->usage;
}

namespace {

// PropertiesChanged for the workload's properties that differ from `last`
// (the values last announced, which take the new ones); false when none
// did. Compared in place: a value is built only to be compared (most are
// numbers), and kept only when it changed.
bool announceWorkload(sd_bus* bus, const std::string& id, const ManagedWorkload& w,
                      const core::WorkloadReclaim* r, const Manager& m,
                      std::vector<PropValue>& last) {
    std::vector<char*> names;
    std::size_t i = 0;
    for (const auto& p : kWorkloadProps) {
        if (p.emits != Emits::Change) {
            continue;
        }
        auto now = workloadValue(p, w, r, m);
        if (i >= last.size()) {
            last.push_back(std::move(now));
            names.push_back(const_cast<char*>(p.name)); // NOLINT: sd-bus does not write
        } else if (!(last[i] == now)) {
            last[i] = std::move(now);
            names.push_back(const_cast<char*>(p.name)); // NOLINT: sd-bus does not write
        }
        ++i;
    }
    if (names.empty()) {
        return false;
    }
    names.push_back(nullptr);
    sd_bus_emit_properties_changed_strv(bus, workloadObjectPath(id).c_str(), kWorkloadInterface,
                                        names.data());
    return true;
}

// The `Change` properties' values, in the table's order.
std::vector<PropValue> workloadValues(const ManagedWorkload& w, const core::WorkloadReclaim* r,
                                      const Manager& m) {
    std::vector<PropValue> out;
    for (const auto& p : kWorkloadProps) {
        if (p.emits == Emits::Change) {
            out.push_back(workloadValue(p, w, r, m));
        }
    }
    return out;
}

} // namespace

void BusService::announceChanges() {
    bool sent = false;
    // The workloads, their reclaim states and the values last announced are
    // all maps ordered by workload id: one walk over the three, no search
    // (at 1000 workloads this runs every kAnnounceTicks ticks).
    const auto& workloads = manager_.workloads();
    const auto& reclaim = manager_.reclaimStates();
    auto& known = snapshots_->workloads;
    auto last = known.begin();
    auto rec = reclaim.begin();
    for (const auto& [id, w] : workloads) {
        while (last != known.end() && last->first < id) {
            last = known.erase(last); // gone
        }
        while (rec != reclaim.end() && rec->first < id) {
            ++rec;
        }
        const core::WorkloadReclaim* r =
            rec != reclaim.end() && rec->first == id ? &rec->second : nullptr;
        if (last == known.end() || last->first != id) {
            // New: InterfacesAdded carries its values.
            last = std::next(known.emplace_hint(last, id, workloadValues(w, r, manager_)));
            continue;
        }
        sent = announceWorkload(bus_, id, w, r, manager_, last->second) || sent;
        ++last;
    }
    known.erase(last, known.end());
    const auto& classes = manager_.config().classes;
    std::set<std::string> names;
    for (const auto& c : classes) {
        names.insert(c.name);
        auto now = changing(kClassProps, c, manager_);
        auto [it, fresh] = snapshots_->classes.try_emplace(c.name, now);
        if (fresh) {
            continue;
        }
        auto changed = changedNames(kClassProps, it->second, now);
        if (changed.empty()) {
            continue;
        }
        it->second = std::move(now);
        sd_bus_emit_properties_changed_strv(bus_, classObjectPath(c.name).c_str(), kClassInterface,
                                            changed.data());
        sent = true;
    }
    for (auto it = snapshots_->classes.begin(); it != snapshots_->classes.end();) {
        it = names.contains(it->first) ? std::next(it) : snapshots_->classes.erase(it);
    }
    if (sent) {
        pump_.kick();
    }
}

BusService::~BusService() {
    pump_.setAfterDispatch({});
    manager_.setListener(nullptr);
}

Status BusService::start() {
    auto add = [this](int r, sd_bus_slot* slot, const char* what) -> Status {
        if (r < 0) {
            return io::busError(r, what);
        }
        slots_.emplace_back(slot);
        return okStatus();
    };
    sd_bus_slot* slot = nullptr;
    Status st = add(sd_bus_add_object_vtable(bus_, &slot, kManagerPath, kManagerInterface,
                                             kManagerVtable, this),
                    slot, "cannot register /org/memqos1");
    if (!st) {
        return st;
    }
    slot = nullptr;
    if (!(st = add(sd_bus_add_object_manager(bus_, &slot, kManagerPath), slot,
                   "cannot register the object manager at /org/memqos1"))) {
        return st;
    }
    slot = nullptr;
    if (!(st = add(sd_bus_add_fallback_vtable(bus_, &slot, kClassPrefix, kClassInterface,
                                              kClassVtable.data(), findClassObject, this),
                   slot, "cannot register class objects"))) {
        return st;
    }
    slot = nullptr;
    if (!(st = add(sd_bus_add_node_enumerator(bus_, &slot, kClassPrefix, enumerateClasses, this),
                   slot, "cannot register the class enumerator"))) {
        return st;
    }
    slot = nullptr;
    if (!(st = add(sd_bus_add_fallback_vtable(bus_, &slot, kWorkloadPrefix, kWorkloadInterface,
                                              kWorkloadVtable.data(), findWorkloadObject, this),
                   slot, "cannot register workload objects"))) {
        return st;
    }
    slot = nullptr;
    if (!(st = add(sd_bus_add_node_enumerator(bus_, &slot, kWorkloadPrefix, enumerateWorkloads,
                                              this),
                   slot, "cannot register the workload enumerator"))) {
        return st;
    }
    const int r = sd_bus_request_name(bus_, kBusName, 0);
    if (r < 0) {
        return io::busError(r, std::string("cannot own the name ") + kBusName +
                                   " (another memqosd running, or the bus policy "
                                   "org.memqos1.conf not installed?)");
    }
    manager_.setListener(this);
    syncObjects(false);
    announceChanges(); // takes the values as they are: nothing is sent
    pump_.setAfterDispatch([this] {
        syncObjects(true);
        if (callDirty_) {
            callDirty_ = false;
            announceChanges(); // and again at the next tick (tickDirty_): a
        }                      // call's effect may wait on systemd's answer
    });
    return okStatus();
}

void BusService::callAnswered() {
    markDirty();
    if (!answerPosted_) {
        // Once per turn of the loop, however many replies it sent: the
        // objects and properties as the calls left them (a workload an
        // UnassignWorkload removed once its record was gone, say).
        answerPosted_ = true;
        boost::asio::post(pump_.context(), [this] {
            answerPosted_ = false;
            syncObjects(true);
            if (callDirty_) {
                callDirty_ = false;
                announceChanges();
            }
        });
    }
    pump_.kick();
}

void BusService::syncObjects(bool announce) {
    // Cheap when nothing changed (the common case, checked after every
    // dispatch and tick): no allocation, a pass over the few classes, and
    // the workloads only when one was added or removed since (their
    // revision count).
    const auto& classes = manager_.config().classes;
    const bool sameClasses =
        classes.size() == classNames_.size() &&
        std::all_of(classes.begin(), classes.end(),
                    [this](const core::ClassPolicy& c) { return classNames_.contains(c.name); });
    const auto& workloads = manager_.workloads();
    const bool sameWorkloads = workloadsRevision_ == manager_.workloadsRevision();
    if (sameClasses && sameWorkloads) {
        return;
    }
    // The interfaces InterfacesAdded named (sd-bus adds the standard three).
    const auto removed = [this](const std::string& path, const char* interface) {
        sd_bus_emit_interfaces_removed(bus_, path.c_str(), "org.freedesktop.DBus.Peer",
                                       "org.freedesktop.DBus.Introspectable",
                                       "org.freedesktop.DBus.Properties", interface, nullptr);
    };
    if (!sameClasses) {
        std::set<std::string> now;
        for (const auto& c : classes) {
            now.insert(c.name);
        }
        for (const auto& name : classNames_) {
            if (announce && !now.contains(name)) {
                removed(classObjectPath(name), kClassInterface);
            }
        }
        for (const auto& name : now) {
            if (announce && !classNames_.contains(name)) {
                sd_bus_emit_object_added(bus_, classObjectPath(name).c_str());
            }
        }
        classNames_ = std::move(now);
    }
    if (!sameWorkloads) {
        for (auto it = workloadIds_.begin(); it != workloadIds_.end();) {
            if (workloads.contains(*it)) {
                ++it;
                continue;
            }
            if (announce) {
                removed(workloadObjectPath(*it), kWorkloadInterface);
            }
            it = workloadIds_.erase(it);
        }
        for (const auto& [id, w] : workloads) {
            if (workloadIds_.insert(id).second && announce) {
                sd_bus_emit_object_added(bus_, workloadObjectPath(id).c_str());
            }
        }
        workloadsRevision_ = manager_.workloadsRevision();
    }
    if (announce) {
        pump_.kick();
    }
}

void BusService::managerPropertiesChanged(const std::vector<const char*>& names) {
    std::vector<char*> strv;
    for (const char* n : names) {
        strv.push_back(const_cast<char*>(n)); // NOLINT: sd-bus takes char** but does not write
    }
    strv.push_back(nullptr);
    sd_bus_emit_properties_changed_strv(bus_, kManagerPath, kManagerInterface, strv.data());
    pump_.kick();
}

void BusService::pressureLevelChanged(std::uint32_t level, const std::string& reason) {
    sd_bus_emit_signal(bus_, kManagerPath, kManagerInterface, "PressureLevelChanged", "us", level,
                       reason.c_str());
    pump_.kick();
}

void BusService::workloadKilled(const io::KillRecord& record) {
    sd_bus_message* raw = nullptr;
    if (sd_bus_message_new_signal(bus_, &raw, kManagerPath, kManagerInterface, "WorkloadKilled") <
        0) {
        return;
    }
    io::MessagePtr signal(raw);
    if (sd_bus_message_append(raw, "sss", record.id.c_str(), record.className.c_str(),
                              record.reason.c_str()) < 0 ||
        appendNumbers(raw, record.numbers) < 0) {
        return;
    }
    sd_bus_send(bus_, raw, nullptr);
    pump_.kick();
}

void BusService::workloadChanged(const std::string& id) {
    const auto& all = manager_.workloads();
    const auto it = all.find(id);
    if (it == all.end()) {
        return;
    }
    const core::WorkloadReclaim* r = manager_.reclaimState(id);
    auto [last, fresh] = snapshots_->workloads.try_emplace(id);
    if (fresh) {
        last->second = workloadValues(it->second, r, manager_); // new: InterfacesAdded
        return;                                                 // carries them
    }
    if (announceWorkload(bus_, id, it->second, r, manager_, last->second)) {
        pump_.kick();
    }
}

} // namespace memqos::daemon

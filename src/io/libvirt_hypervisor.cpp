// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/libvirt_hypervisor.hpp"

#include "memqos/config/vm.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"
#include "memqos/parse/text.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <dlfcn.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace memqos::io {
namespace {

constexpr Bytes kKiB = 1024;

// libvirt is not linked: it is loaded when a connection is first tried
// with a daemon there to answer (issue 25). Linked, libvirt.so.0 and the
// ~50 libraries it needs (GLib, GnuTLS, libxml2, ICU, Kerberos, curl ...)
// cost every memqosd ~10 MiB of RSS, on a host without VMs too (measured
// natively: an empty program linked with -lvirt 13.3 MiB, without 3.4).
// Its headers still give every function's type.
#define MEMQOS_LIBVIRT_FUNCTIONS(X)                                                            \
    X(virConnectClose)                                                                         \
    X(virConnectDomainEventDeregisterAny)                                                      \
    X(virConnectDomainEventRegisterAny)                                                        \
    X(virConnectListAllDomains)                                                                \
    X(virConnectOpen)                                                                          \
    X(virConnectRegisterCloseCallback)                                                         \
    X(virConnectSetKeepAlive)                                                                  \
    X(virConnectUnregisterCloseCallback)                                                       \
    X(virDomainDefineXML)                                                                      \
    X(virDomainDestroy)                                                                        \
    X(virDomainFree)                                                                           \
    X(virDomainGetID)                                                                          \
    X(virDomainGetInfo)                                                                        \
    X(virDomainGetMetadata)                                                                    \
    X(virDomainGetName)                                                                        \
    X(virDomainGetXMLDesc)                                                                     \
    X(virDomainIsActive)                                                                       \
    X(virDomainIsPersistent)                                                                   \
    X(virDomainLookupByName)                                                                   \
    X(virDomainMemoryStats)                                                                    \
    X(virDomainSetMemoryFlags)                                                                 \
    X(virDomainSetMemoryStatsPeriod)                                                           \
    X(virDomainSetMetadata)                                                                    \
    X(virEventAddTimeout)                                                                      \
    X(virEventRegisterDefaultImpl)                                                             \
    X(virEventRemoveTimeout)                                                                   \
    X(virEventRunDefaultImpl)                                                                  \
    X(virEventUpdateTimeout)                                                                   \
    X(virGetLastError)                                                                         \
    X(virGetLastErrorMessage)                                                                  \
    X(virResetLastError)                                                                       \
    X(virSetErrorFunc)

struct Api {
#define MEMQOS_LIBVIRT_MEMBER(name) decltype(&::name) name = nullptr;
    MEMQOS_LIBVIRT_FUNCTIONS(MEMQOS_LIBVIRT_MEMBER)
#undef MEMQOS_LIBVIRT_MEMBER
};

Api gApi;                       // complete once gLoaded is set; never changed after
std::atomic<bool> gLoaded{false};
std::mutex gLoadMutex;

constexpr const char* kLibvirtSo = "libvirt.so.0";

// libvirt's functions: only after loadLibvirt() succeeded.
const Api& lv() { return gApi; }

// Loads libvirt.so.0 and resolves every function, once (a failure is
// tried again at the next call).
Status loadLibvirt() {
    const std::lock_guard lock(gLoadMutex);
    if (gLoaded) {
        return okStatus();
    }
    void* handle = dlopen(kLibvirtSo, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        return makeError(std::errc::no_such_file_or_directory,
                         std::string("cannot load ") + kLibvirtSo + " (is libvirt0 installed?): " +
                             (why != nullptr ? why : "dlopen failed"));
    }
    Api api;
    std::string missing;
#define MEMQOS_LIBVIRT_RESOLVE(name)                                                           \
    if (void* p = dlsym(handle, #name); p != nullptr) {                                        \
        std::memcpy(&api.name, &p, sizeof p);                                                  \
    } else {                                                                                   \
        missing += missing.empty() ? #name : ", " #name;                                       \
    }
    MEMQOS_LIBVIRT_FUNCTIONS(MEMQOS_LIBVIRT_RESOLVE)
#undef MEMQOS_LIBVIRT_RESOLVE
    if (!missing.empty()) {
        dlclose(handle);
        return makeError(std::errc::function_not_supported,
                         std::string(kLibvirtSo) + " lacks " + missing + " (libvirt too old?)");
    }
    gApi = api; // the handle stays open for the process's life
    gLoaded = true;
    return okStatus();
}

// libvirt's VIR_DOMAIN_EVENT_CALLBACK: each event id has its own callback
// type, registered as the generic one (through void(*)(), which GCC allows).
template <typename F>
virConnectDomainEventGenericCallback eventCallback(F* f) {
    return reinterpret_cast<virConnectDomainEventGenericCallback>(
        reinterpret_cast<void (*)()>(f));
}

void silentErrors(void* /*unused*/, virErrorPtr /*unused*/) {}

std::string lastError(const std::string& what) {
    const char* msg = lv().virGetLastErrorMessage();
    return what + ": " + (msg != nullptr ? msg : "unknown libvirt error");
}

Error libvirtError(const std::string& what) {
    const virErrorPtr e = lv().virGetLastError();
    std::errc code = std::errc::io_error;
    if (e != nullptr && e->code == VIR_ERR_NO_DOMAIN) {
        code = std::errc::no_such_file_or_directory;
    } else if (e != nullptr && e->code == VIR_ERR_OPERATION_INVALID) {
        code = std::errc::operation_not_permitted;
    }
    return makeError(code, lastError(what));
}

struct DomainRef {
    virDomainPtr d = nullptr;
    explicit DomainRef(virDomainPtr p) : d(p) {}
    ~DomainRef() {
        if (d != nullptr) {
            lv().virDomainFree(d);
        }
    }
    DomainRef(const DomainRef&) = delete;
    DomainRef& operator=(const DomainRef&) = delete;
};

} // namespace

struct LibvirtHypervisor::State {
    State(boost::asio::io_context& mainIo, std::string u, std::string p)
        : io(mainIo), uri(std::move(u)), pidDir(std::move(p)), guard(work.get_executor()) {}

    boost::asio::io_context& io;
    std::string uri;
    std::string pidDir;
    Events events;
    // Touched on the worker thread only.
    virConnectPtr conn = nullptr;
    int lifecycleId = -1;
    int balloonId = -1;
    std::set<std::string> statsPeriodSet;
    // Read anywhere.
    std::atomic<bool> isConnected{false};
    std::atomic<bool> stopping{false};
    boost::asio::io_context work;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
    std::thread worker;
    std::thread eventLoop;
    int wakeTimer = -1;
    std::function<void()> closed; // posted to io when the connection closed

    // Runs f(conn) on the worker, `then` with its result on the io thread.
    template <typename T, typename F>
    void call(Then<T> then, F f) {
        boost::asio::post(work, [this, then = std::move(then), f = std::move(f)]() mutable {
            auto r = conn != nullptr
                         ? f(conn)
                         : Result<T>(makeError(std::errc::not_connected,
                                               "not connected to libvirt (" + uri + ")"));
            boost::asio::post(io, [then = std::move(then), r = std::move(r)]() mutable {
                then(std::move(r));
            });
        });
    }

    // Worker thread: libvirt loaded and its event loop running (once), or
    // why not. Not loaded while a local daemon's socket is absent.
    std::string ready() {
        if (eventLoop.joinable()) {
            return {};
        }
        if (const auto sockets = localSockets(uri); !sockets.empty()) {
            std::error_code ec;
            const bool any = std::any_of(sockets.begin(), sockets.end(), [&](const auto& p) {
                return std::filesystem::exists(p, ec);
            });
            if (!any) {
                std::string list;
                for (const auto& p : sockets) {
                    list += (list.empty() ? "" : ", ") + p;
                }
                return "no libvirt daemon for " + uri + " (no socket at " + list +
                       "); libvirt is not loaded until there is one";
            }
        }
        if (auto loaded = loadLibvirt(); !loaded) {
            return loaded.error().what;
        }
        static std::once_flag once;
        std::call_once(once, [] { lv().virEventRegisterDefaultImpl(); });
        lv().virSetErrorFunc(nullptr, &silentErrors); // errors are returned, not printed
        wakeTimer = lv().virEventAddTimeout(-1, [](int, void*) {}, nullptr, nullptr);
        eventLoop = std::thread([this] {
            while (!stopping) {
                if (lv().virEventRunDefaultImpl() < 0) {
                    break;
                }
            }
        });
        // Told apart by name in the overhead benchmark (at most 15 characters).
        pthread_setname_np(eventLoop.native_handle(), "memqos-virtloop");
        return {};
    }

    void closeConnection() { // worker thread
        if (conn == nullptr) {
            return;
        }
        if (lifecycleId >= 0) {
            lv().virConnectDomainEventDeregisterAny(conn, lifecycleId);
        }
        if (balloonId >= 0) {
            lv().virConnectDomainEventDeregisterAny(conn, balloonId);
        }
        lv().virConnectUnregisterCloseCallback(conn, &State::onClose);
        lifecycleId = balloonId = -1;
        lv().virConnectClose(conn);
        conn = nullptr;
        isConnected = false;
        statsPeriodSet.clear();
    }

    static void onClose(virConnectPtr /*conn*/, int reason, void* opaque) {
        auto* s = static_cast<State*>(opaque);
        if (s->stopping) {
            return;
        }
        const char* why = reason == VIR_CONNECT_CLOSE_REASON_EOF         ? "libvirtd closed it"
                          : reason == VIR_CONNECT_CLOSE_REASON_KEEPALIVE ? "keepalive timed out"
                          : reason == VIR_CONNECT_CLOSE_REASON_ERROR     ? "socket error"
                                                                         : "client request";
        boost::asio::post(s->work, [s, why = std::string(why)] {
            s->closeConnection();
            boost::asio::post(s->io, [s, why] {
                if (s->events.disconnected) {
                    s->events.disconnected(why);
                }
                if (s->closed) {
                    s->closed();
                }
            });
        });
    }

    static int onLifecycle(virConnectPtr /*conn*/, virDomainPtr dom, int event, int /*detail*/,
                           void* opaque) {
        auto* s = static_cast<State*>(opaque);
        const char* name = lv().virDomainGetName(dom);
        if (name == nullptr || s->stopping) {
            return 0;
        }
        DomainEvent e = DomainEvent::Other;
        switch (event) {
        case VIR_DOMAIN_EVENT_STARTED:
        case VIR_DOMAIN_EVENT_RESUMED:
            e = DomainEvent::Started;
            break;
        case VIR_DOMAIN_EVENT_STOPPED:
        case VIR_DOMAIN_EVENT_SHUTDOWN:
        case VIR_DOMAIN_EVENT_CRASHED:
            e = DomainEvent::Stopped;
            break;
        case VIR_DOMAIN_EVENT_DEFINED:
            e = DomainEvent::Defined;
            break;
        case VIR_DOMAIN_EVENT_UNDEFINED:
            e = DomainEvent::Undefined;
            break;
        default:
            break;
        }
        boost::asio::post(s->io, [s, n = std::string(name), e] {
            if (s->events.lifecycle) {
                s->events.lifecycle(n, e);
            }
        });
        return 0;
    }

    static int onBalloon(virConnectPtr /*conn*/, virDomainPtr dom, unsigned long long actualKiB,
                         void* opaque) {
        auto* s = static_cast<State*>(opaque);
        const char* name = lv().virDomainGetName(dom);
        if (name == nullptr || s->stopping) {
            return 0;
        }
        const Bytes actual = static_cast<Bytes>(actualKiB) * kKiB;
        boost::asio::post(s->io, [s, n = std::string(name), actual] {
            if (s->events.balloonChanged) {
                s->events.balloonChanged(n, actual);
            }
        });
        return 0;
    }

    Result<DomainInfo> info(virDomainPtr dom) const { // worker thread
        DomainInfo d;
        const char* name = lv().virDomainGetName(dom);
        if (name == nullptr) {
            return libvirtError("virDomainGetName");
        }
        d.name = name;
        d.active = lv().virDomainIsActive(dom) == 1;
        d.persistent = lv().virDomainIsPersistent(dom) == 1;
        if (d.active) {
            const unsigned int id = lv().virDomainGetID(dom);
            d.id = id == static_cast<unsigned int>(-1) ? -1 : static_cast<int>(id);
        }
        virDomainInfo vi{};
        if (lv().virDomainGetInfo(dom, &vi) < 0) {
            return libvirtError("virDomainGetInfo " + d.name);
        }
        d.maxMemory = static_cast<Bytes>(vi.maxMem) * kKiB;
        d.memory = static_cast<Bytes>(vi.memory) * kKiB;
        char* md = lv().virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, kMetadataNamespace, 0);
        if (md != nullptr) {
            d.metadata = md;
            std::free(md); // NOLINT(cppcoreguidelines-no-malloc)
        } else {
            lv().virResetLastError(); // VIR_ERR_NO_DOMAIN_METADATA: there is none
        }
        if (d.active) {
            auto text = readFile(std::filesystem::path(pidDir) / (d.name + ".pid"));
            if (text) {
                std::string_view t = *text;
                while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) {
                    t.remove_suffix(1);
                }
                if (auto pid = parse::text::toI32(t, "pid"); pid && *pid > 0) {
                    d.pid = *pid;
                }
            }
        }
        return d;
    }
};

LibvirtHypervisor::LibvirtHypervisor(boost::asio::io_context& io, std::string uri,
                                     std::string pidDirectory)
    : io_(io), state_(std::make_shared<State>(io, std::move(uri), std::move(pidDirectory))),
      retry_(io) {}

LibvirtHypervisor::~LibvirtHypervisor() {
    retry_.cancel();
    state_->stopping = true;
    if (state_->worker.joinable()) {
        boost::asio::post(state_->work, [s = state_.get()] { s->closeConnection(); });
        state_->guard.reset();
        state_->worker.join();
    }
    if (state_->eventLoop.joinable()) {
        lv().virEventUpdateTimeout(state_->wakeTimer, 0);
        state_->eventLoop.join();
        lv().virEventRemoveTimeout(state_->wakeTimer);
    }
}

void LibvirtHypervisor::start(Events events) {
    state_->events = std::move(events);
    state_->closed = [this] { scheduleReconnect(); };
    // libvirt itself and its event loop's thread come with the first
    // connection that has a daemon to answer (State::ready).
    state_->worker = std::thread([s = state_.get()] { s->work.run(); });
    pthread_setname_np(state_->worker.native_handle(), "memqos-virt");
    connect();
}

bool LibvirtHypervisor::connected() const { return state_->isConnected; }

void LibvirtHypervisor::connect() {
    boost::asio::post(state_->work, [this, s = state_.get()] {
        if (s->stopping || s->conn != nullptr) {
            return;
        }
        std::string failure = s->ready(); // libvirt loaded (or why not)
        virConnectPtr c = nullptr;
        if (failure.empty()) {
            c = lv().virConnectOpen(s->uri.c_str());
            if (c == nullptr) {
                failure = lastError("cannot connect to libvirt at " + s->uri);
            }
        }
        if (c != nullptr) {
            s->conn = c;
            lv().virConnectRegisterCloseCallback(c, &State::onClose, s, nullptr);
            // Notice a libvirtd that hangs (5 s interval, 3 misses).
            (void)lv().virConnectSetKeepAlive(c, 5, 3);
            lv().virResetLastError();
            s->lifecycleId = lv().virConnectDomainEventRegisterAny(
                c, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                eventCallback(&State::onLifecycle), s,
                nullptr);
            s->balloonId = lv().virConnectDomainEventRegisterAny(
                c, nullptr, VIR_DOMAIN_EVENT_ID_BALLOON_CHANGE,
                eventCallback(&State::onBalloon), s,
                nullptr);
            if (s->lifecycleId < 0 || s->balloonId < 0) {
                failure = lastError("cannot subscribe to libvirt's domain events");
                s->closeConnection();
            } else {
                s->isConnected = true;
            }
        }
        boost::asio::post(s->io, [this, s, failure] {
            if (!failure.empty()) {
                if (backoff_ == std::chrono::seconds(1)) {
                    log::warning("{ERROR}; retrying with backoff up to {MAX}s", "ERROR", failure,
                                 "MAX", kMaxBackoff.count());
                } else {
                    log::debug("{ERROR}", "ERROR", failure);
                }
                scheduleReconnect();
                return;
            }
            backoff_ = std::chrono::seconds(1);
            log::info("Connected to libvirt at {URI}", "URI", s->uri);
            if (s->events.connected) {
                s->events.connected();
            }
        });
    });
}

void LibvirtHypervisor::scheduleReconnect() {
    if (state_->stopping) {
        return;
    }
    retry_.expires_after(backoff_);
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    retry_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) {
            connect();
        }
    });
}

void LibvirtHypervisor::listDomains(Then<std::vector<DomainInfo>> then) {
    state_->call<std::vector<DomainInfo>>(
        std::move(then), [s = state_.get()](virConnectPtr c) -> Result<std::vector<DomainInfo>> {
            virDomainPtr* doms = nullptr;
            const int n = lv().virConnectListAllDomains(c, &doms, 0);
            if (n < 0) {
                return libvirtError("virConnectListAllDomains");
            }
            std::vector<DomainInfo> out;
            for (int i = 0; i < n; ++i) {
                DomainRef ref(doms[i]);
                if (auto d = s->info(ref.d)) {
                    out.push_back(std::move(*d));
                } else {
                    // Undefined between the list and the look-up: skip it.
                    lv().virResetLastError();
                }
            }
            std::free(doms); // NOLINT(cppcoreguidelines-no-malloc)
            return out;
        });
}

void LibvirtHypervisor::domain(const std::string& name, Then<DomainInfo> then) {
    state_->call<DomainInfo>(std::move(then),
                             [s = state_.get(), name](virConnectPtr c) -> Result<DomainInfo> {
                                 DomainRef ref(lv().virDomainLookupByName(c, name.c_str()));
                                 if (ref.d == nullptr) {
                                     return libvirtError("domain " + name);
                                 }
                                 return s->info(ref.d);
                             });
}

void LibvirtHypervisor::balloonStats(const std::string& name, Then<BalloonStats> then) {
    state_->call<BalloonStats>(
        std::move(then), [s = state_.get(), name](virConnectPtr c) -> Result<BalloonStats> {
            DomainRef ref(lv().virDomainLookupByName(c, name.c_str()));
            if (ref.d == nullptr) {
                return libvirtError("domain " + name);
            }
            virDomainMemoryStatStruct stats[VIR_DOMAIN_MEMORY_STAT_NR];
            const int n = lv().virDomainMemoryStats(ref.d, stats, VIR_DOMAIN_MEMORY_STAT_NR, 0);
            if (n < 0) {
                return libvirtError("virDomainMemoryStats " + name);
            }
            BalloonStats b;
            for (int i = 0; i < n; ++i) {
                const Bytes v = static_cast<Bytes>(stats[i].val) * kKiB;
                switch (stats[i].tag) {
                case VIR_DOMAIN_MEMORY_STAT_ACTUAL_BALLOON:
                    b.actual = v;
                    break;
                case VIR_DOMAIN_MEMORY_STAT_USABLE:
                    b.usable = v;
                    break;
                case VIR_DOMAIN_MEMORY_STAT_RSS:
                    b.rss = v;
                    break;
                default:
                    break;
                }
            }
            if (!b.usable && s->statsPeriodSet.insert(name).second) {
                // The guest reports usable memory only with a period.
                if (lv().virDomainSetMemoryStatsPeriod(ref.d, kStatsPeriod, VIR_DOMAIN_AFFECT_LIVE) <
                    0) {
                    lv().virResetLastError();
                }
            }
            return b;
        });
}

void LibvirtHypervisor::setBalloon(const std::string& name, Bytes target, Done done) {
    state_->call<Ok>(std::move(done), [name, target](virConnectPtr c) -> Status {
        DomainRef ref(lv().virDomainLookupByName(c, name.c_str()));
        if (ref.d == nullptr) {
            return libvirtError("domain " + name);
        }
        if (lv().virDomainSetMemoryFlags(ref.d, target / kKiB, VIR_DOMAIN_AFFECT_LIVE) < 0) {
            return libvirtError("virDomainSetMemory " + name);
        }
        return okStatus();
    });
}

void LibvirtHypervisor::destroy(const std::string& name, Done done) {
    state_->call<Ok>(std::move(done), [name](virConnectPtr c) -> Status {
        DomainRef ref(lv().virDomainLookupByName(c, name.c_str()));
        if (ref.d == nullptr) {
            return libvirtError("domain " + name);
        }
        if (lv().virDomainDestroy(ref.d) < 0) {
            return libvirtError("virDomainDestroy " + name);
        }
        return okStatus();
    });
}

void LibvirtHypervisor::place(const std::string& name, const std::string& metadata,
                              const std::string& partition, Done done) {
    state_->call<Ok>(std::move(done), [name, metadata, partition](virConnectPtr c) -> Status {
        DomainRef ref(lv().virDomainLookupByName(c, name.c_str()));
        if (ref.d == nullptr) {
            return libvirtError("domain " + name);
        }
        const bool persistent = lv().virDomainIsPersistent(ref.d) == 1;
        const bool active = lv().virDomainIsActive(ref.d) == 1;
        unsigned int flags = 0;
        if (persistent) {
            flags |= VIR_DOMAIN_AFFECT_CONFIG;
        }
        if (active) {
            flags |= VIR_DOMAIN_AFFECT_LIVE;
        }
        if (lv().virDomainSetMetadata(ref.d, VIR_DOMAIN_METADATA_ELEMENT,
                                 metadata.empty() ? nullptr : metadata.c_str(),
                                 metadata.empty() ? nullptr : kMetadataPrefix, kMetadataNamespace,
                                 flags) < 0) {
            return libvirtError("virDomainSetMetadata " + name);
        }
        if (partition.empty() || !persistent) {
            return okStatus();
        }
        char* xml = lv().virDomainGetXMLDesc(ref.d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (xml == nullptr) {
            return libvirtError("virDomainGetXMLDesc " + name);
        }
        auto edited = config::withPartition(xml, partition);
        std::free(xml); // NOLINT(cppcoreguidelines-no-malloc)
        if (!edited) {
            return invalid("domain " + name + ": " + edited.error().what);
        }
        DomainRef defined(lv().virDomainDefineXML(c, edited->c_str()));
        if (defined.d == nullptr) {
            return libvirtError("virDomainDefineXML " + name);
        }
        return okStatus();
    });
}

std::vector<std::string> localSockets(std::string_view uri) {
    const auto sep = uri.find("://");
    if (sep == std::string_view::npos) {
        return {};
    }
    const std::string_view scheme = uri.substr(0, sep);
    std::string_view rest = uri.substr(sep + 3);
    if ((scheme != "qemu" && scheme != "qemu+unix") || !rest.starts_with('/')) {
        return {}; // another driver, another transport or a host: not a local socket
    }
    const auto q = rest.find('?');
    const std::string_view path = rest.substr(0, q);
    std::string_view query = q == std::string_view::npos ? "" : rest.substr(q + 1);
    if (path != "/system") {
        return {};
    }
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view param = query.substr(0, amp);
        if (param.starts_with("socket=")) {
            const std::string_view socket = param.substr(7);
            if (socket.empty() || socket.find('%') != std::string_view::npos) {
                return {}; // escaped: left to libvirt to read
            }
            return {std::string(socket)};
        }
        query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    }
    return {"/run/libvirt/libvirt-sock", "/run/libvirt/virtqemud-sock"};
}

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/libvirt_hypervisor.hpp"

#include "memqos/config/vm.hpp"
#include "memqos/io/file.hpp"
#include "memqos/io/log.hpp"
#include "memqos/parse/text.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace memqos::io {
namespace {

constexpr Bytes kKiB = 1024;

// libvirt's VIR_DOMAIN_EVENT_CALLBACK: each event id has its own callback
// type, registered as the generic one (through void(*)(), which GCC allows).
template <typename F>
virConnectDomainEventGenericCallback eventCallback(F* f) {
    return reinterpret_cast<virConnectDomainEventGenericCallback>(
        reinterpret_cast<void (*)()>(f));
}

void silentErrors(void* /*unused*/, virErrorPtr /*unused*/) {}

std::string lastError(const std::string& what) {
    const char* msg = virGetLastErrorMessage();
    return what + ": " + (msg != nullptr ? msg : "unknown libvirt error");
}

Error libvirtError(const std::string& what) {
    const virErrorPtr e = virGetLastError();
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
            virDomainFree(d);
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

    void closeConnection() { // worker thread
        if (conn == nullptr) {
            return;
        }
        if (lifecycleId >= 0) {
            virConnectDomainEventDeregisterAny(conn, lifecycleId);
        }
        if (balloonId >= 0) {
            virConnectDomainEventDeregisterAny(conn, balloonId);
        }
        virConnectUnregisterCloseCallback(conn, &State::onClose);
        lifecycleId = balloonId = -1;
        virConnectClose(conn);
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
        const char* name = virDomainGetName(dom);
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
        const char* name = virDomainGetName(dom);
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
        const char* name = virDomainGetName(dom);
        if (name == nullptr) {
            return libvirtError("virDomainGetName");
        }
        d.name = name;
        d.active = virDomainIsActive(dom) == 1;
        d.persistent = virDomainIsPersistent(dom) == 1;
        if (d.active) {
            const unsigned int id = virDomainGetID(dom);
            d.id = id == static_cast<unsigned int>(-1) ? -1 : static_cast<int>(id);
        }
        virDomainInfo vi{};
        if (virDomainGetInfo(dom, &vi) < 0) {
            return libvirtError("virDomainGetInfo " + d.name);
        }
        d.maxMemory = static_cast<Bytes>(vi.maxMem) * kKiB;
        d.memory = static_cast<Bytes>(vi.memory) * kKiB;
        char* md = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, kMetadataNamespace, 0);
        if (md != nullptr) {
            d.metadata = md;
            std::free(md); // NOLINT(cppcoreguidelines-no-malloc)
        } else {
            virResetLastError(); // VIR_ERR_NO_DOMAIN_METADATA: there is none
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
        virEventUpdateTimeout(state_->wakeTimer, 0);
        state_->eventLoop.join();
        virEventRemoveTimeout(state_->wakeTimer);
    }
}

void LibvirtHypervisor::start(Events events) {
    static std::once_flag once;
    std::call_once(once, [] {
        virSetErrorFunc(nullptr, &silentErrors); // errors are returned, not printed
        virEventRegisterDefaultImpl();
    });
    state_->events = std::move(events);
    state_->closed = [this] { scheduleReconnect(); };
    state_->wakeTimer = virEventAddTimeout(-1, [](int, void*) {}, nullptr, nullptr);
    state_->eventLoop = std::thread([s = state_.get()] {
        while (!s->stopping) {
            if (virEventRunDefaultImpl() < 0) {
                break;
            }
        }
    });
    state_->worker = std::thread([s = state_.get()] {
        virSetErrorFunc(nullptr, &silentErrors);
        s->work.run();
    });
    // Told apart by name in the overhead benchmark (at most 15 characters).
    pthread_setname_np(state_->eventLoop.native_handle(), "memqos-virtloop");
    pthread_setname_np(state_->worker.native_handle(), "memqos-virt");
    connect();
}

bool LibvirtHypervisor::connected() const { return state_->isConnected; }

void LibvirtHypervisor::connect() {
    boost::asio::post(state_->work, [this, s = state_.get()] {
        if (s->stopping || s->conn != nullptr) {
            return;
        }
        virConnectPtr c = virConnectOpen(s->uri.c_str());
        std::string failure;
        if (c == nullptr) {
            failure = lastError("cannot connect to libvirt at " + s->uri);
        } else {
            s->conn = c;
            virConnectRegisterCloseCallback(c, &State::onClose, s, nullptr);
            // Notice a libvirtd that hangs (5 s interval, 3 misses).
            (void)virConnectSetKeepAlive(c, 5, 3);
            virResetLastError();
            s->lifecycleId = virConnectDomainEventRegisterAny(
                c, nullptr, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                eventCallback(&State::onLifecycle), s,
                nullptr);
            s->balloonId = virConnectDomainEventRegisterAny(
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
            const int n = virConnectListAllDomains(c, &doms, 0);
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
                    virResetLastError();
                }
            }
            std::free(doms); // NOLINT(cppcoreguidelines-no-malloc)
            return out;
        });
}

void LibvirtHypervisor::domain(const std::string& name, Then<DomainInfo> then) {
    state_->call<DomainInfo>(std::move(then),
                             [s = state_.get(), name](virConnectPtr c) -> Result<DomainInfo> {
                                 DomainRef ref(virDomainLookupByName(c, name.c_str()));
                                 if (ref.d == nullptr) {
                                     return libvirtError("domain " + name);
                                 }
                                 return s->info(ref.d);
                             });
}

void LibvirtHypervisor::balloonStats(const std::string& name, Then<BalloonStats> then) {
    state_->call<BalloonStats>(
        std::move(then), [s = state_.get(), name](virConnectPtr c) -> Result<BalloonStats> {
            DomainRef ref(virDomainLookupByName(c, name.c_str()));
            if (ref.d == nullptr) {
                return libvirtError("domain " + name);
            }
            virDomainMemoryStatStruct stats[VIR_DOMAIN_MEMORY_STAT_NR];
            const int n = virDomainMemoryStats(ref.d, stats, VIR_DOMAIN_MEMORY_STAT_NR, 0);
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
                if (virDomainSetMemoryStatsPeriod(ref.d, kStatsPeriod, VIR_DOMAIN_AFFECT_LIVE) <
                    0) {
                    virResetLastError();
                }
            }
            return b;
        });
}

void LibvirtHypervisor::setBalloon(const std::string& name, Bytes target, Done done) {
    state_->call<Ok>(std::move(done), [name, target](virConnectPtr c) -> Status {
        DomainRef ref(virDomainLookupByName(c, name.c_str()));
        if (ref.d == nullptr) {
            return libvirtError("domain " + name);
        }
        if (virDomainSetMemoryFlags(ref.d, target / kKiB, VIR_DOMAIN_AFFECT_LIVE) < 0) {
            return libvirtError("virDomainSetMemory " + name);
        }
        return okStatus();
    });
}

void LibvirtHypervisor::destroy(const std::string& name, Done done) {
    state_->call<Ok>(std::move(done), [name](virConnectPtr c) -> Status {
        DomainRef ref(virDomainLookupByName(c, name.c_str()));
        if (ref.d == nullptr) {
            return libvirtError("domain " + name);
        }
        if (virDomainDestroy(ref.d) < 0) {
            return libvirtError("virDomainDestroy " + name);
        }
        return okStatus();
    });
}

void LibvirtHypervisor::place(const std::string& name, const std::string& metadata,
                              const std::string& partition, Done done) {
    state_->call<Ok>(std::move(done), [name, metadata, partition](virConnectPtr c) -> Status {
        DomainRef ref(virDomainLookupByName(c, name.c_str()));
        if (ref.d == nullptr) {
            return libvirtError("domain " + name);
        }
        const bool persistent = virDomainIsPersistent(ref.d) == 1;
        const bool active = virDomainIsActive(ref.d) == 1;
        unsigned int flags = 0;
        if (persistent) {
            flags |= VIR_DOMAIN_AFFECT_CONFIG;
        }
        if (active) {
            flags |= VIR_DOMAIN_AFFECT_LIVE;
        }
        if (virDomainSetMetadata(ref.d, VIR_DOMAIN_METADATA_ELEMENT,
                                 metadata.empty() ? nullptr : metadata.c_str(),
                                 metadata.empty() ? nullptr : kMetadataPrefix, kMetadataNamespace,
                                 flags) < 0) {
            return libvirtError("virDomainSetMetadata " + name);
        }
        if (partition.empty() || !persistent) {
            return okStatus();
        }
        char* xml = virDomainGetXMLDesc(ref.d, VIR_DOMAIN_XML_INACTIVE | VIR_DOMAIN_XML_SECURE);
        if (xml == nullptr) {
            return libvirtError("virDomainGetXMLDesc " + name);
        }
        auto edited = config::withPartition(xml, partition);
        std::free(xml); // NOLINT(cppcoreguidelines-no-malloc)
        if (!edited) {
            return invalid("domain " + name + ": " + edited.error().what);
        }
        DomainRef defined(virDomainDefineXML(c, edited->c_str()));
        if (defined.d == nullptr) {
            return libvirtError("virDomainDefineXML " + name);
        }
        return okStatus();
    });
}

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
// SystemdDbus against python-dbusmock's systemd template on a private bus
// (run_systemd_dbus_test.py sets it up and exports MEMQOS_TEST_BUS_ADDRESS).
// The code under test runs on a real io_context with the real BusPump; the
// test talks to the mock over a second, synchronous connection to inject
// failures, emit signals and read the mock's call log (GetMethodCalls).

#include "memqos/io/bus.hpp"
#include "memqos/io/systemd_dbus.hpp"

#include <boost/asio/io_context.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memqos::io {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using namespace std::chrono_literals;

constexpr const char* kSystemd = "org.freedesktop.systemd1";
constexpr const char* kManagerPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
constexpr const char* kMock = "org.freedesktop.DBus.Mock";
constexpr const char* kTestHooks = "org.memqos1.Test";

struct BusErrorGuard {
    sd_bus_error error{}; // SD_BUS_ERROR_NULL is a compound literal (C99)
    BusErrorGuard() = default;
    BusErrorGuard(const BusErrorGuard&) = delete;
    BusErrorGuard& operator=(const BusErrorGuard&) = delete;
    ~BusErrorGuard() { sd_bus_error_free(&error); }
    std::string text() const {
        return std::string(error.name != nullptr ? error.name : "?") + ": " +
               (error.message != nullptr ? error.message : "");
    }
};

// One complete value of any type as text: strings quoted, containers in
// brackets, variants as <signature value>.
int dumpValue(sd_bus_message* m, std::string& out) {
    char type = 0;
    const char* contents = nullptr;
    int r = sd_bus_message_peek_type(m, &type, &contents);
    if (r <= 0) {
        return r < 0 ? r : -EBADMSG;
    }
    auto dumpContainer = [&](const char* open, const char* close, const char* sep) {
        int q = sd_bus_message_enter_container(m, type, contents);
        if (q < 0) {
            return q;
        }
        out += open;
        bool first = true;
        while ((q = sd_bus_message_at_end(m, 0)) == 0) {
            if (!first) {
                out += sep;
            }
            first = false;
            if ((q = dumpValue(m, out)) < 0) {
                return q;
            }
        }
        if (q < 0) {
            return q;
        }
        out += close;
        return sd_bus_message_exit_container(m);
    };
    switch (type) {
    case SD_BUS_TYPE_ARRAY:
        return dumpContainer("[", "]", ", ");
    case SD_BUS_TYPE_STRUCT:
        return dumpContainer("(", ")", ", ");
    case SD_BUS_TYPE_DICT_ENTRY:
        return dumpContainer("", "", ": ");
    case SD_BUS_TYPE_VARIANT: {
        out += "<";
        out += contents;
        out += " ";
        r = dumpContainer("", "", "");
        out += ">";
        return r;
    }
    case SD_BUS_TYPE_STRING:
    case SD_BUS_TYPE_OBJECT_PATH:
    case SD_BUS_TYPE_SIGNATURE: {
        const char* s = nullptr;
        r = sd_bus_message_read_basic(m, type, &s);
        out += "\"" + std::string(s != nullptr ? s : "") + "\"";
        return r;
    }
    case SD_BUS_TYPE_BOOLEAN: {
        int b = 0;
        r = sd_bus_message_read_basic(m, type, &b);
        out += b != 0 ? "true" : "false";
        return r;
    }
    case SD_BUS_TYPE_INT32: {
        std::int32_t v = 0;
        r = sd_bus_message_read_basic(m, type, &v);
        out += std::to_string(v);
        return r;
    }
    case SD_BUS_TYPE_UINT32: {
        std::uint32_t v = 0;
        r = sd_bus_message_read_basic(m, type, &v);
        out += std::to_string(v);
        return r;
    }
    case SD_BUS_TYPE_UINT64: {
        std::uint64_t v = 0;
        r = sd_bus_message_read_basic(m, type, &v);
        out += std::to_string(v);
        return r;
    }
    case SD_BUS_TYPE_INT64: {
        std::int64_t v = 0;
        r = sd_bus_message_read_basic(m, type, &v);
        out += std::to_string(v);
        return r;
    }
    default:
        out += "?";
        return sd_bus_message_skip(m, nullptr);
    }
}

class SystemdDbusTest : public ::testing::Test {
protected:
    void SetUp() override {
        const char* address = std::getenv("MEMQOS_TEST_BUS_ADDRESS");
        if (address == nullptr) {
            GTEST_SKIP() << "MEMQOS_TEST_BUS_ADDRESS not set: run me through "
                            "run_systemd_dbus_test.py";
        }
        address_ = address;
        auto bus = openBus(address_, "memqos-test");
        ASSERT_TRUE(bus) << bus.error().what;
        bus_ = std::move(*bus);
        auto control = openBus(address_, "memqos-test-control");
        ASSERT_TRUE(control) << control.error().what;
        control_ = std::move(*control);

        pump_ = std::make_unique<BusPump>(io_, bus_.get());
        pump_->start();
        systemd_ = std::make_unique<SystemdDbus>(bus_.get(), *pump_);

        mockCall(kMock, "ClearCalls");
        mockCall(kTestHooks, "ClearFailures");
    }

    void TearDown() override {
        systemd_.reset();
        if (pump_) {
            pump_->stop();
        }
        pump_.reset();
        bus_.reset();
        control_.reset();
    }

    // Runs the io_context until `done` holds or `timeout` passes.
    bool runUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout = 5s) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!done()) {
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
            io_.restart();
            io_.run_for(10ms);
        }
        return true;
    }
    // Runs the io_context for a while (to show that something does not happen).
    void runFor(std::chrono::milliseconds d) {
        io_.restart();
        io_.run_for(d);
    }

    void mockCall(const char* interface, const char* member) {
        BusErrorGuard e;
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_call_method(control_.get(), kSystemd, kManagerPath, interface, member,
                                         &e.error, &reply, "");
        sd_bus_message_unref(reply);
        ASSERT_GE(r, 0) << member << ": " << e.text();
    }

    // The next call of `method` fails with this D-Bus error.
    void injectFailure(const char* method, const char* name, const char* message) {
        BusErrorGuard e;
        sd_bus_message* reply = nullptr;
        const int r =
            sd_bus_call_method(control_.get(), kSystemd, kManagerPath, kTestHooks, "SetFailure",
                               &e.error, &reply, "sss", method, name, message);
        sd_bus_message_unref(reply);
        ASSERT_GE(r, 0) << e.text();
    }

    // Arguments of each logged call of `method`, dumped and joined by ", ".
    std::vector<std::string> callsOf(const char* method) {
        BusErrorGuard e;
        sd_bus_message* raw = nullptr;
        int r = sd_bus_call_method(control_.get(), kSystemd, kManagerPath, kMock, "GetMethodCalls",
                                   &e.error, &raw, "s", method);
        const MessagePtr reply(raw);
        std::vector<std::string> calls;
        EXPECT_GE(r, 0) << e.text();
        if (r < 0) {
            return calls;
        }
        r = sd_bus_message_enter_container(raw, 'a', "(tav)");
        while (r >= 0 && (r = sd_bus_message_enter_container(raw, 'r', "tav")) > 0) {
            std::uint64_t when = 0;
            r = sd_bus_message_read(raw, "t", &when);
            r = r < 0 ? r : sd_bus_message_enter_container(raw, 'a', "v");
            std::string args;
            while (r >= 0 && (r = sd_bus_message_at_end(raw, 0)) == 0) {
                if (!args.empty()) {
                    args += ", ";
                }
                r = sd_bus_message_enter_container(raw, 'v', nullptr);
                r = r < 0 ? r : dumpValue(raw, args);
                r = r < 0 ? r : sd_bus_message_exit_container(raw);
            }
            r = r < 0 ? r : sd_bus_message_exit_container(raw); // av
            r = r < 0 ? r : sd_bus_message_exit_container(raw); // struct
            calls.push_back(args);
        }
        EXPECT_GE(r, 0) << "cannot parse GetMethodCalls reply";
        return calls;
    }

    // Makes the mock (i.e. "systemd") emit a Manager signal; `append` adds
    // the arguments, each as a variant.
    void emitSignal(const char* member, const char* signature,
                    const std::function<void(sd_bus_message*)>& append) {
        sd_bus_message* raw = nullptr;
        ASSERT_GE(sd_bus_message_new_method_call(control_.get(), &raw, kSystemd, kManagerPath,
                                                 kMock, "EmitSignal"),
                  0);
        const MessagePtr m(raw);
        ASSERT_GE(sd_bus_message_append(raw, "sss", kManager, member, signature), 0);
        ASSERT_GE(sd_bus_message_open_container(raw, 'a', "v"), 0);
        append(raw);
        ASSERT_GE(sd_bus_message_close_container(raw), 0);
        BusErrorGuard e;
        sd_bus_message* reply = nullptr;
        const int r = sd_bus_call(control_.get(), raw, 0, &e.error, &reply);
        sd_bus_message_unref(reply);
        ASSERT_GE(r, 0) << e.text();
    }

    // Calls a Done-style method and waits for its callback, checking that it
    // was not invoked inside the call.
    Status await(const std::function<void(SystemdManager::Done)>& start) {
        std::optional<Status> result;
        start([&](Status s) { result = std::move(s); });
        EXPECT_FALSE(result.has_value()) << "callback ran inside the call";
        EXPECT_TRUE(runUntil([&] { return result.has_value(); })) << "no reply";
        return result.value_or(Status(invalid("no reply")));
    }

    template <typename T>
    Result<T> awaitValue(const std::function<void(SystemdManager::Then<T>)>& start) {
        std::optional<Result<T>> result;
        start([&](Result<T> r) { result = std::move(r); });
        EXPECT_FALSE(result.has_value()) << "callback ran inside the call";
        EXPECT_TRUE(runUntil([&] { return result.has_value(); })) << "no reply";
        return result.value_or(Result<T>(invalid("no reply")));
    }

    std::string address_;
    boost::asio::io_context io_;
    BusPtr bus_;
    BusPtr control_;
    std::unique_ptr<BusPump> pump_;
    std::unique_ptr<SystemdDbus> systemd_;
};

// ---- SetUnitProperties --------------------------------------------------------

TEST_F(SystemdDbusTest, SetUnitPropertiesSendsOnlyTheSetFieldsAtRuntime) {
    MemoryProperties props;
    props.memoryLow = 256 * kMiB;
    props.memoryHigh = Limit{900 * kMiB};
    props.memoryMax = Limit{}; // no limit -> infinity
    const auto status = await(
        [&](auto done) { systemd_->setUnitProperties("nginx.service", props, std::move(done)); });
    ASSERT_TRUE(status) << status.error().what;
    EXPECT_THAT(callsOf("SetUnitProperties"),
                ElementsAre("\"nginx.service\", true, [(\"MemoryLow\", <t 268435456>), "
                            "(\"MemoryHigh\", <t 943718400>), "
                            "(\"MemoryMax\", <t 18446744073709551615>)]"));
    EXPECT_EQ(systemd_->pendingCalls(), 0U);
}

TEST_F(SystemdDbusTest, SetUnitPropertiesAllFieldsInOrder) {
    const MemoryProperties props{.memoryMin = 1,
                                 .memoryLow = 2,
                                 .memoryHigh = Limit{3},
                                 .memoryMax = Limit{4},
                                 .memorySwapMax = Limit{0}};
    ASSERT_TRUE(await([&](auto done) {
        systemd_->setUnitProperties("session-1.scope", props, std::move(done));
    }));
    EXPECT_THAT(callsOf("SetUnitProperties"),
                ElementsAre("\"session-1.scope\", true, [(\"MemoryMin\", <t 1>), "
                            "(\"MemoryLow\", <t 2>), (\"MemoryHigh\", <t 3>), "
                            "(\"MemoryMax\", <t 4>), (\"MemorySwapMax\", <t 0>)]"));
}

TEST_F(SystemdDbusTest, SetUnitPropertiesWithNothingToSetCallsNobody) {
    const auto status = await([&](auto done) {
        systemd_->setUnitProperties("nginx.service", MemoryProperties{}, std::move(done));
    });
    EXPECT_TRUE(status);
    EXPECT_THAT(callsOf("SetUnitProperties"), IsEmpty());
}

TEST_F(SystemdDbusTest, SetUnitPropertiesReportsSystemdsError) {
    MemoryProperties props;
    props.memoryMin = kMiB;
    const auto status = await(
        [&](auto done) { systemd_->setUnitProperties("foo.service", props, std::move(done)); });
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().what,
                HasSubstr("org.freedesktop.systemd1.NoSuchUnit: Unit foo.service not found."));
    EXPECT_THAT(status.error().what, HasSubstr("SetUnitProperties foo.service"));
    EXPECT_EQ(status.error().code, std::errc::no_such_file_or_directory);
}

TEST_F(SystemdDbusTest, AccessDeniedIsNamedInTheError) {
    injectFailure("SetUnitProperties", "org.freedesktop.DBus.Error.AccessDenied", "Access denied");
    MemoryProperties props;
    props.memoryHigh = Limit{};
    const auto status = await(
        [&](auto done) { systemd_->setUnitProperties("nginx.service", props, std::move(done)); });
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().what,
                HasSubstr("org.freedesktop.DBus.Error.AccessDenied: Access denied"));
    EXPECT_EQ(status.error().code, std::errc::permission_denied);
}

TEST_F(SystemdDbusTest, InvalidUtf8IsRefusedLaterNotInline) {
    MemoryProperties props;
    props.memoryLow = 1;
    const auto status = await(
        [&](auto done) { systemd_->setUnitProperties("bad\xff.service", props, std::move(done)); });
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().what, HasSubstr("SetUnitProperties bad"));
    EXPECT_THAT(callsOf("SetUnitProperties"), IsEmpty());
}

// ---- KillUnit -----------------------------------------------------------------

TEST_F(SystemdDbusTest, KillUnitSignalsTheWholeUnit) {
    ASSERT_TRUE(await([&](auto done) { systemd_->killUnit("nginx.service", SIGKILL, done); }));
    EXPECT_THAT(callsOf("KillUnit"), ElementsAre("\"nginx.service\", \"all\", 9"));
}

TEST_F(SystemdDbusTest, KillUnitOfAMissingUnitFails) {
    const auto status =
        await([&](auto done) { systemd_->killUnit("gone.service", SIGTERM, done); });
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().what,
                HasSubstr("KillUnit gone.service: org.freedesktop.systemd1.NoSuchUnit: "
                          "Unit gone.service not found."));
}

TEST_F(SystemdDbusTest, ManyCallsInFlightAllComplete) {
    constexpr int kCalls = 50;
    int ok = 0;
    int failed = 0;
    for (int i = 0; i < kCalls; ++i) {
        systemd_->killUnit(i % 2 == 0 ? "nginx.service" : "gone.service", SIGTERM,
                           [&](const Status& s) { ++(s ? ok : failed); });
    }
    EXPECT_EQ(systemd_->pendingCalls(), static_cast<std::size_t>(kCalls));
    ASSERT_TRUE(runUntil([&] { return ok + failed == kCalls; }));
    EXPECT_EQ(ok, kCalls / 2);
    EXPECT_EQ(failed, kCalls / 2);
    EXPECT_EQ(systemd_->pendingCalls(), 0U);
    EXPECT_EQ(callsOf("KillUnit").size(), static_cast<std::size_t>(kCalls));
}

TEST_F(SystemdDbusTest, CallsBeyondTheBoundWaitInOrderAndKillsDoNot) {
    // 1000 units appearing at once: the calls go out kMaxCallsInFlight at a
    // time (dbus-daemon would refuse the rest with LimitsExceeded), in order.
    constexpr std::size_t kCalls = 200;
    constexpr std::size_t kBound = io::SystemdDbus::kMaxCallsInFlight;
    std::vector<std::size_t> order;
    MemoryProperties props;
    props.memoryLow = kMiB;
    for (std::size_t i = 0; i < kCalls; ++i) {
        systemd_->setUnitProperties("nginx.service", props, [&order, i](const Status& s) {
            EXPECT_TRUE(s) << s.error().what;
            order.push_back(i);
        });
    }
    EXPECT_EQ(systemd_->pendingCalls(), kBound);
    EXPECT_EQ(systemd_->queuedCalls(), kCalls - kBound);
    // A kill is not held back behind them.
    bool killed = false;
    systemd_->killUnit("nginx.service", SIGKILL, [&](const Status& s) { killed = s.ok(); });
    EXPECT_EQ(systemd_->pendingCalls(), kBound + 1);
    EXPECT_EQ(systemd_->queuedCalls(), kCalls - kBound);
    ASSERT_TRUE(runUntil([&] { return order.size() == kCalls && killed; }));
    for (std::size_t i = 0; i < kCalls; ++i) {
        EXPECT_EQ(order[i], i);
    }
    EXPECT_EQ(systemd_->pendingCalls(), 0U);
    EXPECT_EQ(systemd_->queuedCalls(), 0U);
    EXPECT_EQ(callsOf("SetUnitProperties").size(), kCalls);
}

TEST_F(SystemdDbusTest, UrgentPropertiesAreNotQueuedBehindTheBound) {
    // A pressure cap while a reconcile storm fills the queue: sent at once,
    // as KillUnit is, and answered before the queued writes.
    constexpr std::size_t kCalls = 200;
    constexpr std::size_t kBound = io::SystemdDbus::kMaxCallsInFlight;
    std::size_t done = 0;
    MemoryProperties props;
    props.memoryLow = kMiB;
    for (std::size_t i = 0; i < kCalls; ++i) {
        systemd_->setUnitProperties("nginx.service", props, [&done](const Status&) { ++done; });
    }
    ASSERT_EQ(systemd_->queuedCalls(), kCalls - kBound);
    MemoryProperties cap;
    cap.memoryHigh = Limit{512 * kMiB};
    std::optional<std::size_t> doneBeforeCap;
    systemd_->setUnitPropertiesUrgent("nginx.service", cap, [&](const Status& s) {
        EXPECT_TRUE(s) << s.error().what;
        doneBeforeCap = done;
    });
    EXPECT_EQ(systemd_->pendingCalls(), kBound + 1);
    EXPECT_EQ(systemd_->queuedCalls(), kCalls - kBound);
    ASSERT_TRUE(runUntil([&] { return done == kCalls && doneBeforeCap.has_value(); }));
    EXPECT_LE(*doneBeforeCap, kBound) << "the cap was answered after queued writes";
    EXPECT_THAT(callsOf("SetUnitProperties"), Contains(HasSubstr("MemoryHigh")));
}

TEST_F(SystemdDbusTest, DestroyingCancelsOutstandingCalls) {
    bool called = false;
    systemd_->killUnit("nginx.service", SIGTERM, [&](const Status&) { called = true; });
    systemd_.reset();
    runFor(300ms);
    EXPECT_FALSE(called);
}

// ---- StartTransientUnit -------------------------------------------------------

TEST_F(SystemdDbusTest, StartTransientServiceSendsCommandSliceAndMemory) {
    MemoryProperties props;
    props.memoryLow = 64 * kMiB;
    props.memoryMax = Limit{128 * kMiB};
    const auto status = await([&](auto done) {
        systemd_->startTransientService("hog.service", "memqos-reclaimed.slice", props,
                                        {"/usr/bin/stress-ng", "--vm", "1"}, std::move(done));
    });
    ASSERT_TRUE(status) << status.error().what;
    EXPECT_THAT(callsOf("StartTransientUnit"),
                ElementsAre("\"hog.service\", \"fail\", ["
                            "(\"Description\", <s \"memqos workload hog.service\">), "
                            "(\"Slice\", <s \"memqos-reclaimed.slice\">), "
                            "(\"ExecStart\", <a(sasb) [(\"/usr/bin/stress-ng\", "
                            "[\"/usr/bin/stress-ng\", \"--vm\", \"1\"], false)]>), "
                            "(\"MemoryAccounting\", <b true>), "
                            "(\"MemoryLow\", <t 67108864>), (\"MemoryMax\", <t 134217728>)], []"));
}

TEST_F(SystemdDbusTest, StartTransientServiceWithoutCommandFailsWithoutCalling) {
    const auto status = await([&](auto done) {
        systemd_->startTransientService("hog.service", "memqos-reclaimed.slice", {}, {},
                                        std::move(done));
    });
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, std::errc::invalid_argument);
    EXPECT_THAT(status.error().what, HasSubstr("empty command line"));
    EXPECT_THAT(callsOf("StartTransientUnit"), IsEmpty());
}

TEST_F(SystemdDbusTest, StartTransientServiceReportsAnExistingUnit) {
    injectFailure("StartTransientUnit", "org.freedesktop.systemd1.UnitExists",
                  "Unit hog.service was already loaded or has a fragment file.");
    const auto status = await([&](auto done) {
        systemd_->startTransientService("hog.service", "", {}, {"/bin/true"}, std::move(done));
    });
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().what,
                HasSubstr("org.freedesktop.systemd1.UnitExists: Unit hog.service was already"));
}

TEST_F(SystemdDbusTest, StartTransientScopeSendsPidsSliceAndMemory) {
    MemoryProperties props;
    props.memoryLow = 512 * kMiB;
    props.memoryHigh = Limit{};
    const auto status = await([&](auto done) {
        systemd_->startTransientScope("memqos-vm-web1.scope", "memqos-dedicated.slice",
                                      {4242, 4243}, props, "Ganeti instance web1",
                                      std::move(done));
    });
    ASSERT_TRUE(status) << status.error().what;
    EXPECT_THAT(callsOf("StartTransientUnit"),
                ElementsAre("\"memqos-vm-web1.scope\", \"fail\", ["
                            "(\"Description\", <s \"Ganeti instance web1\">), "
                            "(\"Slice\", <s \"memqos-dedicated.slice\">), "
                            "(\"PIDs\", <au [4242, 4243]>), "
                            "(\"MemoryAccounting\", <b true>), "
                            "(\"MemoryLow\", <t 536870912>), "
                            "(\"MemoryHigh\", <t 18446744073709551615>)], []"));
    EXPECT_EQ(systemd_->pendingCalls(), 0U);
}

TEST_F(SystemdDbusTest, StartTransientScopeWithoutSliceOrDescriptionSendsDefaults) {
    ASSERT_TRUE(await([&](auto done) {
        systemd_->startTransientScope("x.scope", "", {7}, {}, "", std::move(done));
    }));
    EXPECT_THAT(callsOf("StartTransientUnit"),
                ElementsAre("\"x.scope\", \"fail\", ["
                            "(\"Description\", <s \"memqos scope x.scope\">), "
                            "(\"PIDs\", <au [7]>), (\"MemoryAccounting\", <b true>)], []"));
}

TEST_F(SystemdDbusTest, StartTransientScopeOfAnExistingUnitIsFileExists) {
    // The mock knows session-1.scope and refuses it as systemd would.
    const auto status = await([&](auto done) {
        systemd_->startTransientScope("session-1.scope", "", {1}, {}, "d", std::move(done));
    });
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, std::errc::file_exists);
    EXPECT_THAT(status.error().what,
                HasSubstr("StartTransientUnit session-1.scope: "
                          "org.freedesktop.systemd1.UnitExists: Unit session-1.scope was already"));
}

TEST_F(SystemdDbusTest, StartTransientScopeReportsOtherErrorsWithTheirCode) {
    injectFailure("StartTransientUnit", "org.freedesktop.DBus.Error.AccessDenied", "no");
    const auto status = await([&](auto done) {
        systemd_->startTransientScope("y.scope", "", {1}, {}, "d", std::move(done));
    });
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, std::errc::permission_denied);
    EXPECT_THAT(status.error().what,
                HasSubstr("StartTransientUnit y.scope: org.freedesktop.DBus.Error.AccessDenied"));
}

TEST_F(SystemdDbusTest, StartTransientScopeRefusesBadArgumentsWithoutCalling) {
    auto start = [&](const std::string& unit, std::vector<std::uint32_t> pids) {
        return await([&](auto done) {
            systemd_->startTransientScope(unit, "", pids, {}, "d", std::move(done));
        });
    };
    const auto noPids = start("z.scope", {});
    ASSERT_FALSE(noPids);
    EXPECT_EQ(noPids.error().code, std::errc::invalid_argument);
    EXPECT_THAT(noPids.error().what, HasSubstr("StartTransientUnit z.scope: no processes"));
    const auto notScope = start("z.service", {1});
    ASSERT_FALSE(notScope);
    EXPECT_EQ(notScope.error().code, std::errc::invalid_argument);
    EXPECT_THAT(notScope.error().what, HasSubstr("not a scope name"));
    EXPECT_THAT(callsOf("StartTransientUnit"), IsEmpty());
}

TEST_F(SystemdDbusTest, StartTransientScopeWaitsBehindTheCallBound) {
    constexpr std::size_t kBound = io::SystemdDbus::kMaxCallsInFlight;
    MemoryProperties props;
    props.memoryLow = kMiB;
    std::size_t done = 0;
    for (std::size_t i = 0; i < kBound; ++i) {
        systemd_->setUnitProperties("nginx.service", props, [&](const Status&) { ++done; });
    }
    std::optional<Status> scope;
    systemd_->startTransientScope("w.scope", "", {1}, {}, "d",
                                  [&](Status s) { scope = std::move(s); });
    EXPECT_EQ(systemd_->pendingCalls(), kBound);
    EXPECT_EQ(systemd_->queuedCalls(), 1U);
    ASSERT_TRUE(runUntil([&] { return scope.has_value() && done == kBound; }));
    EXPECT_TRUE(*scope) << scope->error().what;
    EXPECT_EQ(systemd_->queuedCalls(), 0U);
}

// ---- getUnit / listUnits ------------------------------------------------------

TEST_F(SystemdDbusTest, GetUnitReadsStateAndControlGroup) {
    auto unit = awaitValue<UnitInfo>(
        [&](auto then) { systemd_->getUnit("nginx.service", std::move(then)); });
    ASSERT_TRUE(unit) << unit.error().what;
    EXPECT_EQ(unit->name, "nginx.service");
    EXPECT_EQ(unit->loadState, "loaded");
    EXPECT_EQ(unit->activeState, "active");
    EXPECT_EQ(unit->controlGroup, "/system.slice/nginx.service");
    EXPECT_THAT(callsOf("LoadUnit"), ElementsAre("\"nginx.service\""));
}

TEST_F(SystemdDbusTest, GetUnitUsesTheInterfaceOfTheUnitType) {
    auto scope = awaitValue<UnitInfo>(
        [&](auto then) { systemd_->getUnit("session-1.scope", std::move(then)); });
    ASSERT_TRUE(scope) << scope.error().what;
    EXPECT_EQ(scope->controlGroup, "/user.slice/session-1.scope");
    auto slice = awaitValue<UnitInfo>(
        [&](auto then) { systemd_->getUnit("memqos-shared.slice", std::move(then)); });
    ASSERT_TRUE(slice) << slice.error().what;
    EXPECT_EQ(slice->controlGroup, "/memqos.slice/memqos-shared.slice");
    auto socket =
        awaitValue<UnitInfo>([&](auto then) { systemd_->getUnit("dbus.socket", std::move(then)); });
    ASSERT_TRUE(socket) << socket.error().what;
    EXPECT_EQ(socket->activeState, "active");
    EXPECT_EQ(socket->controlGroup, "");
}

TEST_F(SystemdDbusTest, GetUnitOfAUnitWithoutFileIsNotAnError) {
    auto unit = awaitValue<UnitInfo>(
        [&](auto then) { systemd_->getUnit("ghost.service", std::move(then)); });
    ASSERT_TRUE(unit) << unit.error().what;
    EXPECT_EQ(unit->loadState, "not-found");
    EXPECT_EQ(unit->activeState, "inactive");
    EXPECT_EQ(unit->controlGroup, ""); // Get(ControlGroup) failed: left empty
}

TEST_F(SystemdDbusTest, GetUnitReportsLoadUnitErrors) {
    auto unit = awaitValue<UnitInfo>(
        [&](auto then) { systemd_->getUnit("nope.service", std::move(then)); });
    ASSERT_FALSE(unit);
    EXPECT_THAT(unit.error().what,
                HasSubstr("LoadUnit nope.service: org.freedesktop.systemd1.NoSuchUnit: "
                          "Unit nope.service not found."));
}

TEST_F(SystemdDbusTest, ListUnitsKeepsServicesScopesAndSlices) {
    auto units =
        awaitValue<std::vector<UnitInfo>>([&](auto then) { systemd_->listUnits(std::move(then)); });
    ASSERT_TRUE(units) << units.error().what;
    std::vector<std::string> seen;
    for (const auto& u : *units) {
        seen.push_back(u.name + " " + u.loadState + " " + u.activeState + " [" + u.controlGroup +
                       "]");
    }
    EXPECT_THAT(seen,
                ElementsAre("ghost.service not-found inactive []",
                            "memqos-shared.slice loaded active []",
                            "nginx.service loaded active []", "session-1.scope loaded active []"));
}

TEST_F(SystemdDbusTest, ListUnitsReportsErrors) {
    injectFailure("ListUnits", "org.freedesktop.DBus.Error.NoMemory", "out of memory");
    auto units =
        awaitValue<std::vector<UnitInfo>>([&](auto then) { systemd_->listUnits(std::move(then)); });
    ASSERT_FALSE(units);
    EXPECT_THAT(units.error().what,
                HasSubstr("ListUnits: org.freedesktop.DBus.Error.NoMemory: out of memory"));
}

// ---- subscribe and signals ----------------------------------------------------

class SubscribedTest : public SystemdDbusTest {
protected:
    void SetUp() override {
        SystemdDbusTest::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        SystemdManager::Events events;
        events.reloaded = [this] { log_.push_back("reloaded"); };
        events.unitStarted = [this](const std::string& u) { log_.push_back("started " + u); };
        events.unitLoaded = [this](const std::string& u) { log_.push_back("started " + u); };
        events.unitRemoved = [this](const std::string& u) { log_.push_back("removed " + u); };
        const auto status =
            await([&](auto done) { systemd_->subscribe(std::move(events), std::move(done)); });
        ASSERT_TRUE(status) << status.error().what;
        ASSERT_EQ(callsOf("Subscribe").size(), 1U);
    }

    // Emits UnitNew(marker) and waits for it: every signal emitted before
    // has then been delivered (or dropped) too.
    void sync(const std::string& marker) {
        emitSignal("UnitNew", "so", [&](sd_bus_message* m) {
            sd_bus_message_append(m, "v", "s", marker.c_str());
            sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/marker");
        });
        ASSERT_TRUE(runUntil([&] { return !log_.empty() && log_.back() == "started " + marker; }))
            << "marker signal not received";
        log_.pop_back();
    }

    std::vector<std::string> log_;
};

TEST_F(SubscribedTest, UnitNewAndUnitRemovedArePassedOn) {
    emitSignal("UnitNew", "so", [](sd_bus_message* m) {
        sd_bus_message_append(m, "v", "s", "a.service");
        sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/a_2eservice");
    });
    emitSignal("UnitRemoved", "so", [](sd_bus_message* m) {
        sd_bus_message_append(m, "v", "s", "b.scope");
        sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/b_2escope");
    });
    ASSERT_NO_FATAL_FAILURE(sync("marker-1.service"));
    EXPECT_THAT(log_, ElementsAre("started a.service", "removed b.scope"));
}

TEST_F(SubscribedTest, OnlyFinishedJobsAndFinishedReloadsArePassedOn) {
    auto jobRemoved = [&](std::uint32_t id, const char* unit, const char* result) {
        emitSignal("JobRemoved", "uoss", [&](sd_bus_message* m) {
            sd_bus_message_append(m, "v", "u", id);
            sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/job/1");
            sd_bus_message_append(m, "v", "s", unit);
            sd_bus_message_append(m, "v", "s", result);
        });
    };
    auto reloading = [&](bool starting) {
        emitSignal("Reloading", "b", [&](sd_bus_message* m) {
            sd_bus_message_append(m, "v", "b", starting ? 1 : 0);
        });
    };
    jobRemoved(1, "web.service", "done");
    jobRemoved(2, "broken.service", "failed");
    reloading(true);
    reloading(false);
    jobRemoved(3, "late.service", "canceled");
    ASSERT_NO_FATAL_FAILURE(sync("marker-2.service"));
    EXPECT_THAT(log_, ElementsAre("started web.service", "reloaded"));
}

TEST_F(SubscribedTest, UnitRemovedDuringADaemonReloadIsNotARemoval) {
    // systemd 252 re-creates every unit object on daemon-reload and sends
    // UnitRemoved for each in between Reloading(true) and Reloading(false).
    auto unitRemoved = [&](const char* unit) {
        emitSignal("UnitRemoved", "so", [&](sd_bus_message* m) {
            sd_bus_message_append(m, "v", "s", unit);
            sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/x");
        });
    };
    auto reloading = [&](bool starting) {
        emitSignal("Reloading", "b", [&](sd_bus_message* m) {
            sd_bus_message_append(m, "v", "b", starting ? 1 : 0);
        });
    };
    reloading(true);
    unitRemoved("kept.service");
    reloading(false);
    unitRemoved("gone.service");
    ASSERT_NO_FATAL_FAILURE(sync("marker-5.service"));
    EXPECT_THAT(log_, ElementsAre("reloaded", "removed gone.service"));
}

TEST_F(SubscribedTest, SystemdBackOnTheBusIsSubscribedAgainAndCountsAsAReload) {
    // daemon-reexec: systemd leaves the bus (after Reloading(true)) and a
    // new process joins it; its Reloading(false) may never reach us.
    emitSignal("Reloading", "b", [&](sd_bus_message* m) { sd_bus_message_append(m, "v", "b", 1); });
    ASSERT_NO_FATAL_FAILURE(mockCall(kTestHooks, "Reconnect"));
    ASSERT_TRUE(runUntil([&] { return callsOf("Subscribe").size() == 2; }))
        << "no second Subscribe() after systemd came back";
    // Not stuck in "reloading": removals are passed on again.
    emitSignal("UnitRemoved", "so", [](sd_bus_message* m) {
        sd_bus_message_append(m, "v", "s", "gone.service");
        sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/gone_2eservice");
    });
    ASSERT_NO_FATAL_FAILURE(sync("marker-6.service"));
    EXPECT_THAT(log_, ElementsAre("reloaded", "removed gone.service"));
}

TEST_F(SubscribedTest, SignalsWithAnotherSignatureAreIgnored) {
    emitSignal("UnitNew", "s",
               [](sd_bus_message* m) { sd_bus_message_append(m, "v", "s", "odd.service"); });
    ASSERT_NO_FATAL_FAILURE(sync("marker-3.service"));
    EXPECT_THAT(log_, IsEmpty());
}

TEST_F(SubscribedTest, SignalsFromAnotherSenderAreIgnored) {
    // Anyone on the bus can send a signal with systemd's path and interface;
    // only the owner of org.freedesktop.systemd1 is believed.
    ASSERT_GE(sd_bus_emit_signal(control_.get(), kManagerPath, kManager, "UnitNew", "so",
                                 "impostor.service", "/org/freedesktop/systemd1/unit/x"),
              0);
    ASSERT_GE(sd_bus_emit_signal(control_.get(), kManagerPath, kManager, "Reloading", "b", 0), 0);
    ASSERT_NO_FATAL_FAILURE(sync("marker-4.service"));
    EXPECT_THAT(log_, IsEmpty());
}

TEST_F(SubscribedTest, StartingATransientServiceReportsItStarted) {
    ASSERT_TRUE(await([&](auto done) {
        systemd_->startTransientService("job.service", "memqos-shared.slice", {}, {"/bin/true"},
                                        std::move(done));
    }));
    ASSERT_TRUE(runUntil([&] { return !log_.empty(); }));
    EXPECT_THAT(log_, ElementsAre("started job.service"));
}

TEST_F(SubscribedTest, SubscribingAgainReplacesTheEvents) {
    std::vector<std::string> second;
    SystemdManager::Events events;
    events.unitStarted = [&](const std::string& u) { second.push_back(u); };
    events.unitLoaded = events.unitStarted;
    injectFailure("Subscribe", "org.freedesktop.systemd1.AlreadySubscribed",
                  "Client is already subscribed.");
    const auto status =
        await([&](auto done) { systemd_->subscribe(std::move(events), std::move(done)); });
    ASSERT_TRUE(status) << "AlreadySubscribed must count as success: " << status.error().what;
    emitSignal("UnitNew", "so", [](sd_bus_message* m) {
        sd_bus_message_append(m, "v", "s", "c.service");
        sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/c_2eservice");
    });
    ASSERT_TRUE(runUntil([&] { return !second.empty(); }));
    EXPECT_THAT(second, ElementsAre("c.service"));
    EXPECT_THAT(log_, IsEmpty()); // once each, to the new callbacks only
}

TEST_F(SystemdDbusTest, SubscribingTwiceAtOnceCompletesBoth) {
    std::optional<Status> first;
    std::optional<Status> second;
    std::vector<std::string> started;
    systemd_->subscribe(SystemdManager::Events{}, [&](Status s) { first = std::move(s); });
    SystemdManager::Events events;
    events.unitStarted = [&](const std::string& u) { started.push_back(u); };
    events.unitLoaded = events.unitStarted;
    systemd_->subscribe(std::move(events), [&](Status s) { second = std::move(s); });
    ASSERT_TRUE(runUntil([&] { return first.has_value() && second.has_value(); }));
    EXPECT_TRUE(*first);
    EXPECT_TRUE(*second);
    EXPECT_EQ(callsOf("Subscribe").size(), 2U);
    emitSignal("UnitNew", "so", [](sd_bus_message* m) {
        sd_bus_message_append(m, "v", "s", "e.service");
        sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/e");
    });
    ASSERT_TRUE(runUntil([&] { return !started.empty(); }));
    runFor(100ms);
    EXPECT_THAT(started, ElementsAre("e.service")); // the first matches are gone
}

TEST_F(SystemdDbusTest, SubscribeReportsSystemdsError) {
    injectFailure("Subscribe", "org.freedesktop.DBus.Error.AccessDenied", "no");
    const auto status =
        await([&](auto done) { systemd_->subscribe(SystemdManager::Events{}, std::move(done)); });
    ASSERT_FALSE(status);
    EXPECT_THAT(status.error().what,
                HasSubstr("Subscribe: org.freedesktop.DBus.Error.AccessDenied: no"));
}

TEST_F(SystemdDbusTest, EventsWithoutCallbacksAreHarmless) {
    ASSERT_TRUE(
        await([&](auto done) { systemd_->subscribe(SystemdManager::Events{}, std::move(done)); }));
    emitSignal("Reloading", "b", [](sd_bus_message* m) { sd_bus_message_append(m, "v", "b", 0); });
    emitSignal("UnitNew", "so", [](sd_bus_message* m) {
        sd_bus_message_append(m, "v", "s", "d.service");
        sd_bus_message_append(m, "v", "o", "/org/freedesktop/systemd1/unit/d");
    });
    runFor(200ms);
    SUCCEED();
}

} // namespace
} // namespace memqos::io

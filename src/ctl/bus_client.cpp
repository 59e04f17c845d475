// SPDX-License-Identifier: Apache-2.0
#include "bus_client.hpp"

#include <systemd/sd-bus.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "bus_error.hpp"

namespace memqos::ctl {
namespace {

using io::MessagePtr;

// Owns an sd_bus_error.
class BusError {
public:
    BusError() = default;
    BusError(const BusError&) = delete;
    BusError& operator=(const BusError&) = delete;
    ~BusError() { sd_bus_error_free(&error_); }
    sd_bus_error* get() { return &error_; }
    std::string_view name() const { return error_.name != nullptr ? error_.name : ""; }
    std::string_view message() const { return error_.message != nullptr ? error_.message : ""; }

private:
    sd_bus_error error_{}; // = SD_BUS_ERROR_NULL, which is a C99 compound literal
};

// Reads a basic value that sd-bus stores as a T and keeps it as a U (one of
// Value's alternatives).
template <typename T, typename U = T>
int readAs(sd_bus_message* m, char type, Value& out) {
    T x{};
    const int r = sd_bus_message_read_basic(m, type, &x);
    out.v = static_cast<U>(x);
    return r;
}

int readBasic(sd_bus_message* m, char type, Value& out) {
    switch (type) {
    case SD_BUS_TYPE_BYTE:
        return readAs<std::uint8_t, std::uint64_t>(m, type, out);
    case SD_BUS_TYPE_BOOLEAN:
        return readAs<int, bool>(m, type, out);
    case SD_BUS_TYPE_INT16:
        return readAs<std::int16_t, std::int64_t>(m, type, out);
    case SD_BUS_TYPE_UINT16:
        return readAs<std::uint16_t, std::uint64_t>(m, type, out);
    case SD_BUS_TYPE_INT32:
    case SD_BUS_TYPE_UNIX_FD:
        return readAs<std::int32_t, std::int64_t>(m, type, out);
    case SD_BUS_TYPE_UINT32:
        return readAs<std::uint32_t, std::uint64_t>(m, type, out);
    case SD_BUS_TYPE_INT64:
        return readAs<std::int64_t>(m, type, out);
    case SD_BUS_TYPE_UINT64:
        return readAs<std::uint64_t>(m, type, out);
    case SD_BUS_TYPE_DOUBLE:
        return readAs<double>(m, type, out);
    case SD_BUS_TYPE_STRING:
    case SD_BUS_TYPE_OBJECT_PATH:
    case SD_BUS_TYPE_SIGNATURE: {
        const char* s = nullptr;
        const int r = sd_bus_message_read_basic(m, type, &s);
        out.v = std::string(s != nullptr ? s : "");
        return r;
    }
    default:
        return -EBADMSG;
    }
}

int readOne(sd_bus_message* m, Value& out);

// An array of dict entries → ValueObject with stringified keys.
int readDict(sd_bus_message* m, ValueObject& out) {
    for (;;) {
        char type = 0;
        const char* contents = nullptr;
        int r = sd_bus_message_peek_type(m, &type, &contents);
        if (r <= 0) {
            return r;
        }
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, contents);
        if (r < 0) {
            return r;
        }
        Value key;
        Value value;
        if ((r = readOne(m, key)) < 0 || (r = readOne(m, value)) < 0) {
            return r;
        }
        if ((r = sd_bus_message_exit_container(m)) < 0) {
            return r;
        }
        std::string k = std::holds_alternative<std::string>(key.v) ? key.asString()
                        : std::holds_alternative<std::int64_t>(key.v)
                            ? std::to_string(std::get<std::int64_t>(key.v))
                        : std::holds_alternative<std::uint64_t>(key.v)
                            ? std::to_string(std::get<std::uint64_t>(key.v))
                            : std::string(key.asBool() ? "true" : "false");
        out.push_back({std::move(k), std::move(value)});
    }
}

int readOne(sd_bus_message* m, Value& out) {
    char type = 0;
    const char* contents = nullptr;
    int r = sd_bus_message_peek_type(m, &type, &contents);
    if (r < 0) {
        return r;
    }
    if (r == 0) {
        return -EBADMSG;
    }
    switch (type) {
    case SD_BUS_TYPE_VARIANT:
        if ((r = sd_bus_message_enter_container(m, type, contents)) < 0 ||
            (r = readOne(m, out)) < 0) {
            return r;
        }
        return sd_bus_message_exit_container(m);
    case SD_BUS_TYPE_ARRAY:
        if ((r = sd_bus_message_enter_container(m, type, contents)) < 0) {
            return r;
        }
        if (contents != nullptr && contents[0] == SD_BUS_TYPE_DICT_ENTRY_BEGIN) {
            ValueObject dict;
            if ((r = readDict(m, dict)) < 0) {
                return r;
            }
            out.v = std::move(dict);
        } else {
            ValueArray items;
            if ((r = readValues(m, items)) < 0) {
                return r;
            }
            out.v = std::move(items);
        }
        return sd_bus_message_exit_container(m);
    case SD_BUS_TYPE_STRUCT: {
        if ((r = sd_bus_message_enter_container(m, type, contents)) < 0) {
            return r;
        }
        ValueArray fields;
        if ((r = readValues(m, fields)) < 0) {
            return r;
        }
        out.v = std::move(fields);
        return sd_bus_message_exit_container(m);
    }
    default:
        return readBasic(m, type, out);
    }
}

// Appends nothing: for methods without arguments.
int appendNothing(sd_bus_message* /*m*/) {
    return 0;
}

// Maps an empty reply: for methods without out-arguments.
Status noReply(const ValueArray& /*out*/) {
    return okStatus();
}

} // namespace

int readValues(sd_bus_message* m, ValueArray& out) {
    for (;;) {
        const int r = sd_bus_message_peek_type(m, nullptr, nullptr);
        if (r < 0) {
            return r;
        }
        if (r == 0) {
            return 0; // end of the container
        }
        Value v;
        if (const int e = readOne(m, v); e < 0) {
            return e;
        }
        out.push_back(std::move(v));
    }
}

Result<BusClient> BusClient::connect(const BusChoice& choice) {
    sd_bus* bus = nullptr;
    int r = 0;
    if (choice.kind == BusChoice::Kind::System) {
        // Honours $DBUS_SYSTEM_BUS_ADDRESS, like every D-Bus client.
        r = sd_bus_open_system(&bus);
    } else {
        r = sd_bus_new(&bus);
        if (r >= 0) {
            BusClient owner(bus); // unrefs on failure below
            if ((r = sd_bus_set_address(bus, choice.address.c_str())) < 0 ||
                (r = sd_bus_set_bus_client(bus, 1)) < 0 ||
                (r = sd_bus_set_description(bus, "memqosctl")) < 0 || (r = sd_bus_start(bus)) < 0) {
                return classifyConnectError(choice, -r);
            }
            return owner;
        }
    }
    if (r < 0) {
        return classifyConnectError(choice, -r);
    }
    return BusClient(bus);
}

Result<MessagePtr> BusClient::newCall(const char* path, const char* interface,
                                      const char* member) {
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_call(bus_.get(), &raw, io::bus_names::kBusName, path,
                                           interface, member);
    MessagePtr request(raw);
    if (r < 0) {
        return classifyCallError({}, {}, -r, member);
    }
    // No D-Bus activation (busctl --auto-start=no): a query of any user must
    // not start a memqosd that an administrator stopped. The bus then answers
    // NameHasNoOwner, which is "memqosd is not running".
    if ((r = sd_bus_message_set_auto_start(request.get(), 0)) < 0) {
        return classifyCallError({}, {}, -r, member);
    }
    return request;
}

namespace {

// A reply's body, after checking its signature.
Result<ValueArray> readReply(sd_bus_message* reply, const char* member,
                             std::string_view expectedSignature) {
    const char* signature = sd_bus_message_get_signature(reply, 1);
    const std::string_view actual = signature != nullptr ? signature : "";
    if (actual != expectedSignature) {
        return malformedReply(member, "signature '" + std::string(actual) + "', expected '" +
                                          std::string(expectedSignature) + "'");
    }
    ValueArray out;
    if (const int r = readValues(reply, out); r < 0) {
        return malformedReply(member, std::strerror(-r)); // NOLINT(concurrency-mt-unsafe)
    }
    return out;
}

// One call of several in flight (sendTogether).
struct PendingCall {
    const char* member = "";
    std::string_view signature;
    MessagePtr request;
    io::SlotPtr slot;
    MessagePtr reply; // set when it came (a method return or an error)
};

int onReply(sd_bus_message* m, void* userdata, sd_bus_error* /*error*/) {
    static_cast<PendingCall*>(userdata)->reply.reset(sd_bus_message_ref(m));
    return 0;
}

// Sends both requests before either answer is awaited (one round trip) and
// reads each reply body, checked against its signature. The first error, of
// sending or of a reply, is returned.
Result<std::pair<ValueArray, ValueArray>> sendTogether(sd_bus* bus,
                                                       std::array<PendingCall, 2>& calls) {
    for (auto& c : calls) {
        sd_bus_slot* slot = nullptr;
        if (const int r = sd_bus_call_async(bus, &slot, c.request.get(), onReply, &c, 0); r < 0) {
            return classifyCallError({}, {}, -r, c.member);
        }
        c.slot.reset(slot);
    }
    // sd-bus fails each call with a timeout reply after the default method
    // timeout, so this ends.
    while (!calls[0].reply || !calls[1].reply) {
        int r = sd_bus_process(bus, nullptr);
        if (r < 0) {
            return classifyCallError({}, {}, -r, calls[1].member);
        }
        if (r == 0 && (r = sd_bus_wait(bus, UINT64_MAX)) < 0 && r != -EINTR) {
            return classifyCallError({}, {}, -r, calls[1].member);
        }
    }
    std::array<ValueArray, 2> bodies;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        sd_bus_message* reply = calls.at(i).reply.get();
        if (const sd_bus_error* e = sd_bus_message_get_error(reply); e != nullptr) {
            return classifyCallError(e->name != nullptr ? e->name : "",
                                     e->message != nullptr ? e->message : "",
                                     sd_bus_error_get_errno(e), calls.at(i).member);
        }
        auto body = readReply(reply, calls.at(i).member, calls.at(i).signature);
        if (!body) {
            return body.error();
        }
        bodies.at(i) = std::move(*body);
    }
    return std::pair{std::move(bodies[0]), std::move(bodies[1])};
}

} // namespace

template <typename Append>
Result<ValueArray> BusClient::call(const char* path, const char* interface, const char* member,
                                   std::string_view expectedSignature, Append&& append) {
    auto request = newCall(path, interface, member);
    if (!request) {
        return request.error();
    }
    if (const int r = append(request->get()); r < 0) {
        return classifyCallError({}, {}, -r, member);
    }
    BusError error;
    sd_bus_message* rawReply = nullptr;
    const int r = sd_bus_call(bus_.get(), request->get(), 0, error.get(), &rawReply);
    MessagePtr reply(rawReply);
    if (r < 0) {
        return classifyCallError(error.name(), error.message(), -r, member);
    }
    return readReply(reply.get(), member, expectedSignature);
}

Result<std::pair<ValueArray, ValueArray>>
BusClient::withManagedObjects(const char* path, const char* interface, const char* member,
                              std::string_view signature, const char* stringArgument) {
    auto first = newCall(path, interface, member);
    if (!first) {
        return first.error();
    }
    if (stringArgument != nullptr) {
        if (const int r = sd_bus_message_append(first->get(), "s", stringArgument); r < 0) {
            return classifyCallError({}, {}, -r, member);
        }
    }
    auto managed = newCall(io::bus_names::kManagerPath, "org.freedesktop.DBus.ObjectManager",
                           "GetManagedObjects");
    if (!managed) {
        return managed.error();
    }
    std::array<PendingCall, 2> calls{{
        {member, signature, std::move(*first), nullptr, nullptr},
        {"GetManagedObjects", "a{oa{sa{sv}}}", std::move(*managed), nullptr, nullptr},
    }};
    return sendTogether(bus_.get(), calls);
}

Result<std::pair<ValueArray, ValueArray>> BusClient::managerAndObjects() {
    return withManagedObjects(io::bus_names::kManagerPath, "org.freedesktop.DBus.Properties",
                              "GetAll", "a{sv}", io::bus_names::kManagerInterface);
}

Result<std::pair<ValueArray, ValueArray>> BusClient::classesAndObjects() {
    return withManagedObjects(io::bus_names::kManagerPath, io::bus_names::kManagerInterface,
                              "ListClasses", "a(so)", nullptr);
}

Result<std::pair<ValueArray, ValueArray>> BusClient::workloadsAndObjects() {
    return withManagedObjects(io::bus_names::kManagerPath, io::bus_names::kManagerInterface,
                              "ListWorkloads", "a(ssso)", nullptr);
}

template <typename Append, typename Map>
std::invoke_result_t<Map&, const ValueArray&>
BusClient::callManager(const char* member, std::string_view expectedSignature, Append&& append,
                       Map&& map) {
    auto out = call(io::bus_names::kManagerPath, io::bus_names::kManagerInterface, member,
                    expectedSignature, std::forward<Append>(append));
    if (!out) {
        return out.error();
    }
    return map(*out);
}

Result<PropertyMap> BusClient::getAll(const std::string& path, const char* interface) {
    auto out = call(path.c_str(), "org.freedesktop.DBus.Properties", "GetAll", "a{sv}",
                    [&](sd_bus_message* m) { return sd_bus_message_append(m, "s", interface); });
    if (!out) {
        return out.error();
    }
    return propertiesFromReply(*out);
}

Result<std::vector<ClassRef>> BusClient::listClasses() {
    return callManager("ListClasses", "a(so)", appendNothing, classRefsFromReply);
}

Result<std::vector<WorkloadRef>> BusClient::listWorkloads() {
    return callManager("ListWorkloads", "a(ssso)", appendNothing, workloadRefsFromReply);
}

Result<std::string> BusClient::assignWorkload(const std::string& id, const std::string& className,
                                              Bytes request, Bytes limit, bool persist) {
    return callManager(
        "AssignWorkload", "o",
        [&](sd_bus_message* m) {
            return sd_bus_message_append(m, "ssttb", id.c_str(), className.c_str(),
                                         static_cast<std::uint64_t>(request),
                                         static_cast<std::uint64_t>(limit), persist ? 1 : 0);
        },
        [](const ValueArray& out) { return objectPathFromReply(out, "AssignWorkload"); });
}

Status BusClient::unassignWorkload(const std::string& id) {
    return callManager(
        "UnassignWorkload", "",
        [&](sd_bus_message* m) { return sd_bus_message_append(m, "s", id.c_str()); }, noReply);
}

Result<Bytes> BusClient::reclaim(const std::string& id, Bytes bytes) {
    return callManager(
        "Reclaim", "t",
        [&](sd_bus_message* m) {
            return sd_bus_message_append(m, "st", id.c_str(), static_cast<std::uint64_t>(bytes));
        },
        [](const ValueArray& out) -> Result<Bytes> {
            if (out.size() != 1) {
                return Error{std::errc::protocol_error, "Reclaim: unexpected reply"};
            }
            return Bytes{out[0].asU64()};
        });
}

Result<std::string> BusClient::runWorkload(const std::string& name, const std::string& className,
                                           Bytes request, Bytes limit,
                                           const std::vector<std::string>& argv) {
    return callManager(
        "RunWorkload", "o",
        [&](sd_bus_message* m) {
            const int r = sd_bus_message_append(m, "sstt", name.c_str(), className.c_str(),
                                                static_cast<std::uint64_t>(request),
                                                static_cast<std::uint64_t>(limit));
            if (r < 0) {
                return r;
            }
            return io::appendArray(m, "s", argv, [](sd_bus_message* mm, const std::string& a) {
                return sd_bus_message_append_basic(mm, SD_BUS_TYPE_STRING, a.c_str());
            });
        },
        [](const ValueArray& out) { return objectPathFromReply(out, "RunWorkload"); });
}

Result<PlacementVerdict> BusClient::verifyPlacement(Bytes memory, Bytes minMemory,
                                                    const PlacementOptions& options) {
    return callManager(
        "VerifyPlacement", "ssa{st}",
        [&](sd_bus_message* m) {
            int r = sd_bus_message_append(m, "tt", static_cast<std::uint64_t>(memory),
                                          static_cast<std::uint64_t>(minMemory));
            if (r < 0 || (r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "{sv}")) < 0) {
                return r;
            }
            if (options.failoverReserve) {
                r = sd_bus_message_append(m, "{sv}", "failover_reserve", "t",
                                          static_cast<std::uint64_t>(*options.failoverReserve));
                if (r < 0) {
                    return r;
                }
            }
            if (options.refuseSoft) {
                if ((r = sd_bus_message_append(m, "{sv}", "refuse_soft", "b", 1)) < 0) {
                    return r;
                }
            }
            if (!options.instance.empty()) {
                r = sd_bus_message_append(m, "{sv}", "instance", "s", options.instance.c_str());
                if (r < 0) {
                    return r;
                }
            }
            if (!options.className.empty()) {
                r = sd_bus_message_append(m, "{sv}", "class", "s", options.className.c_str());
                if (r < 0) {
                    return r;
                }
            }
            return sd_bus_message_close_container(m);
        },
        placementFromReply);
}

Status BusClient::recordInstance(const std::string& name, Bytes minMemory, Bytes maxMemory,
                                 bool up) {
    return callManager(
        "RecordInstance", "",
        [&](sd_bus_message* m) {
            return sd_bus_message_append(m, "sttb", name.c_str(),
                                         static_cast<std::uint64_t>(minMemory),
                                         static_cast<std::uint64_t>(maxMemory), up ? 1 : 0);
        },
        noReply);
}

Status BusClient::forgetInstance(const std::string& name) {
    return callManager(
        "ForgetInstance", "",
        [&](sd_bus_message* m) { return sd_bus_message_append(m, "s", name.c_str()); }, noReply);
}

Result<std::vector<Instance>> BusClient::listInstances() {
    return callManager("ListInstances", "a(sttb)", appendNothing, instancesFromReply);
}

Result<std::vector<KillInfo>> BusClient::listKills() {
    return callManager("ListKills", "a(tsssa{st})", appendNothing, killsFromReply);
}

Result<std::vector<Finding>> BusClient::verify() {
    return callManager("Verify", "a(sss)", appendNothing, findingsFromReply);
}

namespace {

// An "as" reply as strings (Reload's restart notes, Release's ids).
Result<std::vector<std::string>> stringsFromReply(const ValueArray& out) {
    std::vector<std::string> strings;
    if (!out.empty() && std::holds_alternative<ValueArray>(out.front().v)) {
        for (const auto& v : std::get<ValueArray>(out.front().v)) {
            strings.push_back(v.asString());
        }
    }
    return strings;
}

} // namespace

Result<std::vector<std::string>> BusClient::release() {
    return callManager("Release", "as", appendNothing, stringsFromReply);
}

Result<std::vector<std::string>> BusClient::reload() {
    return callManager("Reload", "as", appendNothing, stringsFromReply);
}

Result<bool> BusClient::daemonOnBus() {
    BusError error;
    sd_bus_message* rawReply = nullptr;
    const int r = sd_bus_call_method(bus_.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "NameHasOwner", error.get(), &rawReply,
                                     "s", io::bus_names::kBusName);
    MessagePtr reply(rawReply);
    if (r < 0) {
        return classifyCallError(error.name(), error.message(), -r, "NameHasOwner");
    }
    int has = 0;
    if (sd_bus_message_read(reply.get(), "b", &has) < 0) {
        return malformedReply("NameHasOwner", "not a boolean");
    }
    return has != 0;
}

} // namespace memqos::ctl

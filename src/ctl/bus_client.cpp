// SPDX-License-Identifier: Apache-2.0
#include "bus_client.hpp"

#include <systemd/sd-bus.h>

#include <cerrno>
#include <cstring>

#include "bus_error.hpp"

namespace memqos::ctl {
namespace {

// Owns an sd_bus_message reference.
struct MessageUnref {
    void operator()(sd_bus_message* m) const { sd_bus_message_unref(m); }
};
using MessagePtr = std::unique_ptr<sd_bus_message, MessageUnref>;

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

int readBasic(sd_bus_message* m, char type, Value& out) {
    switch (type) {
    case SD_BUS_TYPE_BYTE: {
        std::uint8_t x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = static_cast<std::uint64_t>(x);
        return r;
    }
    case SD_BUS_TYPE_BOOLEAN: {
        int x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = x != 0;
        return r;
    }
    case SD_BUS_TYPE_INT16: {
        std::int16_t x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = static_cast<std::int64_t>(x);
        return r;
    }
    case SD_BUS_TYPE_UINT16: {
        std::uint16_t x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = static_cast<std::uint64_t>(x);
        return r;
    }
    case SD_BUS_TYPE_INT32:
    case SD_BUS_TYPE_UNIX_FD: {
        std::int32_t x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = static_cast<std::int64_t>(x);
        return r;
    }
    case SD_BUS_TYPE_UINT32: {
        std::uint32_t x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = static_cast<std::uint64_t>(x);
        return r;
    }
    case SD_BUS_TYPE_INT64: {
        std::int64_t x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = x;
        return r;
    }
    case SD_BUS_TYPE_UINT64: {
        std::uint64_t x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = x;
        return r;
    }
    case SD_BUS_TYPE_DOUBLE: {
        double x = 0;
        const int r = sd_bus_message_read_basic(m, type, &x);
        out.v = x;
        return r;
    }
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

void BusClient::Unref::operator()(sd_bus* bus) const {
    sd_bus_flush_close_unref(bus);
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

template <typename Append>
Result<ValueArray> BusClient::call(const char* path, const char* interface, const char* member,
                                   std::string_view expectedSignature, Append&& append) {
    sd_bus_message* raw = nullptr;
    int r = sd_bus_message_new_method_call(bus_.get(), &raw, kBusName, path, interface, member);
    MessagePtr request(raw);
    if (r < 0) {
        return classifyCallError({}, {}, -r, member);
    }
    if ((r = append(request.get())) < 0) {
        return classifyCallError({}, {}, -r, member);
    }

    BusError error;
    sd_bus_message* rawReply = nullptr;
    r = sd_bus_call(bus_.get(), request.get(), 0, error.get(), &rawReply);
    MessagePtr reply(rawReply);
    if (r < 0) {
        return classifyCallError(error.name(), error.message(), -r, member);
    }

    const char* signature = sd_bus_message_get_signature(reply.get(), 1);
    const std::string_view actual = signature != nullptr ? signature : "";
    if (actual != expectedSignature) {
        return malformedReply(member, "signature '" + std::string(actual) + "', expected '" +
                                          std::string(expectedSignature) + "'");
    }
    ValueArray out;
    if ((r = readValues(reply.get(), out)) < 0) {
        return malformedReply(member, std::strerror(-r)); // NOLINT(concurrency-mt-unsafe)
    }
    return out;
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
    auto out = call(kManagerPath, kManagerInterface, "ListClasses", "a(so)", appendNothing);
    if (!out) {
        return out.error();
    }
    return classRefsFromReply(*out);
}

Result<std::vector<WorkloadRef>> BusClient::listWorkloads() {
    auto out = call(kManagerPath, kManagerInterface, "ListWorkloads", "a(ssso)", appendNothing);
    if (!out) {
        return out.error();
    }
    return workloadRefsFromReply(*out);
}

Result<std::string> BusClient::assignWorkload(const std::string& id, const std::string& className,
                                              Bytes request, Bytes limit, bool persist) {
    auto out = call(kManagerPath, kManagerInterface, "AssignWorkload", "o", [&](sd_bus_message* m) {
        return sd_bus_message_append(m, "ssttb", id.c_str(), className.c_str(),
                                     static_cast<std::uint64_t>(request),
                                     static_cast<std::uint64_t>(limit), persist ? 1 : 0);
    });
    if (!out) {
        return out.error();
    }
    return objectPathFromReply(*out, "AssignWorkload");
}

Status BusClient::unassignWorkload(const std::string& id) {
    auto out = call(kManagerPath, kManagerInterface, "UnassignWorkload", "",
                    [&](sd_bus_message* m) { return sd_bus_message_append(m, "s", id.c_str()); });
    if (!out) {
        return out.error();
    }
    return okStatus();
}

Result<Bytes> BusClient::reclaim(const std::string& id, Bytes bytes) {
    auto out = call(kManagerPath, kManagerInterface, "Reclaim", "t", [&](sd_bus_message* m) {
        return sd_bus_message_append(m, "st", id.c_str(), static_cast<std::uint64_t>(bytes));
    });
    if (!out) {
        return out.error();
    }
    if (out->size() != 1) {
        return Error{std::errc::protocol_error, "Reclaim: unexpected reply"};
    }
    return Bytes{(*out)[0].asU64()};
}

Result<std::string> BusClient::runWorkload(const std::string& name, const std::string& className,
                                           Bytes request, Bytes limit,
                                           const std::vector<std::string>& argv) {
    auto out = call(kManagerPath, kManagerInterface, "RunWorkload", "o", [&](sd_bus_message* m) {
        int r = sd_bus_message_append(m, "sstt", name.c_str(), className.c_str(),
                                      static_cast<std::uint64_t>(request),
                                      static_cast<std::uint64_t>(limit));
        if (r < 0 || (r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "s")) < 0) {
            return r;
        }
        for (const auto& a : argv) {
            if ((r = sd_bus_message_append_basic(m, SD_BUS_TYPE_STRING, a.c_str())) < 0) {
                return r;
            }
        }
        return sd_bus_message_close_container(m);
    });
    if (!out) {
        return out.error();
    }
    return objectPathFromReply(*out, "RunWorkload");
}

Result<PlacementVerdict> BusClient::verifyPlacement(Bytes memory, Bytes minMemory,
                                                    const PlacementOptions& options) {
    auto out =
        call(kManagerPath, kManagerInterface, "VerifyPlacement", "ssa{st}", [&](sd_bus_message* m) {
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
            return sd_bus_message_close_container(m);
        });
    if (!out) {
        return out.error();
    }
    return placementFromReply(*out);
}

Status BusClient::recordInstance(const std::string& name, Bytes minMemory, Bytes maxMemory,
                                 bool up) {
    auto out = call(kManagerPath, kManagerInterface, "RecordInstance", "", [&](sd_bus_message* m) {
        return sd_bus_message_append(m, "sttb", name.c_str(), static_cast<std::uint64_t>(minMemory),
                                     static_cast<std::uint64_t>(maxMemory), up ? 1 : 0);
    });
    if (!out) {
        return out.error();
    }
    return okStatus();
}

Status BusClient::forgetInstance(const std::string& name) {
    auto out = call(kManagerPath, kManagerInterface, "ForgetInstance", "",
                    [&](sd_bus_message* m) { return sd_bus_message_append(m, "s", name.c_str()); });
    if (!out) {
        return out.error();
    }
    return okStatus();
}

Result<std::vector<Instance>> BusClient::listInstances() {
    auto out = call(kManagerPath, kManagerInterface, "ListInstances", "a(sttb)", appendNothing);
    if (!out) {
        return out.error();
    }
    return instancesFromReply(*out);
}

Result<std::vector<KillInfo>> BusClient::listKills() {
    auto out = call(kManagerPath, kManagerInterface, "ListKills", "a(tsssa{st})", appendNothing);
    if (!out) {
        return out.error();
    }
    return killsFromReply(*out);
}

Result<std::vector<Finding>> BusClient::verify() {
    auto out = call(kManagerPath, kManagerInterface, "Verify", "a(sss)", appendNothing);
    if (!out) {
        return out.error();
    }
    return findingsFromReply(*out);
}

Result<std::vector<std::string>> BusClient::reload() {
    auto out = call(kManagerPath, kManagerInterface, "Reload", "as", appendNothing);
    if (!out) {
        return out.error();
    }
    std::vector<std::string> notes;
    if (!out->empty() && std::holds_alternative<ValueArray>(out->front().v)) {
        for (const auto& v : std::get<ValueArray>(out->front().v)) {
            notes.push_back(v.asString());
        }
    }
    return notes;
}

Result<bool> BusClient::daemonOnBus() {
    BusError error;
    sd_bus_message* rawReply = nullptr;
    const int r = sd_bus_call_method(bus_.get(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "NameHasOwner", error.get(), &rawReply,
                                     "s", kBusName);
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

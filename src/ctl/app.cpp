// SPDX-License-Identifier: Apache-2.0
#include "app.hpp"

#include <ctime>
#include <unistd.h>
#include <utility>

#include "bus_client.hpp"
#include "bus_error.hpp"
#include "command.hpp"
#include "fetch.hpp"
#include "journal.hpp"
#include "monitor.hpp"
#include "output.hpp"
#include "pager.hpp"
#include "render.hpp"
#include "show.hpp"
#include "top.hpp"

#ifndef MEMQOS_VERSION
#define MEMQOS_VERSION "unknown"
#endif

namespace memqos::ctl {
namespace {

Format formatOf(JsonMode mode) {
    switch (mode) {
    case JsonMode::Pretty:
        return Format::Json;
    case JsonMode::Short:
        return Format::JsonShort;
    case JsonMode::Off:
        break;
    }
    return Format::Text;
}

// The commands whose output may be long: paged on a terminal (not top and
// monitor, which run until stopped, nor the short answers of the others).
bool paged(Verb verb) {
    switch (verb) {
    case Verb::Status:
    case Verb::Show:
    case Verb::Classes:
    case Verb::Workloads:
    case Verb::Instances:
    case Verb::Events:
    case Verb::Verify:
        return true;
    default:
        return false;
    }
}

int fail(const Error& error) {
    writeErr("memqosctl: " + error.what + "\n");
    return exitCodeFor(error);
}

int status(BusClient& client, Format format, Legend legend) {
    auto props = client.getAll(io::bus_names::kManagerPath, io::bus_names::kManagerInterface);
    if (!props) {
        return fail(props.error());
    }
    auto classes = client.listClasses();
    if (!classes) {
        return fail(classes.error());
    }
    auto workloads = client.listWorkloads();
    if (!workloads) {
        return fail(workloads.error());
    }
    ManagerStatus s = managerStatusFromProperties(*props, classes->size(), workloads->size());
    auto instances = client.listInstances();
    if (instances) {
        s.instances = std::move(*instances);
    } else if (!instances.error().what.starts_with("org.freedesktop.DBus.Error.UnknownMethod")) {
        return fail(instances.error());
    } // else: a memqosd without the instance record; status shows what it has
    writeOut(renderStatus(s, format, legend));
    return kExitOk;
}

// status ID: the workload's properties, its class's, and the journal's
// last lines about it.
int workloadStatus(BusClient& client, const std::string& id, Format format) {
    constexpr std::size_t kJournalLines = 10;
    auto ref = findWorkload(client, id);
    if (!ref) {
        return fail(ref.error());
    }
    auto props = client.getAll(ref->objectPath, io::bus_names::kWorkloadInterface);
    if (!props) {
        return fail(props.error());
    }
    std::optional<PropertyMap> classProps;
    const std::string className = property(*props, "Class").asString();
    if (auto classes = client.listClasses(); classes && !className.empty()) {
        for (const auto& c : *classes) {
            if (c.name == className) {
                if (auto cp = client.getAll(c.objectPath, io::bus_names::kClassInterface)) {
                    classProps = std::move(*cp);
                }
            }
        }
    } // else: shown without its class's rank and protection
    const JournalTail journal = readWorkloadJournal(ref->id, kJournalLines);
    writeOut(renderWorkloadStatus(*props, ref->objectPath, classProps, journal, format));
    return kExitOk;
}

// show [ID]: the Manager's properties, or the workload's.
int show(BusClient& client, const Command& cmd, Format format) {
    std::string path = io::bus_names::kManagerPath;
    const char* interface = io::bus_names::kManagerInterface;
    if (!cmd.id.empty()) {
        auto ref = findWorkload(client, cmd.id);
        if (!ref) {
            return fail(ref.error());
        }
        path = ref->objectPath;
        interface = io::bus_names::kWorkloadInterface;
    }
    auto props = client.getAll(path, interface);
    if (!props) {
        return fail(props.error());
    }
    writeOut(renderShow(*props, cmd.properties, cmd.valueOnly, format));
    return kExitOk;
}

int instances(BusClient& client, Format format, Legend legend) {
    auto list = client.listInstances();
    if (!list) {
        return fail(list.error());
    }
    writeOut(renderInstances(*list, format, legend));
    return kExitOk;
}

int events(BusClient& client, Format format, Legend legend) {
    auto list = client.listKills();
    if (!list) {
        return fail(list.error());
    }
    writeOut(renderKills(*list, format, legend));
    return kExitOk;
}

int classes(BusClient& client, Format format, Legend legend) {
    auto infos = fetchClasses(client);
    if (!infos) {
        return fail(infos.error());
    }
    writeOut(renderClasses(*infos, format, legend));
    return kExitOk;
}

int workloads(BusClient& client, Format format, Legend legend) {
    auto infos = fetchWorkloads(client);
    if (!infos) {
        return fail(infos.error());
    }
    writeOut(renderWorkloads(*infos, format, legend));
    return kExitOk;
}

int execute(const Command& cmd, BusClient& client) {
    const Format format = formatOf(cmd.json);
    const Legend legend = cmd.legend ? Legend::Show : Legend::Hide;
    // The output of commands that change something or answer by their exit
    // status: nothing with -q.
    auto say = [&](const std::string& text) {
        if (!cmd.quiet) {
            writeOut(text);
        }
    };
    switch (cmd.verb) {
    case Verb::Status:
        return cmd.id.empty() ? status(client, format, legend)
                              : workloadStatus(client, cmd.id, format);
    case Verb::Show:
        return show(client, cmd, format);
    case Verb::Classes:
        return classes(client, format, legend);
    case Verb::Workloads:
        return workloads(client, format, legend);
    case Verb::Assign: {
        auto path =
            client.assignWorkload(cmd.id, cmd.className, cmd.request, cmd.limit, cmd.persist);
        if (!path) {
            return fail(path.error());
        }
        say(renderWorkloadPath(*path, format));
        return kExitOk;
    }
    case Verb::Unassign: {
        if (auto r = client.unassignWorkload(cmd.id); !r) {
            return fail(r.error());
        }
        say(renderNothing(format));
        return kExitOk;
    }
    case Verb::Reclaim: {
        auto freed = client.reclaim(cmd.id, cmd.memory);
        if (!freed) {
            return fail(freed.error());
        }
        say(renderReclaimed(cmd.id, cmd.memory, *freed, format));
        return kExitOk;
    }
    case Verb::Run: {
        const std::string name = cmd.unitName.empty()
                                     ? defaultRunName(static_cast<std::int64_t>(getpid()),
                                                      static_cast<std::int64_t>(std::time(nullptr)))
                                     : cmd.unitName;
        auto path = client.runWorkload(name, cmd.className, cmd.request, cmd.limit, cmd.argv);
        if (!path) {
            return fail(path.error());
        }
        say(renderWorkloadPath(*path, format));
        return kExitOk;
    }
    case Verb::VerifyPlacement: {
        const PlacementOptions options{cmd.failoverReserve, cmd.refuseSoft, cmd.instance,
                                       cmd.className};
        auto verdict = client.verifyPlacement(cmd.memory, cmd.minMemory, options);
        if (!verdict) {
            return fail(verdict.error());
        }
        say(renderPlacement(*verdict, format, legend));
        const int code = placementExitCode(*verdict);
        if (verdict->verdict == "soft" && !cmd.quiet) {
            writeErr("memqosctl: warning: soft placement violation: " + verdict->message + "\n");
        } else if (verdict->verdict == "hard") {
            writeErr("memqosctl: hard placement violation: " + verdict->message + "\n");
        } else if (code == kExitDaemonError) {
            writeErr("memqosctl: unexpected verdict '" + verdict->verdict + "' from memqosd\n");
        }
        return code;
    }
    case Verb::Verify: {
        auto findings = client.verify();
        if (!findings) {
            return fail(findings.error());
        }
        say(renderFindings(*findings, format, legend));
        return verifyExitCode(*findings);
    }
    case Verb::Release: {
        auto r = client.release();
        if (!r) {
            return fail(r.error());
        }
        say(renderReleased(*r, format));
        return kExitOk;
    }
    case Verb::Reload: {
        auto r = client.reload();
        if (!r) {
            return fail(r.error());
        }
        say(renderReload(*r, format));
        return kExitOk;
    }
    case Verb::Monitor:
        return runMonitor(client, format);
    case Verb::Top:
        return runTop(client, cmd, format);
    case Verb::Instances:
        return instances(client, format, legend);
    case Verb::Events:
        return events(client, format, legend);
    case Verb::RecordInstance: {
        if (auto r = client.recordInstance(cmd.instance, cmd.minMemory, cmd.memory, cmd.up); !r) {
            return fail(r.error());
        }
        say(renderNothing(format));
        return kExitOk;
    }
    case Verb::ForgetInstance: {
        if (auto r = client.forgetInstance(cmd.instance); !r) {
            return fail(r.error());
        }
        say(renderNothing(format));
        return kExitOk;
    }
    case Verb::None:
        break;
    }
    writeOut(helpText());
    return kExitUsage;
}

} // namespace

int runCtl(const std::vector<std::string>& args, const std::optional<std::string>& envBusAddress) {
    auto parsed = parseCommandLine(args, envBusAddress);
    if (!parsed) {
        writeErr("memqosctl: " + parsed.error().what +
                 "\nTry 'memqosctl --help' for more information.\n");
        return kExitUsage;
    }
    const Command& cmd = *parsed;
    switch (cmd.action) {
    case Action::Help:
        writeOut(cmd.verb == Verb::None ? helpText() : commandHelp(cmd.verb));
        return kExitOk;
    case Action::Version:
        writeOut("memqosctl " MEMQOS_VERSION "\n");
        return kExitOk;
    case Action::Execute:
        break;
    }

    auto client = BusClient::connect(cmd.bus);
    if (!client) {
        return fail(client.error());
    }
    Pager pager;
    if (cmd.pager && paged(cmd.verb)) {
        pager.open();
    }
    const int code = execute(cmd, *client);
    flushOut();
    pager.close();
    return code;
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "top.hpp"

#include <cstdlib>
#include <limits>
#include <unistd.h>
#include <utility>

#include "bus_error.hpp"
#include "fetch.hpp"
#include "output.hpp"
#include "stop_signals.hpp"
#include "top_view.hpp"

namespace memqos::ctl {
namespace {

Result<TopFrame> fetchFrame(BusClient& client) {
    auto props = client.getAll(io::bus_names::kManagerPath, io::bus_names::kManagerInterface);
    if (!props) {
        return props.error();
    }
    auto classes = fetchClasses(client);
    if (!classes) {
        return classes.error();
    }
    auto workloads = fetchWorkloads(client);
    if (!workloads) {
        return workloads.error();
    }
    TopFrame frame;
    frame.status = managerStatusFromProperties(*props, classes->size(), workloads->size());
    frame.classes = std::move(*classes);
    frame.workloads = std::move(*workloads);
    return frame;
}

// Bold headers only on a terminal, and never with NO_COLOR set to anything
// non-empty (no-color.org) or TERM=dumb, as systemd decides colours.
bool boldAllowed() {
    const char* noColor = std::getenv("NO_COLOR"); // NOLINT(concurrency-mt-unsafe)
    const char* term = std::getenv("TERM");        // NOLINT(concurrency-mt-unsafe)
    return (noColor == nullptr || *noColor == '\0') &&
           (term == nullptr || std::string_view(term) != "dumb");
}

} // namespace

int runTop(BusClient& client, const Command& cmd, Format format) {
    auto stop = StopSignals::block();
    if (!stop) {
        writeErr("memqosctl: " + stop.error().what + "\n");
        return kExitDaemonError;
    }
    const bool terminal = isatty(STDOUT_FILENO) == 1;
    const bool screen = terminal && !cmd.batch && !isJson(format);
    const TopStyle style{format, cmd.legend ? Legend::Show : Legend::Hide, screen && boldAllowed()};
    const int delayMs = cmd.delayMs > std::numeric_limits<int>::max()
                            ? std::numeric_limits<int>::max()
                            : static_cast<int>(cmd.delayMs);

    for (std::uint64_t frameNo = 1;; ++frameNo) {
        auto frame = fetchFrame(client);
        if (!frame) {
            writeErr("memqosctl: " + frame.error().what + "\n");
            return exitCodeFor(frame.error());
        }
        sortTop(*frame, cmd.order);
        std::string out;
        if (screen) {
            out = kClearScreen;
        } else if (frameNo > 1 && !isJson(format)) {
            out = "\n"; // batch: a blank line between frames
        }
        out += renderTopFrame(*frame, style);
        writeOut(out);
        flushOut();
        if (cmd.iterations != 0 && frameNo >= cmd.iterations) {
            return kExitOk;
        }
        if (stop->wait(delayMs)) {
            return kExitOk;
        }
    }
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#include "top.hpp"

#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <unistd.h>
#include <utility>

#include "bus_error.hpp"
#include "fetch.hpp"
#include "output.hpp"
#include "stop_signals.hpp"
#include "terminal.hpp"
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

std::optional<std::string> env(const char* name) {
    const char* v = std::getenv(name); // NOLINT(concurrency-mt-unsafe)
    return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
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
    // Bold headers as systemd decides colour: on the screen unless NO_COLOR
    // or TERM=dumb; $SYSTEMD_COLORS overrides both ways (terminal.hpp).
    const bool bold = !isJson(format) && colorsWanted(env("SYSTEMD_COLORS"), env("NO_COLOR"),
                                                      env("TERM"), screen);
    const TopStyle style{format, cmd.legend ? Legend::Show : Legend::Hide, bold};
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

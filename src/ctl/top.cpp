// SPDX-License-Identifier: Apache-2.0
#include "top.hpp"

#include <array>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <limits>
#include <optional>
#include <string>
#include <unistd.h>
#include <utility>

#include "bus_error.hpp"
#include "output.hpp"
#include "stop_signals.hpp"
#include "terminal.hpp"
#include "top_view.hpp"

namespace memqos::ctl {
namespace {

// One frame, one round trip: the Manager's GetAll and GetManagedObjects go
// out together (not a GetAll per class and per workload).
Result<TopFrame> fetchFrame(BusClient& client) {
    auto replies = client.managerAndObjects();
    if (!replies) {
        return replies.error();
    }
    return topFrameFromReplies(replies->first, replies->second);
}

// The terminal on standard input without line buffering and echo, so that
// single keys reach top; ISIG stays, so ^C is still SIGINT. Restored when
// this goes away.
class RawKeys {
public:
    static std::unique_ptr<RawKeys> enable() {
        termios saved{};
        if (isatty(STDIN_FILENO) != 1 || tcgetattr(STDIN_FILENO, &saved) < 0) {
            return nullptr;
        }
        termios raw = saved;
        raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0) {
            return nullptr;
        }
        return std::unique_ptr<RawKeys>(new RawKeys(saved));
    }
    RawKeys(const RawKeys&) = delete;
    RawKeys& operator=(const RawKeys&) = delete;
    ~RawKeys() { tcsetattr(STDIN_FILENO, TCSANOW, &saved_); }

private:
    explicit RawKeys(const termios& saved) : saved_(saved) {}
    termios saved_;
};

// What a key does, as in systemd-cgtop: q quits; m, p, r, s sort by memory,
// path (name), pressure, swap; space refreshes now.
enum class KeyAction { None, Quit, Refresh };

KeyAction onKey(char key, TopOrder& order) {
    switch (key) {
    case 'q':
        return KeyAction::Quit;
    case 'm':
        order = TopOrder::Usage;
        return KeyAction::Refresh;
    case 'p':
        order = TopOrder::Name;
        return KeyAction::Refresh;
    case 'r':
        order = TopOrder::Pressure;
        return KeyAction::Refresh;
    case 's':
        order = TopOrder::Swap;
        return KeyAction::Refresh;
    case ' ':
        return KeyAction::Refresh;
    default:
        return KeyAction::None;
    }
}

enum class Woken { Timeout, Signal, Quit, Refresh };

// Waits up to `delayMs` for SIGINT/SIGTERM or, with `keys`, a key.
Woken waitForNext(const StopSignals& stop, bool keys, int delayMs, TopOrder& order) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(delayMs);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            return Woken::Timeout;
        }
        std::array<pollfd, 2> fds{{{stop.fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}}};
        const int n = poll(fds.data(), keys ? 2 : 1, static_cast<int>(left));
        if (n <= 0) {
            continue; // EINTR, or the time is up (checked above)
        }
        if ((fds[0].revents & POLLIN) != 0 && stop.wait(0)) {
            return Woken::Signal;
        }
        if (keys && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
            char key = 0;
            if (read(STDIN_FILENO, &key, 1) != 1) {
                return Woken::Timeout; // the terminal went away: no more keys
            }
            switch (onKey(key, order)) {
            case KeyAction::Quit:
                return Woken::Quit;
            case KeyAction::Refresh:
                return Woken::Refresh;
            case KeyAction::None:
                break;
            }
        }
    }
}

// The terminal's height in rows, 0 when unknown.
std::size_t terminalRows() {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0) {
        return 0;
    }
    return ws.ws_row;
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

    // Keys only where a person watches the screen (not --batch, not a pipe).
    const auto keys = screen ? RawKeys::enable() : nullptr;
    TopOrder order = cmd.order;
    for (std::uint64_t frameNo = 1;; ++frameNo) {
        auto frame = fetchFrame(client);
        if (!frame) {
            writeErr("memqosctl: " + frame.error().what + "\n");
            return exitCodeFor(frame.error());
        }
        sortTop(*frame, order);
        std::string out;
        if (screen) {
            out = kClearScreen;
            out += fitToHeight(renderTopFrame(*frame, style), terminalRows());
        } else {
            if (frameNo > 1 && !isJson(format)) {
                out = "\n"; // batch: a blank line between frames
            }
            out += renderTopFrame(*frame, style);
        }
        writeOut(out);
        flushOut();
        if (cmd.iterations != 0 && frameNo >= cmd.iterations) {
            return kExitOk;
        }
        const Woken woken = waitForNext(*stop, keys != nullptr, delayMs, order);
        if (woken == Woken::Signal || woken == Woken::Quit) {
            return kExitOk;
        }
    }
}

} // namespace memqos::ctl

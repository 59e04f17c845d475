// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/hmp_monitor.hpp"

#include "memqos/io/fd.hpp"
#include "memqos/parse/text.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <optional>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace memqos::io {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kPrompt = "(qemu) ";
constexpr std::size_t kMaxQuoted = 80;

Error socketError(std::errc code, const std::filesystem::path& socket, std::string_view what) {
    return makeError(code, socket.string() + ": " + std::string(what));
}

Error errnoError(int err, const std::filesystem::path& socket, std::string_view what) {
    return makeError(static_cast<std::errc>(err), socket.string() + ": " + std::string(what) +
                                                      ": " +
                                                      std::generic_category().message(err));
}

// At most kMaxQuoted bytes of `text`, for messages.
std::string quote(std::string_view text) {
    return "\"" + parse::text::printable(text, kMaxQuoted) + "\"";
}

// Milliseconds left until `deadline`, for poll(): 0 once it passed.
int remainingMs(Clock::time_point deadline) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::clamp<std::int64_t>(left, 0, 60 * 60 * 1000));
}

// Waits for `events` on `fd`; ETIMEDOUT once the deadline passed.
int waitFor(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        pollfd p{.fd = fd, .events = events, .revents = 0};
        const int r = ::poll(&p, 1, remainingMs(deadline));
        if (r > 0) {
            return 0;
        }
        if (r == 0) {
            return ETIMEDOUT;
        }
        if (errno != EINTR) {
            return errno;
        }
    }
}

// One non-blocking connect; 0 or the errno.
int connectOnce(const Fd& fd, const sockaddr_un& address, Clock::time_point deadline) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the sockets API
    const auto* sa = reinterpret_cast<const sockaddr*>(&address);
    if (::connect(fd.get(), sa, sizeof address) == 0) {
        return 0;
    }
    if (errno != EINPROGRESS && errno != EINTR) {
        return errno;
    }
    // Not seen on unix sockets, but allowed by POSIX.
    if (const int w = waitFor(fd.get(), POLLOUT, deadline); w != 0) {
        return w;
    }
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) < 0) {
        return errno;
    }
    return error;
}

Result<Fd> connectMonitor(const std::filesystem::path& socket, Clock::time_point deadline) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string& path = socket.native();
    if (path.empty() || path.size() >= sizeof address.sun_path) {
        return socketError(std::errc::filename_too_long, socket,
                           "connect: not a usable unix socket path");
    }
    std::copy(path.begin(), path.end(), std::begin(address.sun_path));

    for (int attempt = 0;; ++attempt) {
        Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (fd.get() < 0) {
            return errnoError(errno, socket, "socket");
        }
        const int err = connectOnce(fd, address, deadline);
        if (err == 0) {
            return fd;
        }
        // ECONNREFUSED: nobody listens (yet); EAGAIN: the listen queue is
        // full while QEMU serves another client. Both may pass.
        const bool busy = err == ECONNREFUSED || err == EAGAIN;
        if (!busy || attempt >= HmpMonitor::kConnectRetries ||
            Clock::now() + HmpMonitor::kRetryPause > deadline) {
            return errnoError(err, socket,
                              "connect (attempt " + std::to_string(attempt + 1) + ")");
        }
        std::this_thread::sleep_for(HmpMonitor::kRetryPause);
    }
}

// Reads into `buffer` until it ends with the prompt.
Status readToPrompt(const Fd& fd, std::string& buffer, Clock::time_point deadline,
                    const std::filesystem::path& socket, std::string_view stage) {
    std::array<char, 4096> chunk{};
    while (!std::string_view(buffer).ends_with(kPrompt)) {
        const ssize_t n = ::recv(fd.get(), chunk.data(), chunk.size(), 0);
        if (n > 0) {
            const auto got = static_cast<std::size_t>(n);
            if (got > HmpMonitor::kMaxReplyBytes - std::min(buffer.size(),
                                                            HmpMonitor::kMaxReplyBytes)) {
                return socketError(std::errc::message_size, socket,
                                   std::string(stage) + ": no prompt in " +
                                       std::to_string(HmpMonitor::kMaxReplyBytes) + " bytes");
            }
            buffer.append(chunk.data(), got);
            continue;
        }
        if (n == 0) {
            return socketError(std::errc::connection_reset, socket,
                               std::string(stage) + ": closed before the prompt, after " +
                                   quote(buffer));
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            return errnoError(errno, socket, stage);
        }
        if (const int w = waitFor(fd.get(), POLLIN, deadline); w != 0) {
            return w == ETIMEDOUT ? socketError(std::errc::timed_out, socket,
                                                std::string(stage) + ": no prompt in time, after " +
                                                    quote(buffer))
                                  : errnoError(w, socket, stage);
        }
    }
    return okStatus();
}

Status sendAll(const Fd& fd, std::string_view data, Clock::time_point deadline,
               const std::filesystem::path& socket) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd.get(), data.data(), data.size(), MSG_NOSIGNAL);
        if (n >= 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            return errnoError(errno, socket, "send");
        }
        if (const int w = waitFor(fd.get(), POLLOUT, deadline); w != 0) {
            return w == ETIMEDOUT ? socketError(std::errc::timed_out, socket, "send: no room in time")
                                  : errnoError(w, socket, "send");
        }
    }
    return okStatus();
}

// The reply after the command was sent, without the prompt, to the output.
std::string outputOf(std::string_view reply, std::string_view cmd) {
    reply.remove_suffix(kPrompt.size());
    const std::size_t eol = reply.find('\n');
    if (eol != std::string_view::npos) {
        const std::string_view rawFirst = reply.substr(0, eol);
        const std::string first = stripTerminalEscapes(rawFirst);
        if (rawFirst.find('\x1b') != std::string_view::npos ||
            std::string_view(first).ends_with(cmd)) {
            reply.remove_prefix(eol + 1);
        }
    } else if (std::string_view(stripTerminalEscapes(reply)).ends_with(cmd)) {
        reply = {}; // the echo, and no line break after it
    }
    return stripTerminalEscapes(reply);
}

// QEMU's own error report in a command's output: "Error: …" on a line of
// its own (hmp_handle_error), or nothing.
std::optional<Error> qemuError(const std::filesystem::path& socket, std::string_view cmd,
                               std::string_view output) {
    std::size_t at = 0;
    while (at < output.size()) {
        const std::size_t eol = std::min(output.find('\n', at), output.size());
        const std::string_view line = output.substr(at, eol - at);
        at = eol + 1;
        if (!line.starts_with("Error:")) {
            continue;
        }
        const auto code = line.find("No balloon device") != std::string_view::npos
                              ? std::errc::no_such_device
                              : std::errc::io_error;
        return socketError(code, socket, std::string(cmd) + ": " + quote(line));
    }
    return std::nullopt;
}

} // namespace

std::string stripTerminalEscapes(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\r') {
            continue;
        }
        if (c != '\x1b') {
            out += c;
            continue;
        }
        if (i + 1 < text.size() && text[i + 1] == '[') {
            // CSI: parameters and intermediates up to a final byte @ … ~.
            i += 2;
            while (i < text.size() && (text[i] < '@' || text[i] > '~')) {
                ++i;
            }
        } else {
            ++i; // ESC and one byte
        }
    }
    return out;
}

Result<Bytes> parseInfoBalloon(std::string_view output) {
    constexpr std::string_view kField = "balloon: actual=";
    std::size_t at = 0;
    while (at < output.size()) {
        const std::size_t eol = std::min(output.find('\n', at), output.size());
        std::string_view line = output.substr(at, eol - at);
        at = eol + 1;
        if (line.ends_with('\r')) {
            line.remove_suffix(1);
        }
        if (line.starts_with("Error:")) {
            return invalid("info balloon: " + quote(line));
        }
        if (!line.starts_with(kField)) {
            continue;
        }
        line.remove_prefix(kField.size());
        std::uint64_t mib = 0;
        const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), mib);
        const std::string_view rest(end, static_cast<std::size_t>(line.data() + line.size() - end));
        if (ec != std::errc{} || end == line.data() || (!rest.empty() && rest.front() != ' ') ||
            mib > UINT64_MAX / kMiB) {
            return invalid("info balloon: bad actual= value in " + quote(line));
        }
        return Bytes{mib * kMiB};
    }
    return invalid("info balloon: no \"balloon: actual=\" line in " + quote(output));
}

Result<std::string> HmpMonitor::command(const std::filesystem::path& socket, std::string_view cmd,
                                        std::chrono::milliseconds timeout) const {
    if (cmd.empty() || cmd.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos) {
        return socketError(std::errc::invalid_argument, socket,
                           "command " + quote(cmd) + ": empty, or has a line break or NUL");
    }
    const auto deadline = Clock::now() + timeout;
    auto fd = connectMonitor(socket, deadline);
    if (!fd) {
        return fd.error();
    }
    std::string buffer;
    if (auto banner = readToPrompt(*fd, buffer, deadline, socket, "banner"); !banner) {
        return banner.error();
    }
    std::string line(cmd);
    line += '\n';
    if (auto sent = sendAll(*fd, line, deadline, socket); !sent) {
        return sent.error();
    }
    buffer.clear();
    const std::string stage = "reply to " + quote(cmd);
    if (auto reply = readToPrompt(*fd, buffer, deadline, socket, stage); !reply) {
        return reply.error();
    }
    return outputOf(buffer, cmd);
}

Status HmpMonitor::balloon(const std::filesystem::path& socket, Bytes target) const {
    const std::string cmd = "balloon " + std::to_string(std::max<Bytes>(target / kMiB, 1));
    auto output = command(socket, cmd, timeout_);
    if (!output) {
        return output.error();
    }
    if (auto error = qemuError(socket, cmd, *output)) {
        return *error;
    }
    return okStatus();
}

Result<Bytes> HmpMonitor::balloonActual(const std::filesystem::path& socket) const {
    constexpr std::string_view kCmd = "info balloon";
    auto output = command(socket, kCmd, timeout_);
    if (!output) {
        return output.error();
    }
    if (auto error = qemuError(socket, kCmd, *output)) {
        return *error;
    }
    auto actual = parseInfoBalloon(*output);
    if (!actual) {
        return socketError(actual.error().code, socket, actual.error().what);
    }
    return actual;
}

} // namespace memqos::io

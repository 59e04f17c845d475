// SPDX-License-Identifier: Apache-2.0
#pragma once
// A small synchronous client for QEMU's human monitor (HMP) on a unix socket,
// for VMs that no libvirt manages: Ganeti's KVM hypervisor starts qemu with
// "-monitor unix:/var/run/ganeti/kvm-hypervisor/ctrl/<instance>.monitor,
// server,nowait" and talks to it one short connection per command (its own
// `balloon` does the same). QEMU serves one monitor client at a time.
//
// One command: connect, read the banner up to the "(qemu) " prompt, send the
// command and "\n", read up to the next prompt, close. QEMU's readline echoes
// the input line, redrawn with terminal escape sequences as each byte
// arrives; that first line is dropped (see command()).
//
// Every call blocks for at most about its timeout: run it off the io thread.
// Thread-safe: the object holds nothing but the timeout.
//
// Errors are memqos::Error with `what` "<socket>: <what failed>[: <reason>]":
//   ENOENT, ECONNREFUSED, EAGAIN …  connect failed (the last two only after
//                                   kConnectRetries retries)
//   ETIMEDOUT                       no prompt before the deadline
//   ECONNRESET                      QEMU closed the connection before the prompt
//   EMSGSIZE                        more than kMaxReplyBytes without a prompt
//   ENAMETOOLONG                    socket path longer than sun_path
//   EINVAL                          a command with a line break or NUL, or a
//                                   reply that does not parse
//   ENODEV                          QEMU: "No balloon device has been activated"
//   EIO                             another "Error: …" line from QEMU

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace memqos::io {

class HmpMonitor {
public:
    // How long balloon() and balloonActual() may take each.
    static constexpr std::chrono::milliseconds kDefaultTimeout{2000};
    // A connect refused with ECONNREFUSED or EAGAIN (the monitor's listen
    // queue is full while another client, e.g. Ganeti, holds it) is retried
    // this many times, kRetryPause apart.
    static constexpr int kConnectRetries = 3;
    static constexpr std::chrono::milliseconds kRetryPause{100};
    // Banner or reply larger than this without a prompt: not a monitor.
    static constexpr std::size_t kMaxReplyBytes = 1024 * 1024;

    explicit HmpMonitor(std::chrono::milliseconds timeout = kDefaultTimeout) noexcept
        : timeout_(timeout) {}
    virtual ~HmpMonitor() = default;
    HmpMonitor(const HmpMonitor&) = default;
    HmpMonitor& operator=(const HmpMonitor&) = default;

    // Runs one HMP command (a single line, without "\n") and returns its
    // output: the text between the echoed command line and the next prompt,
    // with "\r" and terminal escape sequences removed, lines ending in "\n"
    // ("" for a command that prints nothing). The first line is taken for
    // the echo, and dropped, when it holds an escape sequence or ends with
    // the command; otherwise it is kept (a monitor that does not echo).
    // `timeout` bounds the whole call, connect retries included (a retry
    // pause that would pass it is not taken). QEMU reports a failed command
    // as output ("Error: …"), not as an error of this call.
    virtual Result<std::string> command(const std::filesystem::path& socket, std::string_view cmd,
                                        std::chrono::milliseconds timeout) const;

    // "balloon <MiB>": asks the guest's balloon driver for `target` bytes
    // of guest memory, rounded down to MiB and at least 1 MiB. Returns once
    // QEMU took the request; the guest follows later (see balloonActual()).
    // Output from QEMU ("Error: …") is an error (ENODEV/EIO).
    virtual Status balloon(const std::filesystem::path& socket, Bytes target) const;

    // "info balloon": the guest memory the balloon leaves the guest now.
    virtual Result<Bytes> balloonActual(const std::filesystem::path& socket) const;

    std::chrono::milliseconds timeout() const noexcept { return timeout_; }

private:
    std::chrono::milliseconds timeout_;
};

// The output of "info balloon": "balloon: actual=<MiB>" (QEMU 7.2 prints only
// that, older versions add " max_mem=…" and more, which is ignored), "\r"
// and a trailing "\n" allowed, in bytes. Other lines before it are skipped.
// A line "Error: …" (no balloon device) or anything without that field is
// invalid_argument, `what` quoting at most 80 bytes of the input. Pure; never
// throws.
Result<Bytes> parseInfoBalloon(std::string_view output);

// The output of a command with escape sequences (ESC [ … final byte, or ESC
// and one byte) and "\r" removed. Pure (exposed for tests).
std::string stripTerminalEscapes(std::string_view text);

} // namespace memqos::io

// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/procfs.hpp"

#include "memqos/io/file.hpp"

#include <utility>

namespace memqos::io {
namespace {

// "<path>: <parser message>", keeping the parser's code.
Error atPath(const std::filesystem::path& path, const Error& e) {
    return makeError(e.code, path.string() + ": " + e.what);
}

// Reads and parses one file; a read error already names the path.
template <typename Parser>
auto readParsed(const std::filesystem::path& path, Parser parser)
    -> decltype(parser(std::string_view{})) {
    auto content = readFile(path);
    if (!content) {
        return content.error();
    }
    auto parsed = parser(std::string_view(*content));
    if (!parsed) {
        return atPath(path, parsed.error());
    }
    return parsed;
}

bool isAbsent(const Error& e) {
    // EOPNOTSUPP: PSI compiled in but disabled at boot can still leave the
    // file in place on some kernels; either way there is no pressure data.
    return isVanished(e) || e.code == std::errc::operation_not_supported;
}

} // namespace

ProcFs::ProcFs(std::filesystem::path root, Bytes pageSize)
    : root_(std::move(root)), pageSize_(pageSize) {}

Result<parse::MemInfo> ProcFs::meminfo() const {
    return readParsed(root_ / "meminfo", parse::parseMeminfo);
}

Result<core::SystemSample> ProcFs::system() const {
    core::SystemSample s;
    s.pageSize = pageSize_;

    auto mem = meminfo();
    if (!mem) {
        return mem.error();
    }
    s.mem = *mem;

    auto pressure = readParsed(root_ / "pressure" / "memory", parse::parsePressure);
    if (pressure) {
        s.pressure = *pressure;
    } else if (!isAbsent(pressure.error())) {
        return pressure.error();
    }

    auto vmstat = readParsed(root_ / "vmstat", parse::parseVmstat);
    if (!vmstat) {
        return vmstat.error();
    }
    s.vmstat = *vmstat;

    auto zones = readParsed(root_ / "zoneinfo", parse::parseZoneinfo);
    if (!zones) {
        return zones.error();
    }
    s.zones = std::move(*zones);

    auto swaps = readParsed(root_ / "swaps", parse::parseSwaps);
    if (swaps) {
        s.swaps = std::move(*swaps);
    } else if (!isVanished(swaps.error())) {
        return swaps.error();
    }
    return s;
}

} // namespace memqos::io

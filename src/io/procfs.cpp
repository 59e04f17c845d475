// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/procfs.hpp"

#include "memqos/io/file.hpp"

#include <utility>

namespace memqos::io {
namespace {

// Reads (through the kept fd) and parses one file; a read error already
// names the path, a parser's gets "<path>: " in front.
template <typename Parser>
auto readParsed(OpenFiles& files, const std::string& path, Parser parser)
    -> decltype(parser(std::string_view{})) {
    ReadBuffer buf; // not zero-filled: only what pread() wrote is read
    auto content = files.read(path, buf);
    if (!content) {
        return content.error();
    }
    auto parsed = parser(*content);
    if (!parsed) {
        return makeError(parsed.error().code, path + ": " + parsed.error().what);
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
    : root_(std::move(root)), pageSize_(pageSize), meminfo_((root_ / "meminfo").string()),
      pressure_((root_ / "pressure" / "memory").string()), vmstat_((root_ / "vmstat").string()),
      zoneinfo_((root_ / "zoneinfo").string()), swaps_((root_ / "swaps").string()),
      files_(!isKernfs(root_)) {}

Result<parse::MemInfo> ProcFs::meminfo() const {
    return readParsed(files_, meminfo_, parse::parseMeminfo);
}

Result<core::SystemSample> ProcFs::system() const { return system(Reads{}); }

Result<core::SystemSample> ProcFs::system(const Reads& reads) const {
    core::SystemSample s;
    s.pageSize = pageSize_;

    auto mem = meminfo();
    if (!mem) {
        return mem.error();
    }
    s.mem = *mem;

    if (reads.pressure) {
        auto pressure = readParsed(files_, pressure_, parse::parsePressure);
        if (pressure) {
            s.pressure = *pressure;
        } else if (!isAbsent(pressure.error())) {
            return pressure.error();
        }
    }

    if (reads.vmstat) {
        auto vmstat = readParsed(files_, vmstat_, parse::parseVmstat);
        if (!vmstat) {
            return vmstat.error();
        }
        s.vmstat = *vmstat;
    }

    if (reads.zones) {
        auto zones = readParsed(files_, zoneinfo_, parse::parseZoneinfo);
        if (!zones) {
            return zones.error();
        }
        s.zones = std::move(*zones);
    }

    if (reads.swaps) {
        auto swaps = readParsed(files_, swaps_, parse::parseSwaps);
        if (swaps) {
            s.swaps = std::move(*swaps);
        } else if (!isVanished(swaps.error())) {
            return swaps.error();
        }
    }
    return s;
}

} // namespace memqos::io

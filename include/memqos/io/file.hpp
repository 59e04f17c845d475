// SPDX-License-Identifier: Apache-2.0
#pragma once
// Whole-file reads for procfs, sysfs and cgroupfs, where st_size means
// nothing (0 or 4096) and a file may vanish between open() and read().

#include "memqos/util/result.hpp"

#include <cstddef>
#include <filesystem>
#include <string>

namespace memqos::io {

inline constexpr std::size_t kDefaultMaxFileBytes = std::size_t{1} << 20;

// Reads `path` to its end (retrying EINTR). Errors carry std::errc made from
// errno, so ENOENT -> no_such_file_or_directory and ENODEV -> no_such_device
// (a cgroup removed while we read it); a file longer than `maxBytes` is
// file_too_large. `what` is "<path>: <reason>". Never throws.
Result<std::string> readFile(const std::filesystem::path& path,
                             std::size_t maxBytes = kDefaultMaxFileBytes);

// True for the errors that mean "it is gone" (ENOENT, ENODEV): a vanished
// cgroup or process is normal and callers drop the sample instead of failing.
bool isVanished(const Error& error) noexcept;

// Error{code, "<path>: <reason>"} for an errno value.
Error errnoError(int err, const std::filesystem::path& path);

} // namespace memqos::io

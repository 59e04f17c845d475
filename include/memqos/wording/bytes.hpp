// SPDX-License-Identifier: Apache-2.0
#pragma once
// Byte counts as people read them, for messages (journal, D-Bus errors and
// reasons, the hook's output).

#include "memqos/core/types.hpp"

#include <string>

namespace memqos::wording {

// Human size with one decimal in binary units: "0 B", "512 B", "1.5 KiB",
// "993.0 MiB", "2.0 GiB", "1.5 TiB" (rounded half up; a value that rounds to
// 1024.0 of a unit is shown in the next one).
std::string formatBytes(Bytes b);

} // namespace memqos::wording

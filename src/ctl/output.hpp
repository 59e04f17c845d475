// SPDX-License-Identifier: Apache-2.0
#pragma once
// stdout/stderr for memqosctl, unbuffered-enough for pipes: monitor flushes
// after every event so `memqosctl monitor | grep` sees lines as they happen.

#include <string_view>

namespace memqos::ctl {

void writeOut(std::string_view text);
void writeErr(std::string_view text);
void flushOut();

} // namespace memqos::ctl

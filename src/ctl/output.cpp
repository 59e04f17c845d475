// SPDX-License-Identifier: Apache-2.0
#include "output.hpp"

#include <cstdio>

namespace memqos::ctl {

void writeOut(std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
}

void writeErr(std::string_view text) {
    std::fflush(stdout); // keep the order when both go to one terminal
    std::fwrite(text.data(), 1, text.size(), stderr);
}

void flushOut() {
    std::fflush(stdout);
}

} // namespace memqos::ctl

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl's pager, as systemd's tools run theirs (pager.c): when standard
// output is a terminal, it is piped into $SYSTEMD_PAGER, else $PAGER, else
// less, else more (none when the variable set is empty or "cat"), with
// $LESS set to $SYSTEMD_LESS or "FRSXMK". If none can be started, the
// child copies the output through unchanged.

#include <sys/types.h>

namespace memqos::ctl {

class Pager {
public:
    Pager() = default;
    Pager(const Pager&) = delete;
    Pager& operator=(const Pager&) = delete;
    ~Pager() { close(); }

    // Starts the pager if standard output is a terminal and the environment
    // asks for one; otherwise, or when pipe or fork fails, does nothing.
    void open();
    // Flushes and closes standard output, then waits for the pager to exit
    // (the user has read the output). Nothing when no pager runs.
    void close();

private:
    pid_t pid_ = -1;
};

} // namespace memqos::ctl

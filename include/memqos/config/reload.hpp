// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a reload (Reload, SIGHUP) can change in a running memqosd. Every key
// takes effect at once except the ones memqosd reads only at start: the
// roots of the files it reads, the state directory its stores were opened
// on, and the libvirt connection. For those, a reload keeps the running
// value and says so ("needs a restart") in its answer and the journal.

#include "memqos/config/config.hpp"

#include <string>
#include <vector>

namespace memqos::config {

// One message per start-only key whose value differs between the running
// configuration and the new one, in the order of the keys below, e.g.
//   "Manager.StateDirectory needs a restart: /var/lib/memqos stays in use until memqosd
//    restarts (the configuration now says /srv/memqos)"
// Start-only keys: [Manager] CgroupRoot, ProcRoot, StateDirectory; [VM] LibvirtURI.
std::vector<std::string> restartNeeded(const Config& running, const Config& next);

// `next` with the start-only keys set back to their running values: the
// configuration in force after a reload.
Config withStartOnlyKeysOf(const Config& running, Config next);

} // namespace memqos::config

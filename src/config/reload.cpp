// SPDX-License-Identifier: Apache-2.0
#include "memqos/config/reload.hpp"

#include <utility>

namespace memqos::config {
namespace {

std::string shown(const std::string& value) { return value.empty() ? "\"\" (off)" : value; }

void compare(std::vector<std::string>& out, const char* key, const std::string& running,
             const std::string& next) {
    if (running == next) {
        return;
    }
    out.push_back(std::string(key) + " needs a restart: " + shown(running) +
                  " stays in use until memqosd restarts (the configuration now says " +
                  shown(next) + ")");
}

} // namespace

std::vector<std::string> restartNeeded(const Config& running, const Config& next) {
    std::vector<std::string> out;
    compare(out, "Manager.CgroupRoot", running.manager.cgroupRoot, next.manager.cgroupRoot);
    compare(out, "Manager.ProcRoot", running.manager.procRoot, next.manager.procRoot);
    compare(out, "Manager.StateDirectory", running.manager.stateDirectory,
            next.manager.stateDirectory);
    compare(out, "VM.LibvirtURI", running.vm.libvirtUri, next.vm.libvirtUri);
    return out;
}

Config withStartOnlyKeysOf(const Config& running, Config next) {
    next.manager.cgroupRoot = running.manager.cgroupRoot;
    next.manager.procRoot = running.manager.procRoot;
    next.manager.stateDirectory = running.manager.stateDirectory;
    next.vm.libvirtUri = running.vm.libvirtUri;
    return next;
}

} // namespace memqos::config

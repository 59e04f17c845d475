// SPDX-License-Identifier: Apache-2.0
#pragma once
// VM workloads' outside text, pure: memqos's libvirt domain metadata, the
// <resource><partition> of a domain's XML, a process's cgroup (from
// /proc/PID/cgroup) and the unit it belongs to, Ganeti instance tags. None
// of these throws on bad input.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::config {

// memqos's metadata element of a libvirt domain, e.g.
//   <memqos:workload xmlns:memqos="https://memqos.org/xmlns/workload/1"
//       class="shared" request="512M" limit="1G" priority="0"/>
// Only `class` is required. Sizes as in memqosd.conf ("512M", "max").
struct VmMetadata {
    std::string className;
    std::optional<Bytes> request;
    std::optional<Limit> limit;
    std::optional<std::int32_t> priority;
    bool operator==(const VmMetadata&) const = default;
};

// Reads the first element's attributes ('"' or '\'' quoted; xmlns
// attributes and unknown ones ignored). Errors say which attribute is wrong.
// Values holding '&' or '<' are refused (memqos never writes entities).
Result<VmMetadata> parseVmMetadata(std::string_view xml);
// The element memqos stores (without the xmlns: libvirt adds it from the
// namespace argument of virDomainSetMetadata).
std::string formatVmMetadata(const VmMetadata& m);

// The domain XML (libvirt's own formatting, from virDomainGetXMLDesc) with
// <resource><partition> set to `partition`: an existing <partition> is
// replaced, an existing <resource> gets one, else a <resource> is added
// before </domain>. `partition` must be an absolute path of [A-Za-z0-9_-]
// components ("/memqos/shared").
Result<std::string> withPartition(std::string_view domainXml, std::string_view partition);

// The cgroup v2 path of a process from /proc/PID/cgroup ("0::/a/b" ->
// "a/b"); an error when there is no "0::" line.
Result<std::string> parseProcCgroup(std::string_view text);

// The unit a cgroup belongs to: the first component that ends in ".scope"
// or ".service" ("machine.slice/machine-qemu\x2d1\x2dvm.scope/libvirt/emulator"
// -> unit "machine-qemu\x2d1\x2dvm.scope", path "machine.slice/machine-
// qemu\x2d1\x2dvm.scope"); nullopt when there is none.
struct UnitCgroup {
    std::string unit;
    std::string path;
    bool operator==(const UnitCgroup&) const = default;
};
std::optional<UnitCgroup> unitOfCgroup(std::string_view cgroupPath);

// The class named by a Ganeti instance tag "memqos:class:<name>" in
// GANETI_INSTANCE_TAGS (space-separated); the first such tag wins; nullopt
// when there is none. Ganeti 3.0 refuses '=' in tags, so ':' separates;
// "memqos:class=<name>" is read too (other tools' tag lists).
std::optional<std::string> classFromTags(std::string_view tags);

// systemd's unit-name escaping of one name component (unit_name_escape):
// [A-Za-z0-9:_.] stay (a leading '.' is escaped), '/' becomes '-', every
// other byte "\xNN". Used for memqos-vm-<instance>.scope.
std::string escapeUnitComponent(std::string_view name);

} // namespace memqos::config

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Rendering of memqosctl's output from plain structs, pure: text tables with
// human sizes ("256M", "max"), or JSON documents with raw byte counts and the
// D-Bus API's names ("MemoryHigh"; method out-args by their XML names,
// "verdict", "findings"). Every string ends with a newline.

#include <string>
#include <string_view>
#include <vector>

#include "model.hpp"
#include "table.hpp"

namespace memqos::ctl {

// Json is --json=pretty, JsonShort --json=short (one line per document).
enum class Format { Text, Json, JsonShort };

class JsonWriter;
enum class JsonStyle;

bool isJson(Format format);
JsonStyle jsonStyle(Format format); // Compact for JsonShort, else Pretty

// With status.instances: the instance table and the max memory of the up
// instances after the key/value lines (JSON: an "instances" array).
std::string renderStatus(const ManagerStatus& status, Format format, Legend legend = Legend::Show);
// instances: NAME MIN MAX STATE, or a JSON array of {name, min_memory,
// max_memory, up} (ListInstances' field names).
std::string renderInstances(const std::vector<Instance>& instances, Format format,
                            Legend legend = Legend::Show);
// The kill history: a table (TIME in local time, ISO 8601 to the second) or
// a JSON array of {time_usec, time, id, class, reason, numbers}.
std::string renderKills(const std::vector<KillInfo>& kills, Format format,
                        Legend legend = Legend::Show);
std::string renderClasses(const std::vector<ClassInfo>& classes, Format format,
                          Legend legend = Legend::Show);
std::string renderWorkloads(const std::vector<WorkloadInfo>& workloads, Format format,
                            Legend legend = Legend::Show);
std::string renderPlacement(const PlacementVerdict& verdict, Format format,
                            Legend legend = Legend::Show);
std::string renderFindings(const std::vector<Finding>& findings, Format format,
                           Legend legend = Legend::Show);
// assign/run: the workload's object path (text) or {"workload": path} (JSON).
std::string renderWorkloadPath(std::string_view path, Format format);
// Commands without output: nothing (text) or {} (JSON, so scripts always parse).
std::string renderNothing(Format format);
// memqosctl reclaim: "Reclaimed 12.0 MiB of 64.0 MiB from ID".
std::string renderReclaimed(const std::string& id, Bytes asked, Bytes freed, Format format);
// Reload's answer: the keys that need a restart, one line each (JSON:
// {"restart_needed": [...]}); nothing when every key took effect.
std::string renderReload(const std::vector<std::string>& restartNeeded, Format format);
// release --all: the ids given back, one a line ({"released": [...]}).
std::string renderReleased(const std::vector<std::string>& ids, Format format);
// One monitor line: "<timestamp> <kind> <details>" or a compact JSON object.
std::string renderEvent(const Event& event, Format format);

// Exit codes decided by what the daemon answered (see command.hpp).
// Unknown verdicts count as errors of the daemon (kExitDaemonError).
int placementExitCode(const PlacementVerdict& verdict);
int verifyExitCode(const std::vector<Finding>& findings);

// Building blocks, exposed for tests.
void writeJsonValue(JsonWriter& json, const Value& value);
// The members of status --json (without "instances"), and one element of
// classes --json and workloads --json; top --json reuses them.
void writeStatusMembers(JsonWriter& json, const ManagerStatus& status);
void writeClass(JsonWriter& json, const ClassInfo& info);
void writeWorkload(JsonWriter& json, const WorkloadInfo& info);
std::string formatValue(const Value& value);
std::string formatDouble(double d);
// "1 (admission-closed)": a pressure level with its name.
std::string formatPressureLevel(std::uint64_t level);
// True for a number named like a ratio or a count ("ratio_permille",
// "victims_count"), printed raw; other numbers in a{st} are sizes.
bool isPlainNumberKey(std::string_view key);

} // namespace memqos::ctl

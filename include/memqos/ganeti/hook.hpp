// SPDX-License-Identifier: Apache-2.0
#pragma once
// The Ganeti hook's decisions (pure): from the environment Ganeti gives a
// hook and this node's name to the steps the hook takes — check a placement
// (pre-hooks), update the instance record (post-hooks), or nothing.
//
// What Ganeti passes (3.0, checked on a real cluster, see
// tests/fixtures/ganeti/NOTES.md): GANETI_HOOKS_PHASE (pre|post),
// GANETI_HOOKS_PATH (instance-add, ...), GANETI_OP_CODE, and the instance's
// GANETI_INSTANCE_NAME, _PRIMARY, _STATUS (up|down), _MAXMEM/_MINMEM (MiB;
// in instance-modify the new size, while _BE_maxmem/_BE_minmem still hold
// the old one). Post-hooks also get the environment rebuilt after the
// operation with the prefix GANETI_POST_ (the instance's new state, name,
// primary node). Migrate and failover add GANETI_OLD_PRIMARY and
// GANETI_NEW_PRIMARY; rename adds GANETI_INSTANCE_NEW_NAME.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::ganeti {

using Env = std::map<std::string, std::string, std::less<>>;

// "KEY=VALUE" lines as env(1) prints them; blank lines and lines starting
// with '#' are skipped; a line without '=' or a key that is not
// [A-Za-z_][A-Za-z0-9_]* is an error naming the line. A later key wins.
// Only for recorded environments (fixtures, --env-file).
Result<Env> parseEnvFile(std::string_view text);

// Ganeti node names: equal ignoring case, or equal first labels when one
// side is a short name ("node1" and "node1.example.test").
bool sameNode(std::string_view a, std::string_view b);

enum class StepKind { Check, Record, Forget };

struct Step {
    StepKind kind = StepKind::Check;
    std::string instance;
    Bytes maxMemory = 0; // Check: the memory asked; Record: the record's
    Bytes minMemory = 0;
    bool up = false; // Record
    // The class of an instance tag "memqos:class:<name>"
    // (GANETI_INSTANCE_TAGS), "" when it has none. Check: the class the
    // placement is verified for ("": memqosd's rule or DefaultClass);
    // Record: sent as a persistent AssignWorkload first.
    std::string className;
    friend bool operator==(const Step&, const Step&) = default;
};

struct Plan {
    std::string path;  // GANETI_HOOKS_PATH, e.g. "instance-add"
    std::string phase; // "pre" | "post"
    std::string instance;
    std::vector<Step> steps; // empty: nothing to decide on this node
    std::string why;         // one line: why these steps, or why none
};

// Errors (the environment is not one a Ganeti hook gets, or a number in it
// is malformed) say which variable and why. Never throws.
Result<Plan> plan(const Env& env, std::string_view nodeName);

// "512.0 MiB" style text of a step, for messages.
std::string describe(const Step& step);

} // namespace memqos::ganeti

// SPDX-License-Identifier: Apache-2.0
#include "memqos/ganeti/hook.hpp"

#include "memqos/config/vm.hpp"

#include "memqos/core/placement.hpp"
#include "memqos/parse/text.hpp"
#include "memqos/wording/bytes.hpp"

#include <charconv>
#include <limits>

namespace memqos::ganeti {
namespace {

bool isKeyChar(char c, bool first) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

using parse::text::equalsIgnoreCase;

// An environment value as shown in an error: at most 80 bytes, so a hostile
// or broken environment cannot make an unbounded message.
using parse::text::bounded;

// The variables of one phase: in post-hooks GANETI_POST_<name> (the state
// after the operation) wins over GANETI_<name> (the state before).
class Vars {
public:
    Vars(const Env& env, bool post) : env_(env), post_(post) {}

    const std::string* find(std::string_view name) const {
        if (post_) {
            if (const auto* v = raw("GANETI_POST_", name)) {
                return v;
            }
        }
        return raw("GANETI_", name);
    }
    // Only the state before the operation.
    const std::string* before(std::string_view name) const { return raw("GANETI_", name); }

    std::string get(std::string_view name) const {
        const auto* v = find(name);
        return v == nullptr ? std::string() : *v;
    }

    // Ganeti gives memory in MiB, a plain decimal number. The first name
    // that is set wins.
    Result<Bytes> mebibytes(std::initializer_list<std::string_view> names) const {
        for (const auto name : names) {
            const auto* v = find(name);
            if (v == nullptr) {
                continue;
            }
            std::uint64_t mib = 0;
            const auto* end = v->data() + v->size();
            const auto [ptr, ec] = std::from_chars(v->data(), end, mib);
            if (v->empty() || ec != std::errc{} || ptr != end) {
                return invalid("GANETI_" + std::string(name) + "='" + v->substr(0, 40) +
                               "' is not a number of MiB");
            }
            if (mib > std::numeric_limits<Bytes>::max() / kMiB) {
                return invalid("GANETI_" + std::string(name) + "=" + bounded(*v) + " MiB is too large");
            }
            return mib * kMiB;
        }
        return invalid("GANETI_" + std::string(*names.begin()) + " is not set");
    }

private:
    const std::string* raw(std::string_view prefix, std::string_view name) const {
        std::string key(prefix);
        key += name;
        const auto it = env_.find(key);
        return it == env_.end() ? nullptr : &it->second;
    }

    const Env& env_;
    bool post_;
};

enum class Op { Add, Start, Stop, Modify, Remove, Rename, Migrate, Failover, Other };

Op opOf(std::string_view path) {
    static const std::pair<std::string_view, Op> kPaths[] = {
        {"instance-add", Op::Add},         {"instance-start", Op::Start},
        {"instance-stop", Op::Stop},       {"instance-modify", Op::Modify},
        {"instance-remove", Op::Remove},   {"instance-rename", Op::Rename},
        {"instance-migrate", Op::Migrate}, {"instance-failover", Op::Failover},
    };
    for (const auto& [p, op] : kPaths) {
        if (p == path) {
            return op;
        }
    }
    return Op::Other;
}

Result<Step> checkStep(const Vars& v, const std::string& name) {
    auto max = v.mebibytes({"INSTANCE_MAXMEM", "INSTANCE_BE_maxmem"});
    if (!max) {
        return max.error();
    }
    auto min = v.mebibytes({"INSTANCE_MINMEM", "INSTANCE_BE_minmem"});
    Step s;
    s.kind = StepKind::Check;
    s.instance = name;
    s.maxMemory = *max;
    s.minMemory = min ? std::min(*min, *max) : *max;
    s.className = config::classFromTags(v.get("INSTANCE_TAGS")).value_or("");
    return s;
}

// Admin state up: "up"/"down" for an existing instance, the start flag
// "True"/"False" for instance-add.
bool isUp(const Vars& v) {
    const auto s = v.get("INSTANCE_STATUS");
    return s == "up" || s == "True";
}

Result<Step> recordStep(const Vars& v, const std::string& name) {
    auto s = checkStep(v, name);
    if (!s) {
        return s;
    }
    s->kind = StepKind::Record;
    s->up = isUp(v);
    return s;
}

Step forgetStep(const std::string& name) {
    Step s;
    s.kind = StepKind::Forget;
    s.instance = name;
    return s;
}

Result<Plan> prePlan(Plan p, Op op, const Vars& v, std::string_view node) {
    const bool move = op == Op::Migrate || op == Op::Failover;
    if (!(op == Op::Add || op == Op::Start || op == Op::Modify || move)) {
        p.why = "nothing to check before " + p.path;
        return p;
    }
    const auto* target = move ? v.before("NEW_PRIMARY") : v.before("INSTANCE_PRIMARY");
    if (target == nullptr || target->empty()) {
        return invalid(std::string(move ? "GANETI_NEW_PRIMARY" : "GANETI_INSTANCE_PRIMARY") +
                       " is not set: cannot tell which node will host " + bounded(p.instance));
    }
    if (!sameNode(*target, node)) {
        p.why = bounded(p.instance) + " will run on " + bounded(*target) + ", not on this node (" +
                std::string(node) + ")";
        return p;
    }
    if (op != Op::Start && !isUp(v)) {
        // Only instances that run or are meant to run count: a stopped one
        // is checked when it starts.
        p.why = p.instance + " is not meant to run (status " + v.get("INSTANCE_STATUS") +
                "): checked when it starts";
        return p;
    }
    auto check = checkStep(v, p.instance);
    if (!check) {
        return check.error();
    }
    if (op == Op::Modify) {
        auto old = v.mebibytes({"INSTANCE_BE_maxmem"});
        if (old && check->maxMemory <= *old) {
            p.why = p.instance + "'s memory does not grow (" + wording::formatBytes(*old) + " to " +
                    wording::formatBytes(check->maxMemory) + ")";
            return p;
        }
    }
    p.steps.push_back(*check);
    p.why = "check " + p.path + " of " + p.instance + ": " + describe(*check);
    return p;
}

Result<Plan> postPlan(Plan p, Op op, const Vars& v, std::string_view node) {
    if (op == Op::Other) {
        p.why = "nothing to record after " + p.path;
        return p;
    }
    // The instance's primary node after the operation, and before it.
    const std::string primary = v.get("INSTANCE_PRIMARY");
    const auto* oldPrimary = v.before(op == Op::Migrate || op == Op::Failover ? "OLD_PRIMARY"
                                                                              : "INSTANCE_PRIMARY");
    if (primary.empty()) {
        return invalid("GANETI_INSTANCE_PRIMARY is not set: cannot tell which node hosts " +
                       bounded(p.instance));
    }
    const auto* beforeName = v.before("INSTANCE_NAME");
    if (!sameNode(primary, node)) {
        if (oldPrimary != nullptr && sameNode(*oldPrimary, node)) {
            p.steps.push_back(forgetStep(beforeName != nullptr ? *beforeName : p.instance));
            p.why = p.instance + " moved from this node to " + primary;
            return p;
        }
        p.why = p.instance + " runs on " + primary + ", not on this node (" + std::string(node) +
                ")";
        return p;
    }
    if (op == Op::Remove) {
        p.steps.push_back(forgetStep(p.instance));
        p.why = p.instance + " was removed";
        return p;
    }
    std::string name = p.instance;
    if (op == Op::Rename) {
        const auto* newName = v.before("INSTANCE_NEW_NAME");
        if (newName == nullptr || newName->empty()) {
            return invalid("GANETI_INSTANCE_NEW_NAME is not set after instance-rename of " +
                           bounded(p.instance));
        }
        name = *newName;
        if (beforeName != nullptr && *beforeName != name) {
            p.steps.push_back(forgetStep(*beforeName));
        }
    }
    if (auto ok = core::validateInstanceName(name); !ok) {
        return invalid("instance name '" + name.substr(0, 80) + "': " + ok.error().what);
    }
    auto record = recordStep(v, name);
    if (!record) {
        return record.error();
    }
    p.steps.push_back(*record);
    p.instance = name;
    p.why = "record " + name + " after " + p.path + ": " + describe(*record);
    return p;
}

} // namespace

Result<Env> parseEnvFile(std::string_view text) {
    Env env;
    std::size_t lineNo = 0;
    while (!text.empty()) {
        ++lineNo;
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line.empty() || line.front() == '#') {
            continue;
        }
        const auto eq = line.find('=');
        const std::string where = "line " + std::to_string(lineNo) + ": ";
        if (eq == std::string_view::npos || eq == 0) {
            return invalid(where + "expected KEY=VALUE");
        }
        const auto key = line.substr(0, eq);
        for (std::size_t i = 0; i < key.size(); ++i) {
            if (!isKeyChar(key[i], i == 0)) {
                return invalid(where + "'" + std::string(key.substr(0, 64)) +
                               "' is not a variable name");
            }
        }
        env[std::string(key)] = std::string(line.substr(eq + 1));
    }
    return env;
}

bool sameNode(std::string_view a, std::string_view b) {
    if (a.empty() || b.empty()) {
        return false;
    }
    if (equalsIgnoreCase(a, b)) {
        return true;
    }
    const auto da = a.find('.');
    const auto db = b.find('.');
    if ((da == std::string_view::npos) == (db == std::string_view::npos)) {
        return false; // both short or both qualified, and different
    }
    return equalsIgnoreCase(a.substr(0, da), b.substr(0, db));
}

std::string describe(const Step& step) {
    switch (step.kind) {
    case StepKind::Check:
        return wording::formatBytes(step.maxMemory) + " asked, minimum " +
               wording::formatBytes(step.minMemory);
    case StepKind::Record:
        return "max " + wording::formatBytes(step.maxMemory) + ", min " +
               wording::formatBytes(step.minMemory) + ", " + (step.up ? "up" : "down") +
               (step.className.empty() ? "" : ", class " + step.className);
    case StepKind::Forget:
        return "forget " + step.instance;
    }
    return {};
}

Result<Plan> plan(const Env& env, std::string_view nodeName) {
    const auto phase = env.find("GANETI_HOOKS_PHASE");
    if (phase == env.end()) {
        return invalid("GANETI_HOOKS_PHASE is not set: this program is a Ganeti hook, run by "
                       "Ganeti (see memqosctl(1) and README \"Using memqos with Ganeti\")");
    }
    if (phase->second != "pre" && phase->second != "post") {
        return invalid("GANETI_HOOKS_PHASE='" + phase->second.substr(0, 40) +
                       "': expected pre or post");
    }
    const bool post = phase->second == "post";
    const Vars v(env, post);
    Plan p;
    p.phase = phase->second;
    const auto path = env.find("GANETI_HOOKS_PATH");
    p.path = path == env.end() ? std::string() : path->second;
    const Op op = opOf(p.path);
    if (op == Op::Other) {
        p.why = "memqos has nothing to decide for hooks path '" + p.path.substr(0, 64) + "'";
        return p;
    }
    const auto* name = v.before("INSTANCE_NAME");
    if (name == nullptr || name->empty()) {
        return invalid("GANETI_INSTANCE_NAME is not set in " + p.path + " hook");
    }
    p.instance = *name;
    if (nodeName.empty()) {
        return invalid("this node's name is unknown (set [Ganeti] NodeName=)");
    }
    return post ? postPlan(std::move(p), op, v, nodeName) : prePlan(std::move(p), op, v, nodeName);
}

} // namespace memqos::ganeti

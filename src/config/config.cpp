// SPDX-License-Identifier: Apache-2.0
// Table-driven validation of memqosd.conf entries, after systemd's
// ConfigTableItem (src/oom/oomd-conf.c): one row per key with its parser and
// the member it sets, so unknown keys, bad values and rendering all come from
// the same table.
#include "memqos/config/config.hpp"

#include "memqos/config/values.hpp"
#include "memqos/parse/text.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace memqos::config {
namespace {

constexpr std::string_view kClassPrefix = "Class.";
constexpr std::string_view kRulePrefix = "Rule.";

// One row: how to set a key from text and how to print it back.
template <typename Owner>
struct KeyItem {
    std::string section; // fixed sections only; "" in the class and rule tables
    std::string key;
    std::function<Status(Owner&, std::string_view)> apply;
    std::function<std::string(const Owner&)> render;
};

// `get` maps an Owner (const or not) to the member; `parse` returns
// Result<T>; `format` prints a T.
template <typename Owner, typename Get, typename Parse, typename Format>
KeyItem<Owner> item(std::string section, std::string key, Get get, Parse parse, Format format) {
    return KeyItem<Owner>{
        std::move(section),
        std::move(key),
        [get, parse](Owner& owner, std::string_view value) -> Status {
            auto r = parse(value);
            if (!r)
                return r.error();
            get(owner) = std::move(r).value();
            return okStatus();
        },
        [get, format](const Owner& owner) -> std::string {
            return std::string(format(get(owner)));
        },
    };
}

template <typename Get, typename Parse, typename Format>
KeyItem<Config> global(std::string section, std::string key, Get get, Parse parse, Format format) {
    return item<Config>(std::move(section), std::move(key), get, parse, format);
}

Result<Permyriad> parseHysteresis(std::string_view v) {
    auto p = parsePermyriad(v);
    if (p && *p >= kPermyriadOne)
        return invalid("must be below 100% (expected e.g. 20%)");
    return p;
}

Result<Permyriad> parseMaxStep(std::string_view v) {
    auto p = parsePermyriad(v);
    if (p && *p == 0)
        return invalid("must be greater than 0% (expected e.g. 1%)");
    return p;
}

Result<std::uint32_t> parseRank(std::string_view v) {
    auto r = parseInt(v, 0, std::numeric_limits<std::uint32_t>::max());
    if (!r)
        return r.error();
    return static_cast<std::uint32_t>(*r);
}

Result<std::int32_t> parsePriority(std::string_view v) {
    auto r = parseInt(v, std::numeric_limits<std::int32_t>::min(),
                      std::numeric_limits<std::int32_t>::max());
    if (!r)
        return r.error();
    return static_cast<std::int32_t>(*r);
}

// "" (off) or a libvirt URI such as qemu:///system: printable ASCII, with "://".
Result<std::string> parseLibvirtUri(std::string_view v) {
    if (v.empty())
        return std::string();
    for (char c : v)
        if (c <= ' ' || c > '~')
            return invalid("not a libvirt URI (printable ASCII without spaces, e.g. "
                           "qemu:///system; empty turns libvirt off)");
    if (v.find("://") == std::string_view::npos)
        return invalid("not a libvirt URI (expected e.g. qemu:///system; empty turns libvirt off)");
    return std::string(v);
}

Result<std::string> parseClassName(std::string_view v) {
    if (!isValidClassName(v))
        return invalid("not a class name (expected e.g. shared: a lowercase letter, then "
                       "lowercase letters, digits or '_', at most 32)");
    return std::string(v);
}

// [VM] DefaultClass: a class name, or "" / "none" for no default class (a VM
// nothing else places is observed only). Stored as "" for none.
Result<std::string> parseDefaultClass(std::string_view v) {
    if (v.empty() || v == "none")
        return std::string();
    auto name = parseClassName(v);
    if (!name)
        return invalid(name.error().what + "; or empty or 'none' for no default class: unplaced "
                                           "VMs are observed only");
    return name;
}

std::string formatU32(std::uint32_t v) {
    return std::to_string(v);
}
std::string formatI32(std::int32_t v) {
    return std::to_string(v);
}
std::string formatString(const std::string& s) {
    return s;
}

const std::vector<KeyItem<Config>>& globalTable() {
    static const std::vector<KeyItem<Config>> table = [] {
        std::vector<KeyItem<Config>> t;
        // [Manager]
        t.push_back(global(
            "Manager", "Interval", [](auto& c) -> auto& { return c.manager.interval; },
            parsePositiveDuration, formatDuration));
        t.push_back(global(
            "Manager", "DryRun", [](auto& c) -> auto& { return c.manager.dryRun; }, parseBool,
            formatBool));
        t.push_back(global(
            "Manager", "CgroupRoot", [](auto& c) -> auto& { return c.manager.cgroupRoot; },
            parseAbsolutePath, formatString));
        t.push_back(global(
            "Manager", "ProcRoot", [](auto& c) -> auto& { return c.manager.procRoot; },
            parseAbsolutePath, formatString));
        t.push_back(global(
            "Manager", "StateDirectory", [](auto& c) -> auto& { return c.manager.stateDirectory; },
            parseAbsolutePath, formatString));
        t.push_back(global(
            "Manager", "MetricsFile", [](auto& c) -> auto& { return c.manager.metricsFile; },
            parseOptionalFile, formatString));
        t.push_back(global(
            "Manager", "MetricsInterval",
            [](auto& c) -> auto& { return c.manager.metricsInterval; }, parsePositiveDuration,
            formatDuration));
        // [Overcommit]
        t.push_back(global(
            "Overcommit", "MemoryRatio", [](auto& c) -> auto& { return c.overcommit.memoryRatio; },
            parseRatio, formatRatio));
        t.push_back(global(
            "Overcommit", "NodeReserved",
            [](auto& c) -> auto& { return c.overcommit.nodeReserved; }, parseSizeSpec,
            formatSizeSpec));
        t.push_back(global(
            "Overcommit", "FailoverReserve",
            [](auto& c) -> auto& { return c.overcommit.failoverReserve; }, parseSizeSpec,
            formatSizeSpec));
        t.push_back(global(
            "Overcommit", "SwapCheck", [](auto& c) -> auto& { return c.overcommit.swapCheck; },
            parseSwapCheck, formatSwapCheck));
        t.push_back(global(
            "Overcommit", "VMOverhead", [](auto& c) -> auto& { return c.overcommit.vmOverhead; },
            parseSize, formatSize));
        // [Pressure]
        for (std::size_t i = 0; i < 3; ++i) {
            std::string p = "Level" + std::to_string(i + 1);
            t.push_back(global(
                "Pressure",
                p + "SomeAvg10", [i](auto& c) -> auto& { return c.pressure.levels[i].someAvg10; },
                parseOptionalPercent, formatOptionalPercent));
            t.push_back(global(
                "Pressure",
                p + "FullAvg10", [i](auto& c) -> auto& { return c.pressure.levels[i].fullAvg10; },
                parseOptionalPercent, formatOptionalPercent));
            t.push_back(global(
                "Pressure", p + "MemAvailable",
                [i](auto& c) -> auto& { return c.pressure.levels[i].memAvailableBelow; },
                parseOptionalPermyriad, formatOptionalPermyriad));
            t.push_back(global(
                "Pressure",
                p + "Duration", [i](auto& c) -> auto& { return c.pressure.levels[i].duration; },
                parseDuration, formatDuration));
        }
        t.push_back(global(
            "Pressure", "Watermarks", [](auto& c) -> auto& { return c.pressure.watermarks; },
            parseBool, formatBool));
        t.push_back(global(
            "Pressure", "SwapUsedKill", [](auto& c) -> auto& { return c.pressure.swapUsedKill; },
            parseOptionalPermyriad, formatOptionalPermyriad));
        t.push_back(global(
            "Pressure", "Hysteresis", [](auto& c) -> auto& { return c.pressure.hysteresis; },
            parseHysteresis, formatPermyriad));
        t.push_back(global(
            "Pressure", "RecoveryDuration",
            [](auto& c) -> auto& { return c.pressure.recoveryDuration; }, parseDuration,
            formatDuration));
        t.push_back(global(
            "Pressure", "KillCooldown", [](auto& c) -> auto& { return c.pressure.killCooldown; },
            parseDuration, formatDuration));
        t.push_back(global(
            "Pressure", "GuardHeadroom", [](auto& c) -> auto& { return c.pressure.guardHeadroom; },
            parsePermyriad, formatPermyriad));
        t.push_back(global(
            "Pressure", "ClassStallFull",
            [](auto& c) -> auto& { return c.pressure.classStallFull; }, parseOptionalPercent,
            formatOptionalPercent));
        t.push_back(global(
            "Pressure", "ClassStallDuration",
            [](auto& c) -> auto& { return c.pressure.classStallDuration; }, parseDuration,
            formatDuration));
        // [Reclaim]
        t.push_back(global(
            "Reclaim", "Enabled", [](auto& c) -> auto& { return c.reclaim.enabled; }, parseBool,
            formatBool));
        t.push_back(global(
            "Reclaim", "Interval", [](auto& c) -> auto& { return c.reclaim.interval; },
            parsePositiveDuration, formatDuration));
        t.push_back(global(
            "Reclaim", "StallTarget", [](auto& c) -> auto& { return c.reclaim.stallTarget; },
            parsePercent, formatPercent));
        t.push_back(global(
            "Reclaim", "MaxStep", [](auto& c) -> auto& { return c.reclaim.maxStep; }, parseMaxStep,
            formatPermyriad));
        t.push_back(global(
            "Reclaim", "MinProtected", [](auto& c) -> auto& { return c.reclaim.minProtected; },
            parseBool, formatBool));
        // [Ganeti]
        t.push_back(global(
            "Ganeti", "HookTimeout", [](auto& c) -> auto& { return c.ganeti.hookTimeout; },
            parsePositiveDuration, formatDuration));
        t.push_back(global(
            "Ganeti", "WhenUnreachable",
            [](auto& c) -> auto& { return c.ganeti.whenUnreachable; }, parseWhenUnreachable,
            formatWhenUnreachable));
        t.push_back(global(
            "Ganeti", "RefuseSoft", [](auto& c) -> auto& { return c.ganeti.refuseSoft; },
            parseBool, formatBool));
        t.push_back(global(
            "Ganeti", "NodeName", [](auto& c) -> auto& { return c.ganeti.nodeName; },
            parseHostName, formatString));
        t.push_back(global(
            "Ganeti", "Balloon", [](auto& c) -> auto& { return c.ganeti.balloon; }, parseBool,
            formatBool));
        // [VM]
        t.push_back(global(
            "VM", "LibvirtURI", [](auto& c) -> auto& { return c.vm.libvirtUri; }, parseLibvirtUri,
            formatString));
        t.push_back(global(
            "VM", "DefaultClass", [](auto& c) -> auto& { return c.vm.defaultClass; },
            parseDefaultClass, formatString));
        t.push_back(global(
            "VM", "LimitOverhead", [](auto& c) -> auto& { return c.vm.limitOverhead; }, parseSize,
            formatSize));
        return t;
    }();
    return table;
}

const std::vector<KeyItem<core::ClassPolicy>>& classTable() {
    using P = core::ClassPolicy;
    static const std::vector<KeyItem<P>> table = [] {
        std::vector<KeyItem<P>> t;
        t.push_back(item<P>(
            "", "Rank", [](auto& c) -> auto& { return c.rank; }, parseRank, formatU32));
        t.push_back(item<P>(
            "", "Protection", [](auto& c) -> auto& { return c.protection; }, parseProtection,
            formatProtection));
        t.push_back(item<P>(
            "", "ThrottlingFactor", [](auto& c) -> auto& { return c.throttlingFactor; },
            parseFactor, formatFactor));
        t.push_back(item<P>(
            "", "Killable", [](auto& c) -> auto& { return c.killable; }, parseBool, formatBool));
        t.push_back(item<P>(
            "", "Swap", [](auto& c) -> auto& { return c.swap; }, parseBool, formatBool));
        t.push_back(item<P>(
            "", "OOMScoreAdjust", [](auto& c) -> auto& { return c.oomScoreAdj; },
            parseOomScoreAdjust, formatOomScoreAdjust));
        t.push_back(item<P>(
            "", "Reclaim", [](auto& c) -> auto& { return c.reclaim; }, parseBool, formatBool));
        t.push_back(item<P>(
            "", "MemoryGuard", [](auto& c) -> auto& { return c.memoryGuard; }, parseBool,
            formatBool));
        return t;
    }();
    return table;
}

const std::vector<KeyItem<WorkloadRule>>& ruleTable() {
    using R = WorkloadRule;
    static const std::vector<KeyItem<R>> table = [] {
        std::vector<KeyItem<R>> t;
        t.push_back(item<R>(
            "", "Match", [](auto& r) -> auto& { return r.match; }, parseGlob, formatString));
        // Whether the class exists is checked after all files.
        t.push_back(item<R>(
            "", "Class", [](auto& r) -> auto& { return r.className; },
            [](std::string_view v) -> Result<std::string> {
                std::string s(v);
                if (!isValidClassName(s))
                    return invalid("not a class name (expected e.g. shared: a lowercase letter, "
                                   "then lowercase "
                                   "letters, digits or '_', at most 32)");
                return s;
            },
            formatString));
        t.push_back(item<R>(
            "", "Request", [](auto& r) -> auto& { return r.request; }, parseSize, formatSize));
        t.push_back(item<R>(
            "", "Limit", [](auto& r) -> auto& { return r.limit; }, parseLimit, formatLimit));
        t.push_back(item<R>(
            "", "Priority", [](auto& r) -> auto& { return r.priority; }, parsePriority, formatI32));
        return t;
    }();
    return table;
}

template <typename Owner>
const KeyItem<Owner>* findKey(const std::vector<KeyItem<Owner>>& table, std::string_view section,
                              std::string_view key) {
    for (const auto& it : table)
        if (it.section == section && it.key == key)
            return &it;
    return nullptr;
}

using parse::text::equalsIgnoreCase;

// "system, dedicated, shared, reclaimed": the classes an unknown name could
// have meant; with many classes (drop-ins can add a thousand) the first few
// and how many more, so one problem stays one readable line.
std::string classNames(const std::vector<core::ClassPolicy>& classes) {
    constexpr std::size_t kShown = 8;
    std::string names;
    for (std::size_t i = 0; i < classes.size() && i < kShown; ++i)
        names += (names.empty() ? "" : ", ") + classes[i].name;
    if (classes.size() > kShown)
        names += " and " + std::to_string(classes.size() - kShown) + " more";
    return names;
}

constexpr std::array<std::string_view, 6> kFixedSections{"Manager", "Overcommit", "Pressure",
                                                         "Reclaim", "Ganeti",     "VM"};

// The name in `names` closest to `word` by editDistance, if `word` is close
// enough to be a typo of it: at most 1 edit for names up to 4 characters, 2
// up to 8, 3 beyond ("MemRatio" -> "MemoryRatio"; "Frobnicate" is nothing's
// typo). Ties: the first.
template <typename Names>
std::optional<std::string> closest(std::string_view word, const Names& names) {
    std::optional<std::string> best;
    std::size_t bestDistance = 0;
    for (const auto& n : names) {
        // Once a name is found, only a closer one can replace it.
        if (best && bestDistance == 0)
            break;
        const std::string_view name = n;
        const std::size_t allowed = name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3;
        const std::size_t limit = best ? std::min(allowed, bestDistance - 1) : allowed;
        const std::size_t d = parse::text::editDistanceAtMost(word, name, limit);
        if (d <= allowed && (!best || d < bestDistance)) {
            best = std::string(name);
            bestDistance = d;
        }
    }
    return best;
}

template <typename Owner>
std::vector<std::string_view> keysOf(const std::vector<KeyItem<Owner>>& table,
                                     std::string_view section) {
    std::vector<std::string_view> keys;
    for (const auto& it : table)
        if (it.section == section)
            keys.push_back(it.key);
    return keys;
}

// Where a key that is not in `section` belongs, when that is clear: the
// fixed section or kind of section that has exactly this name (case
// ignored), e.g. "StallTarget is a key of [Reclaim]".
std::string homeOf(std::string_view key, std::string_view section) {
    std::string name;
    std::string sections; // "[Manager]", "[Manager] and [Reclaim]"
    for (const auto& it : globalTable()) {
        if (it.section != section && equalsIgnoreCase(it.key, key)) {
            name = it.key;
            sections += (sections.empty() ? "[" : " and [") + it.section + "]";
        }
    }
    if (!sections.empty())
        return "'" + name + "' is a key of " + sections;
    for (const auto& it : classTable())
        if (equalsIgnoreCase(it.key, key))
            return "'" + it.key + "' is a key of [Class.<name>] sections";
    for (const auto& it : ruleTable())
        if (equalsIgnoreCase(it.key, key))
            return "'" + it.key + "' is a key of [Rule.<name>] sections";
    return {};
}

// " (did you mean 'DryRun'?)" for a misspelt key of `section` (whose keys
// are `table`'s with that section), " ('StallTarget' is a key of
// [Reclaim])" for a key of another section, or "".
template <typename Owner>
std::string suggestKey(const std::vector<KeyItem<Owner>>& table, std::string_view section,
                       std::string_view key) {
    if (auto near = closest(key, keysOf(table, section)))
        return " (did you mean '" + *near + "'?)";
    if (auto home = homeOf(key, section); !home.empty())
        return " (" + home + ")";
    return {};
}

// " (did you mean '[Manager]'?)" for a misspelt fixed section or a
// misspelt "Class." / "Rule." prefix, else "".
std::string suggestSection(std::string_view section) {
    const std::string_view trimmed = parse::text::trim(section); // "[ Manager ]"
    if (auto near = closest(trimmed, kFixedSections))
        return " (did you mean '[" + *near + "]'?)";
    if (const auto dot = trimmed.find('.'); dot != std::string_view::npos) {
        const std::string_view prefixes[] = {kClassPrefix, kRulePrefix};
        if (auto near = closest(trimmed.substr(0, dot + 1), prefixes))
            return " (did you mean '[" + *near + std::string(trimmed.substr(dot + 1)) + "]'?)";
    }
    return {};
}

bool isFixedSection(std::string_view s) {
    return std::find(kFixedSections.begin(), kFixedSections.end(), s) != kFixedSections.end();
}

struct PairHash {
    std::size_t operator()(const std::pair<std::string, std::string>& p) const noexcept {
        const std::size_t a = std::hash<std::string>{}(p.first);
        return a ^
               (std::hash<std::string>{}(p.second) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
    }
};

struct Origin {
    KeySource where;
    std::string value;
    std::size_t index = 0; // position in the entry list
};

class Validator {
public:
    Validator(const std::vector<ConfigEntry>& entries, const ValidateOptions& options)
        : entries_(entries), options_(options) {
        for (const auto& c : out_.config.classes)
            classSource_[c.name] = std::nullopt;
    }

    Validated run() {
        for (std::size_t i = 0; i < entries_.size(); ++i)
            apply(i, entries_[i]);
        checkClasses();
        checkRules();
        checkPressure();
        for (const auto& [name, o] : origins_)
            out_.sources[name] = o.where;
        return std::move(out_);
    }

private:
    void problem(Severity severity, const KeySource& where, std::string section, std::string key,
                 std::string value, std::string reason) {
        ConfigProblem p;
        p.severity = severity;
        p.file = where.file;
        p.line = where.line;
        p.section = std::move(section);
        p.key = std::move(key);
        p.value = std::move(value);
        p.reason = std::move(reason);
        out_.problems.push_back(std::move(p));
    }

    void entryProblem(Severity severity, const ConfigEntry& e, std::string reason) {
        problem(severity, {e.file, e.line}, e.section, e.key, e.value, std::move(reason));
    }

    // Reported once per file and section.
    void sectionProblem(Severity severity, const ConfigEntry& e, std::string reason) {
        if (!reportedSections_.insert({e.file, e.section}).second)
            return;
        problem(severity, {e.file, e.sectionLine}, e.section, "", "", std::move(reason));
    }

    // What start-up skips: a Warning saying "ignoring"; under --check-config
    // an Error saying what memqosd would do.
    Severity skipped() const { return options_.strict ? Severity::Error : Severity::Warning; }
    const char* ignoring() const { return options_.strict ? "would be ignored" : "ignoring"; }
    std::string sectionIgnored() const {
        return options_.strict ? "the section would be ignored" : "ignoring the section";
    }

    void unknownKey(const ConfigEntry& e, const std::string& suggestion) {
        entryProblem(skipped(), e, std::string("unknown key, ") + ignoring() + suggestion);
    }

    void badValue(const ConfigEntry& e, const Error& err) {
        std::string reason = err.what;
        // inih strips only ';' comments after a value, and only after a blank.
        if (e.value.find(" #") != std::string::npos || e.value.find("\t#") != std::string::npos)
            reason += " (note: '#' starts a comment only at the beginning of a line; use ' ;' "
                      "after a value)";
        entryProblem(Severity::Error, e, std::move(reason));
    }

    void remember(std::size_t index, const ConfigEntry& e) {
        origins_[{e.section, e.key}] = Origin{{e.file, e.line}, e.value, index};
    }

    template <typename Owner>
    void applyItem(std::size_t index, const ConfigEntry& e, const KeyItem<Owner>& it,
                   Owner& owner) {
        attempted_.insert({e.section, e.key});
        Status s = it.apply(owner, e.value);
        if (!s)
            badValue(e, s.error());
        else
            remember(index, e);
    }

    void apply(std::size_t index, const ConfigEntry& e) {
        if (e.section.empty()) {
            const std::string home = homeOf(e.key, "");
            entryProblem(skipped(), e,
                         std::string("key outside a section, ") + ignoring() +
                             (home.empty() ? "" : " (" + home + ")"));
            return;
        }
        if (isFixedSection(e.section)) {
            const auto* it = findKey(globalTable(), e.section, e.key);
            if (it == nullptr)
                return unknownKey(e, suggestKey(globalTable(), e.section, e.key));
            applyItem(index, e, *it, out_.config);
            return;
        }
        std::string_view section = e.section;
        if (section.substr(0, kClassPrefix.size()) == kClassPrefix) {
            std::string name(section.substr(kClassPrefix.size()));
            if (!isValidClassName(name))
                return sectionProblem(
                    Severity::Error, e,
                    "invalid class name (expected a lowercase letter, then lowercase letters, "
                    "digits or '_', at most 32; no '-': systemd reads it as slice hierarchy), " +
                        sectionIgnored());
            const auto* it = findKey(classTable(), "", e.key);
            core::ClassPolicy& cls = classFor(name, e);
            if (it == nullptr)
                return unknownKey(e, suggestKey(classTable(), "", e.key));
            applyItem(index, e, *it, cls);
            return;
        }
        if (section.substr(0, kRulePrefix.size()) == kRulePrefix) {
            std::string name(section.substr(kRulePrefix.size()));
            if (!isValidRuleName(name))
                return sectionProblem(
                    Severity::Error, e,
                    "invalid rule name (expected letters, digits, '_' or '-', at most 32), " +
                        sectionIgnored());
            const auto* it = findKey(ruleTable(), "", e.key);
            WorkloadRule& rule = ruleFor(name, e);
            if (it == nullptr)
                return unknownKey(e, suggestKey(ruleTable(), "", e.key));
            applyItem(index, e, *it, rule);
            return;
        }
        sectionProblem(skipped(), e,
                       std::string("unknown section, ") + ignoring() + suggestSection(e.section));
    }

    core::ClassPolicy& classFor(const std::string& name, const ConfigEntry& e) {
        for (auto& c : out_.config.classes)
            if (c.name == name)
                return c;
        // A new class: the defaults of the least protected tier; Rank= is
        // required (checked at the end).
        core::ClassPolicy c;
        c.name = name;
        c.rank = 0;
        c.protection = core::Protection::None;
        c.throttlingFactor = 9000;
        c.killable = true;
        c.swap = true;
        c.oomScoreAdj = 1000;
        c.reclaim = false;
        c.memoryGuard = false;
        out_.config.classes.push_back(std::move(c));
        classSource_[name] = KeySource{e.file, e.sectionLine};
        return out_.config.classes.back();
    }

    WorkloadRule& ruleFor(const std::string& name, const ConfigEntry& e) {
        for (auto& r : out_.config.rules)
            if (r.name == name)
                return r;
        WorkloadRule r;
        r.name = name;
        out_.config.rules.push_back(std::move(r));
        ruleSource_[name] = KeySource{e.file, e.sectionLine};
        return out_.config.rules.back();
    }

    bool attempted(const std::string& section, const std::string& key) const {
        return attempted_.count({section, key}) != 0;
    }

    const Origin* origin(const std::string& section, const std::string& key) const {
        auto it = origins_.find({section, key});
        return it == origins_.end() ? nullptr : &it->second;
    }

    // Problem about a key whose value may come from a file or the defaults.
    void keyProblem(Severity severity, const std::string& section, const std::string& key,
                    const std::string& renderedValue, std::string reason) {
        const Origin* o = origin(section, key);
        problem(severity, o ? o->where : KeySource{}, section, key, o ? o->value : renderedValue,
                std::move(reason));
    }

    // Of two keys in conflict, the one set last (in file order) is blamed.
    bool laterThan(const std::string& sa, const std::string& ka, const std::string& sb,
                   const std::string& kb) const {
        const Origin* a = origin(sa, ka);
        const Origin* b = origin(sb, kb);
        if (a == nullptr)
            return false;
        if (b == nullptr)
            return true;
        return a->index > b->index;
    }

    void checkClasses() {
        auto& classes = out_.config.classes;
        for (const auto& c : classes) {
            auto src = classSource_.find(c.name);
            bool isNew = src != classSource_.end() && src->second.has_value();
            if (isNew && !attempted(std::string(kClassPrefix) + c.name, "Rank"))
                problem(Severity::Error, *src->second, std::string(kClassPrefix) + c.name, "", "",
                        "a new class needs Rank= (a number no other class uses; higher is more "
                        "important)");
        }
        // A new class without a good Rank= has no rank to compare.
        auto ranked = [&](const core::ClassPolicy& c) {
            auto src = classSource_.find(c.name);
            bool isNew = src != classSource_.end() && src->second.has_value();
            return !isNew || origin(std::string(kClassPrefix) + c.name, "Rank") != nullptr;
        };
        for (std::size_t i = 0; i < classes.size(); ++i) {
            for (std::size_t j = i + 1; j < classes.size(); ++j) {
                if (classes[i].rank != classes[j].rank || !ranked(classes[i]) ||
                    !ranked(classes[j]))
                    continue;
                std::string si = std::string(kClassPrefix) + classes[i].name;
                std::string sj = std::string(kClassPrefix) + classes[j].name;
                bool blameI = laterThan(si, "Rank", sj, "Rank");
                const auto& blamed = blameI ? classes[i] : classes[j];
                const auto& other = blameI ? classes[j] : classes[i];
                keyProblem(Severity::Error, blameI ? si : sj, "Rank", std::to_string(blamed.rank),
                           "same rank as class " + other.name + " (each class needs its own rank)");
            }
        }
        for (const auto& c : classes) {
            if (c.protection == core::Protection::Min && c.killable)
                keyProblem(
                    Severity::Warning, std::string(kClassPrefix) + c.name, "Killable", "yes",
                    "class has Protection=min but is killable: its members' requests are protected "
                    "from reclaim, yet they may be killed");
        }
    }

    // "no such class (classes: system, dedicated, shared, reclaimed; did
    // you mean 'shared'?)"
    std::string noSuchClass(std::string_view name) const {
        std::vector<std::string> names;
        for (const auto& c : out_.config.classes)
            names.push_back(c.name);
        const auto near = closest(name, names);
        return "no such class (classes: " + classNames(out_.config.classes) +
               (near ? "; did you mean '" + *near + "'?)" : ")");
    }

    void checkRules() {
        const auto& classes = out_.config.classes;
        if (!out_.config.vm.defaultClass.empty() &&
            core::findClass(classes, out_.config.vm.defaultClass) == nullptr) {
            keyProblem(Severity::Error, "VM", "DefaultClass", out_.config.vm.defaultClass,
                       noSuchClass(out_.config.vm.defaultClass));
        }
        for (const auto& r : out_.config.rules) {
            std::string section = std::string(kRulePrefix) + r.name;
            const KeySource& where = ruleSource_[r.name];
            if (!attempted(section, "Match"))
                problem(Severity::Error, where, section, "", "",
                        "missing Match= (e.g. Match=nginx*.service)");
            if (!attempted(section, "Class")) {
                problem(Severity::Error, where, section, "", "",
                        "missing Class= (e.g. Class=shared)");
            } else if (!r.className.empty() && core::findClass(classes, r.className) == nullptr) {
                keyProblem(Severity::Error, section, "Class", r.className,
                           noSuchClass(r.className));
            }
            if (r.limit && r.request > *r.limit)
                keyProblem(Severity::Error, section, "Request", formatSize(r.request),
                           "above Limit=" + formatLimit(r.limit) +
                               " (a request cannot exceed its limit)");
        }
    }

    void checkPressure() {
        const auto& levels = out_.config.pressure.levels;
        using Get = std::function<std::optional<double>(const core::LevelThresholds&)>;
        struct Metric {
            std::string suffix;
            Get get;
            bool increasing; // pressure rises with the level; MemAvailable falls
            std::string (*format)(double);
        };
        const std::vector<Metric> metrics{
            {"SomeAvg10", [](const auto& l) { return l.someAvg10; }, true,
             [](double v) { return formatPercent(v); }},
            {"FullAvg10", [](const auto& l) { return l.fullAvg10; }, true,
             [](double v) { return formatPercent(v); }},
            {"MemAvailable",
             [](const auto& l) {
                 return l.memAvailableBelow ? std::optional<double>(*l.memAvailableBelow)
                                            : std::nullopt;
             },
             false, [](double v) { return formatPermyriad(static_cast<Permyriad>(v)); }},
        };
        const std::string section = "Pressure";
        for (const auto& m : metrics) {
            std::optional<std::size_t> prev; // nearest lower level with the metric set
            for (std::size_t j = 0; j < levels.size(); ++j) {
                auto vj = m.get(levels[j]);
                if (!vj)
                    continue;
                if (prev) {
                    double vi = *m.get(levels[*prev]);
                    bool bad = m.increasing ? (*vj < vi) : (*vj > vi);
                    if (bad) {
                        std::string ki = "Level" + std::to_string(*prev + 1) + m.suffix;
                        std::string kj = "Level" + std::to_string(j + 1) + m.suffix;
                        std::string rule = m.increasing ? "a higher level's pressure threshold "
                                                          "must be at least the lower level's"
                                                        : "a higher level's MemAvailable threshold "
                                                          "must be at most the lower level's";
                        // Blame the key set last; name the other one.
                        const bool blameLower = laterThan(section, ki, section, kj);
                        std::string reason = (blameLower == m.increasing) ? "above " : "below ";
                        reason += blameLower ? kj : ki;
                        reason += '=';
                        reason += m.format(blameLower ? *vj : vi);
                        reason += " (";
                        reason += rule;
                        reason += ')';
                        keyProblem(Severity::Error, section, blameLower ? ki : kj,
                                   m.format(blameLower ? vi : *vj), std::move(reason));
                    }
                }
                prev = j;
            }
        }
    }

    const std::vector<ConfigEntry>& entries_;
    ValidateOptions options_;
    Validated out_;
    // Looked up for every entry: hashed (sources_, which callers see, is
    // the ordered map).
    std::unordered_map<std::pair<std::string, std::string>, Origin, PairHash> origins_;
    std::unordered_set<std::pair<std::string, std::string>, PairHash> reportedSections_;
    // Class name -> file that created it (nullopt: embedded default).
    std::map<std::string, std::optional<KeySource>> classSource_;
    // Keys that were given, with a good value or not (so that a bad Rank=
    // is not also reported as a missing one).
    std::unordered_set<std::pair<std::string, std::string>, PairHash> attempted_;
    std::map<std::string, KeySource> ruleSource_;
};

bool equalLevels(const core::LevelThresholds& a, const core::LevelThresholds& b) {
    return a.someAvg10 == b.someAvg10 && a.fullAvg10 == b.fullAvg10 &&
           a.memAvailableBelow == b.memAvailableBelow && a.duration == b.duration;
}

bool equalPressure(const core::PressureConfig& a, const core::PressureConfig& b) {
    for (std::size_t i = 0; i < a.levels.size(); ++i)
        if (!equalLevels(a.levels[i], b.levels[i]))
            return false;
    return a.watermarks == b.watermarks && a.swapUsedKill == b.swapUsedKill &&
           a.hysteresis == b.hysteresis && a.recoveryDuration == b.recoveryDuration &&
           a.killCooldown == b.killCooldown && a.guardHeadroom == b.guardHeadroom &&
           a.classStallFull == b.classStallFull && a.classStallDuration == b.classStallDuration;
}

bool equalClass(const core::ClassPolicy& a, const core::ClassPolicy& b) {
    return a.name == b.name && a.rank == b.rank && a.protection == b.protection &&
           a.throttlingFactor == b.throttlingFactor && a.killable == b.killable &&
           a.swap == b.swap && a.oomScoreAdj == b.oomScoreAdj && a.reclaim == b.reclaim &&
           a.memoryGuard == b.memoryGuard;
}

} // namespace

Bytes SizeSpec::resolve(Bytes memTotal) const {
    if (!percent)
        return bytes;
    Permyriad p = std::min(*percent, kPermyriadOne);
    return memTotal / kPermyriadOne * p + memTotal % kPermyriadOne * p / kPermyriadOne;
}

bool operator==(const Config& a, const Config& b) {
    return a.manager == b.manager && a.overcommit == b.overcommit &&
           equalPressure(a.pressure, b.pressure) && a.reclaim == b.reclaim &&
           a.ganeti == b.ganeti && a.vm == b.vm &&
           std::equal(a.classes.begin(), a.classes.end(), b.classes.begin(), b.classes.end(),
                      equalClass) &&
           a.rules == b.rules;
}

std::string_view toString(Severity severity) {
    return severity == Severity::Error ? "error" : "warning";
}

namespace {

// "FILE:LINE: ", "FILE: " or "".
std::string place(const ConfigProblem& p) {
    if (p.file.empty())
        return {};
    return p.file + (p.line > 0 ? ":" + std::to_string(p.line) : std::string()) + ": ";
}

// "[Section] Key=value: reason", "[Section]: reason", "Key=value: reason".
std::string body(const ConfigProblem& p) {
    std::string out;
    if (!p.section.empty()) {
        out += "[" + p.section + "]";
        if (!p.key.empty())
            out += " " + p.key + "=" + p.value;
        out += ": ";
    } else if (!p.key.empty()) {
        out += p.key + "=" + p.value + ": ";
    }
    return out + p.reason;
}

} // namespace

std::string ConfigProblem::format() const {
    return place(*this) + body(*this);
}

std::string ConfigProblem::diagnostic() const {
    return place(*this) + std::string(toString(severity)) + ": " + body(*this);
}

bool Validated::hasErrors() const {
    return std::any_of(problems.begin(), problems.end(),
                       [](const ConfigProblem& p) { return p.severity == Severity::Error; });
}

Validated validateConfig(const std::vector<ConfigEntry>& entries, const ValidateOptions& options) {
    return Validator(entries, options).run();
}

std::string renderConfig(const Config& config) {
    return renderConfig(config, {});
}

std::string renderConfig(const Config& config, const KeyNote& note) {
    std::string out;
    auto line = [&](const std::string& section, const std::string& key, const std::string& value) {
        if (note) {
            if (std::string n = note(section, key); !n.empty())
                out += "# " + n + "\n";
        }
        out += key + "=" + value + "\n";
    };
    std::string_view current;
    for (const auto& it : globalTable()) {
        if (it.section != current) {
            if (!out.empty())
                out += '\n';
            out += "[" + it.section + "]\n";
            current = it.section;
        }
        line(it.section, it.key, it.render(config));
    }
    for (const auto& c : config.classes) {
        const std::string section = std::string(kClassPrefix) + c.name;
        out += "\n[" + section + "]\n";
        for (const auto& it : classTable())
            line(section, it.key, it.render(c));
    }
    for (const auto& r : config.rules) {
        const std::string section = std::string(kRulePrefix) + r.name;
        out += "\n[" + section + "]\n";
        for (const auto& it : ruleTable())
            line(section, it.key, it.render(r));
    }
    return out;
}

std::vector<KeyInfo> knownKeys() {
    std::vector<KeyInfo> keys;
    for (const auto& it : globalTable())
        keys.push_back({it.section, it.key});
    for (const auto& it : classTable())
        keys.push_back({std::string(kClassPrefix) + "<name>", it.key});
    for (const auto& it : ruleTable())
        keys.push_back({std::string(kRulePrefix) + "<name>", it.key});
    return keys;
}

} // namespace memqos::config

// SPDX-License-Identifier: Apache-2.0
// validateConfig / renderConfig: every key good and bad, unknown keys and
// sections, override order, classes and rules, cross-field checks, and the
// exact text of problems.
#include "memqos/config/config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <set>

#include "ini_text.hpp"

namespace memqos::config {
namespace {

using namespace std::chrono_literals;
using testing::renderedValue;
using testing::splitIni;

ConfigEntry entry(std::string section, std::string key, std::string value,
                  std::string file = "test.conf") {
    return ConfigEntry{std::move(file), std::move(section), std::move(key), std::move(value)};
}

std::string allProblems(const Validated& v) {
    std::string s;
    for (const auto& p : v.problems)
        s += std::string(p.severity == Severity::Error ? "error: " : "warning: ") + p.format() +
             "\n";
    return s;
}

std::vector<std::string> formatted(const Validated& v, Severity severity) {
    std::vector<std::string> out;
    for (const auto& p : v.problems)
        if (p.severity == severity)
            out.push_back(p.format());
    return out;
}

TEST(Validate, EmptyInputGivesTheEmbeddedDefaults) {
    Validated v = validateConfig({});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    EXPECT_FALSE(v.hasErrors());
    EXPECT_TRUE(v.config == Config{});
    ASSERT_EQ(v.config.classes.size(), 4u);
    EXPECT_EQ(v.config.classes[0].name, "system");
    EXPECT_EQ(v.config.classes[3].name, "reclaimed");
}

// --- every key, good -------------------------------------------------------

struct GoodKey {
    std::string section;
    std::string key;
    std::string value;
    std::string rendered; // what renderConfig prints afterwards
};
std::ostream& operator<<(std::ostream& os, const GoodKey& k) {
    return os << "[" << k.section << "] " << k.key << "=" << k.value;
}

class GoodKeyTest : public ::testing::TestWithParam<GoodKey> {};

TEST_P(GoodKeyTest, IsAppliedAndRendered) {
    const auto& k = GetParam();
    Validated v = validateConfig({entry(k.section, k.key, k.value)});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    EXPECT_EQ(renderedValue(v.config, k.section, k.key), k.rendered);
}

INSTANTIATE_TEST_SUITE_P(
    Keys, GoodKeyTest,
    ::testing::Values(
        GoodKey{"Manager", "Interval", "500ms", "500ms"}, GoodKey{"Manager", "Interval", "2", "2s"},
        GoodKey{"Manager", "DryRun", "yes", "yes"}, GoodKey{"Manager", "DryRun", "off", "no"},
        GoodKey{"Manager", "CgroupRoot", "/tmp/cg", "/tmp/cg"},
        GoodKey{"Manager", "ProcRoot", "/tmp/p", "/tmp/p"},
        GoodKey{"Manager", "StateDirectory", "/srv/memqos", "/srv/memqos"},
        GoodKey{"Manager", "MetricsFile", "/var/lib/prometheus/node-exporter/memqos.prom",
                "/var/lib/prometheus/node-exporter/memqos.prom"},
        GoodKey{"Manager", "MetricsFile", "", ""},
        GoodKey{"Manager", "MetricsInterval", "30s", "30s"},
        GoodKey{"Manager", "MetricsInterval", "1", "1s"},
        GoodKey{"Overcommit", "MemoryRatio", "1.5", "1.5"},
        GoodKey{"Overcommit", "MemoryRatio", "2", "2.0"},
        GoodKey{"Overcommit", "NodeReserved", "2G", "2G"},
        GoodKey{"Overcommit", "NodeReserved", "5%", "5%"},
        GoodKey{"Overcommit", "NodeReserved", "1536M", "1536M"},
        GoodKey{"Overcommit", "FailoverReserve", "10%", "10%"},
        GoodKey{"Overcommit", "FailoverReserve", "4G", "4G"},
        GoodKey{"Overcommit", "SwapCheck", "refuse", "refuse"},
        GoodKey{"Overcommit", "SwapCheck", "off", "off"},
        GoodKey{"Overcommit", "VMOverhead", "256M", "256M"},
        GoodKey{"Pressure", "Level1SomeAvg10", "5%", "5%"},
        GoodKey{"Pressure", "Level1SomeAvg10", "off", "off"},
        GoodKey{"Pressure", "Level1FullAvg10", "1%", "1%"},
        GoodKey{"Pressure", "Level1MemAvailable", "15%", "15%"},
        GoodKey{"Pressure", "Level1MemAvailable", "off", "off"},
        GoodKey{"Pressure", "Level1Duration", "1s", "1s"},
        GoodKey{"Pressure", "Level2SomeAvg10", "30%", "30%"},
        GoodKey{"Pressure", "Level2FullAvg10", "off", "off"},
        GoodKey{"Pressure", "Level2MemAvailable", "4%", "4%"},
        GoodKey{"Pressure", "Level2Duration", "0", "0"},
        GoodKey{"Pressure", "Level3SomeAvg10", "50%", "50%"},
        GoodKey{"Pressure", "Level3FullAvg10", "25.5%", "25.5%"},
        GoodKey{"Pressure", "Level3MemAvailable", "1%", "1%"},
        GoodKey{"Pressure", "Level3Duration", "30s", "30s"},
        GoodKey{"Pressure", "Watermarks", "no", "no"},
        GoodKey{"Pressure", "SwapUsedKill", "off", "off"},
        GoodKey{"Pressure", "SwapUsedKill", "75%", "75%"},
        GoodKey{"Pressure", "Hysteresis", "0%", "0%"},
        GoodKey{"Pressure", "GuardHeadroom", "0%", "0%"},
        GoodKey{"Pressure", "GuardHeadroom", "12.5%", "12.5%"},
        GoodKey{"Pressure", "Hysteresis", "99.99%", "99.99%"},
        GoodKey{"Pressure", "RecoveryDuration", "1min", "1min"},
        GoodKey{"Pressure", "KillCooldown", "0", "0"}, GoodKey{"Reclaim", "Enabled", "no", "no"},
        GoodKey{"Reclaim", "Interval", "30s", "30s"},
        GoodKey{"Reclaim", "StallTarget", "0.5%", "0.5%"},
        GoodKey{"Reclaim", "MaxStep", "0.5%", "0.5%"}, GoodKey{"Class.shared", "Rank", "10", "10"},
        GoodKey{"Class.dedicated", "Protection", "low", "low"},
        GoodKey{"Class.shared", "Protection", "none", "none"},
        GoodKey{"Class.shared", "ThrottlingFactor", "80%", "0.8"},
        GoodKey{"Class.shared", "ThrottlingFactor", "off", "off"},
        GoodKey{"Class.shared", "Killable", "no", "no"},
        GoodKey{"Class.shared", "Swap", "no", "no"},
        GoodKey{"Class.shared", "OOMScoreAdjust", "500", "500"},
        GoodKey{"Class.system", "OOMScoreAdjust", "burstable", "burstable"},
        GoodKey{"Class.shared", "OOMScoreAdjust", "keep", "keep"},
        GoodKey{"Class.shared", "OOMScoreAdjust", "Keep", "keep"},
        GoodKey{"Class.shared", "Reclaim", "no", "no"},
        GoodKey{"Class.shared", "MemoryGuard", "yes", "yes"}));

// --- every key, bad: error, default kept ------------------------------------

struct BadKey {
    std::string section;
    std::string key;
    std::string value;
    std::string reason; // substring
};
std::ostream& operator<<(std::ostream& os, const BadKey& k) {
    return os << "[" << k.section << "] " << k.key << "=" << k.value;
}

class BadKeyTest : public ::testing::TestWithParam<BadKey> {};

TEST_P(BadKeyTest, IsAnErrorAndKeepsTheDefault) {
    const auto& k = GetParam();
    Validated v = validateConfig({entry(k.section, k.key, k.value)});
    ASSERT_EQ(v.problems.size(), 1u) << allProblems(v);
    const auto& p = v.problems[0];
    EXPECT_EQ(p.severity, Severity::Error);
    EXPECT_EQ(p.file, "test.conf");
    EXPECT_EQ(p.section, k.section);
    EXPECT_EQ(p.key, k.key);
    EXPECT_EQ(p.value, k.value);
    EXPECT_NE(p.reason.find(k.reason), std::string::npos) << p.reason;
    EXPECT_TRUE(v.config == Config{}) << renderConfig(v.config);
}

INSTANTIATE_TEST_SUITE_P(
    Keys, BadKeyTest,
    ::testing::Values(BadKey{"Manager", "Interval", "0", "must be greater than 0"},
                      BadKey{"Manager", "Interval", "fast", "not a duration"},
                      BadKey{"Manager", "DryRun", "maybe", "not a boolean"},
                      BadKey{"Manager", "CgroupRoot", "sys/fs/cgroup", "not an absolute path"},
                      BadKey{"Manager", "ProcRoot", "", "not an absolute path"},
                      BadKey{"Manager", "StateDirectory", "/var/../lib", "component"},
                      BadKey{"Manager", "MetricsFile", "memqos.prom", "not an absolute path"},
                      BadKey{"Manager", "MetricsFile", "/var/lib/", "names a directory"},
                      BadKey{"Manager", "MetricsInterval", "0", "must be greater than 0"},
                      BadKey{"Manager", "MetricsInterval", "often", "not a duration"},
                      BadKey{"Overcommit", "MemoryRatio", "abc",
                             "not a number (expected a ratio ≥ 1.0, e.g. 1.5)"},
                      BadKey{"Overcommit", "MemoryRatio", "0.5", "below 1.0"},
                      BadKey{"Overcommit", "NodeReserved", "lots", "not a size"},
                      BadKey{"Overcommit", "NodeReserved", "120%", "above 100%"},
                      BadKey{"Overcommit", "FailoverReserve", "1QB", "unknown unit"},
                      BadKey{"Overcommit", "SwapCheck", "yes", "expected warn, refuse or off"},
                      BadKey{"Overcommit", "VMOverhead", "5%", "not a size"},
                      BadKey{"Pressure", "Level1SomeAvg10", "10", "missing '%'"},
                      BadKey{"Pressure", "Level1FullAvg10", "200%", "above 100%"},
                      BadKey{"Pressure", "Level1MemAvailable", "0.001%", "too many decimals"},
                      BadKey{"Pressure", "Level1Duration", "soon", "not a duration"},
                      BadKey{"Pressure", "Level2SomeAvg10", "x", "not a percentage"},
                      BadKey{"Pressure", "Level2FullAvg10", "-5%", "not a percentage"},
                      BadKey{"Pressure", "Level2MemAvailable", "5", "missing '%'"},
                      BadKey{"Pressure", "Level2Duration", "5y", "unknown unit"},
                      BadKey{"Pressure", "Level3SomeAvg10", "on", "not a percentage"},
                      BadKey{"Pressure", "Level3FullAvg10", "20", "missing '%'"},
                      BadKey{"Pressure", "Level3MemAvailable", "2%%", "not a percentage"},
                      BadKey{"Pressure", "Level3Duration", "366d", "too long"},
                      BadKey{"Pressure", "Watermarks", "sometimes", "not a boolean"},
                      BadKey{"Pressure", "SwapUsedKill", "90", "missing '%'"},
                      BadKey{"Pressure", "Hysteresis", "100%", "must be below 100%"},
                      BadKey{"Pressure", "GuardHeadroom", "5", "missing '%'"},
                      BadKey{"Pressure", "RecoveryDuration", "-1s", "not a duration"},
                      BadKey{"Pressure", "KillCooldown", "1e3", "unknown unit"},
                      BadKey{"Reclaim", "Enabled", "2", "not a boolean"},
                      BadKey{"Reclaim", "Interval", "0s", "greater than 0"},
                      BadKey{"Reclaim", "StallTarget", "0.1", "missing '%'"},
                      BadKey{"Reclaim", "MaxStep", "0%", "greater than 0%"},
                      BadKey{"Class.shared", "Rank", "-1", "out of range"},
                      BadKey{"Class.shared", "Rank", "4294967296", "out of range"},
                      BadKey{"Class.shared", "Protection", "high", "expected min, low or none"},
                      BadKey{"Class.shared", "ThrottlingFactor", "1.5", "above 1"},
                      BadKey{"Class.shared", "Killable", "perhaps", "not a boolean"},
                      BadKey{"Class.shared", "Swap", "", "not a boolean"},
                      BadKey{"Class.shared", "OOMScoreAdjust", "-1001", "out of range"},
                      BadKey{"Class.shared", "Reclaim", "x", "not a boolean"},
                      BadKey{"Class.shared", "MemoryGuard", "x", "not a boolean"}));

// --- problem text ----------------------------------------------------------

TEST(Format, IsExactlyFileSectionKeyValueReason) {
    Validated v =
        validateConfig({entry("Overcommit", "MemoryRatio", "abc", "/etc/memqos/memqosd.conf")});
    ASSERT_EQ(v.problems.size(), 1u);
    EXPECT_EQ(v.problems[0].format(), "/etc/memqos/memqosd.conf: [Overcommit] MemoryRatio=abc: not "
                                      "a number (expected a ratio ≥ 1.0, e.g. 1.5)");
}

TEST(Format, LeavesOutEmptyParts) {
    ConfigProblem p;
    p.reason = "why";
    EXPECT_EQ(p.format(), "why");
    p.file = "f.conf";
    EXPECT_EQ(p.format(), "f.conf: why");
    p.line = 7;
    EXPECT_EQ(p.format(), "f.conf:7: why");
    p.line = 0;
    p.section = "Manager";
    EXPECT_EQ(p.format(), "f.conf: [Manager]: why");
    p.key = "DryRun";
    p.value = "x";
    EXPECT_EQ(p.format(), "f.conf: [Manager] DryRun=x: why");
    p.file.clear();
    EXPECT_EQ(p.format(), "[Manager] DryRun=x: why");
    p.section.clear();
    EXPECT_EQ(p.format(), "DryRun=x: why");
}

TEST(Format, HintsAtHashComments) {
    Validated v = validateConfig({entry("Manager", "DryRun", "yes # for now")});
    ASSERT_EQ(v.problems.size(), 1u);
    EXPECT_EQ(v.problems[0].format(),
              "test.conf: [Manager] DryRun=yes # for now: not a boolean (expected yes or no) "
              "(note: '#' starts a "
              "comment only at the beginning of a line; use ' ;' after a value)");
}

// --- unknown keys and sections ----------------------------------------------

TEST(Unknown, KeyIsAWarningAndIgnored) {
    Validated v =
        validateConfig({entry("Manager", "Frobnicate", "1"), entry("Manager", "DryRun", "yes")});
    EXPECT_FALSE(v.hasErrors());
    EXPECT_EQ(formatted(v, Severity::Warning),
              std::vector<std::string>{"test.conf: [Manager] Frobnicate=1: unknown key, ignoring"});
    EXPECT_TRUE(v.config.manager.dryRun);
}

TEST(Unknown, KeyInAnotherCaseIsNamed) {
    Validated v = validateConfig({entry("Manager", "dryrun", "yes")});
    EXPECT_EQ(formatted(v, Severity::Warning),
              std::vector<std::string>{
                  "test.conf: [Manager] dryrun=yes: unknown key, ignoring (did you mean "
                  "'DryRun'?)"});
    EXPECT_FALSE(v.config.manager.dryRun);
}

TEST(Unknown, KeyOfAnotherSectionIsUnknownAndItsSectionNamed) {
    Validated v =
        validateConfig({entry("Reclaim", "DryRun", "yes"), entry("Class.shared", "Match", "x"),
                        entry("Rule.web", "Rank", "1"), entry("Pressure", "interval", "1s")});
    auto w = formatted(v, Severity::Warning);
    ASSERT_EQ(w.size(), 4u) << allProblems(v);
    EXPECT_EQ(w[0], "test.conf: [Reclaim] DryRun=yes: unknown key, ignoring ('DryRun' is a key "
                    "of [Manager])");
    EXPECT_EQ(w[1], "test.conf: [Class.shared] Match=x: unknown key, ignoring ('Match' is a key "
                    "of [Rule.<name>] sections)");
    EXPECT_EQ(w[2], "test.conf: [Rule.web] Rank=1: unknown key, ignoring ('Rank' is a key of "
                    "[Class.<name>] sections)");
    EXPECT_EQ(w[3], "test.conf: [Pressure] interval=1s: unknown key, ignoring ('Interval' is a "
                    "key of [Manager] and [Reclaim])");
}

// Misspelt names: the closest known one by edit distance, when it is close
// enough to be a typo of it (1 edit for names up to 4 letters, 2 up to 8, 3
// beyond).
TEST(Unknown, MisspeltKeyGetsTheClosestName) {
    struct Case {
        std::string section;
        std::string key;
        std::string suggestion; // "" = none
    };
    for (const auto& c : std::vector<Case>{
             {"Reclaim", "StalTarget", "StallTarget"},     // a letter missing
             {"Reclaim", "StallTraget", "StallTarget"},    // two letters swapped
             {"Manager", "Intervall", "Interval"},         // one too many
             {"Overcommit", "MemRatio", "MemoryRatio"},    // 3 edits of 11 letters
             {"Overcommit", "MemoryRatoi", "MemoryRatio"}, // two letters swapped
             {"Class.shared", "Rnak", "Rank"},
             {"Class.shared", "Rnk", "Rank"},
             {"Rule.web", "Limits", "Limit"},
             {"Manager", "Frobnicate", ""},
             {"Class.shared", "Xy", ""},
             {"Class.shared", "Swop", "Swap"},
             {"Class.shared", "Sw", ""}, // 2 edits of a 4-letter name
         }) {
        Validated v = validateConfig({entry(c.section, c.key, "1")});
        // (a rule without Match= and Class= has problems of its own)
        auto p = std::find_if(v.problems.begin(), v.problems.end(),
                              [&](const ConfigProblem& q) { return q.key == c.key; });
        ASSERT_NE(p, v.problems.end()) << allProblems(v);
        const std::string& reason = p->reason;
        if (c.suggestion.empty()) {
            EXPECT_EQ(reason.find("did you mean"), std::string::npos) << reason;
        } else {
            EXPECT_EQ(reason, "unknown key, ignoring (did you mean '" + c.suggestion + "'?)")
                << c.key;
        }
    }
}

TEST(Unknown, MisspeltSectionGetsTheClosestName) {
    Validated v =
        validateConfig({entry("Reclam", "Enabled", "no"), entry("Clas.shared", "Swap", "no"),
                        entry(" Manager ", "DryRun", "yes"), entry("OOM", "A", "1")});
    EXPECT_EQ(formatted(v, Severity::Warning),
              (std::vector<std::string>{
                  "test.conf: [Reclam]: unknown section, ignoring (did you mean '[Reclaim]'?)",
                  "test.conf: [Clas.shared]: unknown section, ignoring (did you mean "
                  "'[Class.shared]'?)",
                  "test.conf: [ Manager ]: unknown section, ignoring (did you mean '[Manager]'?)",
                  "test.conf: [OOM]: unknown section, ignoring"}));
}

TEST(Unknown, MisspeltClassNameGetsTheClosestClass) {
    Validated v = validateConfig(
        {entry("Rule.web", "Match", "web*.service"), entry("Rule.web", "Class", "sahred")});
    EXPECT_EQ(formatted(v, Severity::Error),
              std::vector<std::string>{
                  "test.conf: [Rule.web] Class=sahred: no such class (classes: system, dedicated, "
                  "shared, reclaimed; did you mean 'shared'?)"});
}

TEST(Unknown, SectionIsOneWarningPerFile) {
    Validated v = validateConfig(
        {entry("OOM", "A", "1"), entry("OOM", "B", "2"), entry("OOM", "C", "3", "b.conf")});
    EXPECT_FALSE(v.hasErrors());
    EXPECT_EQ(formatted(v, Severity::Warning),
              (std::vector<std::string>{"test.conf: [OOM]: unknown section, ignoring",
                                        "b.conf: [OOM]: unknown section, ignoring"}));
    EXPECT_TRUE(v.config == Config{});
}

TEST(Unknown, SectionInAnotherCaseIsNamed) {
    Validated v =
        validateConfig({entry("manager", "DryRun", "yes"), entry("class.shared", "Swap", "no")});
    EXPECT_EQ(formatted(v, Severity::Warning),
              (std::vector<std::string>{
                  "test.conf: [manager]: unknown section, ignoring (did you mean '[Manager]'?)",
                  "test.conf: [class.shared]: unknown section, ignoring (did you mean "
                  "'[Class.shared]'?)"}));
}

TEST(Unknown, KeyOutsideASection) {
    Validated v = validateConfig({entry("", "DryRun", "yes")});
    EXPECT_EQ(formatted(v, Severity::Warning),
              std::vector<std::string>{"test.conf: DryRun=yes: key outside a section, ignoring "
                                       "('DryRun' is a key of [Manager])"});
}

// --check-config: errors, and what the daemon would do, never "ignoring".
TEST(Unknown, StrictMakesThemErrorsThatSayWhatWouldHappen) {
    Validated v = validateConfig({entry("Manager", "Frobnicate", "1"), entry("OOM", "A", "1"),
                                  entry("", "B", "2"), entry("Manager", "dryrun", "yes"),
                                  entry("Class.Big", "Rank", "9")},
                                 ValidateOptions{.strict = true});
    EXPECT_EQ(formatted(v, Severity::Error),
              (std::vector<std::string>{
                  "test.conf: [Manager] Frobnicate=1: unknown key, would be ignored",
                  "test.conf: [OOM]: unknown section, would be ignored",
                  "test.conf: B=2: key outside a section, would be ignored",
                  "test.conf: [Manager] dryrun=yes: unknown key, would be ignored (did you mean "
                  "'DryRun'?)",
                  "test.conf: [Class.Big]: invalid class name (expected a lowercase letter, then "
                  "lowercase letters, digits or '_', at most 32; no '-': systemd reads it as "
                  "slice hierarchy), the section would be ignored"}));
    EXPECT_TRUE(formatted(v, Severity::Warning).empty());
    for (const auto& p : v.problems)
        EXPECT_EQ(p.reason.find("ignoring"), std::string::npos) << p.reason;
}

// Problems carry the line of their key, or of their section's header.
TEST(Lines, ProblemsNameTheLineOfTheKeyOrSection) {
    auto at = [](std::string section, std::string key, std::string value, int line,
                 int sectionLine) {
        ConfigEntry e = entry(std::move(section), std::move(key), std::move(value));
        e.line = line;
        e.sectionLine = sectionLine;
        return e;
    };
    Validated v = validateConfig({at("Overcommit", "MemoryRatio", "abc", 3, 1),
                                  at("OOM", "A", "1", 7, 6), at("Rule.web", "Match", "x*", 10, 9),
                                  at("Class.batch", "Rank", "7", 13, 12),
                                  at("Class.batch2", "Rank", "7", 16, 15)});
    auto e = formatted(v, Severity::Error);
    ASSERT_EQ(e.size(), 3u) << allProblems(v);
    EXPECT_EQ(e[0], "test.conf:3: [Overcommit] MemoryRatio=abc: not a number (expected a ratio "
                    "≥ 1.0, e.g. 1.5)");
    EXPECT_EQ(e[1], "test.conf:16: [Class.batch2] Rank=7: same rank as class batch (each class "
                    "needs its own rank)");
    EXPECT_EQ(e[2], "test.conf:9: [Rule.web]: missing Class= (e.g. Class=shared)");
    EXPECT_EQ(formatted(v, Severity::Warning),
              std::vector<std::string>{"test.conf:6: [OOM]: unknown section, ignoring"});
    ASSERT_TRUE(v.sources.count({"Class.batch", "Rank"}));
    EXPECT_EQ(v.sources.at({"Class.batch", "Rank"}).line, 13);
    EXPECT_EQ(v.sources.at({"Class.batch", "Rank"}).file, "test.conf");
    EXPECT_FALSE(v.sources.count({"Overcommit", "MemoryRatio"})); // a bad value sets nothing
}

TEST(Format, DiagnosticPutsTheSeverityAfterThePlace) {
    ConfigProblem p;
    p.severity = Severity::Error;
    p.file = "f.conf";
    p.line = 7;
    p.section = "Manager";
    p.key = "DryRun";
    p.value = "x";
    p.reason = "why";
    EXPECT_EQ(p.diagnostic(), "f.conf:7: error: [Manager] DryRun=x: why");
    p.severity = Severity::Warning;
    p.line = 0;
    EXPECT_EQ(p.diagnostic(), "f.conf: warning: [Manager] DryRun=x: why");
    p.file.clear();
    EXPECT_EQ(p.diagnostic(), "warning: [Manager] DryRun=x: why");
}

// --- order -------------------------------------------------------------------

TEST(Order, LaterEntriesWin) {
    Validated v = validateConfig({entry("Manager", "Interval", "5s", "memqosd.conf"),
                                  entry("Manager", "Interval", "3s", "memqosd.conf.d/10-a.conf"),
                                  entry("Manager", "Interval", "2s", "memqosd.conf.d/20-b.conf")});
    EXPECT_TRUE(v.problems.empty());
    EXPECT_EQ(v.config.manager.interval, 2s);
}

TEST(Order, ABadLaterValueKeepsTheEarlierGoodOne) {
    Validated v = validateConfig({entry("Manager", "Interval", "5s", "a.conf"),
                                  entry("Manager", "Interval", "x", "b.conf")});
    ASSERT_EQ(v.problems.size(), 1u);
    EXPECT_EQ(v.problems[0].file, "b.conf");
    EXPECT_EQ(v.config.manager.interval, 5s);
}

// --- classes -----------------------------------------------------------------

TEST(Classes, AnExistingClassIsModified) {
    Validated v = validateConfig({entry("Class.shared", "Killable", "no"),
                                  entry("Class.shared", "ThrottlingFactor", "0.8")});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    ASSERT_EQ(v.config.classes.size(), 4u);
    const auto* shared = core::findClass(v.config.classes, "shared");
    ASSERT_NE(shared, nullptr);
    EXPECT_FALSE(shared->killable);
    EXPECT_EQ(shared->throttlingFactor, std::optional<Permyriad>(8000));
    EXPECT_EQ(shared->rank, 1u);
}

TEST(Classes, ANewClassGetsDefaultsAndNeedsARank) {
    Validated v = validateConfig({entry("Class.batch", "Rank", "100")});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    ASSERT_EQ(v.config.classes.size(), 5u);
    const auto& b = v.config.classes.back();
    EXPECT_EQ(b.name, "batch");
    EXPECT_EQ(b.rank, 100u);
    EXPECT_EQ(b.protection, core::Protection::None);
    EXPECT_EQ(b.throttlingFactor, std::optional<Permyriad>(9000));
    EXPECT_TRUE(b.killable);
    EXPECT_TRUE(b.swap);
    EXPECT_EQ(b.oomScoreAdj, core::OomScoreAdjust(1000));
    EXPECT_FALSE(b.reclaim);
    EXPECT_FALSE(b.memoryGuard);
}

TEST(Classes, ANewClassWithoutRankIsAnError) {
    Validated v = validateConfig({entry("Class.batch", "Swap", "no", "x.conf")});
    EXPECT_EQ(formatted(v, Severity::Error),
              std::vector<std::string>{
                  "x.conf: [Class.batch]: a new class needs Rank= (a number no other class uses; "
                  "higher is more important)"});
}

TEST(Classes, ABadRankIsReportedOnce) {
    Validated v = validateConfig({entry("Class.batch", "Rank", "high")});
    auto e = formatted(v, Severity::Error);
    ASSERT_EQ(e.size(), 1u) << allProblems(v);
    EXPECT_NE(e[0].find("[Class.batch] Rank=high: not a whole number"), std::string::npos);
}

TEST(Classes, InvalidNamesAreOneErrorPerSection) {
    Validated v =
        validateConfig({entry("Class.Batch-1", "Rank", "9"), entry("Class.Batch-1", "Swap", "no"),
                        entry("Class.", "Rank", "8")});
    auto e = formatted(v, Severity::Error);
    ASSERT_EQ(e.size(), 2u) << allProblems(v);
    EXPECT_EQ(e[0], "test.conf: [Class.Batch-1]: invalid class name (expected a lowercase letter, "
                    "then lowercase "
                    "letters, digits or '_', at most 32; no '-': systemd reads it as slice "
                    "hierarchy), ignoring the "
                    "section");
    EXPECT_NE(e[1].find("[Class.]: invalid class name"), std::string::npos);
    EXPECT_EQ(v.config.classes.size(), 4u);
}

TEST(Classes, SharedRanksAreAnErrorOnTheLaterKey) {
    Validated v = validateConfig({entry("Class.batch", "Rank", "1", "b.conf")});
    EXPECT_EQ(formatted(v, Severity::Error),
              std::vector<std::string>{
                  "b.conf: [Class.batch] Rank=1: same rank as class shared (each class needs its "
                  "own rank)"});
    Validated w = validateConfig({entry("Class.system", "Rank", "2")});
    EXPECT_EQ(formatted(w, Severity::Error),
              std::vector<std::string>{
                  "test.conf: [Class.system] Rank=2: same rank as class dedicated (each class "
                  "needs its own rank)"});
}

TEST(Classes, SwappedRanksAreFine) {
    Validated v =
        validateConfig({entry("Class.system", "Rank", "2"), entry("Class.dedicated", "Rank", "3")});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
}

TEST(Classes, ProtectedAndKillableIsAWarning) {
    Validated v = validateConfig({entry("Class.dedicated", "Killable", "yes")});
    EXPECT_FALSE(v.hasErrors());
    EXPECT_EQ(formatted(v, Severity::Warning),
              std::vector<std::string>{
                  "test.conf: [Class.dedicated] Killable=yes: class has Protection=min but is "
                  "killable: its members' requests are protected from reclaim, yet they may be "
                  "killed"});
}

// --- rules -------------------------------------------------------------------

TEST(Rules, AreCollectedInOrder) {
    Validated v = validateConfig({
        entry("Rule.web", "Match", "nginx*.service"),
        entry("Rule.web", "Class", "shared"),
        entry("Rule.web", "Request", "512M"),
        entry("Rule.web", "Limit", "2G"),
        entry("Rule.web", "Priority", "-5"),
        entry("Rule.vms", "Match", "vm:web-*"),
        entry("Rule.vms", "Class", "dedicated"),
    });
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    ASSERT_EQ(v.config.rules.size(), 2u);
    EXPECT_EQ(v.config.rules[0],
              (WorkloadRule{"web", "nginx*.service", "shared", 512 * kMiB, Limit{2 * kGiB}, -5}));
    EXPECT_EQ(v.config.rules[1], (WorkloadRule{"vms", "vm:web-*", "dedicated", 0, Limit{}, 0}));
}

TEST(Rules, ADropInChangesOneKeyOfARule) {
    Validated v = validateConfig({entry("Rule.web", "Match", "nginx*.service", "a.conf"),
                                  entry("Rule.web", "Class", "shared", "a.conf"),
                                  entry("Rule.web", "Class", "reclaimed", "b.conf")});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    ASSERT_EQ(v.config.rules.size(), 1u);
    EXPECT_EQ(v.config.rules[0].className, "reclaimed");
    EXPECT_EQ(v.config.rules[0].match, "nginx*.service");
}

TEST(Rules, MayNameAClassDefinedLater) {
    Validated v = validateConfig({entry("Rule.b", "Match", "b*.service", "a.conf"),
                                  entry("Rule.b", "Class", "batch", "a.conf"),
                                  entry("Class.batch", "Rank", "7", "b.conf")});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
}

TEST(Rules, MissingMatchOrClass) {
    Validated v = validateConfig({entry("Rule.web", "Priority", "1")});
    EXPECT_EQ(formatted(v, Severity::Error),
              (std::vector<std::string>{
                  "test.conf: [Rule.web]: missing Match= (e.g. Match=nginx*.service)",
                  "test.conf: [Rule.web]: missing Class= (e.g. Class=shared)"}));
}

TEST(Rules, UnknownClass) {
    Validated v = validateConfig(
        {entry("Rule.web", "Match", "x.service"), entry("Rule.web", "Class", "gold")});
    EXPECT_EQ(formatted(v, Severity::Error),
              std::vector<std::string>{
                  "test.conf: [Rule.web] Class=gold: no such class (classes: system, dedicated, "
                  "shared, reclaimed)"});
}

TEST(Rules, UnknownClassAmongManyNamesAFewAndCountsTheRest) {
    // 1000 classes from drop-ins: the problem stays one readable line.
    std::vector<ConfigEntry> entries;
    for (int i = 0; i < 1000; ++i) {
        const std::string section = "Class.c" + std::to_string(i);
        entries.push_back(entry(section, "Rank", std::to_string(i + 10)));
    }
    entries.push_back(entry("Rule.web", "Match", "x.service"));
    entries.push_back(entry("Rule.web", "Class", "gold"));
    Validated v = validateConfig(entries);
    EXPECT_EQ(formatted(v, Severity::Error),
              std::vector<std::string>{
                  "test.conf: [Rule.web] Class=gold: no such class (classes: system, dedicated, "
                  "shared, reclaimed, c0, c1, c2, c3 and 996 more)"});
}

TEST(Rules, RequestAboveLimit) {
    Validated v = validateConfig(
        {entry("Rule.web", "Match", "x.service"), entry("Rule.web", "Class", "shared"),
         entry("Rule.web", "Request", "2G"), entry("Rule.web", "Limit", "1G")});
    EXPECT_EQ(formatted(v, Severity::Error),
              std::vector<std::string>{
                  "test.conf: [Rule.web] Request=2G: above Limit=1G (a request cannot exceed its "
                  "limit)"});
    Validated ok = validateConfig(
        {entry("Rule.web", "Match", "x.service"), entry("Rule.web", "Class", "shared"),
         entry("Rule.web", "Request", "2G"), entry("Rule.web", "Limit", "max")});
    EXPECT_TRUE(ok.problems.empty()) << allProblems(ok);
}

TEST(Rules, BadValues) {
    Validated v = validateConfig(
        {entry("Rule.web", "Match", ""), entry("Rule.web", "Class", "Gold-1"),
         entry("Rule.web", "Request", "max"), entry("Rule.web", "Limit", "lots"),
         entry("Rule.web", "Priority", "3000000000"), entry("Rule.a.b", "Match", "x")});
    auto e = formatted(v, Severity::Error);
    ASSERT_EQ(e.size(), 6u) << allProblems(v);
    EXPECT_EQ(e[0], "test.conf: [Rule.web] Match=: empty pattern (expected a glob such as "
                    "nginx*.service or vm:web-*)");
    EXPECT_NE(e[1].find("[Rule.web] Class=Gold-1: not a class name"), std::string::npos);
    EXPECT_NE(e[2].find("[Rule.web] Request=max: not a size"), std::string::npos);
    EXPECT_NE(e[3].find("[Rule.web] Limit=lots: not a size (expected e.g. 512M, 2G, 1.5G, or max)"),
              std::string::npos);
    EXPECT_NE(e[4].find("[Rule.web] Priority=3000000000: out of range"), std::string::npos);
    EXPECT_NE(e[5].find("[Rule.a.b]: invalid rule name"), std::string::npos);
}

// --- pressure ladder ---------------------------------------------------------

struct LadderCase {
    std::vector<ConfigEntry> entries;
    std::vector<std::string> errors; // formatted, exact
};

class LadderTest : public ::testing::TestWithParam<LadderCase> {};

TEST_P(LadderTest, ThresholdsAreMonotonic) {
    Validated v = validateConfig(GetParam().entries);
    EXPECT_EQ(formatted(v, Severity::Error), GetParam().errors) << allProblems(v);
}

constexpr const char* kPsiRule =
    "(a higher level's pressure threshold must be at least the lower level's)";
constexpr const char* kAvailRule =
    "(a higher level's MemAvailable threshold must be at most the lower level's)";

INSTANTIATE_TEST_SUITE_P(
    Cases, LadderTest,
    ::testing::Values(
        LadderCase{
            {entry("Pressure", "Level2SomeAvg10", "5%")},
            {std::string("test.conf: [Pressure] Level2SomeAvg10=5%: below Level1SomeAvg10=10% ") +
             kPsiRule}},
        LadderCase{
            {entry("Pressure", "Level1SomeAvg10", "30%")},
            {std::string("test.conf: [Pressure] Level1SomeAvg10=30%: above Level2SomeAvg10=25% ") +
             kPsiRule}},
        LadderCase{
            {entry("Pressure", "Level3FullAvg10", "4%")},
            {std::string("test.conf: [Pressure] Level3FullAvg10=4%: below Level2FullAvg10=5% ") +
             kPsiRule}},
        LadderCase{
            {entry("Pressure", "Level2MemAvailable", "20%")},
            {std::string(
                 "test.conf: [Pressure] Level2MemAvailable=20%: above Level1MemAvailable=10% ") +
             kAvailRule}},
        LadderCase{
            {entry("Pressure", "Level3MemAvailable", "6%")},
            {std::string(
                 "test.conf: [Pressure] Level3MemAvailable=6%: above Level2MemAvailable=5% ") +
             kAvailRule}},
        // Off levels are skipped: level 3 is compared with level 1.
        LadderCase{
            {entry("Pressure", "Level2SomeAvg10", "off"),
             entry("Pressure", "Level3SomeAvg10", "5%")},
            {std::string("test.conf: [Pressure] Level3SomeAvg10=5%: below Level1SomeAvg10=10% ") +
             kPsiRule}},
        LadderCase{{entry("Pressure", "Level2SomeAvg10", "off"),
                    entry("Pressure", "Level3SomeAvg10", "10%")},
                   {}},
        LadderCase{{entry("Pressure", "Level2SomeAvg10", "10%")}, {}}, // equal is fine
        LadderCase{{entry("Pressure", "Level1MemAvailable", "off"),
                    entry("Pressure", "Level2MemAvailable", "50%")},
                   {}},
        // The key set last is blamed; the other is named.
        LadderCase{
            {entry("Pressure", "Level2SomeAvg10", "40%", "a.conf"),
             entry("Pressure", "Level1SomeAvg10", "50%", "b.conf")},
            {std::string("b.conf: [Pressure] Level1SomeAvg10=50%: above Level2SomeAvg10=40% ") +
             kPsiRule}}));

// --- render ------------------------------------------------------------------

TEST(Render, ListsEveryKeyInTableOrder) {
    std::string text = renderConfig(Config{});
    auto entries = splitIni(text);
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& e : entries)
        seen.insert({e.section, e.key});
    for (const auto& k : knownKeys()) {
        std::string section = k.section;
        if (section == "Rule.<name>")
            continue; // no rules by default
        if (section == "Class.<name>")
            section = "Class.shared";
        EXPECT_TRUE(seen.count({section, k.key})) << section << " " << k.key;
    }
    EXPECT_EQ(text.substr(0, 25), "[Manager]\nInterval=1s\nDry");
    EXPECT_NE(text.find("\n[Overcommit]\nMemoryRatio=1.0\nNodeReserved=1G\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("\n[Class.shared]\nRank=1\nProtection=low\nThrottlingFactor=0.9\n"),
              std::string::npos);
}

TEST(Render, DefaultsRoundTrip) {
    Validated v = validateConfig(splitIni(renderConfig(Config{})));
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    EXPECT_TRUE(v.config == Config{});
}

TEST(Render, ACustomConfigRoundTrips) {
    std::vector<ConfigEntry> in{
        entry("Manager", "Interval", "1.5s"),
        entry("Manager", "DryRun", "yes"),
        entry("Manager", "CgroupRoot", "/tmp/x"),
        entry("Overcommit", "MemoryRatio", "1.333333"),
        entry("Overcommit", "NodeReserved", "7.5%"),
        entry("Overcommit", "FailoverReserve", "1.1G"),
        entry("Overcommit", "SwapCheck", "refuse"),
        entry("Overcommit", "VMOverhead", "123456"),
        entry("Pressure", "Level1SomeAvg10", "0.123456%"),
        entry("Pressure", "Level1FullAvg10", "1%"),
        entry("Pressure", "Level1MemAvailable", "off"),
        entry("Pressure", "Level2Duration", "250us"),
        entry("Pressure", "SwapUsedKill", "off"),
        entry("Pressure", "Hysteresis", "12.34%"),
        entry("Reclaim", "StallTarget", "0.05%"),
        entry("Reclaim", "MaxStep", "0.01%"),
        entry("Class.shared", "ThrottlingFactor", "0.8765"),
        entry("Class.system", "OOMScoreAdjust", "burstable"),
        entry("Class.batch", "Rank", "4294967295"),
        entry("Class.batch", "Protection", "low"),
        entry("Rule.web", "Match", "nginx*.service"),
        entry("Rule.web", "Class", "batch"),
        entry("Rule.web", "Request", "1.5G"),
        entry("Rule.web", "Limit", "2G"),
        entry("Rule.web", "Priority", "-2147483648"),
        entry("Rule.vm-1", "Match", "vm:db-[0-9]*"),
        entry("Rule.vm-1", "Class", "dedicated"),
    };
    Validated first = validateConfig(in);
    ASSERT_TRUE(first.problems.empty()) << allProblems(first);
    EXPECT_FALSE(first.config == Config{});
    std::string text = renderConfig(first.config);
    Validated second = validateConfig(splitIni(text));
    EXPECT_TRUE(second.problems.empty()) << allProblems(second);
    EXPECT_TRUE(second.config == first.config) << text << "\n---\n" << renderConfig(second.config);
    EXPECT_EQ(renderConfig(second.config), text);
}

TEST(Equality, ComparesEveryPart) {
    Config a;
    Config b;
    EXPECT_TRUE(a == b);
    b.pressure.levels[2].duration = 1s;
    EXPECT_FALSE(a == b);
    b = a;
    b.classes[1].memoryGuard = true;
    EXPECT_FALSE(a == b);
    b = a;
    b.classes.pop_back();
    EXPECT_FALSE(a == b);
    b = a;
    b.rules.push_back(WorkloadRule{});
    EXPECT_FALSE(a == b);
}

TEST(KnownKeys, AreUniqueAndComplete) {
    auto keys = knownKeys();
    std::set<std::pair<std::string, std::string>> unique;
    for (const auto& k : keys)
        EXPECT_TRUE(unique.insert({k.section, k.key}).second) << k.section << " " << k.key;
    EXPECT_EQ(keys.size(), 7u + 5u + 20u + 5u + 5u + 3u + 8u + 5u);
}

TEST(VmSection, DefaultsAndValues) {
    EXPECT_EQ(Config{}.vm.libvirtUri, "qemu:///system");
    // Shipped default: no default class, so an unplaced VM is observed only.
    EXPECT_EQ(Config{}.vm.defaultClass, "");
    EXPECT_EQ(Config{}.vm.limitOverhead, 256 * kMiB);
    EXPECT_TRUE(Config{}.ganeti.balloon);
    const auto v = validateConfig({{"f", "VM", "LibvirtURI", ""},
                                   {"f", "VM", "DefaultClass", "reclaimed"},
                                   {"f", "VM", "LimitOverhead", "128M"},
                                   {"f", "Ganeti", "Balloon", "no"}});
    EXPECT_FALSE(v.hasErrors());
    EXPECT_EQ(v.config.vm.libvirtUri, "");
    EXPECT_EQ(v.config.vm.defaultClass, "reclaimed");
    EXPECT_EQ(v.config.vm.limitOverhead, 128 * kMiB);
    EXPECT_FALSE(v.config.ganeti.balloon);
}

TEST(VmSection, DefaultClassNoneOrEmptyMeansObserveOnly) {
    for (const char* value : {"", "none"}) {
        const auto v = validateConfig(
            {{"f", "VM", "DefaultClass", "shared"}, {"f", "VM", "DefaultClass", value}});
        EXPECT_FALSE(v.hasErrors()) << value;
        EXPECT_EQ(v.config.vm.defaultClass, "") << value;
        EXPECT_EQ(renderedValue(v.config, "VM", "DefaultClass"), "") << value;
    }
    // The old behaviour stays one line away, and --print shows it.
    const auto shared = validateConfig({{"f", "VM", "DefaultClass", "shared"}});
    EXPECT_FALSE(shared.hasErrors());
    EXPECT_EQ(shared.config.vm.defaultClass, "shared");
    EXPECT_EQ(renderedValue(shared.config, "VM", "DefaultClass"), "shared");
    // Strict: anything else is still a class name, checked as one.
    for (const char* bad : {"None", "none ", "-", "shared,reclaimed"}) {
        EXPECT_TRUE(validateConfig({{"f", "VM", "DefaultClass", bad}}).hasErrors()) << bad;
    }
}

TEST(VmSection, RefusesBadValues) {
    EXPECT_TRUE(validateConfig({{"f", "VM", "LibvirtURI", "qemu system"}}).hasErrors());
    EXPECT_TRUE(validateConfig({{"f", "VM", "LibvirtURI", "/var/run/sock"}}).hasErrors());
    const auto v = validateConfig({{"f", "VM", "DefaultClass", "gold"}});
    ASSERT_TRUE(v.hasErrors());
    bool named = false;
    for (const auto& p : v.problems)
        named = named || (p.key == "DefaultClass" && p.reason.find("no such class") == 0);
    EXPECT_TRUE(named);
}

TEST(GanetiSection, DefaultsAndValues) {
    EXPECT_EQ(Config{}.ganeti.hookTimeout, std::chrono::seconds(10));
    EXPECT_EQ(Config{}.ganeti.whenUnreachable, WhenUnreachable::Allow);
    const std::vector<ConfigEntry> entries{
        {"f", "Ganeti", "HookTimeout", "3s"},
        {"f", "Ganeti", "WhenUnreachable", "refuse"},
        {"f", "Ganeti", "RefuseSoft", "yes"},
        {"f", "Ganeti", "NodeName", "node1.example.test"},
    };
    const auto v = validateConfig(entries);
    EXPECT_FALSE(v.hasErrors());
    EXPECT_EQ(v.config.ganeti.hookTimeout, std::chrono::seconds(3));
    EXPECT_EQ(v.config.ganeti.whenUnreachable, WhenUnreachable::Refuse);
    EXPECT_TRUE(v.config.ganeti.refuseSoft);
    EXPECT_EQ(v.config.ganeti.nodeName, "node1.example.test");
    const auto bad = validateConfig({{"f", "Ganeti", "WhenUnreachable", "maybe"},
                                     {"f", "Ganeti", "NodeName", "no spaces"},
                                     {"f", "Ganeti", "HookTimeout", "0"}});
    EXPECT_EQ(bad.problems.size(), 3U);
    EXPECT_TRUE(bad.hasErrors());
}

} // namespace
} // namespace memqos::config

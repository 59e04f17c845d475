// SPDX-License-Identifier: Apache-2.0
// The Ganeti hook's decisions. Synthetic environments pin each rule; the
// recorded ones (tests/fixtures/ganeti/env, taken from a real Ganeti 3.0.2
// cluster, see NOTES.md there) check that the rules read what Ganeti
// really passes.

#include "memqos/ganeti/hook.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace memqos::ganeti {
namespace {

using ::testing::HasSubstr;

constexpr const char* kNode = "node1.example.test";

Env base(const char* phase, const char* path) {
    return Env{{"GANETI_HOOKS_PHASE", phase},
               {"GANETI_HOOKS_PATH", path},
               {"GANETI_INSTANCE_NAME", "inst1.example.test"},
               {"GANETI_INSTANCE_PRIMARY", kNode},
               {"GANETI_INSTANCE_STATUS", "up"},
               {"GANETI_INSTANCE_MAXMEM", "512"},
               {"GANETI_INSTANCE_MINMEM", "256"},
               {"GANETI_INSTANCE_BE_maxmem", "512"},
               {"GANETI_INSTANCE_BE_minmem", "256"}};
}

Step check(const char* name, Bytes max, Bytes min) {
    return Step{StepKind::Check, name, max, min, false, ""};
}
Step record(const char* name, Bytes max, Bytes min, bool up) {
    return Step{StepKind::Record, name, max, min, up, ""};
}
Step forget(const char* name) { return Step{StepKind::Forget, name, 0, 0, false, ""}; }

std::vector<Step> steps(const Env& env, std::string_view node = kNode) {
    auto p = plan(env, node);
    EXPECT_TRUE(p) << p.error().what;
    return p ? p->steps : std::vector<Step>{};
}

TEST(HookPlan, PreAddOnTheTargetChecksTheMaxMemory) {
    EXPECT_EQ(steps(base("pre", "instance-add")),
              std::vector<Step>{check("inst1.example.test", 512 * kMiB, 256 * kMiB)});
}

TEST(HookPlan, OtherNodesDoNothing) {
    auto p = plan(base("pre", "instance-add"), "node2.example.test");
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->steps.empty());
    EXPECT_THAT(p->why, HasSubstr("not on this node"));
    EXPECT_TRUE(steps(base("post", "instance-add"), "node2.example.test").empty());
}

TEST(HookPlan, ShortAndLongNodeNamesMatch) {
    EXPECT_TRUE(sameNode("node1", "node1.example.test"));
    EXPECT_TRUE(sameNode("NODE1.example.test", "node1.EXAMPLE.test"));
    EXPECT_FALSE(sameNode("node1.a.test", "node1.b.test"));
    EXPECT_FALSE(sameNode("node1", "node10"));
    EXPECT_FALSE(sameNode("", "node1"));
    EXPECT_EQ(steps(base("pre", "instance-add"), "node1").size(), 1U);
}

TEST(HookPlan, AddWithoutStartIsCheckedWhenItStarts) {
    auto env = base("pre", "instance-add");
    env["GANETI_INSTANCE_STATUS"] = "down";
    auto p = plan(env, kNode);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->steps.empty());
    EXPECT_THAT(p->why, HasSubstr("checked when it starts"));
    env["GANETI_HOOKS_PATH"] = "instance-start";
    EXPECT_EQ(steps(env).size(), 1U);
}

TEST(HookPlan, ModifyChecksTheNewSizeOnlyWhenItGrows) {
    auto env = base("pre", "instance-modify");
    env["GANETI_INSTANCE_MAXMEM"] = "1024";
    env["GANETI_INSTANCE_MINMEM"] = "512";
    EXPECT_EQ(steps(env),
              std::vector<Step>{check("inst1.example.test", 1024 * kMiB, 512 * kMiB)});
    env["GANETI_INSTANCE_MAXMEM"] = "256";
    env["GANETI_INSTANCE_MINMEM"] = "128";
    auto p = plan(env, kNode);
    ASSERT_TRUE(p);
    EXPECT_TRUE(p->steps.empty());
    EXPECT_THAT(p->why, HasSubstr("does not grow"));
    env["GANETI_INSTANCE_MAXMEM"] = "1024";
    env["GANETI_INSTANCE_STATUS"] = "down";
    EXPECT_TRUE(steps(env).empty());
}

TEST(HookPlan, MigrateAndFailoverCheckOnTheNewPrimary) {
    for (const char* path : {"instance-migrate", "instance-failover"}) {
        auto env = base("pre", path);
        env["GANETI_INSTANCE_PRIMARY"] = "node2.example.test";
        env["GANETI_OLD_PRIMARY"] = "node2.example.test";
        env["GANETI_NEW_PRIMARY"] = kNode;
        EXPECT_EQ(steps(env).size(), 1U) << path;
        EXPECT_TRUE(steps(env, "node2.example.test").empty()) << path;
        env.erase("GANETI_NEW_PRIMARY");
        EXPECT_FALSE(plan(env, kNode)) << path;
    }
}

TEST(HookPlan, ChecksCarryTheTagsClass) {
    // VerifyPlacement is asked for the class the instance will run in: a
    // move of a dedicated instance is not refused for closed admission.
    for (const char* path : {"instance-failover", "instance-migrate", "instance-start"}) {
        auto env = base("pre", path);
        const bool move = std::string_view(path) != "instance-start";
        if (move) {
            env["GANETI_INSTANCE_PRIMARY"] = "node2.example.test";
            env["GANETI_OLD_PRIMARY"] = "node2.example.test";
            env["GANETI_NEW_PRIMARY"] = kNode;
        }
        env["GANETI_INSTANCE_TAGS"] = "web memqos:class:dedicated";
        auto expected = check("inst1.example.test", 512 * kMiB, 256 * kMiB);
        expected.className = "dedicated";
        EXPECT_EQ(steps(env), std::vector<Step>{expected}) << path;
        // No tag: "" (memqosd's rule or DefaultClass decides).
        env.erase("GANETI_INSTANCE_TAGS");
        EXPECT_EQ(steps(env),
                  std::vector<Step>{check("inst1.example.test", 512 * kMiB, 256 * kMiB)})
            << path;
    }
}

TEST(HookPlan, PostHooksRecordTheStateAfterTheOperation) {
    auto env = base("post", "instance-stop");
    env["GANETI_POST_INSTANCE_STATUS"] = "down";
    EXPECT_EQ(steps(env),
              std::vector<Step>{record("inst1.example.test", 512 * kMiB, 256 * kMiB, false)});
    env = base("post", "instance-start");
    EXPECT_EQ(steps(env),
              std::vector<Step>{record("inst1.example.test", 512 * kMiB, 256 * kMiB, true)});
    env = base("post", "instance-modify");
    env["GANETI_POST_INSTANCE_MAXMEM"] = "768";
    env["GANETI_POST_INSTANCE_MINMEM"] = "384";
    EXPECT_EQ(steps(env),
              std::vector<Step>{record("inst1.example.test", 768 * kMiB, 384 * kMiB, true)});
}

TEST(HookPlan, ATagNamesTheClassOfTheRecord) {
    auto env = base("post", "instance-start");
    env["GANETI_POST_INSTANCE_TAGS"] = "web memqos:class:reclaimed";
    auto expected = record("inst1.example.test", 512 * kMiB, 256 * kMiB, true);
    expected.className = "reclaimed";
    EXPECT_EQ(steps(env), std::vector<Step>{expected});
    env["GANETI_POST_INSTANCE_TAGS"] = "memqos:class:No-Such";
    EXPECT_EQ(steps(env),
              std::vector<Step>{record("inst1.example.test", 512 * kMiB, 256 * kMiB, true)});
}

TEST(HookPlan, RemoveForgetsRenameMovesTheRecord) {
    EXPECT_EQ(steps(base("post", "instance-remove")),
              std::vector<Step>{forget("inst1.example.test")});
    auto env = base("post", "instance-rename");
    env["GANETI_INSTANCE_NEW_NAME"] = "inst9.example.test";
    env["GANETI_INSTANCE_STATUS"] = "down";
    EXPECT_EQ(steps(env), (std::vector<Step>{forget("inst1.example.test"),
                                            record("inst9.example.test", 512 * kMiB,
                                                   256 * kMiB, false)}));
}

TEST(HookPlan, MoveAwayForgetsOnTheOldPrimary) {
    auto env = base("post", "instance-failover");
    env["GANETI_INSTANCE_PRIMARY"] = kNode;
    env["GANETI_OLD_PRIMARY"] = kNode;
    env["GANETI_NEW_PRIMARY"] = "node2.example.test";
    env["GANETI_POST_INSTANCE_PRIMARY"] = "node2.example.test";
    EXPECT_EQ(steps(env), std::vector<Step>{forget("inst1.example.test")});
    EXPECT_EQ(steps(env, "node2.example.test"),
              std::vector<Step>{record("inst1.example.test", 512 * kMiB, 256 * kMiB, true)});
}

TEST(HookPlan, NothingToDoForOtherPathsAndPhases) {
    EXPECT_TRUE(steps(base("pre", "instance-stop")).empty());
    EXPECT_TRUE(steps(base("pre", "instance-remove")).empty());
    EXPECT_TRUE(steps(base("post", "instance-reboot")).empty());
    EXPECT_TRUE(steps(base("pre", "cluster-verify")).empty());
}

TEST(HookPlan, MalformedEnvironmentsAreErrorsNamingTheVariable) {
    const std::pair<const char*, const char*> cases[] = {
        {"GANETI_INSTANCE_MAXMEM", "512M"},
        {"GANETI_INSTANCE_MAXMEM", ""},
        {"GANETI_INSTANCE_MAXMEM", "99999999999999999999"},
        {"GANETI_INSTANCE_MAXMEM", "18446744073709551615"},
        {"GANETI_INSTANCE_MAXMEM", "-1"},
    };
    for (const auto& [key, value] : cases) {
        auto env = base("pre", "instance-add");
        env[key] = value;
        auto p = plan(env, kNode);
        ASSERT_FALSE(p) << value;
        EXPECT_THAT(p.error().what, HasSubstr("GANETI_INSTANCE_MAXMEM")) << value;
    }
    auto env = base("pre", "instance-add");
    env.erase("GANETI_HOOKS_PHASE");
    EXPECT_FALSE(plan(env, kNode));
    env = base("bogus", "instance-add");
    EXPECT_FALSE(plan(env, kNode));
    env = base("pre", "instance-add");
    env.erase("GANETI_INSTANCE_NAME");
    EXPECT_FALSE(plan(env, kNode));
    env = base("post", "instance-rename");
    EXPECT_FALSE(plan(env, kNode)); // no new name
    EXPECT_FALSE(plan(base("pre", "instance-add"), ""));
}

// Found by tools/fuzz-long (corpus file fuzz_ganeti_env/crash-e5614aec...): a
// 2000-byte instance name or MiB value must not make a 2000-byte error.
TEST(HookPlan, ErrorsShowAtMost80BytesOfAValue) {
    const std::string huge(2000, 'x');
    auto env = base("post", "instance-start");
    env["GANETI_INSTANCE_NAME"] = huge;
    env.erase("GANETI_INSTANCE_PRIMARY");
    auto p = plan(env, kNode);
    ASSERT_FALSE(p);
    EXPECT_THAT(p.error().what, HasSubstr("GANETI_INSTANCE_PRIMARY is not set"));
    EXPECT_LT(p.error().what.size(), 200u);
    env = base("post", "instance-rename");
    env["GANETI_INSTANCE_NAME"] = huge;
    p = plan(env, kNode);
    ASSERT_FALSE(p);
    EXPECT_THAT(p.error().what, HasSubstr("GANETI_INSTANCE_NEW_NAME is not set"));
    EXPECT_LT(p.error().what.size(), 200u);
    // tools/fuzz-long, 2026-11-25 (corpus fuzz_ganeti_env/crash-662413df...):
    // the check hooks (pre) named the instance in full.
    env = base("pre", "instance-modify");
    env["GANETI_INSTANCE_NAME"] = huge;
    env.erase("GANETI_INSTANCE_PRIMARY");
    p = plan(env, kNode);
    ASSERT_FALSE(p);
    EXPECT_THAT(p.error().what, HasSubstr("GANETI_INSTANCE_PRIMARY is not set"));
    EXPECT_LT(p.error().what.size(), 200u);
    env = base("pre", "instance-add");
    env["GANETI_INSTANCE_MAXMEM"] = std::string(2000, '0') + "99999999999999999";
    p = plan(env, kNode);
    ASSERT_FALSE(p);
    EXPECT_THAT(p.error().what, HasSubstr("MiB is too large"));
    EXPECT_LT(p.error().what.size(), 200u);
}

TEST(EnvFile, ParsesEnvOutput) {
    auto env = parseEnvFile("# recorded\nA=1\n\nB=x=y\r\nA=2\n");
    ASSERT_TRUE(env);
    EXPECT_EQ(*env, (Env{{"A", "2"}, {"B", "x=y"}}));
    EXPECT_THAT(parseEnvFile("A=1\nnot a line\n").error().what, HasSubstr("line 2"));
    EXPECT_FALSE(parseEnvFile("1A=1\n"));
    EXPECT_FALSE(parseEnvFile("=1\n"));
}

// ---- recorded on a real Ganeti 3.0.2 cluster (tests/fixtures/ganeti) -------

Env recorded(const std::string& file) {
    const char* root = std::getenv("MEMQOS_FIXTURES");
    const std::filesystem::path path =
        std::filesystem::path(root != nullptr ? root : "tests/fixtures") / "ganeti" / "env" / file;
    std::ifstream in(path);
    EXPECT_TRUE(in) << "cannot read " << path;
    std::stringstream text;
    text << in.rdbuf();
    auto env = parseEnvFile(text.str());
    EXPECT_TRUE(env) << path << ": " << env.error().what;
    return env ? *env : Env{};
}

struct Recorded {
    const char* file;
    const char* node;
    std::vector<Step> steps;
};

class RecordedEnv : public ::testing::TestWithParam<Recorded> {};

TEST_P(RecordedEnv, Plan) {
    const auto& c = GetParam();
    auto p = plan(recorded(c.file), c.node);
    ASSERT_TRUE(p) << p.error().what;
    EXPECT_EQ(p->steps, c.steps) << c.file << " on " << c.node << ": " << p->why;
    EXPECT_FALSE(p->why.empty());
}

constexpr const char* kNode2 = "node2.example.test";
constexpr Bytes M = kMiB;
const char* const kInst1 = "inst1.example.test";

INSTANTIATE_TEST_SUITE_P(
    Ganeti302, RecordedEnv,
    ::testing::Values(
        // add: INSTANCE_STATUS is the start flag ("True").
        Recorded{"instance-add-pre-1.env", kNode, {check(kInst1, 512 * M, 256 * M)}},
        Recorded{"instance-add-pre-1.env", "node1", {check(kInst1, 512 * M, 256 * M)}},
        Recorded{"instance-add-pre-1.env", kNode2, {}},
        Recorded{"instance-add-pre-2.env", kNode, {check("inst2.example.test", 512 * M, 256 * M)}},
        Recorded{"instance-add-post-1.env", kNode, {record(kInst1, 512 * M, 256 * M, true)}},
        Recorded{"instance-add-post-1.env", kNode2, {}},
        Recorded{"instance-stop-pre-1.env", kNode, {}},
        Recorded{"instance-stop-post-1.env", kNode, {record(kInst1, 512 * M, 256 * M, false)}},
        Recorded{"instance-start-pre-1.env", kNode, {check(kInst1, 512 * M, 256 * M)}},
        Recorded{"instance-start-post-1.env", kNode, {record(kInst1, 512 * M, 256 * M, true)}},
        Recorded{"instance-reboot-pre-1.env", kNode, {}},
        Recorded{"instance-reboot-post-1.env", kNode, {}},
        // modify: the new size (GANETI_INSTANCE_MAXMEM), not _BE_maxmem.
        Recorded{"instance-modify-pre-1.env", kNode, {check(kInst1, 768 * M, 384 * M)}},
        Recorded{"instance-modify-post-1.env", kNode, {record(kInst1, 768 * M, 384 * M, true)}},
        // modify -m (runtime memory): maxmem does not grow.
        Recorded{"instance-modify-pre-2.env", kNode, {}},
        Recorded{"instance-modify-post-2.env", kNode, {record(kInst1, 768 * M, 384 * M, true)}},
        Recorded{"instance-stop-post-2.env", kNode, {record(kInst1, 768 * M, 384 * M, false)}},
        Recorded{"instance-rename-pre-1.env", kNode, {}},
        Recorded{"instance-rename-post-1.env",
                 kNode,
                 {forget(kInst1),
                  record("inst1-renamed.example.test", 768 * M, 384 * M, false)}},
        Recorded{"instance-remove-pre-1.env", kNode, {}},
        Recorded{"instance-remove-post-1.env", kNode, {forget("inst1-renamed.example.test")}},
        Recorded{"instance-remove-post-1.env", kNode2, {}},
        // Recorded on the two-node bed (tests/vm/ganeti-pair): the pre-hook
        // checks on the target only, the post-hook forgets on the source and
        // records on the target. migrate node1 -> node2 (inst1 256M/128M):
        Recorded{"instance-migrate-pre-1.env", kNode, {}},
        Recorded{"instance-migrate-pre-1.env", kNode2, {check(kInst1, 256 * M, 128 * M)}},
        Recorded{"instance-migrate-post-1.env", kNode, {forget(kInst1)}},
        Recorded{"instance-migrate-post-1.env", kNode2, {record(kInst1, 256 * M, 128 * M, true)}},
        // failover node2 -> node1:
        Recorded{"instance-failover-pre-1.env", kNode, {check(kInst1, 256 * M, 128 * M)}},
        Recorded{"instance-failover-pre-1.env", kNode2, {}},
        Recorded{"instance-failover-post-1.env", kNode, {record(kInst1, 256 * M, 128 * M, true)}},
        Recorded{"instance-failover-post-1.env", kNode2, {forget(kInst1)}},
        // node1 -> node2 again, both refused by node2's hook (no post).
        Recorded{"instance-migrate-pre-2.env", kNode, {}},
        Recorded{"instance-migrate-pre-2.env", kNode2, {check(kInst1, 256 * M, 128 * M)}},
        Recorded{"instance-failover-pre-2.env", kNode, {}},
        Recorded{"instance-failover-pre-2.env", kNode2, {check(kInst1, 256 * M, 128 * M)}}),
    [](const ::testing::TestParamInfo<Recorded>& param) {
        std::string name = std::string(param.param.file) + "_" + param.param.node;
        for (auto& c : name) {
            if (!std::isalnum(static_cast<unsigned char>(c))) {
                c = '_';
            }
        }
        return name;
    });

} // namespace
} // namespace memqos::ganeti

// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/model.hpp"

#include <gtest/gtest.h>

#include <string>

#include "literals.hpp"

namespace memqos::core {
namespace {

TEST(CoreModel, EnumNames) {
    EXPECT_EQ(toString(WorkloadKind::Service), "service");
    EXPECT_EQ(toString(WorkloadKind::Scope), "scope");
    EXPECT_EQ(toString(WorkloadKind::Vm), "vm");
    EXPECT_EQ(toString(Protection::Min), "min");
    EXPECT_EQ(toString(Protection::Low), "low");
    EXPECT_EQ(toString(Protection::None), "none");
}

TEST(CoreModel, SliceName) {
    EXPECT_EQ(ClassPolicy{.name = "shared"}.slice(), "memqos-shared.slice");
    EXPECT_EQ(ClassPolicy{.name = "batch-jobs"}.slice(), "memqos-batch-jobs.slice");
}

// doc/DESIGN.md §1.2's table, row by row.
TEST(CoreModel, DefaultClassesAreTheDesignTable) {
    const std::vector<ClassPolicy> expected{
        {.name = "system",
         .rank = 3,
         .protection = Protection::Min,
         .throttlingFactor = std::nullopt,
         .killable = false,
         .swap = false,
         .oomScoreAdj = -999,
         .reclaim = false,
         .memoryGuard = false},
        {.name = "dedicated",
         .rank = 2,
         .protection = Protection::Min,
         .throttlingFactor = std::nullopt,
         .killable = false,
         .swap = false,
         .oomScoreAdj = -997,
         .reclaim = false,
         .memoryGuard = false},
        {.name = "shared",
         .rank = 1,
         .protection = Protection::Low,
         .throttlingFactor = 9000,
         .killable = true,
         .swap = true,
         .oomScoreAdj = OomScoreAdjust::burstable(),
         .reclaim = true,
         .memoryGuard = false},
        {.name = "reclaimed",
         .rank = 0,
         .protection = Protection::None,
         .throttlingFactor = std::nullopt,
         .killable = true,
         .swap = true,
         .oomScoreAdj = 1000,
         .reclaim = true,
         .memoryGuard = true},
    };
    EXPECT_EQ(defaultClasses(), expected);
}

TEST(CoreModel, FindClass) {
    const auto classes = defaultClasses();
    ASSERT_NE(findClass(classes, "shared"), nullptr);
    EXPECT_EQ(findClass(classes, "shared")->rank, 1U);
    EXPECT_EQ(findClass(classes, "reclaimed"), &classes[3]);
    EXPECT_EQ(findClass(classes, "Shared"), nullptr); // case-sensitive
    EXPECT_EQ(findClass(classes, ""), nullptr);
    EXPECT_EQ(findClass({}, "system"), nullptr);
}

struct KindCase {
    const char* id;
    std::optional<WorkloadKind> kind;
};

class KindFromId : public ::testing::TestWithParam<KindCase> {};

TEST_P(KindFromId, Shape) {
    EXPECT_EQ(kindFromId(GetParam().id), GetParam().kind) << GetParam().id;
}

INSTANTIATE_TEST_SUITE_P(
    CoreModel, KindFromId,
    ::testing::Values(KindCase{"nginx.service", WorkloadKind::Service},
                      KindCase{"getty@tty1.service", WorkloadKind::Service},
                      KindCase{"x.scope", WorkloadKind::Scope},
                      KindCase{"session-1.scope", WorkloadKind::Scope},
                      KindCase{"vm:web1", WorkloadKind::Vm}, KindCase{"vm:a", WorkloadKind::Vm},
                      KindCase{"vm:", std::nullopt}, KindCase{".service", std::nullopt},
                      KindCase{".scope", std::nullopt}, KindCase{"", std::nullopt},
                      KindCase{"nginx", std::nullopt}, KindCase{"system.slice", std::nullopt},
                      KindCase{"nginx.service.d", std::nullopt}, KindCase{"VM:web1", std::nullopt},
                      KindCase{"web1", std::nullopt}));

struct IdCase {
    std::string id;
    const char* error; // nullptr: valid; else a substring of the message
};

class ValidateWorkloadId : public ::testing::TestWithParam<IdCase> {};

TEST_P(ValidateWorkloadId, Rules) {
    const auto& c = GetParam();
    const Status s = validateWorkloadId(c.id);
    if (c.error == nullptr) {
        EXPECT_TRUE(s.ok()) << c.id << ": " << s.error().what;
    } else {
        ASSERT_FALSE(s.ok()) << c.id;
        EXPECT_EQ(s.error().code, std::errc::invalid_argument);
        EXPECT_NE(s.error().what.find(c.error), std::string::npos) << s.error().what;
    }
}

INSTANTIATE_TEST_SUITE_P(
    CoreModel, ValidateWorkloadId,
    ::testing::Values(
        IdCase{"nginx.service", nullptr}, IdCase{"x.scope", nullptr},
        IdCase{"getty@tty1.service", nullptr}, IdCase{"dev-disk-by\\x2duuid-1234.scope", nullptr},
        IdCase{"a:b_c.d-e.service", nullptr}, IdCase{"A9.service", nullptr},
        IdCase{std::string(247, 'a') + ".service", nullptr}, // 255 bytes
        IdCase{std::string(248, 'a') + ".service", "longer than 255 bytes (256)"},
        IdCase{"", "workload id is empty"}, IdCase{"nginx", "ending in \".service\" or \".scope\""},
        IdCase{"system.slice", "ending in \".service\" or \".scope\""},
        IdCase{".service", "empty unit name"}, IdCase{"-x.service", "starts with '-'"},
        IdCase{".x.service", "starts with '.'"}, IdCase{"a..b.service", "contains \"..\""},
        IdCase{"a/b.service", "'/' at position 1"},
        IdCase{"a b.service", "' ' at position 1 is not allowed"},
        IdCase{"a\tb.service", "a byte at position 1"},
        IdCase{"caf\xc3\xa9.service", "a byte at position 3"},
        IdCase{"a\\b.service", "not a \"\\xNN\" escape"},
        IdCase{"a\\x2.service", "not a \"\\xNN\" escape"}, IdCase{"a\\x2", "ending in"},
        IdCase{"ab\\x.scope", "not a \"\\xNN\" escape"},
        IdCase{"a@b@c.service", "more than one '@'"}, IdCase{"@x.service", "starts with '@'"},
        IdCase{"getty@.service", "template unit"}, IdCase{"vm:web1", nullptr},
        IdCase{"vm:web 1 (copy)", nullptr}, IdCase{"vm:caf\xc3\xa9", nullptr},
        IdCase{"vm:" + std::string(255, 'v'), nullptr},
        IdCase{"vm:" + std::string(256, 'v'), "domain name longer than 255 bytes (256)"},
        IdCase{"vm:", "empty domain name"},
        IdCase{"vm:a/b", "'/' at position 1 of the domain name"},
        IdCase{std::string("vm:a\nb"), "control character at position 1"},
        IdCase{std::string("vm:a\x7f"), "control character at position 1"}));

TEST(CoreModel, ValidateWorkloadIdQuotesSafely) {
    const Status s = validateWorkloadId(std::string("vm:\x01\"x"));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().what.find("\"vm:\\x01\\x22x\""), std::string::npos) << s.error().what;
    const Status longId = validateWorkloadId(std::string(300, 'z'));
    ASSERT_FALSE(longId.ok());
    EXPECT_NE(longId.error().what.find("...\""), std::string::npos) << longId.error().what;
    EXPECT_LT(longId.error().what.size(), 200U);
}

} // namespace
} // namespace memqos::core

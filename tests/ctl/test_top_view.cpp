// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "top_view.hpp"

namespace memqos::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

WorkloadInfo workload(std::string id, std::string cls, Bytes current, Bytes swap, double psi,
                      std::string state) {
    return WorkloadInfo{
        .objectPath = "/org/memqos1/workload/x",
        .id = std::move(id),
        .kind = "service",
        .className = std::move(cls),
        .unit = "",
        .request = 256 * kMiB,
        .limit = kGiB,
        .memoryMin = 0,
        .memoryLow = 256 * kMiB,
        .memoryHigh = 993210368,
        .memoryMax = kGiB,
        .memorySwapMax = kNoLimit,
        .memoryCurrent = current,
        .swapCurrent = swap,
        .memoryPressure = psi,
        .persistent = true,
        .reclaimedBytes = 0,
        .reclaimStall = 0.125, // not shown: top's PSI column is MemoryPressure
        .reclaimState = std::move(state),
    };
}

ClassInfo klass(std::string name, std::uint32_t rank, Bytes current, std::size_t workloads,
                Bytes swap, double psi) {
    return ClassInfo{.objectPath = "/org/memqos1/class/" + name,
                     .name = name,
                     .rank = rank,
                     .protection = "low",
                     .throttlingFactor = 0.9,
                     .killable = true,
                     .slice = "memqos-" + name + ".slice",
                     .workloads = std::vector<std::string>(workloads, "/w"),
                     .memoryCurrent = current,
                     .swapCurrent = swap,
                     .memoryPressure = psi};
}

TopFrame sampleFrame() {
    TopFrame f;
    f.status = ManagerStatus{
        .version = "0.1.0",
        .memory = {.memTotal = 16 * kGiB,
                   .memAvailable = 9 * kGiB + kGiB / 2,
                   .swapTotal = 4 * kGiB,
                   .swapFree = 3 * kGiB},
        .nodeReserved = kGiB,
        .memoryRatio = 1.5,
        .pressureLevel = 1,
        .admissionOpen = false,
        .dryRun = true,
        .reclaimedAllocatable = 2 * kGiB + kGiB / 2,
        .memoryPressureSome = 2.5,
        .memoryPressureFull = 0.75,
        .classCount = 3,
        .workloadCount = 3,
        .instances = std::nullopt,
    };
    // In the daemon's order: classes by rank, workloads as listed.
    f.classes = {klass("system", 0, 512 * kMiB, 0, 0, 0.0),
                 klass("dedicated", 1, 2 * kGiB, 1, 64 * kMiB, 1.25),
                 klass("shared", 2, 3 * kGiB + kGiB / 4, 2, 512 * kMiB, 4.5)};
    f.workloads = {
        workload("nginx.service", "shared", 300 * kMiB, 0, 0.02, "reclaiming"),
        workload("vm:web1", "dedicated", 2 * kGiB, 64 * kMiB, 0.0, "off"),
        workload("batch.service", "shared", 300 * kMiB, 512 * kMiB, 7.5, "backed-off"),
    };
    return f;
}

std::vector<std::string> workloadIds(const TopFrame& f) {
    std::vector<std::string> ids;
    for (const auto& w : f.workloads) {
        ids.push_back(w.id);
    }
    return ids;
}

std::vector<std::string> classNames(const TopFrame& f) {
    std::vector<std::string> names;
    for (const auto& c : f.classes) {
        names.push_back(c.name);
    }
    return names;
}

TEST(TopSort, UsageLargestFirstTiesByName) {
    TopFrame f = sampleFrame();
    sortTop(f, TopOrder::Usage);
    EXPECT_THAT(workloadIds(f),
                ::testing::ElementsAre("vm:web1", "batch.service", "nginx.service"));
    EXPECT_THAT(classNames(f), ::testing::ElementsAre("shared", "dedicated", "system"));
}

TEST(TopSort, PressureHighestMemoryPressureFirst) {
    TopFrame f = sampleFrame();
    sortTop(f, TopOrder::Pressure);
    EXPECT_THAT(workloadIds(f), ::testing::ElementsAre("batch.service", "nginx.service", "vm:web1"))
        << "7.5 % before 0.02 % before 0 %";
    EXPECT_THAT(classNames(f), ::testing::ElementsAre("shared", "dedicated", "system"));
    // Equal pressure: workloads by name, classes keep the daemon's order.
    for (auto& w : f.workloads) {
        w.memoryPressure = 1.0;
    }
    for (auto& c : f.classes) {
        c.memoryPressure = 1.0;
    }
    sortTop(f, TopOrder::Pressure);
    EXPECT_THAT(workloadIds(f), ::testing::ElementsAre("batch.service", "nginx.service", "vm:web1"));
    EXPECT_THAT(classNames(f), ::testing::ElementsAre("shared", "dedicated", "system"));
}

TEST(TopSort, SwapAndName) {
    TopFrame f = sampleFrame();
    sortTop(f, TopOrder::Swap);
    EXPECT_THAT(workloadIds(f),
                ::testing::ElementsAre("batch.service", "vm:web1", "nginx.service"));
    EXPECT_THAT(classNames(f), ::testing::ElementsAre("shared", "dedicated", "system"));
    sortTop(f, TopOrder::Name);
    EXPECT_THAT(workloadIds(f),
                ::testing::ElementsAre("batch.service", "nginx.service", "vm:web1"));
    EXPECT_THAT(classNames(f), ::testing::ElementsAre("dedicated", "shared", "system"));
}

TEST(TopRender, TextFrame) {
    TopFrame f = sampleFrame();
    sortTop(f, TopOrder::Usage);
    EXPECT_EQ(
        renderTopFrame(f, TopStyle{}),
        "Pressure level: 1 (admission-closed)  PSI: some 2.5% full 0.75%  Admission: closed  "
        "Dry run: yes\n"
        "Memory available: 9.5G of 16G  Swap free: 3G of 4G  Best-effort room: 2.5G\n"
        "\n"
        "CLASS      RANK  WORKLOADS  MEMORY  SWAP    PSI\n"
        "shared        2          2    3.3G  512M   4.5%\n"
        "dedicated     1          1      2G   64M  1.25%\n"
        "system        0          0    512M     0     0%\n"
        "\n"
        "WORKLOAD       CLASS      MEMORY  REQUEST    HIGH  LIMIT  SWAP    PSI  RECLAIM\n"
        "vm:web1        dedicated      2G     256M  947.2M     1G   64M     0%  off\n"
        "batch.service  shared       300M     256M  947.2M     1G  512M   7.5%  backed-off\n"
        "nginx.service  shared       300M     256M  947.2M     1G     0  0.02%  reclaiming\n");
}

TEST(TopRender, NoLegendDropsHeadersAndEmptyLines) {
    TopFrame f = sampleFrame();
    f.workloads.clear();
    const std::string out = renderTopFrame(f, TopStyle{.legend = Legend::Hide});
    EXPECT_THAT(out, Not(HasSubstr("CLASS ")));
    EXPECT_THAT(out, Not(HasSubstr("No workloads.")));
    EXPECT_THAT(out, HasSubstr("\nsystem     0  0  512M     0     0%\n"));
    EXPECT_THAT(renderTopFrame(f, TopStyle{}), HasSubstr("\nNo workloads.\n"));
}

TEST(TopRender, BoldHeadersOnlyWhenAsked) {
    const TopFrame f = sampleFrame();
    const std::string plain = renderTopFrame(f, TopStyle{});
    EXPECT_THAT(plain, Not(HasSubstr("\x1b[")));
    const std::string bold = renderTopFrame(f, TopStyle{.bold = true});
    EXPECT_THAT(bold, HasSubstr("\x1b[1mCLASS      RANK  WORKLOADS  MEMORY  SWAP    PSI\x1b[0m\n"));
    EXPECT_THAT(bold, HasSubstr("\x1b[1mWORKLOAD "));
    EXPECT_EQ(std::count(bold.begin(), bold.end(), '\x1b'), 4) << "two headers, nothing else";
    EXPECT_THAT(renderTopFrame(f, TopStyle{.legend = Legend::Hide, .bold = true}),
                Not(HasSubstr("\x1b[")));
}

TEST(TopRender, JsonFrameUsesTheApiNames) {
    const TopFrame f = sampleFrame();
    const std::string shortJson = renderTopFrame(f, TopStyle{.format = Format::JsonShort});
    EXPECT_EQ(std::count(shortJson.begin(), shortJson.end(), '\n'), 1) << "one line per frame";
    EXPECT_THAT(shortJson, HasSubstr("{\"Manager\":{\"Version\":\"0.1.0\","));
    EXPECT_THAT(shortJson,
                HasSubstr("\"PressureLevel\":1,\"PressureLevelName\":\"admission-closed\""));
    EXPECT_THAT(shortJson, HasSubstr("\"Classes\":[{\"Name\":\"system\""));
    EXPECT_THAT(shortJson, HasSubstr("\"Workloads\":[{\"Id\":\"nginx.service\""));
    EXPECT_THAT(shortJson, HasSubstr("\"MemoryPressure\":0.02,"));
    EXPECT_THAT(shortJson, HasSubstr("\"MemoryPressureSome\":2.5,\"MemoryPressureFull\":0.75"));
    EXPECT_THAT(shortJson, HasSubstr("\"SwapCurrent\":536870912,\"MemoryPressure\":4.5"));
    const std::string pretty = renderTopFrame(f, TopStyle{.format = Format::Json});
    EXPECT_THAT(pretty, HasSubstr("{\n  \"Manager\": {\n    \"Version\": \"0.1.0\","));
}

TEST(FitToHeight, KeepsRowsMinusOneLinesAndSaysWhatWasCut) {
    const std::string frame = "a\nb\nc\nd\ne\n";
    EXPECT_EQ(fitToHeight(frame, 0), frame) << "size unknown";
    EXPECT_EQ(fitToHeight(frame, 6), frame);
    EXPECT_EQ(fitToHeight(frame, 5), "a\nb\nc\n(2 more lines: a taller window shows them)\n");
    EXPECT_EQ(fitToHeight(frame, 2), "(5 more lines: a taller window shows them)\n");
    EXPECT_EQ(fitToHeight(frame, 1), "(5 more lines: a taller window shows them)\n");
}

Value prop(std::string name, Value v) {
    return Value{ValueObject{{std::move(name), std::move(v)}}};
}

TEST(TopFrameFromReplies, ClassesByRankWorkloadsById) {
    const ValueArray manager{Value{ValueObject{{"PressureLevel", Value{std::uint64_t{2}}},
                                               {"MemoryTotal", Value{std::uint64_t{kGiB}}}}}};
    auto object = [](std::string iface, ValueObject props) {
        return Value{ValueObject{{std::move(iface), Value{std::move(props)}}}};
    };
    const ValueArray managed{Value{ValueObject{
        {"/org/memqos1/class/b", object("org.memqos1.Class", {{"Name", Value{std::string("b")}},
                                                               {"Rank", Value{std::uint64_t{2}}}})},
        {"/org/memqos1/workload/z",
         object("org.memqos1.Workload", {{"Id", Value{std::string("z.service")}}})},
        {"/org/memqos1/class/a", object("org.memqos1.Class", {{"Name", Value{std::string("a")}},
                                                               {"Rank", Value{std::uint64_t{1}}}})},
        {"/org/memqos1/workload/y",
         object("org.memqos1.Workload", {{"Id", Value{std::string("y.service")}}})},
        {"/org/memqos1/other", object("org.example.Other", {})},
    }}};
    auto frame = topFrameFromReplies(manager, managed);
    ASSERT_TRUE(frame.ok()) << frame.error().what;
    ASSERT_EQ(frame->classes.size(), 2U);
    EXPECT_EQ(frame->classes[0].name, "a");
    EXPECT_EQ(frame->classes[1].name, "b");
    ASSERT_EQ(frame->workloads.size(), 2U);
    EXPECT_EQ(frame->workloads[0].id, "y.service");
    EXPECT_EQ(frame->workloads[0].objectPath, "/org/memqos1/workload/y");
    EXPECT_EQ(frame->status.pressureLevel, 2U);
    EXPECT_EQ(frame->status.classCount, 2U);
    EXPECT_EQ(frame->status.workloadCount, 2U);

    const ValueArray empty{Value{ValueArray{}}};
    auto none = topFrameFromReplies(manager, empty);
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->workloads.empty());
    EXPECT_FALSE(topFrameFromReplies(manager, ValueArray{}).ok());
    EXPECT_FALSE(topFrameFromReplies(manager, ValueArray{Value{std::string("x")}}).ok());
    EXPECT_FALSE(
        topFrameFromReplies(manager, ValueArray{prop("/p", Value{ValueObject{
                                                           {"org.memqos1.Workload",
                                                            Value{std::string("bad")}}}})})
            .ok());
}

} // namespace
} // namespace memqos::ctl

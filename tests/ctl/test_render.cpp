// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "command.hpp"
#include "json_writer.hpp"
#include "render.hpp"

namespace memqos::ctl {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

Value u64(std::uint64_t n) {
    return Value{n};
}
Value str(std::string s) {
    return Value{std::move(s)};
}

ManagerStatus sampleStatus() {
    return ManagerStatus{
        .version = "0.1.0",
        .memory = {.memTotal = 16 * kGiB,
                   .memAvailable = 9 * kGiB + kGiB / 2,
                   .swapTotal = 4 * kGiB,
                   .swapFree = 3 * kGiB},
        .nodeReserved = kGiB,
        .memoryRatio = 1.5,
        .pressureLevel = 2,
        .admissionOpen = false,
        .dryRun = true,
        .reclaimedAllocatable = 2 * kGiB,
        .classCount = 4,
        .workloadCount = 7,
        .instances = std::nullopt,
    };
}

TEST(RenderStatus, Text) {
    EXPECT_EQ(renderStatus(sampleStatus(), Format::Text), "Version:           0.1.0\n"
                                                          "Memory total:      16G\n"
                                                          "Memory available:  9.5G\n"
                                                          "Swap total:        4G\n"
                                                          "Swap free:         3G\n"
                                                          "Node reserved:     1G\n"
                                                          "Memory ratio:      1.5\n"
                                                          "Pressure level:    2 (throttle)\n"
                                                          "Admission:         closed\n"
                                                          "Dry run:           yes\n"
                                                          "Best-effort room:  2G\n"
                                                          "Classes:           4\n"
                                                          "Workloads:         7\n");
}

TEST(RenderStatus, JsonUsesApiNamesAndRawBytes) {
    const std::string json = renderStatus(sampleStatus(), Format::Json);
    EXPECT_THAT(json, HasSubstr("\"MemoryTotal\": 17179869184,"));
    EXPECT_THAT(json, HasSubstr("\"MemoryAvailable\": 10200547328,"));
    EXPECT_THAT(json, HasSubstr("\"MemoryRatio\": 1.5,"));
    EXPECT_THAT(json, HasSubstr("\"PressureLevel\": 2,"));
    EXPECT_THAT(json, HasSubstr("\"PressureLevelName\": \"throttle\","));
    EXPECT_THAT(json, HasSubstr("\"AdmissionOpen\": false,"));
    EXPECT_THAT(json, HasSubstr("\"DryRun\": true,"));
    EXPECT_THAT(json, HasSubstr("\"ClassCount\": 4,"));
    EXPECT_THAT(json, HasSubstr("\"WorkloadCount\": 7\n"));
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.substr(json.size() - 2), "}\n");
}

std::vector<Instance> sampleInstances() {
    return {
        Instance{
            .name = "db1.example.com", .minMemory = 2 * kGiB, .maxMemory = 4 * kGiB, .up = false},
        Instance{.name = "web1", .minMemory = 512 * kMiB, .maxMemory = kGiB, .up = true},
        Instance{.name = "web2", .minMemory = kGiB, .maxMemory = kGiB + kGiB / 2, .up = true},
    };
}

TEST(RenderStatus, TextWithInstances) {
    ManagerStatus s = sampleStatus();
    s.instances = sampleInstances();
    s.upInstancesMaxMemory = 2 * kGiB + kGiB / 2;
    const std::string text = renderStatus(s, Format::Text);
    EXPECT_EQ(text.substr(0, renderStatus(sampleStatus(), Format::Text).size()),
              renderStatus(sampleStatus(), Format::Text))
        << "what status printed before comes first, unchanged";
    EXPECT_THAT(text, HasSubstr("Workloads:         7\n"
                                "\n"
                                "NAME              MIN   MAX  STATE\n"
                                "db1.example.com    2G    4G  down\n"
                                "web1             512M    1G  up\n"
                                "web2               1G  1.5G  up\n"
                                "Max memory of up instances: 2.5G (2 of 3 up)\n"));
    EXPECT_EQ(text.substr(text.size() - 1), "\n");

    // memqosd's number, not a sum of the rows; none from a memqosd without it.
    s.upInstancesMaxMemory = 3 * kGiB;
    EXPECT_THAT(renderStatus(s, Format::Text),
                HasSubstr("\nMax memory of up instances: 3G (2 of 3 up)\n"));
    s.upInstancesMaxMemory = std::nullopt;
    EXPECT_THAT(renderStatus(s, Format::Text), EndsWith("web2               1G  1.5G  up\n"));

    s.instances = std::vector<Instance>{};
    EXPECT_THAT(renderStatus(s, Format::Text),
                HasSubstr("Workloads:         7\n\nNo instances.\n"));
    EXPECT_THAT(renderStatus(s, Format::Text), Not(HasSubstr("Max memory")));
}

TEST(RenderStatus, JsonWithInstances) {
    ManagerStatus s = sampleStatus();
    EXPECT_THAT(renderStatus(s, Format::Json), Not(HasSubstr("instances")))
        << "a memqosd without ListInstances: no key";
    s.instances = sampleInstances();
    s.upInstancesMaxMemory = 2 * kGiB + kGiB / 2;
    const std::string json = renderStatus(s, Format::Json);
    EXPECT_THAT(json,
                HasSubstr(",\n  \"UpInstancesMaxMemory\": 2684354560,\n  \"ClassCount\": 4,"));
    EXPECT_THAT(json, HasSubstr("\"WorkloadCount\": 7,\n  \"instances\": [\n    {\n"
                                "      \"name\": \"db1.example.com\",\n"
                                "      \"min_memory\": 2147483648,\n"
                                "      \"max_memory\": 4294967296,\n"
                                "      \"up\": false\n    },"));
    EXPECT_THAT(json, HasSubstr("\"name\": \"web2\",\n      \"min_memory\": 1073741824,\n"
                                "      \"max_memory\": 1610612736,\n      \"up\": true"));
    s.instances = std::vector<Instance>{};
    EXPECT_THAT(renderStatus(s, Format::Json), HasSubstr("\"instances\": []\n}"));
}

TEST(RenderInstances, TextAndJson) {
    EXPECT_EQ(renderInstances(sampleInstances(), Format::Text),
              "NAME              MIN   MAX  STATE\n"
              "db1.example.com    2G    4G  down\n"
              "web1             512M    1G  up\n"
              "web2               1G  1.5G  up\n");
    EXPECT_EQ(renderInstances({}, Format::Text), "No instances.\n");
    EXPECT_EQ(renderInstances({sampleInstances()[1]}, Format::Json),
              "[\n  {\n    \"name\": \"web1\",\n    \"min_memory\": 536870912,\n"
              "    \"max_memory\": 1073741824,\n    \"up\": true\n  }\n]\n");
    EXPECT_EQ(renderInstances({}, Format::Json), "[]\n");
}

TEST(PressureLevelName, AllLevels) {
    EXPECT_EQ(pressureLevelName(0), "normal");
    EXPECT_EQ(pressureLevelName(1), "admission-closed");
    EXPECT_EQ(pressureLevelName(2), "throttle");
    EXPECT_EQ(pressureLevelName(3), "kill");
    EXPECT_EQ(pressureLevelName(9), "unknown");
}

std::vector<ClassInfo> sampleClasses() {
    return {
        ClassInfo{.objectPath = "/org/memqos1/class/system",
                  .name = "system",
                  .rank = 0,
                  .protection = "min",
                  .throttlingFactor = 0.0,
                  .killable = false,
                  .slice = "memqos-system.slice",
                  .workloads = {"/a", "/b"},
                  .memoryCurrent = 512 * kMiB},
        ClassInfo{.objectPath = "/org/memqos1/class/shared",
                  .name = "shared",
                  .rank = 2,
                  .protection = "low",
                  .throttlingFactor = 0.9,
                  .killable = true,
                  .slice = "memqos-shared.slice",
                  .workloads = {},
                  .memoryCurrent = 3 * kGiB + kGiB / 4}, // 3.25G rounds half up
    };
}

TEST(RenderClasses, Table) {
    EXPECT_EQ(
        renderClasses(sampleClasses(), Format::Text),
        "NAME    RANK  PROTECTION  THROTTLE  KILLABLE  SLICE                WORKLOADS  MEMORY\n"
        "system     0  min              off  no        memqos-system.slice          2    512M\n"
        "shared     2  low              0.9  yes       memqos-shared.slice          0    3.3G\n");
    EXPECT_EQ(renderClasses({}, Format::Text), "No classes.\n");
}

TEST(RenderClasses, Json) {
    const std::string json = renderClasses(sampleClasses(), Format::Json);
    EXPECT_THAT(json, HasSubstr("\"Name\": \"shared\""));
    EXPECT_THAT(json, HasSubstr("\"ThrottlingFactor\": 0.9"));
    EXPECT_THAT(json, HasSubstr("\"Killable\": true"));
    EXPECT_THAT(json, HasSubstr("\"MemoryCurrent\": 536870912"));
    EXPECT_THAT(json, HasSubstr("\"Workloads\": [\n      \"/a\",\n      \"/b\"\n    ]"));
    EXPECT_EQ(renderClasses({}, Format::Json), "[]\n");
}

WorkloadInfo sampleWorkload() {
    return WorkloadInfo{
        .objectPath = "/org/memqos1/workload/nginx_2eservice",
        .id = "nginx.service",
        .kind = "service",
        .className = "shared",
        .unit = "nginx.service",
        .request = 256 * kMiB,
        .limit = kGiB,
        .memoryMin = 0,
        .memoryLow = 256 * kMiB,
        .memoryHigh = 993210368, // 256M + 0.9·768M, page-aligned
        .memoryMax = kGiB,
        .memorySwapMax = kNoLimit,
        .memoryCurrent = 300 * kMiB,
        .swapCurrent = 0,
        .persistent = true,
        .reclaimedBytes = 12 * kMiB,
        .reclaimStall = 0.02,
        .reclaimState = "reclaiming",
    };
}

TEST(RenderWorkloads, Table) {
    WorkloadInfo vm = sampleWorkload();
    vm.id = "vm:web1";
    vm.kind = "vm";
    vm.className = "dedicated";
    vm.request = 2 * kGiB;
    vm.limit = 2 * kGiB;
    vm.memoryMin = 2 * kGiB;
    vm.memoryLow = 0;
    vm.memoryHigh = kNoLimit;
    vm.memoryMax = 2 * kGiB;
    vm.memorySwapMax = 0;
    vm.memoryCurrent = 2 * kGiB - 1;
    vm.persistent = false;
    vm.reclaimedBytes = 0;
    vm.reclaimState = "off";
    EXPECT_EQ(renderWorkloads({sampleWorkload(), vm}, Format::Text),
              "ID             KIND     CLASS      REQUEST  LIMIT  MIN   LOW    HIGH  MAX  SWAPMAX  "
              "CURRENT  PERSIST  RECLAIMED  RECLAIM\n"
              "nginx.service  service  shared        256M     1G    0  256M  947.2M   1G      max  "
              "   300M  yes            12M  reclaiming\n"
              "vm:web1        vm       dedicated       2G     2G   2G     0     max   2G        0  "
              "     2G  no               0  off\n");
    EXPECT_EQ(renderWorkloads({}, Format::Text), "No workloads.\n");
}

// An unplaced VM (Class "", memqos only observes it) is marked as such.
TEST(RenderWorkloads, UnplacedVmIsMarked) {
    WorkloadInfo vm = sampleWorkload();
    vm.id = "vm:web1";
    vm.kind = "vm";
    vm.className = "";
    const std::string text = renderWorkloads({vm}, Format::Text);
    EXPECT_NE(text.find("vm:web1  vm    (unplaced)"), std::string::npos) << text;
}

TEST(RenderWorkloads, JsonHasEveryProperty) {
    const std::string json = renderWorkloads({sampleWorkload()}, Format::Json);
    for (const char* key : {"Id", "Kind", "Class", "Unit", "Request", "Limit", "MemoryMin",
                            "MemoryLow", "MemoryHigh", "MemoryMax", "MemorySwapMax",
                            "MemoryCurrent", "SwapCurrent", "Persistent", "ObjectPath"}) {
        EXPECT_THAT(json, HasSubstr(std::string("\"") + key + "\": ")) << key;
    }
    EXPECT_THAT(json, HasSubstr("\"MemorySwapMax\": 18446744073709551615"));
    EXPECT_THAT(json, HasSubstr("\"MemoryHigh\": 993210368"));
    EXPECT_THAT(json, HasSubstr("\"Persistent\": true"));
}

TEST(RenderPlacement, TextShowsVerdictAndNumbers) {
    const PlacementVerdict p{"soft",
                             "fits only without the failover reserve",
                             {{"available", 14 * kGiB}, {"ratio_permille", 1000}}};
    EXPECT_EQ(renderPlacement(p, Format::Text), "Verdict:  soft\n"
                                                "Message:  fits only without the failover reserve\n"
                                                "\n"
                                                "NUMBER          VALUE        BYTES\n"
                                                "available         14G  15032385536\n"
                                                "ratio_permille   1000\n");
}

TEST(RenderPlacement, RefusedSoftIsHard) {
    const PlacementVerdict p{"hard",
                             "hard: 6G asked fits under memory ratio 1.5 (7G left) only by using "
                             "the failover reserve of 4G (soft violations are refused)",
                             {{"instances", kGiB}, {"reserved", 4 * kGiB}}};
    const std::string text = renderPlacement(p, Format::Text);
    EXPECT_THAT(text, HasSubstr("Verdict:  hard\n"));
    EXPECT_THAT(text, HasSubstr("(soft violations are refused)\n"));
    EXPECT_THAT(text, HasSubstr("instances     1G  1073741824\n"));
    EXPECT_EQ(placementExitCode(p), kExitVerifyFailed);
}

TEST(RenderPlacement, Json) {
    const PlacementVerdict p{"hard", "no \"room\"", {{"available", 7}}};
    EXPECT_EQ(renderPlacement(p, Format::Json),
              "{\n  \"verdict\": \"hard\",\n  \"message\": \"no \\\"room\\\"\",\n"
              "  \"numbers\": {\n    \"available\": 7\n  }\n}\n");
}

TEST(RenderFindings, TextAndJson) {
    const std::vector<Finding> f{{"warning", "swap-short", "swap 2G < (ratio-1)*available 4G"},
                                 {"error", "no-psi", "no /proc/pressure/memory"}};
    EXPECT_EQ(renderFindings(f, Format::Text),
              "SEVERITY  CODE        MESSAGE\n"
              "warning   swap-short  swap 2G < (ratio-1)*available 4G\n"
              "error     no-psi      no /proc/pressure/memory\n");
    EXPECT_EQ(renderFindings({}, Format::Text), "No findings.\n");
    EXPECT_THAT(renderFindings(f, Format::Json), HasSubstr("\"severity\": \"error\""));
    EXPECT_EQ(renderFindings({}, Format::Json), "[]\n");
}

TEST(ExitCodes, PlacementVerdicts) {
    EXPECT_EQ(placementExitCode({"fits", "", {}}), kExitOk);
    EXPECT_EQ(placementExitCode({"soft", "", {}}), kExitOk);
    EXPECT_EQ(placementExitCode({"hard", "", {}}), kExitVerifyFailed);
    EXPECT_EQ(placementExitCode({"maybe", "", {}}), kExitDaemonError);
}

TEST(ExitCodes, VerifyFindings) {
    EXPECT_EQ(verifyExitCode({}), kExitOk);
    EXPECT_EQ(verifyExitCode({{"warning", "a", "b"}, {"info", "c", "d"}}), kExitOk);
    EXPECT_EQ(verifyExitCode({{"warning", "a", "b"}, {"error", "c", "d"}}), kExitVerifyFailed);
}

TEST(RenderSmall, WorkloadPathAndNothing) {
    EXPECT_EQ(renderWorkloadPath("/org/memqos1/workload/x", Format::Text),
              "/org/memqos1/workload/x\n");
    EXPECT_EQ(renderWorkloadPath("/org/memqos1/workload/x", Format::Json),
              "{\n  \"workload\": \"/org/memqos1/workload/x\"\n}\n");
    EXPECT_EQ(renderNothing(Format::Text), "");
    EXPECT_EQ(renderNothing(Format::Json), "{}\n");
}

TEST(RenderEvent, PressureLevelChanged) {
    const Event e{"2024-05-01T10:00:00.123+02:00",
                  "PressureLevelChanged",
                  {{"level", u64(3)}, {"reason", str("psi full avg10 12.5 > 10")}}};
    EXPECT_EQ(renderEvent(e, Format::Text),
              "2024-05-01T10:00:00.123+02:00 PressureLevelChanged level=3 (kill): "
              "psi full avg10 12.5 > 10\n");
    EXPECT_EQ(renderEvent(e, Format::Json),
              R"({"timestamp":"2024-05-01T10:00:00.123+02:00","event":"PressureLevelChanged",)"
              R"("level":3,"level_name":"kill","reason":"psi full avg10 12.5 > 10"})"
              "\n");
}

TEST(RenderEvent, WorkloadKilled) {
    const Event e{
        "T",
        "WorkloadKilled",
        {{"id", str("vm:batch")},
         {"class", str("reclaimed")},
         {"reason", str("level 3")},
         {"numbers", Value{ValueObject{{"usage", u64(2 * kGiB)}, {"oom_score", u64(1000)}}}}}};
    EXPECT_EQ(renderEvent(e, Format::Text),
              "T WorkloadKilled id=vm:batch class=reclaimed: level 3 (usage=2G oom_score=1000)\n");
    EXPECT_EQ(renderEvent(e, Format::Json),
              R"({"timestamp":"T","event":"WorkloadKilled","id":"vm:batch","class":"reclaimed",)"
              R"("reason":"level 3","numbers":{"usage":2147483648,"oom_score":1000}})"
              "\n");
}

TEST(RenderEvent, PropertiesChanged) {
    const Event e{"T",
                  "PropertiesChanged",
                  {{"interface", str("org.memqos1.Manager")},
                   {"changed", Value{ValueObject{{"MemoryAvailable", u64(8 * kGiB)},
                                                 {"PressureLevel", u64(1)},
                                                 {"AdmissionOpen", Value{false}}}}},
                   {"invalidated", Value{ValueArray{str("DryRun")}}}}};
    EXPECT_EQ(renderEvent(e, Format::Text),
              "T PropertiesChanged MemoryAvailable=8G PressureLevel=1 (admission-closed) "
              "AdmissionOpen=no DryRun=?\n");
    const std::string json = renderEvent(e, Format::Json);
    EXPECT_THAT(json, HasSubstr(R"("changed":{"MemoryAvailable":8589934592,"PressureLevel":1,)"
                                R"("AdmissionOpen":false})"));
    EXPECT_THAT(json, HasSubstr(R"("invalidated":["DryRun"])"));
    EXPECT_THAT(json, Not(HasSubstr("\n{")));
}

TEST(RenderEvent, PropertiesChangedOfAnotherInterfaceNamesIt) {
    const Event e{"T",
                  "PropertiesChanged",
                  {{"interface", str("org.memqos1.Future")},
                   {"changed", Value{ValueObject{{"Knob", u64(3)}}}},
                   {"invalidated", Value{ValueArray{}}}}};
    EXPECT_EQ(renderEvent(e, Format::Text), "T PropertiesChanged org.memqos1.Future: Knob=3\n");
}

TEST(RenderEvent, DaemonComingAndGoing) {
    Event e{"T",
            "NameOwnerChanged",
            {{"name", str("org.memqos1")}, {"old_owner", str(":1.4")}, {"new_owner", str("")}}};
    EXPECT_EQ(renderEvent(e, Format::Text), "T NameOwnerChanged: memqosd left the bus\n");
    e.args[2].value = str(":1.9");
    EXPECT_EQ(renderEvent(e, Format::Text), "T NameOwnerChanged: memqosd is on the bus as :1.9\n");
}

TEST(ValueRendering, GenericValues) {
    EXPECT_EQ(formatValue(Value{}), "-");
    EXPECT_EQ(formatValue(Value{std::int64_t{-3}}), "-3");
    EXPECT_EQ(formatValue(Value{ValueArray{u64(1), str("a")}}), "[1, a]");
    EXPECT_EQ(formatValue(Value{ValueObject{{"k", Value{true}}}}), "{k=yes}");
    JsonWriter json(JsonStyle::Compact);
    writeJsonValue(json, Value{ValueObject{{"a", Value{ValueArray{Value{}, Value{2.5}}}}}});
    EXPECT_EQ(json.str(), R"({"a":[null,2.5]})");
}

TEST(ValueRendering, NumberKeys) {
    EXPECT_TRUE(isPlainNumberKey("ratio_permille"));
    EXPECT_TRUE(isPlainNumberKey("oom_score"));
    EXPECT_FALSE(isPlainNumberKey("available"));
    EXPECT_FALSE(isPlainNumberKey("instances"));
    EXPECT_EQ(formatDouble(1.0), "1");
    EXPECT_EQ(formatDouble(0.9), "0.9");
}

} // namespace
} // namespace memqos::ctl

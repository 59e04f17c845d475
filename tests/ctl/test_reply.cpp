// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bus_error.hpp"
#include "reply.hpp"

namespace memqos::ctl {
namespace {

using ::testing::HasSubstr;

Value str(std::string s) {
    return Value{std::move(s)};
}
Value u64(std::uint64_t n) {
    return Value{n};
}
Value array(ValueArray a) {
    return Value{std::move(a)};
}

TEST(Reply, ListClasses) {
    auto r =
        classRefsFromReply({array({array({str("system"), str("/org/memqos1/class/system")}),
                                   array({str("shared"), str("/org/memqos1/class/shared")})})});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 2U);
    EXPECT_EQ((*r)[1].name, "shared");
    EXPECT_EQ((*r)[1].objectPath, "/org/memqos1/class/shared");
    EXPECT_TRUE(classRefsFromReply({array({})})->empty());
}

TEST(Reply, ListClassesMalformed) {
    EXPECT_FALSE(classRefsFromReply({}).ok());
    EXPECT_FALSE(classRefsFromReply({str("x")}).ok());
    auto r = classRefsFromReply({array({array({str("system")})})});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().what, HasSubstr("unexpected reply to ListClasses"));
    EXPECT_EQ(exitCodeFor(r.error()), kExitDaemonError);
    EXPECT_FALSE(classRefsFromReply({array({array({str("a"), u64(1)})})}).ok());
}

TEST(Reply, ListWorkloads) {
    auto r = workloadRefsFromReply({array({array(
        {str("nginx.service"), str("service"), str("shared"), str("/w/nginx_2eservice")})})});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 1U);
    EXPECT_EQ((*r)[0].id, "nginx.service");
    EXPECT_EQ((*r)[0].kind, "service");
    EXPECT_EQ((*r)[0].className, "shared");
    EXPECT_EQ((*r)[0].objectPath, "/w/nginx_2eservice");
    EXPECT_FALSE(workloadRefsFromReply({array({array({str("a"), str("b"), str("c")})})}).ok());
}

// classes and workloads: the objects of GetManagedObjects in the order of
// the List* reply sent with it; other interfaces, unlisted objects and listed
// ones that are gone are not shown.
TEST(Reply, ManagedObjectsInListOrder) {
    auto object = [](std::string interface, std::string name) {
        return Value{ValueObject{
            {std::move(interface), Value{ValueObject{{"Name", str(name)}, {"Id", str(name)}}}}}};
    };
    auto managed = managedObjectsFromReply({Value{ValueObject{
        {"/c/shared", object("org.memqos1.Class", "shared")},
        {"/w/b", object("org.memqos1.Workload", "b")},
        {"/c/system", object("org.memqos1.Class", "system")},
        {"/x", object("org.freedesktop.DBus.Peer", "x")},
        {"/w/a", object("org.memqos1.Workload", "a")},
        {"/c/new", object("org.memqos1.Class", "new")},
    }}});
    ASSERT_TRUE(managed.ok());
    ASSERT_EQ(managed->classes.size(), 3U);
    ASSERT_EQ(managed->workloads.size(), 2U);
    EXPECT_EQ(managed->classes[0].name, "shared"); // the reply's order

    auto classes = inListOrder(
        {{"system", "/c/system"}, {"gone", "/c/gone"}, {"shared", "/c/shared"}},
        managed->classes);
    ASSERT_EQ(classes.size(), 2U);
    EXPECT_EQ(classes[0].name, "system");
    EXPECT_EQ(classes[1].name, "shared");
    auto workloads = inListOrder(
        std::vector<WorkloadRef>{{"a", "service", "x", "/w/a"}, {"b", "service", "x", "/w/b"}},
        managed->workloads);
    ASSERT_EQ(workloads.size(), 2U);
    EXPECT_EQ(workloads[0].id, "a");
    EXPECT_EQ(workloads[1].id, "b");

    EXPECT_TRUE(managedObjectsFromReply({array({})})->classes.empty()); // a{} as an empty array
    EXPECT_FALSE(managedObjectsFromReply({str("x")}).ok());
    EXPECT_FALSE(managedObjectsFromReply({}).ok());
}

TEST(Reply, VerifyPlacement) {
    auto r = placementFromReply(
        {str("fits"), str("ok"), Value{ValueObject{{"available", u64(10)}, {"reserved", u64(0)}}}});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->verdict, "fits");
    EXPECT_EQ(r->message, "ok");
    ASSERT_EQ(r->numbers.size(), 2U);
    EXPECT_EQ(r->numbers[0].first, "available");
    EXPECT_EQ(r->numbers[0].second, 10U);

    EXPECT_TRUE(placementFromReply({str("fits"), str(""), Value{ValueObject{}}}).ok());
    EXPECT_TRUE(placementFromReply({str("fits"), str(""), array({})}).ok());
    EXPECT_FALSE(placementFromReply({str("fits"), str("")}).ok());
    EXPECT_FALSE(placementFromReply({u64(1), str(""), array({})}).ok());
    EXPECT_FALSE(
        placementFromReply({str("fits"), str(""), Value{ValueObject{{"available", str("lots")}}}})
            .ok());
}

TEST(Reply, Verify) {
    auto r = findingsFromReply({array({array({str("error"), str("no-psi"), str("msg")})})});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 1U);
    EXPECT_EQ((*r)[0].severity, "error");
    EXPECT_EQ((*r)[0].code, "no-psi");
    EXPECT_EQ((*r)[0].message, "msg");
    EXPECT_FALSE(findingsFromReply({array({array({str("error")})})}).ok());
}

TEST(Reply, ObjectPathAndProperties) {
    EXPECT_EQ(*objectPathFromReply({str("/org/memqos1/workload/x")}, "AssignWorkload"),
              "/org/memqos1/workload/x");
    auto bad = objectPathFromReply({}, "RunWorkload");
    ASSERT_FALSE(bad.ok());
    EXPECT_THAT(bad.error().what, HasSubstr("RunWorkload"));

    auto props = propertiesFromReply({Value{ValueObject{{"Rank", u64(2)}, {"Name", str("x")}}}});
    ASSERT_TRUE(props.ok());
    EXPECT_EQ(property(*props, "Rank").asU64(), 2U);
    EXPECT_EQ(property(*props, "Name").asString(), "x");
    EXPECT_EQ(property(*props, "Missing").asU64(7), 7U);
    EXPECT_TRUE(propertiesFromReply({array({})})->empty());
    EXPECT_FALSE(propertiesFromReply({str("x")}).ok());
}

TEST(Reply, ListInstances) {
    auto r = instancesFromReply(
        {array({array({str("db1"), u64(kGiB), u64(2 * kGiB), Value{false}}),
                array({str("web1.example.com"), u64(512 * kMiB), u64(kGiB), Value{true}})})});
    ASSERT_TRUE(r.ok()) << r.error().what;
    ASSERT_EQ(r->size(), 2U);
    EXPECT_EQ((*r)[0].name, "db1");
    EXPECT_EQ((*r)[0].minMemory, kGiB);
    EXPECT_EQ((*r)[0].maxMemory, 2 * kGiB);
    EXPECT_FALSE((*r)[0].up);
    EXPECT_EQ((*r)[1].name, "web1.example.com");
    EXPECT_TRUE((*r)[1].up);
    EXPECT_TRUE(instancesFromReply({array({})})->empty());
}

TEST(Reply, ListInstancesMalformed) {
    EXPECT_FALSE(instancesFromReply({}).ok());
    EXPECT_FALSE(instancesFromReply({str("x")}).ok());
    auto r = instancesFromReply({array({array({str("db1"), u64(1), u64(2)})})});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().what, HasSubstr("unexpected reply to ListInstances"));
    EXPECT_EQ(exitCodeFor(r.error()), kExitDaemonError);
    EXPECT_FALSE(instancesFromReply({array({array({str("db1"), u64(1), u64(2), u64(1)})})}).ok());
    EXPECT_FALSE(instancesFromReply({array({array({u64(0), u64(1), u64(2), Value{true}})})}).ok());
    EXPECT_FALSE(
        instancesFromReply({array({array({str("db1"), str("1"), u64(2), Value{true}})})}).ok());
}

TEST(Model, ManagerFromPropertiesIsLenient) {
    PropertyMap props{{"Version", str("0.1.0")},      {"MemoryTotal", u64(16 * kGiB)},
                      {"MemoryRatio", Value{1.25}},   {"PressureLevel", u64(1)},
                      {"AdmissionOpen", Value{true}}, {"DryRun", str("not a bool")},
                      {"FutureProperty", u64(1)}};
    const ManagerStatus s = managerStatusFromProperties(props, 4, 2);
    EXPECT_EQ(s.version, "0.1.0");
    EXPECT_EQ(s.memory.memTotal, 16 * kGiB);
    EXPECT_EQ(s.memory.memAvailable, 0U);
    EXPECT_DOUBLE_EQ(s.memoryRatio, 1.25);
    EXPECT_EQ(s.pressureLevel, 1U);
    EXPECT_TRUE(s.admissionOpen);
    EXPECT_FALSE(s.dryRun);
    EXPECT_EQ(s.classCount, 4U);
    EXPECT_EQ(s.workloadCount, 2U);
    EXPECT_FALSE(s.instances) << "filled in from ListInstances, not from properties";
    EXPECT_FALSE(s.upInstancesMaxMemory) << "a memqosd without the property";
    props.insert_or_assign("UpInstancesMaxMemory", u64(3 * kGiB));
    EXPECT_EQ(managerStatusFromProperties(props, 4, 2).upInstancesMaxMemory, 3 * kGiB);
}

TEST(Model, ClassAndWorkloadFromProperties) {
    const ClassInfo c =
        classFromProperties("/c", PropertyMap{{"Name", str("shared")},
                                              {"Rank", u64(2)},
                                              {"ThrottlingFactor", Value{0.9}},
                                              {"Killable", Value{true}},
                                              {"Workloads", array({str("/w/a"), str("/w/b")})},
                                              {"MemoryCurrent", u64(5)}});
    EXPECT_EQ(c.objectPath, "/c");
    EXPECT_EQ(c.name, "shared");
    EXPECT_EQ(c.rank, 2U);
    EXPECT_DOUBLE_EQ(c.throttlingFactor, 0.9);
    EXPECT_TRUE(c.killable);
    EXPECT_EQ(c.workloads.size(), 2U);
    EXPECT_EQ(c.memoryCurrent, 5U);

    const WorkloadInfo w = workloadFromProperties(
        "/w",
        PropertyMap{{"Id", str("a.service")}, {"Request", u64(1)}, {"Persistent", Value{true}}});
    EXPECT_EQ(w.id, "a.service");
    EXPECT_EQ(w.request, 1U);
    EXPECT_EQ(w.limit, kNoLimit) << "a missing limit is shown as max";
    EXPECT_EQ(w.memoryHigh, kNoLimit);
    EXPECT_TRUE(w.persistent);
}

TEST(Model, ValueAccessors) {
    EXPECT_EQ(Value{std::int64_t{5}}.asU64(), 5U);
    EXPECT_EQ(Value{std::int64_t{-5}}.asU64(9), 9U);
    EXPECT_DOUBLE_EQ(Value{std::uint64_t{3}}.asDouble(), 3.0);
    EXPECT_EQ(Value{}.asString(), "");
    EXPECT_EQ((Value{ValueArray{Value{}, Value{}}}.size()), 2U);
}

} // namespace
} // namespace memqos::ctl

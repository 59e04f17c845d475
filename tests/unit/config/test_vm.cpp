// SPDX-License-Identifier: Apache-2.0
#include "memqos/config/vm.hpp"

#include <gtest/gtest.h>

namespace memqos::config {
namespace {

TEST(VmMetadata, ReadsWhatLibvirtReturns) {
    auto m = parseVmMetadata(R"(<memqos:workload xmlns:memqos="https://memqos.org/xmlns/workload/1" class="dedicated" request="512M" limit="1G" priority="-3"/>)");
    ASSERT_TRUE(m) << m.error().what;
    EXPECT_EQ(m->className, "dedicated");
    EXPECT_EQ(m->request, 512 * kMiB);
    EXPECT_EQ(m->limit, Limit{kGiB});
    EXPECT_EQ(m->priority, -3);
    auto only = parseVmMetadata("  <workload\n class='reclaimed' limit='max'></workload>");
    ASSERT_TRUE(only) << only.error().what;
    EXPECT_EQ(only->className, "reclaimed");
    EXPECT_FALSE(only->request);
    ASSERT_TRUE(only->limit);
    EXPECT_EQ(*only->limit, Limit{});
}

TEST(VmMetadata, RoundTrips) {
    VmMetadata m{"shared", 256 * kMiB, Limit{768 * kMiB}, 5};
    auto back = parseVmMetadata(formatVmMetadata(m));
    ASSERT_TRUE(back) << back.error().what;
    EXPECT_EQ(*back, m);
}

TEST(VmMetadata, RefusesBadInput) {
    for (const char* bad : {"", "class=\"shared\"", "<workload/>", "<workload class=shared/>",
                            "<workload class=\"Shared\"/>", "<workload class=\"shared\" request=\"lots\"/>",
                            "<workload class=\"shared\" priority=\"x\"/>",
                            "<workload class=\"a&amp;b\"/>", "<workload class=\"shared\"",
                            "<workload class=\"shared"}) {
        EXPECT_FALSE(parseVmMetadata(bad)) << bad;
    }
    auto e = parseVmMetadata("<w class=\"shared\" request=\"12Q\"/>");
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().what.find("request="), std::string::npos) << e.error().what;
}

TEST(WithPartition, ReplacesInsertsOrAdds) {
    const std::string replaced = *withPartition(
        "<domain type='qemu'>\n  <name>a</name>\n  <resource>\n    <partition>/machine</partition>\n  </resource>\n</domain>\n",
        "/memqos/shared");
    EXPECT_NE(replaced.find("<partition>/memqos/shared</partition>"), std::string::npos);
    EXPECT_EQ(replaced.find("/machine"), std::string::npos);
    const std::string added = *withPartition("<domain type='qemu'>\n  <name>a</name>\n</domain>\n",
                                             "/memqos/reclaimed");
    EXPECT_NE(added.find("<resource>\n    <partition>/memqos/reclaimed</partition>\n  </resource>\n</domain>"),
              std::string::npos)
        << added;
    const std::string inserted = *withPartition(
        "<domain>\n  <resource>\n    <fibrechannel appid='x'/>\n  </resource>\n</domain>", "/memqos/system");
    EXPECT_NE(inserted.find("<resource>\n    <partition>/memqos/system</partition>"), std::string::npos);
}

TEST(WithPartition, RefusesBadInput) {
    EXPECT_FALSE(withPartition("<domain></domain>", "memqos/shared"));
    EXPECT_FALSE(withPartition("<domain></domain>", "/memqos/../x"));
    EXPECT_FALSE(withPartition("<domain></domain>", "/memqos//x"));
    EXPECT_FALSE(withPartition("<domain></domain>", "/memqos/x<y"));
    EXPECT_FALSE(withPartition("<network></network>", "/memqos/shared"));
    EXPECT_FALSE(withPartition("<domain><resource><partition>/x</domain>", "/memqos/shared"));
}

TEST(ProcCgroup, FindsTheV2Line) {
    EXPECT_EQ(*parseProcCgroup("0::/machine.slice/machine-qemu\\x2d1\\x2dvm.scope/libvirt/emulator\n"),
              "machine.slice/machine-qemu\\x2d1\\x2dvm.scope/libvirt/emulator");
    EXPECT_EQ(*parseProcCgroup("1:name=systemd:/x\n0::/\n"), "");
    EXPECT_FALSE(parseProcCgroup("1:memory:/x\n"));
    EXPECT_FALSE(parseProcCgroup("0::relative\n"));
}

TEST(UnitOfCgroup, FirstScopeOrService) {
    auto u = unitOfCgroup("machine.slice/machine-qemu\\x2d1\\x2dvm.scope/libvirt/emulator");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->unit, "machine-qemu\\x2d1\\x2dvm.scope");
    EXPECT_EQ(u->path, "machine.slice/machine-qemu\\x2d1\\x2dvm.scope");
    auto g = unitOfCgroup("system.slice/ganeti.service");
    ASSERT_TRUE(g);
    EXPECT_EQ(g->unit, "ganeti.service");
    EXPECT_FALSE(unitOfCgroup("memqos.slice/memqos-shared.slice"));
    EXPECT_FALSE(unitOfCgroup("a/.scope"));
    EXPECT_FALSE(unitOfCgroup(""));
}

TEST(ClassFromTags, FirstValidTag) {
    EXPECT_EQ(classFromTags("web memqos:class:reclaimed memqos:class=shared"), "reclaimed");
    EXPECT_EQ(classFromTags("memqos:class=Bad memqos:class=dedicated"), "dedicated");
    EXPECT_FALSE(classFromTags(""));
    EXPECT_FALSE(classFromTags("memqos:class= other"));
}

TEST(EscapeUnitComponent, LikeSystemdEscape) {
    EXPECT_EQ(escapeUnitComponent("inst1.example.test"), "inst1.example.test");
    EXPECT_EQ(escapeUnitComponent("a-b c/d"), "a\\x2db\\x20c-d");
    EXPECT_EQ(escapeUnitComponent(".hidden"), "\\x2ehidden");
}

} // namespace
} // namespace memqos::config

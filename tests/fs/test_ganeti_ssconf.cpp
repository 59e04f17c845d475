// SPDX-License-Identifier: Apache-2.0
// HmpGanetiKvm's ssconf readers on a real directory: what Ganeti writes on
// every node (ssconf_cluster_tags, one tag a line).
#include "memqos/io/file.hpp"
#include "memqos/io/hmp_ganeti_kvm.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <string>
#include <vector>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

using test::TempDir;

TEST(GanetiSsconf, ClusterTagsOneALine) {
    TempDir tmp;
    boost::asio::io_context io;
    const HmpGanetiKvm kvm(io, tmp.path() / "kvm", tmp.path());
    auto none = kvm.clusterTags();
    ASSERT_FALSE(none);
    EXPECT_TRUE(isVanished(none.error())) << none.error().what;

    test::writeFile(tmp.path() / "ssconf_cluster_tags",
                    "memqos:memory-ratio:1.5\nmemqos:mem-node:512M\r\n\nother\n");
    auto tags = kvm.clusterTags();
    ASSERT_TRUE(tags) << tags.error().what;
    EXPECT_EQ(*tags, (std::vector<std::string>{"memqos:memory-ratio:1.5", "memqos:mem-node:512M",
                                               "other"}));

    test::writeFile(tmp.path() / "ssconf_cluster_tags", "");
    tags = kvm.clusterTags();
    ASSERT_TRUE(tags) << tags.error().what;
    EXPECT_TRUE(tags->empty());
}

} // namespace
} // namespace memqos::io

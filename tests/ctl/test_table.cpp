// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "table.hpp"

namespace memqos::ctl {
namespace {

TEST(Table, AlignsColumnsWithoutTrailingBlanks) {
    Table t({{"NAME"}, {"SIZE", Align::Right}, {"NOTE"}});
    t.addRow({"system", "1G", "x"});
    t.addRow({"reclaimed", "256M", ""});
    EXPECT_EQ(t.render(), "NAME       SIZE  NOTE\n"
                          "system       1G  x\n"
                          "reclaimed  256M\n");
}

TEST(Table, HiddenHeaderDoesNotWidenColumns) {
    Table t({{"WORKLOAD"}, {"REQUEST", Align::Right}, {"CLASS"}});
    t.addRow({"a", "1G", "x"});
    t.addRow({"bc", "256M", "y"});
    EXPECT_EQ(t.render(Legend::Hide), "a     1G  x\n"
                                      "bc  256M  y\n");
    EXPECT_EQ(t.render(Legend::Show), "WORKLOAD  REQUEST  CLASS\n"
                                      "a              1G  x\n"
                                      "bc           256M  y\n");
    EXPECT_EQ(Table({{"A"}, {"B"}}).render(Legend::Hide), "") << "no rows, no lines";
}

TEST(Table, HeaderOnlyWhenEmpty) {
    Table t({{"A"}, {"B"}});
    EXPECT_EQ(t.rows(), 0U);
    EXPECT_EQ(t.render(), "A  B\n");
}

TEST(Table, CountsUtf8CodePoints) {
    EXPECT_EQ(displayWidth("caf\xc3\xa9"), 4U);
    Table t({{"N"}, {"X"}});
    t.addRow({"caf\xc3\xa9", "1"});
    t.addRow({"abcde", "2"});
    EXPECT_EQ(t.render(), "N      X\ncaf\xc3\xa9   1\nabcde  2\n");
}

TEST(KeyValues, PadsKeys) {
    EXPECT_EQ(renderKeyValues({{"Version", "0.1.0"}, {"Memory total", "16G"}}),
              "Version:       0.1.0\n"
              "Memory total:  16G\n");
}

} // namespace
} // namespace memqos::ctl

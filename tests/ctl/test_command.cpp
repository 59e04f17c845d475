// SPDX-License-Identifier: Apache-2.0
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "command.hpp"

namespace memqos::ctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Result<Command> parse(const std::vector<std::string>& args,
                      const std::optional<std::string>& env = std::nullopt) {
    return parseCommandLine(args, env);
}

Command ok(const std::vector<std::string>& args,
           const std::optional<std::string>& env = std::nullopt) {
    auto r = parse(args, env);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().what);
    return r.ok() ? *r : Command{};
}

std::string usageError(const std::vector<std::string>& args) {
    auto r = parse(args);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string{} : r.error().what;
}

TEST(ParseCommandLine, StatusAndShowTakeAnId) {
    EXPECT_EQ(ok({"status"}).id, "");
    EXPECT_EQ(ok({"status", "nginx"}).id, "nginx.service");
    EXPECT_EQ(ok({"status", "vm:web1"}).id, "vm:web1");
    Command c = ok({"show"});
    EXPECT_EQ(c.verb, Verb::Show);
    EXPECT_EQ(c.id, "");
    EXPECT_TRUE(c.properties.empty());
    EXPECT_FALSE(c.valueOnly);
    c = ok({"show", "nginx", "-p", "MemoryHigh,Limit", "--property=Id", "-pClass", "--value"});
    EXPECT_EQ(c.id, "nginx.service");
    EXPECT_THAT(c.properties, ElementsAre("MemoryHigh", "Limit", "Id", "Class"));
    EXPECT_TRUE(c.valueOnly);
    EXPECT_THAT(usageError({"show", "-p", ","}), HasSubstr("-p: no property name given"));
    EXPECT_THAT(usageError({"show", "a", "b"}), HasSubstr("unexpected argument 'b'"));
    EXPECT_THAT(usageError({"status", ""}), HasSubstr("'status': ID must not be empty"));
    EXPECT_THAT(usageError({"status", "-p", "x"}), HasSubstr("unknown option '-p' for 'status'"));
    EXPECT_THAT(usageError({"status", "--value"}),
                HasSubstr("unknown option '--value' for 'status'"));
}

TEST(ParseCommandLine, SimpleVerbs) {
    EXPECT_EQ(ok({"status"}).verb, Verb::Status);
    EXPECT_EQ(ok({"classes"}).verb, Verb::Classes);
    EXPECT_EQ(ok({"workloads"}).verb, Verb::Workloads);
    EXPECT_EQ(ok({"verify"}).verb, Verb::Verify);
    EXPECT_EQ(ok({"reload"}).verb, Verb::Reload);
    EXPECT_EQ(ok({"monitor"}).verb, Verb::Monitor);
    EXPECT_EQ(ok({"status"}).action, Action::Execute);
    EXPECT_EQ(ok({"status"}).json, JsonMode::Off);
    EXPECT_EQ(ok({"top"}).verb, Verb::Top);
}

TEST(ParseCommandLine, DefaultsToTheSystemBus) {
    const Command c = ok({"status"});
    EXPECT_EQ(c.bus.kind, BusChoice::Kind::System);
}

TEST(ParseCommandLine, BusAddressFromOptionOrEnvironment) {
    Command c = ok({"--bus-address", "unix:path=/tmp/b", "status"});
    EXPECT_EQ(c.bus.kind, BusChoice::Kind::Address);
    EXPECT_EQ(c.bus.address, "unix:path=/tmp/b");

    c = ok({"--bus-address=unix:path=/tmp/c", "status"});
    EXPECT_EQ(c.bus.address, "unix:path=/tmp/c");

    c = ok({"status"}, "unix:path=/tmp/env");
    EXPECT_EQ(c.bus.kind, BusChoice::Kind::Address);
    EXPECT_EQ(c.bus.address, "unix:path=/tmp/env");

    c = ok({"status"}, "");
    EXPECT_EQ(c.bus.kind, BusChoice::Kind::System) << "an empty variable is unset";

    c = ok({"--bus-address", "unix:path=/tmp/opt", "status"}, "unix:path=/tmp/env");
    EXPECT_EQ(c.bus.address, "unix:path=/tmp/opt");

    c = ok({"--system", "status"}, "unix:path=/tmp/env");
    EXPECT_EQ(c.bus.kind, BusChoice::Kind::System) << "--system overrides the environment";
}

TEST(ParseCommandLine, GlobalOptionsAlsoAfterTheCommand) {
    const Command c = ok({"workloads", "--json"});
    EXPECT_EQ(c.json, JsonMode::Pretty);
    EXPECT_EQ(c.verb, Verb::Workloads);
    EXPECT_EQ(ok({"status", "--bus-address", "unix:path=/x"}).bus.address, "unix:path=/x");
}

TEST(ParseCommandLine, AssignDefaults) {
    const Command c = ok({"assign", "nginx.service", "shared"});
    EXPECT_EQ(c.verb, Verb::Assign);
    EXPECT_EQ(c.id, "nginx.service");
    EXPECT_EQ(c.className, "shared");
    EXPECT_EQ(c.request, 0U);
    EXPECT_EQ(c.limit, kNoLimit);
    EXPECT_TRUE(c.persist);
}

TEST(ParseCommandLine, AssignWithSizes) {
    const Command c =
        ok({"assign", "vm:web1", "dedicated", "--request", "1.5G", "--limit=2G", "--runtime"});
    EXPECT_EQ(c.id, "vm:web1");
    EXPECT_EQ(c.request, kGiB + kGiB / 2);
    EXPECT_EQ(c.limit, 2 * kGiB);
    EXPECT_FALSE(c.persist);
    EXPECT_EQ(ok({"assign", "a.service", "shared", "--limit", "max"}).limit, kNoLimit);
    EXPECT_EQ(ok({"--json", "assign", "--request", "1M", "a.service", "shared"}).request, kMiB);
}

TEST(ParseCommandLine, AssignErrors) {
    EXPECT_THAT(usageError({"assign"}), HasSubstr("'assign' needs ID and CLASS"));
    EXPECT_THAT(usageError({"assign", "x.service"}), HasSubstr("needs ID and CLASS"));
    EXPECT_THAT(usageError({"assign", "a", "b", "c"}), HasSubstr("unexpected argument 'c'"));
    EXPECT_THAT(usageError({"assign", "a", "b", "--request", "lots"}),
                HasSubstr("--request: bad size 'lots'"));
    EXPECT_THAT(usageError({"assign", "a", "b", "--request", "max"}),
                HasSubstr("only allowed for a limit"));
    EXPECT_THAT(usageError({"assign", "a", "b", "--request"}),
                HasSubstr("option '--request' needs a value"));
    EXPECT_THAT(usageError({"assign", "a", "b", "--runtime=yes"}), HasSubstr("takes no value"));
    EXPECT_THAT(usageError({"assign", "a", "b", "--failover-reserve", "1G"}),
                HasSubstr("unknown option '--failover-reserve' for 'assign'"));
    EXPECT_THAT(usageError({"assign", "", "shared"}), HasSubstr("must not be empty"));
}

TEST(ParseCommandLine, Unassign) {
    EXPECT_EQ(ok({"unassign", "nginx.service"}).id, "nginx.service");
    EXPECT_THAT(usageError({"unassign"}), HasSubstr("'unassign' needs ID"));
    EXPECT_THAT(usageError({"unassign", "a", "b"}), HasSubstr("unexpected argument 'b'"));
}

TEST(ParseCommandLine, RunWithDoubleDash) {
    const Command c = ok({"run", "--class", "reclaimed", "--request", "256M", "--limit", "1G", "--",
                          "stress-ng", "--vm", "1", "--json"});
    EXPECT_EQ(c.verb, Verb::Run);
    EXPECT_EQ(c.className, "reclaimed");
    EXPECT_EQ(c.request, 256 * kMiB);
    EXPECT_EQ(c.limit, kGiB);
    EXPECT_TRUE(c.unitName.empty());
    EXPECT_EQ(c.json, JsonMode::Off) << "--json after -- belongs to the command";
    EXPECT_THAT(c.argv, ElementsAre("stress-ng", "--vm", "1", "--json"));
}

TEST(ParseCommandLine, RunCommandStartsAtFirstArgument) {
    const Command c = ok({"run", "--name", "batch", "--class=shared", "sleep", "--help"});
    EXPECT_EQ(c.unitName, "batch");
    EXPECT_EQ(c.action, Action::Execute) << "--help belongs to sleep";
    EXPECT_THAT(c.argv, ElementsAre("sleep", "--help"));
}

TEST(ParseCommandLine, RunErrors) {
    EXPECT_THAT(usageError({"run", "--", "sleep", "1"}), HasSubstr("'run' needs --class CLASS"));
    EXPECT_THAT(usageError({"run", "--class", "shared"}), HasSubstr("needs a command to run"));
    EXPECT_THAT(usageError({"run", "--class", "shared", "--"}), HasSubstr("needs a command"));
    EXPECT_THAT(usageError({"run", "--class"}), HasSubstr("needs a value"));
    EXPECT_THAT(usageError({"run", "--class", "shared", "--limit", "1Z", "--", "x"}),
                HasSubstr("--limit: bad size '1Z'"));
    EXPECT_THAT(usageError({"run", "--name=", "--class", "x", "--", "y"}), HasSubstr("empty"));
}

TEST(ParseCommandLine, VerifyPlacement) {
    Command c = ok({"verify-placement", "8G"});
    EXPECT_EQ(c.verb, Verb::VerifyPlacement);
    EXPECT_EQ(c.memory, 8 * kGiB);
    EXPECT_EQ(c.minMemory, 8 * kGiB) << "MIN_MEMORY defaults to MEMORY";
    EXPECT_FALSE(c.failoverReserve);

    c = ok({"verify-placement", "8G", "4G", "--failover-reserve", "2G"});
    EXPECT_EQ(c.minMemory, 4 * kGiB);
    ASSERT_TRUE(c.failoverReserve);
    EXPECT_EQ(*c.failoverReserve, 2 * kGiB);

    c = ok({"verify-placement", "--failover-reserve=0", "1G"});
    ASSERT_TRUE(c.failoverReserve);
    EXPECT_EQ(*c.failoverReserve, 0U);
    EXPECT_EQ(c.className, "") << "no --class: the option is not sent";

    c = ok({"verify-placement", "1G", "--class", "dedicated"});
    EXPECT_EQ(c.className, "dedicated");
}

TEST(ParseCommandLine, VerifyPlacementErrors) {
    EXPECT_THAT(usageError({"verify-placement"}), HasSubstr("needs MEMORY"));
    EXPECT_THAT(usageError({"verify-placement", "8X"}), HasSubstr("MEMORY: bad size '8X'"));
    EXPECT_THAT(usageError({"verify-placement", "8G", "nope"}),
                HasSubstr("MIN_MEMORY: bad size 'nope'"));
    EXPECT_THAT(usageError({"verify-placement", "max"}), HasSubstr("only allowed for a limit"));
    EXPECT_THAT(usageError({"verify-placement", "1G", "1G", "1G"}),
                HasSubstr("unexpected argument"));
    EXPECT_THAT(usageError({"verify-placement", "1G", "--failover-reserve", "x"}),
                HasSubstr("--failover-reserve: bad size"));
}

TEST(ParseCommandLine, VerifyPlacementNewOptions) {
    Command c = ok({"verify-placement", "8G", "--min", "4G", "--refuse-soft", "--instance",
                    "web1.example.com"});
    EXPECT_EQ(c.memory, 8 * kGiB);
    EXPECT_EQ(c.minMemory, 4 * kGiB) << "--min instead of MIN_MEMORY";
    EXPECT_TRUE(c.refuseSoft);
    EXPECT_EQ(c.instance, "web1.example.com");
    EXPECT_FALSE(c.failoverReserve);

    c = ok({"verify-placement", "--instance=db1", "--min=512M", "1G"});
    EXPECT_EQ(c.minMemory, 512 * kMiB);
    EXPECT_EQ(c.instance, "db1");
    EXPECT_FALSE(c.refuseSoft) << "refuse_soft is off unless asked";

    c = ok({"verify-placement", "2G"});
    EXPECT_FALSE(c.refuseSoft);
    EXPECT_TRUE(c.instance.empty());
}

TEST(ParseCommandLine, VerifyPlacementNewOptionErrors) {
    EXPECT_THAT(usageError({"verify-placement", "8G", "4G", "--min", "2G"}),
                HasSubstr("give MIN_MEMORY or --min, not both"));
    EXPECT_THAT(usageError({"verify-placement", "8G", "--min", "lots"}),
                HasSubstr("--min: bad size 'lots'"));
    EXPECT_THAT(usageError({"verify-placement", "8G", "--min"}),
                HasSubstr("option '--min' needs a value"));
    EXPECT_THAT(usageError({"verify-placement", "8G", "--refuse-soft=yes"}),
                HasSubstr("option '--refuse-soft' takes no value"));
    EXPECT_THAT(usageError({"verify-placement", "8G", "--instance"}), HasSubstr("needs a value"));
    EXPECT_THAT(usageError({"verify-placement", "8G", "--instance="}),
                HasSubstr("--instance: the instance name is empty"));
    EXPECT_THAT(usageError({"verify-placement", "8G", "--max", "8G"}),
                HasSubstr("unknown option '--max' for 'verify-placement'"));
    EXPECT_THAT(usageError({"assign", "a.service", "shared", "--refuse-soft"}),
                HasSubstr("unknown option '--refuse-soft' for 'assign'"));
}

TEST(ParseCommandLine, RecordInstanceDefaults) {
    const Command c = ok({"record-instance", "web1.example.com", "--max", "2G"});
    EXPECT_EQ(c.verb, Verb::RecordInstance);
    EXPECT_EQ(c.instance, "web1.example.com");
    EXPECT_EQ(c.memory, 2 * kGiB);
    EXPECT_EQ(c.minMemory, 2 * kGiB) << "--min defaults to --max";
    EXPECT_TRUE(c.up) << "--up is the default";
}

TEST(ParseCommandLine, RecordInstanceOptions) {
    Command c = ok({"record-instance", "--min", "512M", "db1", "--max=1.5G", "--down"});
    EXPECT_EQ(c.instance, "db1");
    EXPECT_EQ(c.memory, kGiB + kGiB / 2);
    EXPECT_EQ(c.minMemory, 512 * kMiB);
    EXPECT_FALSE(c.up);

    c = ok({"--json", "record-instance", "db1", "--max", "1073741824", "--up"});
    EXPECT_EQ(c.json, JsonMode::Pretty);
    EXPECT_EQ(c.memory, kGiB) << "plain bytes";
    EXPECT_TRUE(c.up);

    // The daemon judges these (SizeOutOfRange, InvalidArgument), not the parser.
    EXPECT_EQ(ok({"record-instance", "db1", "--max", "0"}).memory, 0U);
    c = ok({"record-instance", "db1", "--max", "1G", "--min", "2G"});
    EXPECT_EQ(c.minMemory, 2 * kGiB);
    EXPECT_EQ(ok({"record-instance", "../bad name", "--max", "1G"}).instance, "../bad name");
}

TEST(ParseCommandLine, RecordInstanceErrors) {
    EXPECT_THAT(usageError({"record-instance"}), HasSubstr("'record-instance' needs NAME"));
    EXPECT_THAT(usageError({"record-instance", "db1"}),
                HasSubstr("'record-instance' needs --max SIZE"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--min", "1G"}),
                HasSubstr("needs --max SIZE"));
    EXPECT_THAT(usageError({"record-instance", "db1", "db2", "--max", "1G"}),
                HasSubstr("unexpected argument 'db2'"));
    EXPECT_THAT(usageError({"record-instance", "", "--max", "1G"}),
                HasSubstr("NAME must not be empty"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--max", "max"}),
                HasSubstr("only allowed for a limit"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--max", "1Q"}),
                HasSubstr("--max: bad size '1Q'"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--max"}), HasSubstr("needs a value"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--max", "1G", "--up", "--down"}),
                HasSubstr("'--up' and '--down' exclude each other"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--max", "1G", "--down=1"}),
                HasSubstr("takes no value"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--max", "1G", "--limit", "1G"}),
                HasSubstr("unknown option '--limit' for 'record-instance'"));
    EXPECT_THAT(usageError({"record-instance", "db1", "--max", "1G", "--refuse-soft"}),
                HasSubstr("unknown option '--refuse-soft' for 'record-instance'"));
}

TEST(ParseCommandLine, ForgetInstanceAndInstances) {
    Command c = ok({"forget-instance", "web1.example.com"});
    EXPECT_EQ(c.verb, Verb::ForgetInstance);
    EXPECT_EQ(c.instance, "web1.example.com");
    EXPECT_THAT(usageError({"forget-instance"}), HasSubstr("'forget-instance' needs NAME"));
    EXPECT_THAT(usageError({"forget-instance", "a", "b"}), HasSubstr("unexpected argument 'b'"));
    EXPECT_THAT(usageError({"forget-instance", ""}), HasSubstr("NAME must not be empty"));
    EXPECT_THAT(usageError({"forget-instance", "a", "--max", "1G"}),
                HasSubstr("unknown option '--max' for 'forget-instance'"));

    c = ok({"instances", "--json"});
    EXPECT_EQ(c.verb, Verb::Instances);
    EXPECT_EQ(c.json, JsonMode::Pretty);
    EXPECT_THAT(usageError({"instances", "db1"}), HasSubstr("unexpected argument 'db1'"));
    EXPECT_EQ(ok({"record-instance", "--help"}).action, Action::Help) << "no 'needs NAME' error";
}

TEST(ParseCommandLine, UsageErrors) {
    EXPECT_THAT(usageError({}), HasSubstr("no command given"));
    EXPECT_THAT(usageError({"frobnicate"}), HasSubstr("unknown command 'frobnicate'"));
    EXPECT_THAT(usageError({"--frob", "status"}), HasSubstr("unknown option '--frob'"));
    EXPECT_THAT(usageError({"classes", "extra"}), HasSubstr("unexpected argument 'extra'"));
    EXPECT_THAT(usageError({"status", "a", "b"}), HasSubstr("unexpected argument 'b'"));
    EXPECT_THAT(usageError({"status", "--request", "1G"}),
                HasSubstr("unknown option '--request' for 'status'"));
    EXPECT_THAT(usageError({"--request", "1G", "assign", "a", "b"}),
                HasSubstr("unknown option '--request'"));
    EXPECT_THAT(usageError({"--json=yes", "status"}),
                HasSubstr("--json: 'yes' is not one of pretty, short, off"));
    EXPECT_THAT(usageError({"--no-legend=1", "status"}), HasSubstr("takes no value"));
    EXPECT_THAT(usageError({"--bus-address"}), HasSubstr("needs a value"));
    EXPECT_THAT(usageError({"--bus-address=", "status"}), HasSubstr("address is empty"));
}

TEST(ParseCommandLine, JsonModes) {
    EXPECT_EQ(ok({"--json", "status"}).json, JsonMode::Pretty) << "bare --json is pretty";
    EXPECT_EQ(ok({"--json=pretty", "status"}).json, JsonMode::Pretty);
    EXPECT_EQ(ok({"--json=short", "status"}).json, JsonMode::Short);
    EXPECT_EQ(ok({"--json=short", "status", "--json=off"}).json, JsonMode::Off) << "last wins";
    EXPECT_EQ(ok({"--json", "status"}).verb, Verb::Status) << "the value is never the next word";
    EXPECT_THAT(usageError({"--json=", "status"}), HasSubstr("'' is not one of"));
}

TEST(ParseCommandLine, LegendAndPager) {
    EXPECT_TRUE(ok({"workloads"}).legend);
    EXPECT_FALSE(ok({"--no-legend", "workloads"}).legend);
    EXPECT_FALSE(ok({"workloads", "--no-legend"}).legend);
    EXPECT_FALSE(ok({"--legend=no", "workloads"}).legend);
    EXPECT_FALSE(ok({"--legend", "false", "workloads"}).legend);
    EXPECT_TRUE(ok({"--no-legend", "workloads", "--legend=yes"}).legend) << "the last one wins";
    EXPECT_THAT(usageError({"--legend=maybe", "workloads"}),
                HasSubstr("--legend: 'maybe' is not a boolean (yes or no)"));
    EXPECT_THAT(usageError({"--legend", "workloads"}),
                HasSubstr("--legend: 'workloads' is not a boolean"))
        << "--legend takes the next word as its value";
    EXPECT_TRUE(ok({"status"}).pager);
    const Command c = ok({"--no-pager", "status"});
    EXPECT_EQ(c.verb, Verb::Status);
    EXPECT_FALSE(c.pager);
    EXPECT_EQ(c.action, Action::Execute);
    EXPECT_THAT(usageError({"--no-pager=yes", "status"}), HasSubstr("takes no value"));
}

TEST(ParseCommandLine, Quiet) {
    EXPECT_FALSE(ok({"verify"}).quiet);
    EXPECT_TRUE(ok({"-q", "verify"}).quiet);
    EXPECT_TRUE(ok({"assign", "x", "shared", "--quiet"}).quiet);
    EXPECT_TRUE(ok({"top", "-qbn1"}).quiet) << "groups with top's short options";
    EXPECT_THAT(usageError({"--quiet=yes", "verify"}), HasSubstr("takes no value"));
}

TEST(ParseCommandLine, TopDefaults) {
    const Command c = ok({"top"});
    EXPECT_EQ(c.order, TopOrder::Usage);
    EXPECT_EQ(c.delayMs, 1000);
    EXPECT_EQ(c.iterations, 0U);
    EXPECT_FALSE(c.batch);
}

TEST(ParseCommandLine, TopOptions) {
    Command c = ok({"top", "--order=pressure", "--delay=0.25", "--iterations=2", "--batch"});
    EXPECT_EQ(c.order, TopOrder::Pressure);
    EXPECT_EQ(c.delayMs, 250);
    EXPECT_EQ(c.iterations, 2U);
    EXPECT_TRUE(c.batch);
    c = ok({"top", "-o", "swap", "-d", "3", "-n", "5", "-b"});
    EXPECT_EQ(c.order, TopOrder::Swap);
    EXPECT_EQ(c.delayMs, 3000);
    EXPECT_EQ(c.iterations, 5U);
    EXPECT_TRUE(c.batch);
    EXPECT_EQ(ok({"top", "--order", "name"}).order, TopOrder::Name);
    EXPECT_EQ(ok({"top", "--order=usage"}).order, TopOrder::Usage);
    EXPECT_EQ(ok({"top", "--delay", "0.0001"}).delayMs, 1) << "rounded up to 1 ms";
    EXPECT_EQ(ok({"top", "--delay", "1.0005"}).delayMs, 1001);
}

TEST(ParseCommandLine, TopErrors) {
    EXPECT_THAT(usageError({"top", "--order=cpu"}),
                HasSubstr("--order: 'cpu' is not one of usage, pressure, swap, name"));
    for (const char* delay : {"0", "-1", "abc", "1s", "", "nan", "inf", "86401"}) {
        EXPECT_THAT(usageError({"top", "--delay", delay}), HasSubstr("is not a delay in seconds"))
            << delay;
    }
    for (const char* n : {"0", "-1", "x", "2.5", ""}) {
        EXPECT_THAT(usageError({"top", "--iterations", n}), HasSubstr("is not a number of frames"))
            << n;
    }
    EXPECT_THAT(usageError({"top", "--batch=yes"}), HasSubstr("takes no value"));
    EXPECT_THAT(usageError({"top", "extra"}), HasSubstr("unexpected argument 'extra'"));
    EXPECT_THAT(usageError({"status", "--iterations", "2"}),
                HasSubstr("unknown option '--iterations' for 'status'"));
    EXPECT_THAT(usageError({"top", "--delay"}), HasSubstr("needs a value"));
}

// getopt_long (issue 13): the same forms as memqosd and memqos-ganeti-hook.
TEST(ParseCommandLine, ValueAttachedOrSeparate) {
    EXPECT_EQ(ok({"assign", "a.service", "shared", "--request=256M"}).request, 256 * kMiB);
    EXPECT_EQ(ok({"assign", "a.service", "shared", "--request", "256M"}).request, 256 * kMiB);
    EXPECT_EQ(ok({"record-instance", "db1", "--max=2G"}).memory, 2 * kGiB);
    EXPECT_EQ(ok({"record-instance", "db1", "--max", "2G"}).memory, 2 * kGiB);
    EXPECT_THAT(usageError({"top", "--iterations", "-1"}),
                HasSubstr("--iterations: '-1' is not a number of frames"))
        << "a separate value is taken even when it starts with '-'";
}

TEST(ParseCommandLine, ShortOptionsWithAttachedValues) {
    Command c = ok({"top", "-d2", "-n3"});
    EXPECT_EQ(c.delayMs, 2000);
    EXPECT_EQ(c.iterations, 3U);
    EXPECT_THAT(usageError({"top", "-ocpu"}), HasSubstr("-o: 'cpu' is not one of"));
    c = ok({"top", "-bn1", "-d", "0.5"});
    EXPECT_TRUE(c.batch) << "clustered flags";
    EXPECT_EQ(c.iterations, 1U);
    EXPECT_EQ(c.delayMs, 500);
    EXPECT_EQ(ok({"top", "-oname"}).order, TopOrder::Name);
    EXPECT_THAT(usageError({"top", "-d"}), HasSubstr("option '-d' needs a value"));
    EXPECT_THAT(usageError({"top", "-x"}), HasSubstr("unknown option '-x' for 'top'"));
    EXPECT_THAT(usageError({"status", "-d2"}), HasSubstr("unknown option '-d' for 'status'"));
}

TEST(ParseCommandLine, DoubleDashEndsOptions) {
    EXPECT_THAT(usageError({"classes", "--", "--json"}),
                HasSubstr("unexpected argument '--json'"))
        << "after --, --json is an argument";
    EXPECT_EQ(ok({"status", "--", "--json"}).id, "--json.service") << "an ID, after --";
    Command c = ok({"unassign", "--", "-weird-.service"});
    EXPECT_EQ(c.id, "-weird-.service");
    c = ok({"--", "status"});
    EXPECT_EQ(c.verb, Verb::Status);
    // run: everything after -- is the command, options and "--" included.
    c = ok({"--json", "run", "--class", "x", "--", "env", "--", "-h", "--class=y"});
    EXPECT_EQ(c.json, JsonMode::Pretty);
    EXPECT_EQ(c.className, "x");
    EXPECT_THAT(c.argv, ElementsAre("env", "--", "-h", "--class=y"));
    // ... and so is everything from its first word on: no permutation.
    c = ok({"run", "--class=x", "ls", "-l", "--json", "--limit", "1G"});
    EXPECT_EQ(c.json, JsonMode::Off);
    EXPECT_EQ(c.limit, kNoLimit);
    EXPECT_THAT(c.argv, ElementsAre("ls", "-l", "--json", "--limit", "1G"));
}

TEST(ParseCommandLine, GetoptErrors) {
    EXPECT_THAT(usageError({"assign", "a", "b", "--request"}),
                HasSubstr("option '--request' needs a value"));
    EXPECT_THAT(usageError({"status", "--bus-address"}),
                HasSubstr("option '--bus-address' needs a value"));
    EXPECT_THAT(usageError({"status", "--frob=1"}),
                HasSubstr("unknown option '--frob' for 'status'"));
    EXPECT_THAT(usageError({"--no", "status"}),
                HasSubstr("option '--no' is ambiguous (--no-legend, --no-pager)"));
    EXPECT_EQ(ok({"assign", "a", "b", "--req=1M"}).request, kMiB) << "unique prefixes, as getopt";
    EXPECT_THAT(usageError({"--system=1", "status"}),
                HasSubstr("option '--system' takes no value"));
    EXPECT_EQ(ok({"status", "--frob", "--help"}).action, Action::Help) << "--help still wins";
}

TEST(ParseCommandLine, HelpAndVersionWin) {
    Command c = ok({"--help"});
    EXPECT_EQ(c.action, Action::Help);
    EXPECT_EQ(c.verb, Verb::None);
    EXPECT_EQ(ok({"-h"}).action, Action::Help);

    c = ok({"assign", "--help"});
    EXPECT_EQ(c.action, Action::Help) << "no 'needs ID and CLASS' error";
    EXPECT_EQ(c.verb, Verb::Assign);
    EXPECT_EQ(ok({"verify-placement", "bogus", "-h"}).action, Action::Help);

    EXPECT_EQ(ok({"--version"}).action, Action::Version);
    EXPECT_EQ(ok({"status", "--version"}).action, Action::Version);
}

TEST(Help, OverviewListsCommandsAndExitCodes) {
    const std::string help = helpText();
    for (const char* verb : {"status", "classes", "workloads", "assign", "unassign", "run",
                             "verify-placement", "verify", "reload", "monitor", "instances",
                             "record-instance", "forget-instance", "top"}) {
        EXPECT_THAT(help, HasSubstr(std::string("  ") + verb + " ")) << verb;
    }
    for (const char* code : {"  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "  5 ", "  6 ", "  64 "}) {
        EXPECT_THAT(help, HasSubstr(code));
    }
    EXPECT_THAT(help, HasSubstr("--bus-address"));
    EXPECT_THAT(help, HasSubstr("MEMQOS_BUS_ADDRESS"));
    EXPECT_THAT(help, HasSubstr("--json[=MODE]"));
    EXPECT_THAT(help, HasSubstr("--no-legend"));
    EXPECT_THAT(help, HasSubstr("--no-pager             do not pipe the output into a pager"));
    EXPECT_THAT(help, HasSubstr("--legend=BOOL"));
    EXPECT_THAT(help, HasSubstr("-q, --quiet"));
}

TEST(Help, PerCommand) {
    EXPECT_THAT(commandHelp(Verb::Assign),
                HasSubstr("Usage: memqosctl [OPTIONS] assign ID CLASS [--request SIZE]"));
    EXPECT_THAT(commandHelp(Verb::VerifyPlacement), HasSubstr("--failover-reserve SIZE"));
    EXPECT_THAT(commandHelp(Verb::Run), HasSubstr("--class CLASS"));
    EXPECT_THAT(commandHelp(Verb::Monitor), HasSubstr("SIGTERM"));
    EXPECT_THAT(commandHelp(Verb::Verify), HasSubstr("64"));
    EXPECT_THAT(commandHelp(Verb::VerifyPlacement), HasSubstr("--refuse-soft"));
    EXPECT_THAT(commandHelp(Verb::VerifyPlacement), HasSubstr("--instance NAME"));
    EXPECT_THAT(commandHelp(Verb::RecordInstance),
                HasSubstr("Usage: memqosctl [OPTIONS] record-instance NAME --max SIZE [--min SIZE] "
                          "[--up | --down]"));
    EXPECT_THAT(commandHelp(Verb::RecordInstance), HasSubstr("Needs root."));
    EXPECT_THAT(commandHelp(Verb::RecordInstance), HasSubstr("Sizes are bytes"));
    EXPECT_THAT(commandHelp(Verb::ForgetInstance),
                HasSubstr("Usage: memqosctl [OPTIONS] forget-instance NAME"));
    EXPECT_THAT(commandHelp(Verb::Instances), HasSubstr("Usage: memqosctl [OPTIONS] instances"));
    EXPECT_THAT(commandHelp(Verb::Top),
                HasSubstr("Usage: memqosctl [OPTIONS] top [--order=usage|pressure|swap|name] "
                          "[--delay=SECONDS] [--iterations=N] [--batch]"));
    EXPECT_THAT(commandHelp(Verb::Top), HasSubstr("-b, --batch"));
    EXPECT_THAT(commandHelp(Verb::Top), HasSubstr("SIGTERM"));
}

TEST(MangleWorkloadId, BareNamesAreServicesAsInSystemctl) {
    EXPECT_EQ(mangleWorkloadId("nginx"), "nginx.service");
    EXPECT_EQ(mangleWorkloadId("getty@tty1"), "getty@tty1.service");
    EXPECT_EQ(mangleWorkloadId("web1.example.com"), "web1.example.com.service");
    EXPECT_EQ(mangleWorkloadId("nginx.service"), "nginx.service");
    EXPECT_EQ(mangleWorkloadId("batch.scope"), "batch.scope");
    EXPECT_EQ(mangleWorkloadId("x.socket"), "x.socket"); // memqosd says why not
    EXPECT_EQ(mangleWorkloadId("system.slice"), "system.slice");
    EXPECT_EQ(mangleWorkloadId(".service"), ".service.service");
    EXPECT_EQ(mangleWorkloadId("vm:web1"), "vm:web1");
    EXPECT_EQ(mangleWorkloadId("vm:web1.example.com"), "vm:web1.example.com");
    EXPECT_EQ(mangleWorkloadId("../x"), "../x");
    EXPECT_EQ(mangleWorkloadId(""), "");
}

TEST(ParseCommandLine, WorkloadIdsAreMangled) {
    EXPECT_EQ(ok({"assign", "nginx", "shared"}).id, "nginx.service");
    EXPECT_EQ(ok({"assign", "vm:web1", "dedicated"}).id, "vm:web1");
    EXPECT_EQ(ok({"unassign", "nginx"}).id, "nginx.service");
    EXPECT_EQ(ok({"reclaim", "nginx", "1M"}).id, "nginx.service");
    EXPECT_EQ(ok({"reclaim", "batch.scope", "1M"}).id, "batch.scope");
    // Instance names are not unit names.
    EXPECT_EQ(ok({"forget-instance", "web1"}).instance, "web1");
    EXPECT_EQ(ok({"record-instance", "web1", "--max", "1G"}).instance, "web1");
    // run --name: memqosd appends ".service" itself (RunWorkload).
    EXPECT_EQ(ok({"run", "--name", "batch", "--class", "shared", "true"}).unitName, "batch");
}

TEST(DefaultRunName, PidAndTime) {
    EXPECT_EQ(defaultRunName(4242, 1700000000), "memqos-run-4242-1700000000.service");
}

} // namespace
} // namespace memqos::ctl

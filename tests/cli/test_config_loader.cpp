// SPDX-License-Identifier: Apache-2.0
// The config reader (inih) and loader (files, drop-ins, permissions), the
// fixture configs, and conf/memqosd.conf. Every file is written to or copied
// into a mkdtemp directory first: never read in place, so modes are ours.
#include "memqos/config/config.hpp"
#include "memqos/io/config_loader.hpp"

#include <gtest/gtest.h>
#include <ini.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture_tree.hpp"

namespace memqos::io {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace std::string_literals;
using config::ConfigEntry;
using config::Severity;
using test::TempDir;
using test::writeFile;

std::string allProblems(const config::Validated& v) {
    std::string s;
    for (const auto& p : v.problems)
        s += std::string(p.severity == Severity::Error ? "error: " : "warning: ") + p.format() +
             "\n";
    return s;
}

std::vector<std::string> formatted(const config::Validated& v, Severity severity) {
    std::vector<std::string> out;
    for (const auto& p : v.problems)
        if (p.severity == severity)
            out.push_back(p.format());
    return out;
}

bool anyContains(const std::vector<std::string>& lines, const std::string& needle) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

void writeMode(const fs::path& path, std::string_view content, mode_t mode) {
    writeFile(path, content);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

std::string readAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// --- what packaged inih (r55) does, pinned on the library itself -------------

struct Raw {
    std::vector<std::array<std::string, 3>> calls; // section, name, value
};

int rawHandler(void* user, const char* section, const char* name, const char* value) {
    static_cast<Raw*>(user)->calls.push_back({section, name, value});
    return 1;
}

std::pair<int, Raw> rawParse(const std::string& text) {
    Raw raw;
    int rc = ini_parse_string(text.c_str(), rawHandler, &raw);
    return {rc, raw};
}

TEST(Inih, HandlerGetsNoLineNumbersAndLinesAre200Bytes) {
    EXPECT_EQ(INI_HANDLER_LINENO, 0);
    EXPECT_EQ(INI_MAX_LINE, 200);
    EXPECT_EQ(INI_ALLOW_MULTILINE, 1);
    EXPECT_EQ(kMaxConfigLineBytes, 197u);
}

TEST(Inih, IndentedLinesContinueTheValueEvenAfterBlankLines) {
    auto [rc, raw] = rawParse("[S]\nA=1\n  2\n\n\t3\n");
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(raw.calls.size(), 3u);
    EXPECT_EQ(raw.calls[0][2], "1");
    EXPECT_EQ(raw.calls[1][1], "A");
    EXPECT_EQ(raw.calls[1][2], "2");
    EXPECT_EQ(raw.calls[2][2], "3"); // a naive "last wins" collector would keep "3"
}

TEST(Inih, AnIndentedSectionHeaderIsAContinuation) {
    auto [rc, raw] = rawParse("[S]\nA=1\n  [T]\nB=2\n");
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(raw.calls.size(), 3u);
    EXPECT_EQ(raw.calls[1][2], "[T]");
    EXPECT_EQ(raw.calls[2][0], "S"); // B is still in [S]
}

TEST(Inih, StripsSemicolonCommentsOnlyAfterABlank) {
    auto [rc, raw] = rawParse("[S]\nA=1 ; c\nB=x;y\nC=2 # h\nD=3\t;c\n");
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(raw.calls.size(), 4u);
    EXPECT_EQ(raw.calls[0][2], "1");
    EXPECT_EQ(raw.calls[1][2], "x;y");
    EXPECT_EQ(raw.calls[2][2], "2 # h");
    EXPECT_EQ(raw.calls[3][2], "3");
}

TEST(Inih, SplitsALongLineAndParsesItsTailAsANewLine) {
    // 199 bytes fit in the 200-byte buffer; the rest becomes a line of its own.
    std::string line = "A=" + std::string(197, 'x') + "B=evil";
    auto [rc, raw] = rawParse("[S]\n" + line + "\n");
    EXPECT_EQ(rc, 0); // no error at all
    ASSERT_EQ(raw.calls.size(), 2u);
    EXPECT_EQ(raw.calls[0][2], std::string(197, 'x'));
    EXPECT_EQ(raw.calls[1][1], "B");
    EXPECT_EQ(raw.calls[1][2], "evil");
}

TEST(Inih, TruncatesSectionNamesTo49Bytes) {
    auto [rc, raw] = rawParse("[" + std::string(60, 's') + "]\nK=v\n");
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(raw.calls.size(), 1u);
    EXPECT_EQ(raw.calls[0][0], std::string(49, 's'));
}

TEST(Inih, ReturnsTheFirstErrorLineAndGoesOn) {
    auto [rc, raw] = rawParse("[S]\nok=1\nbad\nalso bad\nB=2\n");
    EXPECT_EQ(rc, 3);
    EXPECT_EQ(raw.calls.size(), 2u);
}

TEST(Inih, AcceptsColonsAndKeepsBlanksInSectionNames) {
    auto [rc, raw] = rawParse("[ S ]\nA: 1\n=v\n");
    EXPECT_EQ(rc, 0);
    ASSERT_EQ(raw.calls.size(), 2u);
    EXPECT_EQ(raw.calls[0][0], " S ");
    EXPECT_EQ(raw.calls[0][1], "A");
    EXPECT_EQ(raw.calls[0][2], "1");
    EXPECT_EQ(raw.calls[1][1], ""); // an empty name is passed on
}

TEST(Inih, IgnoresWhatFollowsANulByteInAFileLine) {
    TempDir dir;
    writeFile(dir.path() / "f.conf", "[S]\nA=1\0junk\nB=2\n"s);
    Raw raw;
    EXPECT_EQ(ini_parse((dir.path() / "f.conf").c_str(), rawHandler, &raw), 0);
    ASSERT_EQ(raw.calls.size(), 2u);
    EXPECT_EQ(raw.calls[0][2], "1");
}

// --- parseIniText: our guards around inih ------------------------------------

TEST(ParseIniText, CollectsEntriesInOrder) {
    auto r =
        parseIniText("top=0\n[Manager]\nDryRun = yes ; comment\n[Reclaim]\nEnabled=no\n", "f.conf");
    ASSERT_TRUE(r.ok()) << r.error().what;
    EXPECT_EQ(*r, (std::vector<ConfigEntry>{{"f.conf", "", "top", "0", 1, 0},
                                            {"f.conf", "Manager", "DryRun", "yes", 3, 2},
                                            {"f.conf", "Reclaim", "Enabled", "no", 5, 4}}));
}

// Debian's inih gives the handler no line numbers; our reader counts them:
// blank, comment and header lines count, a CRLF file counts like an LF one,
// a repeated section header is the one above the key.
TEST(ParseIniText, EntriesCarryTheLinesOfTheirKeyAndSection) {
    auto r = parseIniText("# c\r\n\r\n[Manager]\r\n; c\r\nDryRun=yes\r\n\r\n[Reclaim]\r\n"
                          "Enabled=no\r\n[Manager]\r\n  Interval=2s\r\nMetricsFile=" +
                              std::string(150, 'x') + "\r\nStateDirectory=/s",
                          "f.conf");
    ASSERT_TRUE(r.ok()) << r.error().what;
    ASSERT_EQ(r->size(), 5u);
    const std::vector<std::pair<int, int>> want{{5, 3}, {8, 7}, {10, 9}, {11, 9}, {12, 9}};
    for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ((*r)[i].line, want[i].first) << (*r)[i].key;
        EXPECT_EQ((*r)[i].sectionLine, want[i].second) << (*r)[i].key;
    }
}

struct SyntaxCase {
    std::string name;
    std::string text;
    std::string error; // exact; empty: must parse
};
std::ostream& operator<<(std::ostream& os, const SyntaxCase& c) {
    return os << c.name;
}

class SyntaxTest : public ::testing::TestWithParam<SyntaxCase> {};

TEST_P(SyntaxTest, Parses) {
    auto r = parseIniText(GetParam().text, "f.conf");
    if (GetParam().error.empty()) {
        EXPECT_TRUE(r.ok()) << r.error().what;
    } else {
        ASSERT_FALSE(r.ok());
        EXPECT_EQ(r.error().what, GetParam().error);
        EXPECT_EQ(r.error().code, std::errc::invalid_argument);
    }
}

// Lines of 197 and 198 bytes.
std::string k197() {
    return "K=" + std::string(195, 'v');
}
std::string k198() {
    return "K=" + std::string(196, 'v');
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SyntaxTest,
    ::testing::Values(
        SyntaxCase{"Continuation", "[S]\nA=1\n  2\n",
                   "f.conf:3: indented continuation lines are not supported (write the value on "
                   "one line, or remove "
                   "the indentation)"},
        SyntaxCase{"ContinuationAfterBlankAndComment", "[S]\nA=1\n\n# c\n\tB=2\n",
                   "f.conf:5: indented continuation lines are not supported (write the value on "
                   "one line, or remove "
                   "the indentation)"},
        SyntaxCase{"IndentedHeaderAfterKey", "[S]\nA=1\n [T]\n",
                   "f.conf:3: indented continuation lines are not "
                   "supported (write the value on one line, or remove "
                   "the indentation)"},
        SyntaxCase{"IndentedKeyAfterHeader", "[S]\n  A=1\n[T]\n\tB=2\n", ""},
        SyntaxCase{"IndentedFirstLine", "  A=1\n", ""},
        SyntaxCase{"IndentedComments", "[S]\nA=1\n  # c\n  ; c\n", ""},
        SyntaxCase{"Longest", "[S]\n" + k197() + "\n", ""},
        SyntaxCase{"LongestCrlf", "[S]\r\n" + k197() + "\r\n", ""},
        SyntaxCase{"LongestNoNewline", "[S]\n" + k197(), ""},
        SyntaxCase{"TooLong", "[S]\n" + k198() + "\n",
                   "f.conf:2: line too long (198 bytes, at most 197)"},
        SyntaxCase{"TooLongComment", "# " + std::string(300, 'c') + "\n",
                   "f.conf:1: line too long (302 bytes, at "
                   "most 197)"},
        SyntaxCase{"TooLongHidingAKey", "[S]\nA=" + std::string(197, 'x') + "B=evil\n",
                   "f.conf:2: line too long (205 bytes, at most 197)"},
        SyntaxCase{"BomCountsOnLine1", "\xEF\xBB\xBF" + std::string(195, '#') + "\n",
                   "f.conf:1: line too long (198 bytes, at most 197)"},
        SyntaxCase{"Section49", "[" + std::string(49, 's') + "]\n", ""},
        SyntaxCase{"Section50", "[" + std::string(50, 's') + "]\n",
                   "f.conf:1: section name too long (at most 49 bytes)"},
        SyntaxCase{"Nul", "[S]\nA=1\0x\n"s, "f.conf:2: contains a NUL byte"},
        SyntaxCase{"NoEquals", "[S]\nA=1\nB\n",
                   "f.conf:3: syntax error (expected [Section], Key=value or a # comment)"},
        SyntaxCase{"UnclosedSection", "[S\nA=1\n",
                   "f.conf:1: syntax error (expected [Section], Key=value or a # "
                   "comment)"},
        SyntaxCase{"FirstErrorWins", "[S]\nA\nB\n",
                   "f.conf:2: syntax error (expected [Section], Key=value or a # "
                   "comment)"},
        SyntaxCase{"Bom", "\xEF\xBB\xBF[S]\nA=1\n", ""}, SyntaxCase{"Empty", "", ""}));

TEST(ParseIniText, BomAndCrlfAreInvisible) {
    auto r = parseIniText("\xEF\xBB\xBF[Manager]\r\nDryRun=yes\r\n", "f.conf");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, (std::vector<ConfigEntry>{{"f.conf", "Manager", "DryRun", "yes", 2, 1}}));
}

// --- readIniFile -------------------------------------------------------------

TEST(ReadIniFile, ReadsAFile) {
    TempDir dir;
    writeFile(dir.path() / "a.conf", "[Manager]\nDryRun=yes\n");
    auto r = readIniFile(dir.path() / "a.conf");
    ASSERT_TRUE(r.ok()) << r.error().what;
    EXPECT_EQ(*r, (std::vector<ConfigEntry>{
                      {(dir.path() / "a.conf").string(), "Manager", "DryRun", "yes", 2, 1}}));
}

TEST(ReadIniFile, MissingFileIsENOENT) {
    TempDir dir;
    auto r = readIniFile(dir.path() / "nope.conf");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, std::errc::no_such_file_or_directory);
    EXPECT_EQ(r.error().what,
              (dir.path() / "nope.conf").string() + ": cannot open: No such file or directory");
}

TEST(ReadIniFile, SyntaxErrorHasFileAndLine) {
    TempDir dir;
    writeFile(dir.path() / "a.conf", "[Manager]\n\nbroken\n");
    auto r = readIniFile(dir.path() / "a.conf");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().what,
              (dir.path() / "a.conf").string() +
                  ":3: syntax error (expected [Section], Key=value or a # comment)");
}

TEST(ReadIniFile, ADirectoryIsNotAConfigFile) {
    TempDir dir;
    auto r = readIniFile(dir.path());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().what.find("not a regular file"), std::string::npos);
}

// --- loadConfig --------------------------------------------------------------

LoadOptions optionsFor(const fs::path& main) {
    LoadOptions o;
    o.mainFile = main;
    return o;
}

TEST(LoadConfig, TheDefaultFileMayBeMissing) {
    if (fs::exists(kDefaultConfigFile) || fs::exists(std::string(kDefaultConfigFile) + ".d"))
        GTEST_SKIP() << kDefaultConfigFile << " exists on this machine";
    LoadedConfig c = loadConfig();
    EXPECT_TRUE(c.validated.problems.empty()) << allProblems(c.validated);
    EXPECT_TRUE(c.files.empty());
    EXPECT_TRUE(c.validated.config == config::Config{});
}

TEST(LoadConfig, AGivenFileMustExist) {
    TempDir dir;
    LoadedConfig c = loadConfig(optionsFor(dir.path() / "memqosd.conf"));
    EXPECT_TRUE(c.validated.hasErrors());
    EXPECT_EQ(formatted(c.validated, Severity::Error),
              std::vector<std::string>{(dir.path() / "memqosd.conf").string() +
                                       ": cannot open: No such file or directory"});
    EXPECT_TRUE(c.files.empty());
}

TEST(LoadConfig, DropInsOverrideInLexicalOrder) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "[Manager]\nInterval=5s\nDryRun=yes\n", 0644);
    fs::create_directory(dir.path() / "memqosd.conf.d");
    fs::permissions(dir.path() / "memqosd.conf.d", fs::perms(0755));
    writeMode(dir.path() / "memqosd.conf.d/20-b.conf", "[Manager]\nInterval=2s\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/10-a.conf", "[Manager]\nInterval=3s\nCgroupRoot=/a\n",
              0644);
    writeMode(dir.path() / "memqosd.conf.d/README", "not ini at all", 0644);
    writeMode(dir.path() / "memqosd.conf.d/30-c.conf.bak", "[Manager]\nInterval=9s\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/.hidden.conf", "[Manager]\nInterval=8s\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/9-z.conf", "[Manager]\nCgroupRoot=/z\n", 0600);

    LoadedConfig c = loadConfig(optionsFor(main));
    EXPECT_TRUE(c.validated.problems.empty()) << allProblems(c.validated);
    EXPECT_EQ(c.validated.config.manager.interval, 2s);
    EXPECT_EQ(c.validated.config.manager.cgroupRoot, "/z"); // "9-z" sorts after "20-b"
    EXPECT_TRUE(c.validated.config.manager.dryRun);
    const std::string d = (dir.path() / "memqosd.conf.d").string();
    EXPECT_EQ(c.files, (std::vector<std::string>{main.string(), d + "/10-a.conf", d + "/20-b.conf",
                                                 d + "/9-z.conf"}));

    LoadOptions noDropIns = optionsFor(main);
    noDropIns.dropIns = false;
    LoadedConfig n = loadConfig(noDropIns);
    EXPECT_EQ(n.validated.config.manager.interval, 5s);
    EXPECT_EQ(n.files, std::vector<std::string>{main.string()});
}

TEST(LoadConfig, AnExplicitDropInDirectory) {
    TempDir dir;
    fs::path main = dir.path() / "main.conf";
    writeMode(main, "[Manager]\nInterval=5s\n", 0644);
    writeMode(dir.path() / "elsewhere/a.conf", "[Manager]\nInterval=4s\n", 0644);
    fs::permissions(dir.path() / "elsewhere", fs::perms(0755));
    LoadOptions o = optionsFor(main);
    o.dropinDir = dir.path() / "elsewhere";
    LoadedConfig c = loadConfig(o);
    EXPECT_TRUE(c.validated.problems.empty()) << allProblems(c.validated);
    EXPECT_EQ(c.validated.config.manager.interval, 4s);
}

TEST(LoadConfig, ProblemsNameTheDropInTheyComeFrom) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "[Overcommit]\nMemoryRatio=1.5\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/50-x.conf", "[Overcommit]\nMemoryRatio=abc\n", 0644);
    fs::permissions(dir.path() / "memqosd.conf.d", fs::perms(0755));
    LoadedConfig c = loadConfig(optionsFor(main));
    EXPECT_EQ(formatted(c.validated, Severity::Error),
              std::vector<std::string>{
                  (dir.path() / "memqosd.conf.d/50-x.conf").string() +
                  ":2: [Overcommit] MemoryRatio=abc: not a number (expected a ratio ≥ 1.0, e.g. "
                  "1.5)"});
    EXPECT_EQ(c.validated.config.overcommit.memoryRatio, 1.5); // the bad value does not apply
}

TEST(LoadConfig, ASyntaxErrorSkipsThatFileOnly) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "[Manager]\nInterval=5s\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/a.conf", "[Manager]\nDryRun=yes\nnonsense\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/b.conf", "[Manager]\nCgroupRoot=/b\n", 0644);
    fs::permissions(dir.path() / "memqosd.conf.d", fs::perms(0755));
    LoadedConfig c = loadConfig(optionsFor(main));
    ASSERT_EQ(c.validated.problems.size(), 1u) << allProblems(c.validated);
    const auto& p = c.validated.problems[0];
    EXPECT_EQ(p.severity, Severity::Error);
    EXPECT_EQ(p.file, (dir.path() / "memqosd.conf.d/a.conf").string());
    EXPECT_EQ(p.line, 3);
    EXPECT_EQ(p.format(),
              p.file + ":3: syntax error (expected [Section], Key=value or a # comment)");
    EXPECT_FALSE(c.validated.config.manager.dryRun);
    EXPECT_EQ(c.validated.config.manager.cgroupRoot, "/b");
    EXPECT_EQ(c.files.size(), 2u);
}

struct ModeCase {
    mode_t mode;
    bool refused;
};
std::ostream& operator<<(std::ostream& os, const ModeCase& c) {
    return os << std::oct << c.mode;
}

class ModeTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(ModeTest, GroupOrOtherWritableFilesAreRefused) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "[Manager]\nDryRun=yes\n", GetParam().mode);
    for (bool requireRoot : {true, false}) {
        LoadOptions o = optionsFor(main);
        o.requireRootOwned = requireRoot;
        LoadedConfig c = loadConfig(o);
        if (GetParam().refused) {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(GetParam().mode));
            EXPECT_EQ(formatted(c.validated, Severity::Error),
                      std::vector<std::string>{main.string() +
                                               ": writable by group or others (mode " + mode +
                                               "), refusing it; run chmod go-w " + main.string()});
            EXPECT_FALSE(c.validated.config.manager.dryRun);
            EXPECT_TRUE(c.files.empty());
        } else {
            EXPECT_TRUE(c.validated.problems.empty()) << allProblems(c.validated);
            EXPECT_TRUE(c.validated.config.manager.dryRun);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Modes, ModeTest,
                         ::testing::Values(ModeCase{0644, false}, ModeCase{0600, false},
                                           ModeCase{0444, false}, ModeCase{0664, true},
                                           ModeCase{0646, true}, ModeCase{0666, true},
                                           ModeCase{0620, true}, ModeCase{0602, true}));

TEST(LoadConfig, AWritableDropInDirectoryIsRefused) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "[Manager]\nInterval=5s\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/a.conf", "[Manager]\nInterval=3s\n", 0644);
    ASSERT_EQ(::chmod((dir.path() / "memqosd.conf.d").c_str(), 01777), 0);
    LoadedConfig c = loadConfig(optionsFor(main));
    auto e = formatted(c.validated, Severity::Error);
    ASSERT_EQ(e.size(), 1u) << allProblems(c.validated);
    EXPECT_NE(e[0].find("memqosd.conf.d: writable by group or others (mode 1777), refusing it"),
              std::string::npos);
    EXPECT_EQ(c.validated.config.manager.interval, 5s);
}

TEST(LoadConfig, AWritableDropInIsRefusedAndTheOthersApply) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "", 0644);
    writeMode(dir.path() / "memqosd.conf.d/a.conf", "[Manager]\nInterval=3s\n", 0644);
    writeMode(dir.path() / "memqosd.conf.d/b.conf", "[Manager]\nInterval=7s\n", 0666);
    fs::permissions(dir.path() / "memqosd.conf.d", fs::perms(0755));
    LoadedConfig c = loadConfig(optionsFor(main));
    auto e = formatted(c.validated, Severity::Error);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_NE(e[0].find("b.conf: writable by group or others (mode 0666)"), std::string::npos);
    EXPECT_EQ(c.validated.config.manager.interval, 3s);
}

TEST(LoadConfig, ADirectoryNamedLikeADropInIsAnError) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "", 0644);
    fs::create_directories(dir.path() / "memqosd.conf.d/sub.conf");
    fs::permissions(dir.path() / "memqosd.conf.d", fs::perms(0755));
    LoadedConfig c = loadConfig(optionsFor(main));
    EXPECT_TRUE(
        anyContains(formatted(c.validated, Severity::Error), "sub.conf: not a regular file"));
}

TEST(LoadConfig, OwnerMustBeRootOrUs) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root to chown a file to another user";
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "[Manager]\nDryRun=yes\n", 0644);
    ASSERT_EQ(::chown(main.c_str(), 1, 1), 0);
    LoadedConfig refused = loadConfig(optionsFor(main));
    EXPECT_EQ(formatted(refused.validated, Severity::Error),
              std::vector<std::string>{
                  main.string() +
                  ": owned by uid 1, not root, refusing it; run chown root: " + main.string()});
    LoadOptions lax = optionsFor(main);
    lax.requireRootOwned = false;
    LoadedConfig accepted = loadConfig(lax);
    EXPECT_TRUE(accepted.validated.problems.empty()) << allProblems(accepted.validated);
    EXPECT_TRUE(accepted.validated.config.manager.dryRun);
}

TEST(LoadConfig, StrictMakesUnknownKeysErrors) {
    TempDir dir;
    fs::path main = dir.path() / "memqosd.conf";
    writeMode(main, "[Manager]\nFrobnicate=1\n", 0644);
    LoadedConfig lax = loadConfig(optionsFor(main));
    EXPECT_FALSE(lax.validated.hasErrors());
    EXPECT_EQ(formatted(lax.validated, Severity::Warning),
              std::vector<std::string>{main.string() +
                                       ":2: [Manager] Frobnicate=1: unknown key, ignoring"});
    LoadOptions o = optionsFor(main);
    o.strict = true;
    LoadedConfig strict = loadConfig(o);
    EXPECT_EQ(formatted(strict.validated, Severity::Error),
              std::vector<std::string>{
                  main.string() + ":2: [Manager] Frobnicate=1: unknown key, would be ignored"});
}

// --- fixtures: tests/fixtures/config/{good,bad,warn}/*.conf -----------------

// "# expect: <substring>" on the first line (after a BOM, if any).
std::string expectation(const std::string& text) {
    std::string_view s = text;
    if (s.substr(0, 3) == "\xEF\xBB\xBF")
        s.remove_prefix(3);
    constexpr std::string_view kTag = "# expect: ";
    if (s.substr(0, kTag.size()) != kTag)
        return {};
    s.remove_prefix(kTag.size());
    s = s.substr(0, s.find_first_of("\r\n"));
    return std::string(s);
}

std::vector<fs::path> confFiles(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".conf")
            out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// Loads a copy (mode 0644, ours) of a fixture, as memqosd would.
LoadedConfig loadCopy(const fs::path& fixture, const TempDir& dir) {
    fs::path copy = dir.path() / fixture.filename();
    fs::copy_file(fixture, copy, fs::copy_options::overwrite_existing);
    fs::permissions(copy, fs::perms(0644));
    return loadConfig(optionsFor(copy));
}

TEST(Fixtures, GoodOnesHaveNoProblems) {
    auto files = confFiles(test::fixturesDir() / "config/good");
    EXPECT_GE(files.size(), 10u);
    for (const auto& f : files) {
        SCOPED_TRACE(f.filename().string());
        TempDir dir;
        std::string text = readAll(f);
        EXPECT_FALSE(expectation(text).empty()) << "first line must be '# expect: ...'";
        LoadedConfig c = loadCopy(f, dir);
        EXPECT_TRUE(c.validated.problems.empty()) << allProblems(c.validated);
        EXPECT_EQ(c.files.size(), 1u);
    }
}

TEST(Fixtures, BadOnesAreErrorsWithTheExpectedMessage) {
    auto files = confFiles(test::fixturesDir() / "config/bad");
    EXPECT_GE(files.size(), 20u);
    for (const auto& f : files) {
        SCOPED_TRACE(f.filename().string());
        TempDir dir;
        std::string want = expectation(readAll(f));
        ASSERT_FALSE(want.empty()) << "first line must be '# expect: ...'";
        LoadedConfig c = loadCopy(f, dir);
        EXPECT_TRUE(c.validated.hasErrors());
        auto errors = formatted(c.validated, Severity::Error);
        EXPECT_TRUE(anyContains(errors, want)) << "want: " << want << "\ngot:\n"
                                               << allProblems(c.validated);
        // Every problem names its file.
        for (const auto& p : c.validated.problems)
            EXPECT_EQ(p.file, (dir.path() / f.filename()).string());
    }
}

// warn/: warnings everywhere; unknown/: what start-up skips with a warning
// (and --check-config calls an error: below).
TEST(Fixtures, WarnOnesAreWarningsWithTheExpectedMessage) {
    auto files = confFiles(test::fixturesDir() / "config/warn");
    auto unknown = confFiles(test::fixturesDir() / "config/unknown");
    EXPECT_GE(files.size(), 1u);
    EXPECT_GE(unknown.size(), 5u);
    files.insert(files.end(), unknown.begin(), unknown.end());
    for (const auto& f : files) {
        SCOPED_TRACE(f.filename().string());
        TempDir dir;
        std::string want = expectation(readAll(f));
        ASSERT_FALSE(want.empty());
        LoadedConfig c = loadCopy(f, dir);
        EXPECT_FALSE(c.validated.hasErrors()) << allProblems(c.validated);
        EXPECT_TRUE(anyContains(formatted(c.validated, Severity::Warning), want))
            << "want: " << want << "\ngot:\n"
            << allProblems(c.validated);
    }
}

TEST(Fixtures, UnknownOnesAreErrorsWhenStrict) {
    for (const auto& f : confFiles(test::fixturesDir() / "config/unknown")) {
        SCOPED_TRACE(f.filename().string());
        TempDir dir;
        std::string want = expectation(readAll(f));
        fs::path copy = dir.path() / f.filename();
        writeMode(copy, readAll(f), 0644);
        LoadOptions o = optionsFor(copy);
        o.strict = true;
        LoadedConfig c = loadConfig(o);
        EXPECT_TRUE(anyContains(formatted(c.validated, Severity::Error), want))
            << "want: " << want << "\ngot:\n"
            << allProblems(c.validated);
        EXPECT_TRUE(formatted(c.validated, Severity::Warning).empty()) << allProblems(c.validated);
    }
}

// --- conf/memqosd.conf -------------------------------------------------------

fs::path shippedConf() {
    const char* dir = std::getenv("MEMQOS_CONF_DIR");
    return fs::path(dir != nullptr ? dir : "conf") / "memqosd.conf";
}

// Removes the '#' of "#Key=value" and "#[Section]" lines; "# text" stays.
std::string uncommentAll(const std::string& text) {
    std::string out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > 1 && line[0] == '#' && line[1] != ' ' && line[1] != '#')
            line.erase(0, 1);
        out += line + "\n";
    }
    return out;
}

TEST(ShippedConf, LoadsAsTheDefaults) {
    TempDir dir;
    LoadedConfig c = loadCopy(shippedConf(), dir);
    EXPECT_TRUE(c.validated.problems.empty()) << allProblems(c.validated);
    EXPECT_TRUE(c.validated.config == config::Config{});
}

TEST(ShippedConf, UncommentedIsTheDefaultsInRenderOrder) {
    std::string text = uncommentAll(readAll(shippedConf()));
    auto entries = parseIniText(text, "memqosd.conf");
    ASSERT_TRUE(entries.ok()) << entries.error().what;
    config::Validated v = config::validateConfig(*entries, config::ValidateOptions{.strict = true});
    EXPECT_TRUE(v.problems.empty()) << allProblems(v);
    EXPECT_TRUE(v.config == config::Config{}) << config::renderConfig(v.config);

    // Same keys, same order, same spelling as renderConfig.
    auto rendered = parseIniText(config::renderConfig(config::Config{}), "rendered");
    ASSERT_TRUE(rendered.ok());
    std::vector<std::pair<std::string, std::string>> a;
    std::vector<std::pair<std::string, std::string>> b;
    for (const auto& e : *entries)
        a.emplace_back(e.section, e.key);
    for (const auto& e : *rendered)
        b.emplace_back(e.section, e.key);
    EXPECT_EQ(a, b);
    // And the same values, as rendered from the defaults.
    for (std::size_t i = 0; i < std::min(entries->size(), rendered->size()); ++i)
        EXPECT_EQ((*entries)[i].value, (*rendered)[i].value)
            << (*entries)[i].section << " " << (*entries)[i].key;
}

TEST(ShippedConf, NamesEveryKeyOfTheValidator) {
    std::string text = readAll(shippedConf());
    std::string uncommented = uncommentAll(text);
    auto entries = parseIniText(uncommented, "memqosd.conf");
    ASSERT_TRUE(entries.ok());
    std::set<std::pair<std::string, std::string>> present;
    for (const auto& e : *entries) {
        std::string section = e.section;
        if (section.rfind("Class.", 0) == 0)
            section = "Class.<name>";
        present.insert({section, e.key});
    }
    for (const auto& k : config::knownKeys()) {
        if (k.section == "Rule.<name>") {
            // Shown in the commented example.
            EXPECT_NE(text.find("\n# " + k.key + "="), std::string::npos) << k.key;
            continue;
        }
        EXPECT_TRUE(present.count({k.section, k.key})) << "[" << k.section << "] " << k.key;
    }
    EXPECT_NE(text.find("\n# [Rule.web]\n"), std::string::npos);
}

TEST(ShippedConf, EveryLineFitsInih) {
    std::istringstream in(readAll(shippedConf()));
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        EXPECT_LE(line.size(), kMaxConfigLineBytes) << "line " << n;
    }
}

// --- render round trip through the real reader --------------------------------

TEST(RoundTrip, RenderedConfigsParseBackEqual) {
    std::vector<std::string> inputs{
        "",
        "[Manager]\nInterval=1.5s\nDryRun=yes\n[Overcommit]\nMemoryRatio=1.333333\nNodeReserved=7."
        "5%\n"
        "FailoverReserve=1.1G\nVMOverhead=12345\n[Pressure]\nLevel1SomeAvg10=0.123456%"
        "\nLevel2Duration=250us\n"
        "Hysteresis=0.01%\n[Reclaim]\nStallTarget=0.000001%\n[Class.shared]\nThrottlingFactor=0."
        "0001\n"
        "[Class.x_1]\nRank=99\n[Rule.r-1]\nMatch=vm:a;b*\nClass=x_1\nRequest=1\nLimit=1\nPriority=-"
        "7\n",
        "[Rule.a]\nMatch=[a-z]*.scope\nClass=reclaimed\nLimit=max\n",
    };
    for (const auto& in : inputs) {
        SCOPED_TRACE(in);
        auto e1 = parseIniText(in, "in");
        ASSERT_TRUE(e1.ok());
        auto v1 = config::validateConfig(*e1);
        ASSERT_TRUE(v1.problems.empty()) << allProblems(v1);
        std::string text = config::renderConfig(v1.config);
        auto e2 = parseIniText(text, "rendered");
        ASSERT_TRUE(e2.ok()) << e2.error().what;
        auto v2 = config::validateConfig(*e2);
        EXPECT_TRUE(v2.problems.empty()) << allProblems(v2);
        EXPECT_TRUE(v2.config == v1.config) << text;
    }
}

} // namespace
} // namespace memqos::io

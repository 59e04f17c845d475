// SPDX-License-Identifier: Apache-2.0
#pragma once
// Filesystem fixtures for the fs tests (after oomd's Fixture.h): a temporary
// directory that removes itself, an in-code tree builder for one-off cases,
// and copies of the checked-in trees under tests/fixtures. Tests never read
// the source tree in place, so they may modify or delete what they read.
//
// Test-only code: failures throw std::runtime_error, which gtest reports as a
// failed test with the message.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::test {

// A fresh directory from mkdtemp() under $TMPDIR (or /tmp), removed with
// everything in it when the object is destroyed. Movable, not copyable.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(TempDir&& other) noexcept;
    TempDir& operator=(TempDir&& other) noexcept;
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }

private:
    void remove() noexcept;
    std::filesystem::path path_;
};

// A file (content set) or a directory (children) to create. `name` may
// contain '/' to create intermediate directories: makeDir("a/b", {...}).
struct FsNode {
    std::string name;
    std::optional<std::string> content; // nullopt: a directory
    std::vector<FsNode> children;
};
FsNode makeFile(std::string name, std::string content);
FsNode makeDir(std::string name, std::vector<FsNode> children = {});

// Creates `nodes` under `parent` (which must exist).
void materialize(const std::filesystem::path& parent, const std::vector<FsNode>& nodes);

// tests/fixtures in the source tree, from the MEMQOS_FIXTURES environment
// variable that tests/meson.build sets; throws with an explanation if unset.
std::filesystem::path fixturesDir();

// A TempDir holding a copy of fixturesDir()/relative (its contents, not the
// directory itself): copyFixture("proc/normal").path() / "meminfo".
TempDir copyFixture(std::string_view relative);

// Writes (replacing) one file; creates missing parent directories.
void writeFile(const std::filesystem::path& path, std::string_view content);

} // namespace memqos::test

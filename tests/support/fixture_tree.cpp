// SPDX-License-Identifier: Apache-2.0
#include "fixture_tree.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace memqos::test {

TempDir::TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/memqos-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    }
    path_ = pattern;
}

TempDir::~TempDir() {
    remove();
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}

TempDir& TempDir::operator=(TempDir&& other) noexcept {
    if (this != &other) {
        remove();
        path_ = std::exchange(other.path_, {});
    }
    return *this;
}

void TempDir::remove() noexcept {
    if (path_.empty()) {
        return;
    }
    std::error_code ec;
    // Tests may chmod things away; give permissions back so removal works.
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
    path_.clear();
}

FsNode makeFile(std::string name, std::string content) {
    return FsNode{std::move(name), std::move(content), {}};
}

FsNode makeDir(std::string name, std::vector<FsNode> children) {
    return FsNode{std::move(name), std::nullopt, std::move(children)};
}

void writeFile(const std::filesystem::path& path, std::string_view content) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) {
        throw std::runtime_error("cannot write " + path.string());
    }
}

void materialize(const std::filesystem::path& parent, const std::vector<FsNode>& nodes) {
    for (const auto& node : nodes) {
        const auto path = parent / node.name;
        if (node.content) {
            writeFile(path, *node.content);
        } else {
            std::filesystem::create_directories(path);
            materialize(path, node.children);
        }
    }
}

std::filesystem::path fixturesDir() {
    const char* dir = std::getenv("MEMQOS_FIXTURES");
    if (dir == nullptr || *dir == '\0') {
        throw std::runtime_error(
            "MEMQOS_FIXTURES is not set: run the fs tests through `meson test` "
            "(or set it to <source>/tests/fixtures)");
    }
    std::filesystem::path path(dir);
    if (!std::filesystem::is_directory(path)) {
        throw std::runtime_error("MEMQOS_FIXTURES=" + path.string() + " is not a directory");
    }
    return path;
}

TempDir copyFixture(std::string_view relative) {
    const auto from = fixturesDir() / relative;
    if (!std::filesystem::is_directory(from)) {
        throw std::runtime_error("no fixture tree " + from.string());
    }
    TempDir dir;
    std::filesystem::copy(from, dir.path(), std::filesystem::copy_options::recursive);
    return dir;
}

} // namespace memqos::test

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqos's runtime drop-ins. systemd writes one file per property for a
// SetUnitProperties(runtime=true) call, in
// /run/systemd/system.control/<unit>.d/50-<Property>.conf, and names it by
// the property alone: an administrator's `systemctl set-property --runtime`
// writes the very same file. So memqos tells its own files from others' by a
// marker, not by name (doc/DESIGN.md §2.5):
//   - after a call of memqos's succeeded, the file that sets the value memqos
//     sent gets the marker as its first line (markOwn);
//   - before a call of memqos's would overwrite someone else's file, a copy
//     of it is kept next to it as <name>.memqos-saved (saveOthers; systemd
//     reads only *.conf files);
//   - giving back puts a saved copy back in place, removes memqos's own file
//     and leaves anyone else's (giveBack).
// The files live on /run (tmpfs): they go with the boot, as the runtime
// properties they set do. Nothing here throws; the texts are parsed with
// checked tokens.

#include "memqos/core/types.hpp"
#include "memqos/util/result.hpp"

#include <array>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::io {

enum class MemoryKey { Min, Low, High, Max, SwapMax };
inline constexpr std::array<MemoryKey, 5> kMemoryKeys = {MemoryKey::Min, MemoryKey::Low,
                                                         MemoryKey::High, MemoryKey::Max,
                                                         MemoryKey::SwapMax};
// "MemoryMin" …
std::string_view propertyName(MemoryKey key);
// "50-MemoryMin.conf" …
std::string_view dropInName(MemoryKey key);

inline constexpr std::string_view kOwnDropInMarker =
    "# memqos: written by systemd for memqosd's SetUnitProperties; memqosd removes it when it "
    "gives the unit back";
inline constexpr std::string_view kSavedSuffix = ".memqos-saved";

// What a drop-in's text sets KEY to: a number of bytes, or infinity as an
// empty Limit. nullopt when it sets no such key or a value memqos does not
// read (a percentage, a suffix): then it is never taken for memqos's.
std::optional<Limit> dropInValue(std::string_view text, MemoryKey key);
// The text starts with kOwnDropInMarker.
bool hasOwnMarker(std::string_view text);

// systemd writes a runtime drop-in of a unit from a unit file to
// /run/systemd/system.control/<unit>.d/, and one of a transient unit
// (systemd-run, machined's scopes) to /run/systemd/transient/<unit>.d/: every
// operation looks at each directory given (a unit has its files in one).
inline constexpr std::string_view kRuntimeControlDir = "/run/systemd/system.control";
inline constexpr std::string_view kTransientDir = "/run/systemd/transient";

class RuntimeDropIns {
public:
    explicit RuntimeDropIns(std::filesystem::path dir) : dirs_{std::move(dir)} {}
    explicit RuntimeDropIns(std::vector<std::filesystem::path> dirs) : dirs_(std::move(dirs)) {}

    enum class Owner { None, Memqos, Other };
    struct State {
        Owner owner = Owner::None;
        std::optional<Limit> value; // what the file sets (nullopt: nothing readable)
    };
    State read(const std::string& unit, MemoryKey key) const;
    // Someone else's file (no marker) is copied to <name>.memqos-saved before
    // memqos's call overwrites it; a newer one replaces an older copy.
    Status saveOthers(const std::string& unit, MemoryKey key) const;
    // After memqos's call: the file gets the marker if it sets VALUE (if it
    // sets anything else, someone wrote it meanwhile: left alone).
    Status markOwn(const std::string& unit, MemoryKey key, const Limit& value) const;
    // A file memqos wrote before it marked its files (an upgrade): marked.
    Status adoptUnmarked(const std::string& unit, MemoryKey key) const;
    // Give back: a saved copy goes back in place, else memqos's own file is
    // removed; someone else's stays. Returns whether anything changed.
    Result<bool> giveBack(const std::string& unit, MemoryKey key) const;
    // A kept copy whose drop-in is gone (systemd removed a transient unit's
    // files when it unloaded it; an administrator's revert) is stale: removed,
    // so that a later unit of the same name never gets it. Then the unit's
    // .d directory, if empty.
    void dropStaleCopies(const std::string& unit) const;
    // Whether any of the five files of UNIT is memqos's or a saved copy.
    bool anyOwn(const std::string& unit) const;

private:
    // Calls fn(path, text) for each existing file of KEY without memqos's
    // marker, in every directory; the first error stops it.
    Status forEachUnmarked(
        const std::string& unit, MemoryKey key,
        const std::function<Status(const std::filesystem::path&, const std::string&)>& fn) const;
    static std::filesystem::path file(const std::filesystem::path& dir, const std::string& unit,
                                      MemoryKey key);
    std::vector<std::filesystem::path> dirs_;
};

} // namespace memqos::io

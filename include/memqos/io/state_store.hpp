// SPDX-License-Identifier: Apache-2.0
#pragma once
// Assignments made over D-Bus, kept on disk so nothing is lost on a restart
// or kill -9. Persistent ones (persist=true) live under the state directory
// (/var/lib/memqos/assignments); the others under the runtime directory
// (/run/memqos/assignments), which a reboot clears — like systemd's runtime
// unit properties. One small "Key=Value" file per workload, written
// atomically: temp file, fsync, rename, fsync of the directory.

#include "memqos/io/systemd.hpp"
#include "memqos/core/model.hpp"
#include "memqos/core/placement.hpp"
#include "memqos/util/result.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::io {

struct Assignment {
    core::Workload workload;
    bool persistent = false;
    bool operator==(const Assignment&) const = default;
};

// Pure (exposed for tests and fuzzing): the file format, one "Key=Value" per
// line, every key exactly once, in any order; blank lines and lines starting
// with '#' are ignored; blanks around keys and values are ignored:
//   # memqos assignment; written by memqosd, do not edit while it runs
//   Id=nginx.service            validateWorkloadId, and its shape
//   Kind=service                (core::kindFromId) must agree with Kind
//   Class=shared                a class name (config::isValidClassName)
//   Request=268435456           bytes, decimal
//   Limit=1073741824            bytes, or "max" (no limit)
//   Priority=0                  int32
// `persistent` is not in the file: it is where the file lives, so
// parseAssignment() always returns persistent = false. parseAssignment never
// throws; its errors name the line and key ("line 5: Request=12x: not a
// number"). parseAssignment(formatAssignment(a)) == a for every assignment
// with persistent = false that parseAssignment can return.
std::string formatAssignment(const Assignment& a);
Result<Assignment> parseAssignment(std::string_view text);

// File names (pure): the id with every byte outside [A-Za-z0-9] written as
// "_xx", two lowercase hex digits, like sd_bus_path_encode(); "" is "_".
// "nginx.service" -> "nginx_2eservice". decodeFileName is the inverse and
// returns nullopt for any name encodeFileName cannot produce (so temp files,
// which start with '.', never decode).
std::string encodeFileName(std::string_view id);
std::optional<std::string> decodeFileName(std::string_view name);

// Instance records (Ganeti's state of record on this node, RecordInstance),
// same rules as assignments:
//   # memqos instance record (Ganeti); written by memqosd, do not edit while it runs
//   Name=inst1.example.test     core::validateInstanceName
//   MinMemory=268435456         bytes, decimal, ≤ MaxMemory
//   MaxMemory=536870912         bytes, decimal
//   Up=yes                      yes | no (Ganeti admin state up)
std::string formatInstance(const core::Instance& i);
Result<core::Instance> parseInstance(std::string_view text);

// Writes `content` to dir/name atomically: a temp file in `dir` (created
// with its parents if missing), fsync, rename over `name`, fsync of `dir`.
// The file is 0644. On error (ENOSPC, EROFS, EDQUOT, EFBIG ...) before the
// rename nothing is left behind and the old file stays as it was; the error
// is "<path>: <strerror>".
Status writeFileAtomically(const std::filesystem::path& dir, const std::string& name,
                           std::string_view content);

// The same without either fsync: readers never see a partial file, but
// after a crash the file may be empty or old. For files rewritten every
// tick (the metrics file), where a flush to disk per tick costs and buys
// nothing.
Status replaceFile(const std::filesystem::path& dir, const std::string& name,
                   std::string_view content);

class StateStore {
public:
    StateStore(std::filesystem::path stateDir, std::filesystem::path runtimeDir);

    // Writes (or replaces) the assignment in the directory its `persistent`
    // flag selects, and removes any copy in the other one. Creates missing
    // directories (0755). Refuses (invalid_argument) an assignment that would
    // not read back identically, and an id whose file name would exceed 255
    // bytes (filename_too_long). Errors name the path.
    Status save(const Assignment& a);
    // Removes the assignment from both directories; a missing file or
    // directory is not an error.
    Status remove(std::string_view workloadId);
    // Every readable assignment of both directories, sorted by id. A bad
    // file is reported in `problems` (naming the file and why) and skipped,
    // never fatal; a workload present in both directories keeps the
    // persistent one. A file with an assignment's name that is not a good
    // assignment — corrupt, truncated, empty, larger than 64 KiB (never read
    // whole), not a regular file (symlink, FIFO, directory), owned by another
    // user than memqosd's own (root) or writable by another user — is set
    // aside: renamed "<name>.bad-<UTC time>" (e.g.
    // "nginx_2eservice.bad-20261124T221724Z") in its directory, which no load
    // reads again, and the problem says so. A file that cannot be read (EIO,
    // EACCES) stays where it is. Temp files left by a crash during save()
    // (".tmp.*") are deleted; other dot files and names that are no encoded
    // id are ignored. Missing directories hold no assignments. Never throws.
    struct Loaded {
        std::vector<Assignment> assignments;
        std::vector<std::string> problems;
    };
    Loaded loadAll() const;

private:
    std::filesystem::path stateDir_;
    std::filesystem::path runtimeDir_;
};

// Instance records, one file per instance (named like assignment files) in
// one directory that survives reboots (/var/lib/memqos/instances): Ganeti's
// admin state does too. Same atomic writes and tolerant loading as
// StateStore.
class InstanceStore {
public:
    explicit InstanceStore(std::filesystem::path dir);
    Status save(const core::Instance& instance);
    // A missing file or directory is not an error.
    Status remove(std::string_view name);
    struct Loaded {
        std::vector<core::Instance> instances; // sorted by name
        std::vector<std::string> problems;
    };
    Loaded loadAll() const;

private:
    std::filesystem::path dir_;
};

// What a unit's own configuration gave before memqos first changed it (the
// five memory properties as systemd reported them), kept so memqos can give
// exactly that back when it lets go of the unit (unassign, class removed,
// last managed child of a slice gone), across restarts and crashes. One file
// per unit under <StateDirectory>/originals/ (the file's name is the unit's,
// encoded like an assignment's):
//   Unit=nginx.service
//   MemoryMin=0                  bytes
//   MemoryLow=1073741824
//   MemoryHigh=max               bytes or max (systemd's "infinity")
//   MemoryMax=314572800
//   MemorySwapMax=max
//   KeepDropIns=50-MemoryMax.conf   runtime drop-ins that were there before
//                                  memqos (space-separated; may be empty;
//                                  written by memqos before it marked its
//                                  own drop-ins: read, no longer written)
//   BootId=0b5c…                   the boot the record was made in (optional:
//                                  older records have none)
struct UnitOriginal {
    std::string unit;
    MemoryProperties values; // all five set
    // Names of the runtime drop-ins (50-MemoryMax.conf …, in
    // /run/systemd/system.control/<unit>.d/) that existed before memqos's
    // first change: someone else's, so memqos leaves them when it lets go.
    std::vector<std::string> keepDropIns;
    // /proc/sys/kernel/random/boot_id when the record was made (empty: not
    // known). The drop-ins a record guards live in /run and go with the
    // boot: a record from another boot is not trusted.
    std::string bootId;
    bool operator==(const UnitOriginal&) const = default;
};
// The runtime drop-ins systemd writes for memqos's SetUnitProperties
// (runtime=true), in /run/systemd/system.control/<unit>.d/.
inline constexpr std::string_view kMemoryDropIns[] = {
    "50-MemoryMin.conf", "50-MemoryLow.conf", "50-MemoryHigh.conf", "50-MemoryMax.conf",
    "50-MemorySwapMax.conf"};
std::string formatUnitOriginal(const UnitOriginal& o);
Result<UnitOriginal> parseUnitOriginal(std::string_view text);

class OriginalStore {
public:
    explicit OriginalStore(std::filesystem::path dir);
    // Refuses (invalid_argument) a record without all five values.
    Status save(const UnitOriginal& original);
    // A missing file or directory is not an error.
    Status remove(std::string_view unit);
    struct Loaded {
        std::vector<UnitOriginal> originals; // sorted by unit
        std::vector<std::string> problems;
    };
    Loaded loadAll() const;

private:
    std::filesystem::path dir_;
};

// Loads a directory of one-record-per-file state (file name: the record's
// key, encoded as encodeFileName does) with the same care as
// StateStore::loadAll: temp files of a crashed save deleted, a file that is
// not memqosd's own, not a regular file, larger than `maxBytes`, or whose
// text `parse` refuses is set aside ("<name>.bad-<UTC time>"), one whose key
// does not match its name too. `parse` parses a file's text and returns the
// record's key (the caller holds the record); `keep` runs right after it when
// the record is good and its key matches the file name. Returns the
// problems, each naming the file; never throws.
std::vector<std::string> loadRecordFiles(
    const std::filesystem::path& dir, std::string_view what, std::string_view keyName,
    std::size_t maxBytes, const std::function<Result<std::string>(std::string_view text)>& parse,
    const std::function<void()>& keep);

} // namespace memqos::io

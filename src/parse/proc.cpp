// SPDX-License-Identifier: Apache-2.0
// /proc/meminfo, /proc/vmstat and /proc/swaps. /proc/zoneinfo is in
// zoneinfo.cpp, PSI in pressure.cpp, cgroup files in cgroup.cpp.
#include "memqos/parse/proc.hpp"

#include "memqos/parse/text.hpp"

#include <array>
#include <limits>
#include <set>

namespace memqos::parse {
namespace {

struct MeminfoField {
    std::string_view key;
    Bytes MemInfo::*member;
    bool required;
};

constexpr std::array kMeminfoFields{
    MeminfoField{"MemTotal", &MemInfo::memTotal, true},
    MeminfoField{"MemFree", &MemInfo::memFree, true},
    MeminfoField{"MemAvailable", &MemInfo::memAvailable, true},
    MeminfoField{"Buffers", &MemInfo::buffers, false},
    MeminfoField{"Cached", &MemInfo::cached, false},
    MeminfoField{"SwapCached", &MemInfo::swapCached, false},
    MeminfoField{"SwapTotal", &MemInfo::swapTotal, false},
    MeminfoField{"SwapFree", &MemInfo::swapFree, false},
    MeminfoField{"Shmem", &MemInfo::shmem, false},
    MeminfoField{"SReclaimable", &MemInfo::sReclaimable, false},
};

bool hasSpace(std::string_view s) {
    for (const char c : s) {
        if (text::isSpace(c)) {
            return true;
        }
    }
    return false;
}

// A /proc/swaps file name: the kernel's seq_file_path() escapes " \t\n\\" as
// a backslash and three octal digits; decode every such escape.
Result<std::string> unescapeOctal(std::string_view in, std::string_view field) {
    std::string out;
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        const char c = in[i];
        if (c == '\0') {
            // No path holds a NUL; the kernel could not have printed one.
            return text::fieldError(field, "NUL byte in " + text::quote(in));
        }
        if (c != '\\') {
            out += c;
            continue;
        }
        if (in.size() - i < 4) {
            return text::fieldError(field, "truncated escape in " + text::quote(in));
        }
        unsigned value = 0;
        for (std::size_t k = 1; k <= 3; ++k) {
            const char d = in[i + k];
            if (d < '0' || d > '7') {
                return text::fieldError(field, "invalid escape in " + text::quote(in));
            }
            value = value * 8 + static_cast<unsigned>(d - '0');
        }
        if (value == 0 || value > 0xff) {
            return text::fieldError(field, "invalid escape in " + text::quote(in));
        }
        out += static_cast<char>(value);
        i += 3;
    }
    return out;
}

} // namespace

Result<MemInfo> parseMeminfo(std::string_view textIn) {
    if (text::isBlankText(textIn)) {
        return invalid("empty input");
    }
    MemInfo info;
    std::array<bool, kMeminfoFields.size()> seenNamed{};
    std::set<std::string_view> seen;
    text::Lines lines(textIn);
    std::string_view line;
    while (lines.next(line)) {
        if (text::isBlank(line)) {
            continue;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            return text::lineError(lines.number(), "expected 'Key: value [kB]'");
        }
        const auto key = text::trim(line.substr(0, colon));
        if (key.empty() || hasSpace(key)) {
            return text::lineError(lines.number(), "expected 'Key: value [kB]'");
        }
        const std::string field = text::printable(key);
        text::Tokenizer tok(line.substr(colon + 1));
        const auto valueToken = tok.next();
        if (!valueToken) {
            return text::fieldError(field, "missing value");
        }
        const auto unit = tok.next();
        if (unit && *unit != "kB") {
            return text::fieldError(field, "unexpected unit " + text::quote(*unit));
        }
        if (!tok.atEnd()) {
            return text::fieldError(field,
                                    "unexpected text after the value: " + text::quote(tok.rest()));
        }
        auto number = text::toU64(*valueToken, field);
        if (!number) {
            return number.error();
        }
        Bytes value = *number;
        if (unit) {
            auto bytes = text::kibToBytes(*number, field);
            if (!bytes) {
                return bytes.error();
            }
            value = *bytes;
        }
        if (!seen.insert(key).second) {
            return text::lineError(lines.number(), "duplicate key " + text::quote(key));
        }
        for (std::size_t i = 0; i < kMeminfoFields.size(); ++i) {
            const auto& named = kMeminfoFields[i];
            if (named.key != key) {
                continue;
            }
            // The named fields are all sizes; a count here would be read as
            // bytes and be off by 1024.
            if (!unit) {
                return text::fieldError(field, "missing unit 'kB'");
            }
            info.*named.member = value;
            seenNamed[i] = true;
        }
    }
    for (std::size_t i = 0; i < kMeminfoFields.size(); ++i) {
        if (kMeminfoFields[i].required && !seenNamed[i]) {
            return invalid("field " + std::string(kMeminfoFields[i].key) + " missing");
        }
    }
    return info;
}

Result<VmStat> parseVmstat(std::string_view textIn) {
    auto all = text::parseKeyNumberFile(textIn);
    if (!all) {
        return all.error();
    }
    auto get = [&](std::string_view key) { return text::valueOrZero(*all, key); };
    VmStat v;
    v.pgscanKswapd = get("pgscan_kswapd");
    v.pgscanDirect = get("pgscan_direct");
    v.pgstealKswapd = get("pgsteal_kswapd");
    v.pgstealDirect = get("pgsteal_direct");
    v.pswpin = get("pswpin");
    v.pswpout = get("pswpout");
    v.oomKill = get("oom_kill");
    return v;
}

Result<std::vector<SwapDevice>> parseSwaps(std::string_view textIn) {
    text::Lines lines(textIn);
    std::string_view line;
    if (!lines.next(line)) {
        return invalid("empty input: header 'Filename Type Size Used Priority' missing");
    }
    static constexpr std::array<std::string_view, 5> kHeader{"Filename", "Type", "Size", "Used",
                                                             "Priority"};
    const auto header = text::splitExact<5>(line);
    if (!header || *header != kHeader) {
        return text::lineError(lines.number(),
                               "expected header 'Filename Type Size Used Priority'");
    }
    std::vector<SwapDevice> out;
    while (lines.next(line)) {
        if (text::isBlank(line)) {
            continue;
        }
        const auto cols = text::splitExact<5>(line);
        if (!cols) {
            return text::lineError(lines.number(), "expected 'Filename Type Size Used Priority'");
        }
        const std::string where = "line " + std::to_string(lines.number());
        auto name = unescapeOctal((*cols)[0], where + ": Filename");
        if (!name) {
            return name.error();
        }
        auto sizeKib = text::toU64((*cols)[2], where + ": Size");
        if (!sizeKib) {
            return sizeKib.error();
        }
        auto usedKib = text::toU64((*cols)[3], where + ": Used");
        if (!usedKib) {
            return usedKib.error();
        }
        auto prio = text::toI32((*cols)[4], where + ": Priority");
        if (!prio) {
            return prio.error();
        }
        auto size = text::kibToBytes(*sizeKib, where + ": Size");
        if (!size) {
            return size.error();
        }
        auto used = text::kibToBytes(*usedKib, where + ": Used");
        if (!used) {
            return used.error();
        }
        out.push_back(SwapDevice{.filename = std::move(*name),
                                 .type = std::string((*cols)[1]),
                                 .size = *size,
                                 .used = *used,
                                 .priority = *prio});
    }
    return out;
}

Result<std::uint64_t> parseProcStatStartTime(std::string_view textIn) {
    const auto open = textIn.find('(');
    const auto close = textIn.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
        return invalid("expected 'pid (comm) state ...'");
    }
    // After ')' come fields 3 (state) to 52: the start time is the 20th.
    constexpr int kStartTimeAfterComm = 20;
    text::Tokenizer tok(textIn.substr(close + 1));
    std::optional<std::string_view> field;
    for (int i = 0; i < kStartTimeAfterComm; ++i) {
        field = tok.next();
        if (!field) {
            return invalid("field 22 (starttime) missing");
        }
    }
    return text::toU64(*field, "starttime");
}

Result<std::int64_t> parseProcStatBootTime(std::string_view textIn) {
    std::string_view rest = textIn;
    while (!rest.empty()) {
        const auto nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
        text::Tokenizer tok(line);
        if (tok.next() != std::optional<std::string_view>("btime")) {
            continue;
        }
        const auto value = tok.next();
        if (!value) {
            return invalid("btime: no value");
        }
        auto t = text::toU64(*value, "btime");
        if (!t) {
            return t.error();
        }
        if (*t > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            return invalid("btime: out of range");
        }
        return static_cast<std::int64_t>(*t);
    }
    return invalid("no btime line");
}

namespace {

// QEMU's suboptions "a,b=c,..." (",," is a literal ',').
std::vector<std::string> qemuSuboptions(std::string_view v) {
    std::vector<std::string> out(1);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] == ',') {
            if (i + 1 < v.size() && v[i + 1] == ',') {
                out.back().push_back(',');
                ++i;
                continue;
            }
            out.emplace_back();
            continue;
        }
        out.back().push_back(v[i]);
    }
    return out;
}

// The guest name in "-name": the first suboption when it has no key (the
// implied "guest"), else the value of "guest=".
std::optional<std::string> qemuGuestName(std::string_view v) {
    const auto items = qemuSuboptions(v);
    if (items.front().find('=') == std::string::npos) {
        return items.front();
    }
    for (const auto& item : items) {
        if (item.starts_with("guest=")) {
            return item.substr(6);
        }
    }
    return std::nullopt;
}

} // namespace

Result<QemuCmdline> parseQemuCmdline(std::string_view textIn) {
    std::vector<std::string_view> args;
    std::string_view rest = textIn;
    while (!rest.empty()) {
        const auto nul = rest.find('\0');
        args.push_back(rest.substr(0, nul));
        rest = nul == std::string_view::npos ? std::string_view{} : rest.substr(nul + 1);
    }
    if (args.empty() || args.front().empty()) {
        return invalid("empty command line");
    }
    QemuCmdline out;
    out.program = std::string(args.front());
    for (std::size_t i = 1; i < args.size(); ++i) {
        const std::string_view a = args[i];
        const bool isName = a == "-name" || a == "--name";
        const bool isPidfile = a == "-pidfile" || a == "--pidfile";
        if (!isName && !isPidfile) {
            continue;
        }
        if (i + 1 >= args.size()) {
            return invalid(std::string(a) + ": no value");
        }
        const std::string_view v = args[++i];
        if (isPidfile) {
            out.pidfile = std::string(v);
        } else {
            out.name = qemuGuestName(v);
        }
    }
    return out;
}

bool isQemuFor(const QemuCmdline& cmd, std::string_view name) {
    std::string_view prog = cmd.program;
    if (const auto slash = prog.rfind('/'); slash != std::string_view::npos) {
        prog.remove_prefix(slash + 1);
    }
    const bool qemu = prog.find("qemu") != std::string_view::npos || prog == "kvm";
    return qemu && cmd.name && *cmd.name == name;
}

} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
// cgroup v2 memory controller files: memory.stat, the single-number
// counters, the "max"-or-number limits and cgroup.procs.
#include "memqos/parse/proc.hpp"
#include "memqos/parse/text.hpp"

namespace memqos::parse {
namespace {

// The one token of a single-value file, or an error.
Result<std::string_view> singleToken(std::string_view textIn, std::string_view what) {
    const auto t = text::trimText(textIn);
    if (t.empty()) {
        return invalid("empty input");
    }
    const auto one = text::splitExact<1>(t);
    if (!one) {
        return invalid("expected " + std::string(what) + ": " + text::quote(t));
    }
    return (*one)[0];
}

} // namespace

Result<MemoryStat> parseMemoryStat(std::string_view textIn) {
    auto all = text::parseKeyNumberFile(textIn);
    if (!all) {
        return all.error();
    }
    auto get = [&](std::string_view key) { return text::valueOrZero(*all, key); };
    MemoryStat s;
    s.anon = get("anon");
    s.file = get("file");
    s.shmem = get("shmem");
    s.fileDirty = get("file_dirty");
    s.inactiveFile = get("inactive_file");
    s.activeFile = get("active_file");
    s.pgscan = get("pgscan");
    s.pgsteal = get("pgsteal");
    s.pgmajfault = get("pgmajfault");
    s.workingsetRefaultAnon = get("workingset_refault_anon");
    s.workingsetRefaultFile = get("workingset_refault_file");
    s.all = std::move(*all);
    return s;
}

Result<Bytes> parseCounter(std::string_view textIn) {
    auto token = singleToken(textIn, "one number");
    if (!token) {
        return token.error();
    }
    return text::toU64(*token, "");
}

Result<Limit> parseLimit(std::string_view textIn) {
    auto token = singleToken(textIn, "one number or 'max'");
    if (!token) {
        return token.error();
    }
    if (*token == "max") {
        return Limit{};
    }
    auto value = text::toU64(*token, "");
    if (!value) {
        if (value.error().what.starts_with("not a number")) {
            return invalid("not a number or 'max': " + text::quote(*token));
        }
        return value.error();
    }
    return Limit{*value};
}

Result<std::vector<std::int32_t>> parseCgroupProcs(std::string_view textIn) {
    std::vector<std::int32_t> out;
    text::Lines lines(textIn);
    std::string_view line;
    while (lines.next(line)) {
        if (text::isBlank(line)) {
            continue;
        }
        const std::string field = "line " + std::to_string(lines.number()) + ": pid";
        const auto one = text::splitExact<1>(line);
        if (!one) {
            return text::fieldError(field,
                                    "expected one PID per line: " + text::quote(text::trim(line)));
        }
        auto pid = text::toI32((*one)[0], field);
        if (!pid) {
            return pid.error();
        }
        if (*pid <= 0) {
            return text::fieldError(field, "out of range: " + text::quote((*one)[0]));
        }
        out.push_back(*pid);
    }
    return out;
}

} // namespace memqos::parse

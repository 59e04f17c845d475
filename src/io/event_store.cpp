// SPDX-License-Identifier: Apache-2.0
#include "memqos/io/event_store.hpp"

#include "memqos/io/file.hpp"
#include "memqos/io/state_store.hpp"
#include "memqos/parse/text.hpp"

#include <string>

namespace memqos::io {
namespace {

// File format, one record per line, fields separated by TAB:
//   <time_usec> TAB <id> TAB <class> TAB <unit> TAB <reason> TAB <numbers>
// numbers: "key=value" joined by ',' (keys [a-z0-9_], values decimal u64),
// may be empty. In the text fields '\\', TAB and newline are escaped as
// "\\\\", "\\t" and "\\n". Lines starting with '#' and blank lines are
// skipped; a line that does not parse is named in `problems` and skipped.
constexpr std::string_view kHeader = "# memqos kill history: time_usec id class unit reason numbers\n";
constexpr std::size_t kFields = 6;

void escapeInto(std::string& out, std::string_view text) {
    for (const char c : text) {
        switch (c) {
        case '\\':
            out += "\\\\";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\n':
            out += "\\n";
            break;
        default:
            out += c;
        }
    }
}

// Splits on TAB and unescapes; nullopt on a bad escape.
std::optional<std::vector<std::string>> splitFields(std::string_view line) {
    std::vector<std::string> out(1);
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '\t') {
            out.emplace_back();
        } else if (c == '\\') {
            if (i + 1 >= line.size()) {
                return std::nullopt;
            }
            const char e = line[++i];
            if (e == '\\') {
                out.back() += '\\';
            } else if (e == 't') {
                out.back() += '\t';
            } else if (e == 'n') {
                out.back() += '\n';
            } else {
                return std::nullopt;
            }
        } else {
            out.back() += c;
        }
    }
    return out;
}

bool validKey(std::string_view key) {
    if (key.empty() || key.size() > 64) {
        return false;
    }
    for (const char c : key) {
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
            return false;
        }
    }
    return true;
}

Result<core::Numbers> parseNumbers(std::string_view text) {
    core::Numbers out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        const auto eq = item.find('=');
        if (eq == std::string_view::npos || !validKey(item.substr(0, eq))) {
            return Error{std::errc::invalid_argument,
                         "numbers: bad item " + parse::text::quote(item)};
        }
        auto value = parse::text::toU64(item.substr(eq + 1), item.substr(0, eq));
        if (!value) {
            return value.error();
        }
        out.emplace_back(std::string(item.substr(0, eq)), *value);
    }
    return out;
}

Result<KillRecord> parseRecord(std::string_view line) {
    auto fields = splitFields(line);
    if (!fields) {
        return Error{std::errc::invalid_argument, "bad escape"};
    }
    if (fields->size() != kFields) {
        return Error{std::errc::invalid_argument, "expected " + std::to_string(kFields) +
                                                      " fields, found " +
                                                      std::to_string(fields->size())};
    }
    auto& f = *fields;
    auto time = parse::text::toU64(f[0], "time_usec");
    if (!time) {
        return time.error();
    }
    if (f[1].empty() || f[2].empty()) {
        return Error{std::errc::invalid_argument, "empty workload id or class"};
    }
    auto numbers = parseNumbers(f[5]);
    if (!numbers) {
        return numbers.error();
    }
    return KillRecord{.timeUsec = *time,
                      .id = std::move(f[1]),
                      .className = std::move(f[2]),
                      .unit = std::move(f[3]),
                      .reason = std::move(f[4]),
                      .numbers = std::move(*numbers)};
}

} // namespace

ParsedKills parseKills(std::string_view text) {
    ParsedKills out;
    std::size_t lineNo = 0;
    while (!text.empty()) {
        ++lineNo;
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (parse::text::isBlank(line) || line.starts_with('#')) {
            continue;
        }
        auto r = parseRecord(line);
        if (!r) {
            out.problems.push_back("line " + std::to_string(lineNo) + ": " + r.error().what);
            continue;
        }
        out.records.push_back(std::move(*r));
    }
    return out;
}

std::string formatKills(const std::deque<KillRecord>& records) {
    std::string out(kHeader);
    for (const auto& r : records) {
        out += std::to_string(r.timeUsec);
        for (const std::string* f : {&r.id, &r.className, &r.unit, &r.reason}) {
            out += '\t';
            escapeInto(out, *f);
        }
        out += '\t';
        bool first = true;
        for (const auto& [key, value] : r.numbers) {
            if (!validKey(key)) {
                continue; // never written by memqosd; keep the file parseable
            }
            out += first ? "" : ",";
            out += key + "=" + std::to_string(value);
            first = false;
        }
        out += '\n';
    }
    return out;
}

EventStore::EventStore(std::filesystem::path file) : file_(std::move(file)) {}

ParsedKills EventStore::load() {
    auto text = readFile(file_);
    if (!text) {
        records_.clear();
        if (isVanished(text.error())) {
            return {};
        }
        return ParsedKills{{}, {text.error().what}};
    }
    ParsedKills parsed = parseKills(*text);
    for (auto& p : parsed.problems) {
        p = file_.string() + ": " + p;
    }
    records_.assign(parsed.records.begin(), parsed.records.end());
    while (records_.size() > kMaxKillRecords) {
        records_.pop_front();
    }
    return parsed;
}

namespace {

std::deque<KillRecord> withRecord(std::deque<KillRecord> records, const KillRecord& record) {
    records.push_back(record);
    while (records.size() > kMaxKillRecords) {
        records.pop_front();
    }
    return records;
}

} // namespace

Status EventStore::append(const KillRecord& record) {
    auto next = withRecord(records_, record);
    if (auto st = writeText(formatKills(next)); !st) {
        return st;
    }
    records_ = std::move(next);
    return okStatus();
}

std::string EventStore::add(const KillRecord& record) {
    records_ = withRecord(std::move(records_), record);
    return formatKills(records_);
}

Status EventStore::writeText(const std::string& text) const {
    return writeFileAtomically(file_.parent_path(), file_.filename().string(), text);
}

} // namespace memqos::io

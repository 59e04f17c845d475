// SPDX-License-Identifier: Apache-2.0
// /proc/zoneinfo. The file mixes the per-zone watermarks we need with per-node
// stats (printed under the first zone of each node), per-zone counters,
// per-cpu pagesets and more; only the zone header, "pages free" and the
// watermark lines are read.
#include "memqos/parse/proc.hpp"
#include "memqos/parse/text.hpp"

namespace memqos::parse {
namespace {

struct ZoneBuilder {
    Zone zone;
    bool free = false;
    bool min = false;
    bool low = false;
    bool high = false;
    bool managed = false;

    std::string label() const {
        return "node " + std::to_string(zone.node) + ", zone " + text::printable(zone.name);
    }
};

Status finish(const ZoneBuilder& b) {
    const char* missing = !b.free   ? "pages free"
                          : !b.min  ? "min"
                          : !b.low  ? "low"
                          : !b.high ? "high"
                                    : nullptr;
    if (missing != nullptr) {
        return text::fieldError(b.label(), "field " + std::string(missing) + " missing");
    }
    return okStatus();
}

// "Node 0, zone   Normal" after its first token.
Result<ZoneBuilder> parseHeader(text::Tokenizer& tok, std::size_t lineNo) {
    const auto node = tok.next();
    const auto zoneWord = tok.next();
    const auto name = tok.next();
    if (!node || !zoneWord || !name || *zoneWord != "zone" || !tok.atEnd() ||
        !node->ends_with(',')) {
        return text::lineError(lineNo, "expected 'Node <n>, zone <name>'");
    }
    auto number =
        text::toI32(node->substr(0, node->size() - 1), "line " + std::to_string(lineNo) + ": node");
    if (!number) {
        return number.error();
    }
    if (*number < 0) {
        return text::lineError(lineNo, "node: out of range: " + text::quote(*node));
    }
    ZoneBuilder b;
    b.zone.node = *number;
    b.zone.name = std::string(*name);
    return b;
}

// Stores "value" into `out` unless the key was seen already in this zone.
Status setOnce(ZoneBuilder& b, std::string_view key, text::Tokenizer& tok, bool& seen,
               std::uint64_t& out) {
    const auto value = tok.next();
    if (!value || !tok.atEnd()) {
        return text::fieldError(b.label(), "expected '" + std::string(key) + " <pages>'");
    }
    if (seen) {
        return text::fieldError(b.label(), "duplicate field " + std::string(key));
    }
    auto n = text::toU64(*value, b.label() + ": " + std::string(key));
    if (!n) {
        return n.error();
    }
    out = *n;
    seen = true;
    return okStatus();
}

} // namespace

Result<std::vector<Zone>> parseZoneinfo(std::string_view textIn) {
    if (text::isBlankText(textIn)) {
        return invalid("empty input");
    }
    std::vector<Zone> zones;
    std::optional<ZoneBuilder> current;
    text::Lines lines(textIn);
    std::string_view line;
    while (lines.next(line)) {
        text::Tokenizer tok(line);
        const auto first = tok.next();
        if (!first) {
            continue;
        }
        if (*first == "Node") {
            if (current) {
                if (auto st = finish(*current); !st) {
                    return st.error();
                }
                zones.push_back(std::move(current->zone));
            }
            auto header = parseHeader(tok, lines.number());
            if (!header) {
                return header.error();
            }
            current = std::move(*header);
            continue;
        }
        if (!current) {
            return text::lineError(lines.number(), "expected 'Node <n>, zone <name>'");
        }
        ZoneBuilder& b = *current;
        Status st = okStatus();
        if (*first == "pages") {
            // "pages free N"; no other "pages ..." line exists, skip any.
            const auto second = tok.next();
            if (second && *second == "free") {
                st = setOnce(b, "pages free", tok, b.free, b.zone.freePages);
            }
        } else if (*first == "min") {
            st = setOnce(b, "min", tok, b.min, b.zone.minPages);
        } else if (*first == "low") {
            st = setOnce(b, "low", tok, b.low, b.zone.lowPages);
        } else if (*first == "high") {
            // The pagesets' "high:" has a colon and does not match.
            st = setOnce(b, "high", tok, b.high, b.zone.highPages);
        } else if (*first == "managed") {
            st = setOnce(b, "managed", tok, b.managed, b.zone.managedPages);
        }
        if (!st) {
            return st.error();
        }
    }
    if (!current) {
        return invalid("no zone found");
    }
    if (auto st = finish(*current); !st) {
        return st.error();
    }
    zones.push_back(std::move(current->zone));
    return zones;
}

} // namespace memqos::parse

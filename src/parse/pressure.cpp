// SPDX-License-Identifier: Apache-2.0
// PSI files: /proc/pressure/memory and a cgroup's memory.pressure.
#include "memqos/parse/proc.hpp"
#include "memqos/parse/text.hpp"

#include <cmath>

namespace memqos::parse {
namespace {

// One "some|full avg10=.. avg60=.. avg300=.. total=.." line after its first
// token. `kind` names the line in errors.
Result<PressureLine> parsePressureFields(text::Tokenizer& tok, std::string_view kind) {
    PressureLine out;
    bool have10 = false;
    bool have60 = false;
    bool have300 = false;
    bool haveTotal = false;
    while (auto token = tok.next()) {
        const auto kv = text::splitAssignment(*token);
        if (!kv) {
            return text::fieldError(kind, "expected key=value: " + text::quote(*token));
        }
        double* avg = nullptr;
        bool* seen = nullptr;
        if (kv->key == "avg10") {
            avg = &out.avg10;
            seen = &have10;
        } else if (kv->key == "avg60") {
            avg = &out.avg60;
            seen = &have60;
        } else if (kv->key == "avg300") {
            avg = &out.avg300;
            seen = &have300;
        } else if (kv->key == "total") {
            seen = &haveTotal;
        } else {
            continue; // a field a newer kernel added
        }
        const std::string field = std::string(kind) + ": " + std::string(kv->key);
        if (*seen) {
            return text::fieldError(kind, "duplicate field " + std::string(kv->key));
        }
        *seen = true;
        if (avg == nullptr) {
            auto total = text::toU64(kv->value, field);
            if (!total) {
                return total.error();
            }
            out.totalUsec = *total;
            continue;
        }
        auto value = text::toDouble(kv->value, field);
        if (!value) {
            return value.error();
        }
        // A percentage of wall time: anything else (NaN, inf, negative,
        // above 100) would poison every threshold comparison downstream.
        if (!std::isfinite(*value) || *value < 0.0 || *value > 100.0) {
            return text::fieldError(field, "out of range 0..100: " + text::quote(kv->value));
        }
        *avg = *value;
    }
    const char* missing = !have10      ? "avg10"
                          : !have60    ? "avg60"
                          : !have300   ? "avg300"
                          : !haveTotal ? "total"
                                       : nullptr;
    if (missing != nullptr) {
        return text::fieldError(kind, "field " + std::string(missing) + " missing");
    }
    return out;
}

} // namespace

Result<Pressure> parsePressure(std::string_view textIn) {
    if (text::isBlankText(textIn)) {
        return invalid("empty input");
    }
    std::optional<PressureLine> some;
    std::optional<PressureLine> full;
    text::Lines lines(textIn);
    std::string_view line;
    while (lines.next(line)) {
        if (text::isBlank(line)) {
            continue;
        }
        text::Tokenizer tok(line);
        const auto kind = tok.next(); // not blank, so there is a token
        std::optional<PressureLine>* slot = nullptr;
        if (kind && *kind == "some") {
            slot = &some;
        } else if (kind && *kind == "full") {
            slot = &full;
        } else {
            return text::lineError(lines.number(), "expected 'some ...' or 'full ...', got " +
                                                       text::quote(kind.value_or("")));
        }
        if (slot->has_value()) {
            return text::lineError(lines.number(), "duplicate '" + std::string(*kind) + "' line");
        }
        auto parsed = parsePressureFields(tok, *kind);
        if (!parsed) {
            return parsed.error();
        }
        *slot = *parsed;
    }
    if (!some) {
        return invalid("line 'some' missing");
    }
    return Pressure{.some = *some, .full = full};
}

} // namespace memqos::parse

// SPDX-License-Identifier: Apache-2.0
#pragma once
// memqosctl --json: a streaming-style front to nlohmann-json, so the
// renderers write members in order (begin/key/value/end) while escaping,
// numbers and layout are the library's (nlohmann::ordered_json keeps the
// members in the order written).
//
// Contract, as the hand-written writer this replaces had it: strings are
// escaped per RFC 8259 (quote, backslash, every control character below
// 0x20, and DEL as \u007f); UTF-8 passes through unchanged (D-Bus strings are
// always valid UTF-8; an invalid byte would become U+FFFD). Integers are
// exact (uint64 included); a non-finite double is null; an integral double
// below 1e15 in magnitude is written without a fraction ("1", not "1.0").
// Pretty is two-space indentation, "key": value; Compact has no whitespace.
// Misuse (a value where a key is due, unbalanced end*) asserts.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memqos::ctl {

enum class JsonStyle { Pretty, Compact };

class JsonWriter {
public:
    explicit JsonWriter(JsonStyle style = JsonStyle::Pretty) : style_(style) {}

    JsonWriter& beginObject();
    JsonWriter& endObject();
    JsonWriter& beginArray();
    JsonWriter& endArray();
    JsonWriter& key(std::string_view name);

    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
    JsonWriter& value(bool b);
    JsonWriter& value(std::uint64_t n);
    JsonWriter& value(std::int64_t n);
    JsonWriter& value(std::uint32_t n) { return value(static_cast<std::uint64_t>(n)); }
    JsonWriter& value(std::int32_t n) { return value(static_cast<std::int64_t>(n)); }
    JsonWriter& value(double d);
    JsonWriter& null();

    // key(name).value(v) in one call.
    template <typename T>
    JsonWriter& member(std::string_view name, const T& v) {
        key(name);
        return value(v);
    }

    // The document, serialized; call once every begin* has its end*.
    const std::string& str() const;
    bool complete() const { return stack_.empty() && wroteRoot_; }

private:
    using Json = nlohmann::ordered_json;
    // Places `v` as the root, the next array element or the member of the
    // pending key; returns where it now lives.
    Json* put(Json v);

    JsonStyle style_;
    Json root_;
    std::vector<Json*> stack_; // open containers, innermost last
    std::optional<std::string> key_;
    bool wroteRoot_ = false;
    mutable std::string out_;
};

// The JSON string literal for `s`, quotes included.
std::string jsonQuote(std::string_view s);

} // namespace memqos::ctl

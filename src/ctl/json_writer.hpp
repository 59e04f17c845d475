// SPDX-License-Identifier: Apache-2.0
#pragma once
// A tiny streaming JSON writer for memqosctl --json.
//
// Contract: strings are escaped per RFC 8259 (quote, backslash, every control
// character below 0x20 and DEL); bytes >= 0x80 pass through unchanged, so
// valid UTF-8 in gives valid UTF-8 out (D-Bus strings are always valid UTF-8).
// Integers are written exactly (uint64 included); a non-finite double, which
// JSON cannot represent, is written as null. Misuse (a value where a key is
// due, unbalanced end*) is a programming error and asserts.

#include <cstdint>
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

    // The document so far; complete once every begin* has its end*.
    const std::string& str() const { return out_; }
    bool complete() const { return stack_.empty() && wroteRoot_; }

private:
    enum class Frame { Object, Array };
    void beforeValue();
    void newline();

    JsonStyle style_;
    std::string out_;
    std::vector<Frame> stack_;
    bool first_ = true;     // no element yet in the innermost container
    bool afterKey_ = false; // a key was written, its value is due
    bool wroteRoot_ = false;
};

// The JSON string literal for `s`, quotes included.
std::string jsonQuote(std::string_view s);

} // namespace memqos::ctl

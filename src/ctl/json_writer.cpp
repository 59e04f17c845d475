// SPDX-License-Identifier: Apache-2.0
#include "json_writer.hpp"

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>

namespace memqos::ctl {

std::string jsonQuote(std::string_view s) {
    static constexpr std::array<char, 16> kHex{'0', '1', '2', '3', '4', '5', '6', '7',
                                               '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (u < 0x20 || u == 0x7f) {
                out += "\\u00";
                out += kHex[u >> 4U];
                out += kHex[u & 0xfU];
            } else {
                out += c; // ASCII or a UTF-8 byte: passed through
            }
        }
    }
    out += '"';
    return out;
}

void JsonWriter::newline() {
    if (style_ != JsonStyle::Pretty) {
        return;
    }
    out_ += '\n';
    out_.append(stack_.size() * 2, ' ');
}

void JsonWriter::beforeValue() {
    if (afterKey_) {
        afterKey_ = false;
        return;
    }
    if (stack_.empty()) {
        assert(!wroteRoot_ && "a JSON document has one root value");
        wroteRoot_ = true;
        return;
    }
    assert(stack_.back() == Frame::Array && "object members need a key first");
    if (!first_) {
        out_ += ',';
    }
    first_ = false;
    newline();
}

JsonWriter& JsonWriter::key(std::string_view name) {
    assert(!stack_.empty() && stack_.back() == Frame::Object && !afterKey_);
    if (!first_) {
        out_ += ',';
    }
    first_ = false;
    newline();
    out_ += jsonQuote(name);
    out_ += style_ == JsonStyle::Pretty ? ": " : ":";
    afterKey_ = true;
    return *this;
}

JsonWriter& JsonWriter::beginObject() {
    beforeValue();
    out_ += '{';
    stack_.push_back(Frame::Object);
    first_ = true;
    return *this;
}

JsonWriter& JsonWriter::endObject() {
    assert(!stack_.empty() && stack_.back() == Frame::Object && !afterKey_);
    stack_.pop_back();
    if (!first_) {
        newline();
    }
    out_ += '}';
    first_ = false;
    return *this;
}

JsonWriter& JsonWriter::beginArray() {
    beforeValue();
    out_ += '[';
    stack_.push_back(Frame::Array);
    first_ = true;
    return *this;
}

JsonWriter& JsonWriter::endArray() {
    assert(!stack_.empty() && stack_.back() == Frame::Array);
    stack_.pop_back();
    if (!first_) {
        newline();
    }
    out_ += ']';
    first_ = false;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
    beforeValue();
    out_ += jsonQuote(s);
    return *this;
}

JsonWriter& JsonWriter::value(bool b) {
    beforeValue();
    out_ += b ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t n) {
    beforeValue();
    out_ += std::to_string(n);
    return *this;
}

JsonWriter& JsonWriter::value(std::int64_t n) {
    beforeValue();
    out_ += std::to_string(n);
    return *this;
}

JsonWriter& JsonWriter::value(double d) {
    if (!std::isfinite(d)) {
        return null();
    }
    beforeValue();
    std::array<char, 64> buf{};
    // Shortest representation that round-trips.
    const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
    assert(ec == std::errc{});
    std::string_view text(buf.data(), static_cast<std::size_t>(end - buf.data()));
    out_.append(text);
    // "1e+20" is valid JSON; "inf"/"nan" were excluded above.
    return *this;
}

JsonWriter& JsonWriter::null() {
    beforeValue();
    out_ += "null";
    return *this;
}

} // namespace memqos::ctl

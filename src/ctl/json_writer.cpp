// SPDX-License-Identifier: Apache-2.0
#include "json_writer.hpp"

#include <cassert>
#include <cmath>
#include <utility>

namespace memqos::ctl {
namespace {

// nlohmann-json leaves DEL unescaped (RFC 8259 allows it); memqosctl has
// always written it as \u007f. A raw 0x7f byte can only stand inside a
// string (it is no structural character, nor part of a UTF-8 sequence).
std::string escapeDel(std::string text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        if (c == '\x7f') {
            out += "\\u007f";
        } else {
            out += c;
        }
    }
    return out;
}

std::string dump(const nlohmann::ordered_json& json, int indent) {
    return escapeDel(
        json.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

} // namespace

std::string jsonQuote(std::string_view s) {
    return dump(nlohmann::ordered_json(std::string(s)), -1);
}

JsonWriter::Json* JsonWriter::put(Json v) {
    if (stack_.empty()) {
        assert(!wroteRoot_ && "a JSON document has one root value");
        wroteRoot_ = true;
        root_ = std::move(v);
        return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_object()) {
        assert(key_ && "object members need a key first");
        auto& members = parent.get_ref<Json::object_t&>();
        auto [it, inserted] = members.emplace(std::move(*key_), std::move(v));
        key_.reset();
        return &it->second;
    }
    assert(!key_);
    parent.push_back(std::move(v));
    return &parent.back();
}

JsonWriter& JsonWriter::key(std::string_view name) {
    assert(!stack_.empty() && stack_.back()->is_object() && !key_);
    key_ = std::string(name);
    return *this;
}

JsonWriter& JsonWriter::beginObject() {
    stack_.push_back(put(Json::object()));
    return *this;
}

JsonWriter& JsonWriter::endObject() {
    assert(!stack_.empty() && stack_.back()->is_object() && !key_);
    stack_.pop_back();
    return *this;
}

JsonWriter& JsonWriter::beginArray() {
    stack_.push_back(put(Json::array()));
    return *this;
}

JsonWriter& JsonWriter::endArray() {
    assert(!stack_.empty() && stack_.back()->is_array());
    stack_.pop_back();
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
    put(Json(std::string(s)));
    return *this;
}

JsonWriter& JsonWriter::value(bool b) {
    put(Json(b));
    return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t n) {
    put(Json(n));
    return *this;
}

JsonWriter& JsonWriter::value(std::int64_t n) {
    put(Json(n));
    return *this;
}

JsonWriter& JsonWriter::value(double d) {
    constexpr double kExactInteger = 1e15;
    if (!std::isfinite(d)) {
        return null();
    }
    if (std::trunc(d) == d && std::fabs(d) < kExactInteger) {
        // "1" as memqosctl has always printed it; the library would say "1.0".
        put(Json(static_cast<std::int64_t>(d)));
    } else {
        put(Json(d));
    }
    return *this;
}

JsonWriter& JsonWriter::null() {
    put(Json(nullptr));
    return *this;
}

const std::string& JsonWriter::str() const {
    out_ = dump(root_, style_ == JsonStyle::Pretty ? 2 : -1);
    return out_;
}

} // namespace memqos::ctl

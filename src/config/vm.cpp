// SPDX-License-Identifier: Apache-2.0
#include "memqos/config/vm.hpp"

#include "memqos/config/values.hpp"

#include <cstdio>

namespace memqos::config {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool isNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == ':' || c == '.';
}

std::string quoted(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 64)) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    return "'" + out + (s.size() > 64 ? "…'" : "'");
}

} // namespace

Result<VmMetadata> parseVmMetadata(std::string_view xml) {
    std::size_t i = 0;
    while (i < xml.size() && isSpace(xml[i])) {
        ++i;
    }
    if (i >= xml.size() || xml[i] != '<') {
        return invalid("memqos metadata: no element");
    }
    ++i;
    const std::size_t nameStart = i;
    while (i < xml.size() && isNameChar(xml[i])) {
        ++i;
    }
    if (i == nameStart) {
        return invalid("memqos metadata: the element has no name");
    }
    VmMetadata m;
    bool haveClass = false;
    for (;;) {
        while (i < xml.size() && isSpace(xml[i])) {
            ++i;
        }
        if (i >= xml.size()) {
            return invalid("memqos metadata: the element does not end");
        }
        if (xml[i] == '/' || xml[i] == '>') {
            break;
        }
        const std::size_t keyStart = i;
        while (i < xml.size() && isNameChar(xml[i])) {
            ++i;
        }
        const std::string_view key = xml.substr(keyStart, i - keyStart);
        if (key.empty() || i >= xml.size() || xml[i] != '=') {
            return invalid("memqos metadata: malformed attribute at byte " +
                           std::to_string(keyStart));
        }
        ++i;
        if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\'')) {
            return invalid("memqos metadata: attribute " + std::string(key) + " is not quoted");
        }
        const char q = xml[i++];
        const std::size_t end = xml.find(q, i);
        if (end == std::string_view::npos) {
            return invalid("memqos metadata: attribute " + std::string(key) + " does not end");
        }
        const std::string_view value = xml.substr(i, end - i);
        i = end + 1;
        if (value.find_first_of("&<") != std::string_view::npos) {
            return invalid("memqos metadata: attribute " + std::string(key) + "=" +
                           quoted(value) + " holds '&' or '<'");
        }
        if (key == "class") {
            if (!isValidClassName(value)) {
                return invalid("memqos metadata: class=" + quoted(value) +
                               " is not a class name (a-z, 0-9, '_', at most 32)");
            }
            m.className = std::string(value);
            haveClass = true;
        } else if (key == "request") {
            auto r = parseSize(value);
            if (!r) {
                return invalid("memqos metadata: request=" + quoted(value) + ": " +
                               r.error().what);
            }
            m.request = *r;
        } else if (key == "limit") {
            auto l = parseLimit(value);
            if (!l) {
                return invalid("memqos metadata: limit=" + quoted(value) + ": " + l.error().what);
            }
            m.limit = *l;
        } else if (key == "priority") {
            auto p = parseInt(value, -1000000, 1000000);
            if (!p) {
                return invalid("memqos metadata: priority=" + quoted(value) + ": " +
                               p.error().what);
            }
            m.priority = static_cast<std::int32_t>(*p);
        }
        // xmlns, xmlns:memqos and unknown attributes: ignored.
    }
    if (!haveClass) {
        return invalid("memqos metadata: no class attribute");
    }
    return m;
}

std::string formatVmMetadata(const VmMetadata& m) {
    std::string out = "<workload class=\"" + m.className + "\"";
    if (m.request) {
        out += " request=\"" + formatSize(*m.request) + "\"";
    }
    if (m.limit) {
        out += " limit=\"" + formatLimit(*m.limit) + "\"";
    }
    if (m.priority) {
        out += " priority=\"" + std::to_string(*m.priority) + "\"";
    }
    return out + "/>";
}

Result<std::string> withPartition(std::string_view domainXml, std::string_view partition) {
    if (partition.size() < 2 || partition.front() != '/' || partition.back() == '/') {
        return invalid("partition " + quoted(partition) + " is not an absolute path");
    }
    for (char c : partition) {
        if (!(isNameChar(c) || c == '/') || c == ':' || c == '.') {
            return invalid("partition " + quoted(partition) + " holds a character other than "
                           "A-Z a-z 0-9 _ - /");
        }
    }
    if (partition.find("//") != std::string_view::npos) {
        return invalid("partition " + quoted(partition) + " has an empty component");
    }
    const std::string element = "<partition>" + std::string(partition) + "</partition>";
    std::string xml(domainXml);
    const auto domainEnd = xml.rfind("</domain>");
    if (xml.find("<domain") == std::string::npos || domainEnd == std::string::npos) {
        return invalid("not a domain's XML (no <domain> … </domain>)");
    }
    const auto p = xml.find("<partition>");
    if (p != std::string::npos) {
        const auto pe = xml.find("</partition>", p);
        if (pe == std::string::npos || pe > domainEnd) {
            return invalid("the domain's <partition> does not end");
        }
        xml.replace(p, pe + 12 - p, element);
        return xml;
    }
    const auto r = xml.find("<resource>");
    if (r != std::string::npos && r < domainEnd) {
        xml.insert(r + 10, "\n    " + element);
        return xml;
    }
    if (xml.find("<resource") != std::string::npos) {
        return invalid("the domain's <resource> element has a form memqos does not edit");
    }
    xml.insert(domainEnd, "  <resource>\n    " + element + "\n  </resource>\n");
    return xml;
}

Result<std::string> parseProcCgroup(std::string_view text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        const std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        if (line.starts_with("0::")) {
            std::string_view path = line.substr(3);
            if (!path.starts_with('/')) {
                return invalid("cgroup v2 line has no absolute path");
            }
            path.remove_prefix(1);
            if (path.find('\0') != std::string_view::npos) {
                return invalid("cgroup v2 path holds a NUL byte");
            }
            return std::string(path);
        }
    }
    return invalid("no cgroup v2 line (\"0::/…\")");
}

std::optional<UnitCgroup> unitOfCgroup(std::string_view cgroupPath) {
    std::size_t start = 0;
    while (start < cgroupPath.size()) {
        auto slash = cgroupPath.find('/', start);
        const std::size_t end = slash == std::string_view::npos ? cgroupPath.size() : slash;
        const std::string_view comp = cgroupPath.substr(start, end - start);
        if ((comp.ends_with(".scope") && comp.size() > 6) ||
            (comp.ends_with(".service") && comp.size() > 8)) {
            return UnitCgroup{std::string(comp), std::string(cgroupPath.substr(0, end))};
        }
        start = end + 1;
    }
    return std::nullopt;
}

std::optional<std::string> classFromTags(std::string_view tags) {
    // Ganeti 3.0 tags are [\w.+*/:@-]+ (objects.py VALID_TAG_RE): no '='.
    constexpr std::string_view kPrefix = "memqos:class:";
    constexpr std::string_view kOldPrefix = "memqos:class=";
    std::size_t pos = 0;
    while (pos < tags.size()) {
        while (pos < tags.size() && isSpace(tags[pos])) {
            ++pos;
        }
        auto end = pos;
        while (end < tags.size() && !isSpace(tags[end])) {
            ++end;
        }
        const std::string_view tag = tags.substr(pos, end - pos);
        if ((tag.starts_with(kPrefix) || tag.starts_with(kOldPrefix)) &&
            isValidClassName(tag.substr(kPrefix.size()))) {
            return std::string(tag.substr(kPrefix.size()));
        }
        pos = end;
    }
    return std::nullopt;
}

std::string escapeUnitComponent(std::string_view name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == ':' || c == '_' || (c == '.' && i > 0);
        if (plain) {
            out += c;
        } else if (c == '/') {
            out += '-';
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
            out += buf;
        }
    }
    return out;
}

} // namespace memqos::config

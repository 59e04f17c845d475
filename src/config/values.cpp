// SPDX-License-Identifier: Apache-2.0
#include "memqos/config/values.hpp"
#include "memqos/parse/text.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace memqos::config {
namespace {

// Exact intermediate products (fraction · unit) need more than 64 bits.
__extension__ using U128 = unsigned __int128;

constexpr std::string_view kSizeHint = "expected e.g. 512M, 2G, 1.5G";
constexpr std::string_view kDurationHint = "expected e.g. 500ms, 30s, 5min, 1h";
constexpr std::string_view kPercentHint = "expected e.g. 10% or 0.5%";
constexpr std::string_view kRatioHint = "expected a ratio ≥ 1.0, e.g. 1.5";
constexpr std::string_view kFactorHint =
    "expected a number from 0 to 1 such as 0.9, a percentage such as 90%, or off";
constexpr int kMaxFractionDigits = 18; // 10^18 < 2^63: fits the fraction in a uint64

Error fail(std::string_view what, std::string_view hint) {
    std::string s(what);
    if (!hint.empty()) {
        s += " (";
        s += hint;
        s += ')';
    }
    return invalid(std::move(s));
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

using parse::text::equalsIgnoreCase;
// A value without the blanks (and newlines) around it.
using parse::text::trimText;

// The text in double quotes, non-printable bytes as \xNN, cut at 32 bytes
// (the whole value is in the message already; this names the bad part).
std::string quoted(std::string_view s) {
    return "\"" + parse::text::printable(s, 32) + "\"";
}

// "123.45": digits, then optionally '.' and at least one digit.
struct Decimal {
    std::string_view text; // the whole number, for from_chars<double>
    std::uint64_t whole = 0;
    std::uint64_t fraction = 0; // the digits after '.', as an integer
    int fractionDigits = 0;
    bool wholeOverflow = false;
    bool tooManyDigits = false; // more than kMaxFractionDigits after '.'
};

// Consumes a decimal at the start of `s`; nullopt if there is none.
std::optional<Decimal> scanDecimal(std::string_view& s) {
    std::size_t i = 0;
    while (i < s.size() && isDigit(s[i]))
        ++i;
    if (i == 0)
        return std::nullopt;
    Decimal d;
    const char* first = s.data();
    auto [ptr, ec] = std::from_chars(first, first + i, d.whole);
    if (ec == std::errc::result_out_of_range)
        d.wholeOverflow = true;
    (void)ptr;
    std::size_t end = i;
    if (i + 1 < s.size() && s[i] == '.' && isDigit(s[i + 1])) {
        std::size_t j = i + 1;
        while (j < s.size() && isDigit(s[j]))
            ++j;
        std::size_t digits = j - i - 1;
        if (digits > static_cast<std::size_t>(kMaxFractionDigits)) {
            d.tooManyDigits = true;
            d.fractionDigits = kMaxFractionDigits + 1;
        } else {
            d.fractionDigits = static_cast<int>(digits);
            std::from_chars(first + i + 1, first + j, d.fraction);
        }
        end = j;
    }
    d.text = s.substr(0, end);
    s.remove_prefix(end);
    return d;
}

std::uint64_t pow10(int n) {
    std::uint64_t r = 1;
    for (int i = 0; i < n; ++i)
        r *= 10;
    return r;
}

// floor(d · unit), or nullopt if above `max`.
std::optional<std::uint64_t> scale(const Decimal& d, std::uint64_t unit, std::uint64_t max) {
    if (d.wholeOverflow)
        return std::nullopt;
    U128 total = static_cast<U128>(d.whole) * unit;
    total += static_cast<U128>(d.fraction) * unit / pow10(d.fractionDigits);
    if (total > max)
        return std::nullopt;
    return static_cast<std::uint64_t>(total);
}

// d as an integer count of 10^-digits (e.g. digits=2: "10.5" -> 1050), or
// nullopt if d has more decimals than `digits` or overflows.
std::optional<std::uint64_t> fixedPoint(const Decimal& d, int digits) {
    if (d.wholeOverflow || d.fractionDigits > digits)
        return std::nullopt;
    U128 v = static_cast<U128>(d.whole) * pow10(digits) +
             static_cast<U128>(d.fraction) * pow10(digits - d.fractionDigits);
    if (v > std::numeric_limits<std::uint64_t>::max())
        return std::nullopt;
    return static_cast<std::uint64_t>(v);
}

std::optional<double> toDouble(const Decimal& d) {
    double v = 0;
    auto [ptr, ec] =
        std::from_chars(d.text.data(), d.text.data() + d.text.size(), v, std::chars_format::fixed);
    if (ec != std::errc{} || ptr != d.text.data() + d.text.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

void skipBlanks(std::string_view& s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
}

bool isOff(std::string_view s) {
    return equalsIgnoreCase(s, "off");
}

struct Unit {
    std::string_view name;
    std::uint64_t factor;
};

// Binary whatever the spelling: "KB" is read as "K" (memory is sized in
// powers of two; memqosctl, which reads its sizes here too, always took
// "1GB" for 1 GiB).
constexpr std::array<Unit, 20> kSizeUnits{{
    {"", 1},
    {"b", 1},
    {"k", kKiB},
    {"m", kMiB},
    {"g", kGiB},
    {"t", kGiB* kKiB},
    {"p", kGiB* kMiB},
    {"e", kGiB* kGiB},
    {"kib", kKiB},
    {"mib", kMiB},
    {"gib", kGiB},
    {"tib", kGiB* kKiB},
    {"pib", kGiB* kMiB},
    {"eib", kGiB* kGiB},
    {"kb", kKiB},
    {"mb", kMiB},
    {"gb", kGiB},
    {"tb", kGiB* kKiB},
    {"pb", kGiB* kMiB},
    {"eb", kGiB* kGiB},
}};

constexpr std::uint64_t kUsecPerSec = 1000000;
constexpr std::array<Unit, 12> kDurationUnits{{
    {"", kUsecPerSec},
    {"us", 1},
    {"usec", 1},
    {"ms", 1000},
    {"msec", 1000},
    {"s", kUsecPerSec},
    {"sec", kUsecPerSec},
    {"m", 60 * kUsecPerSec},
    {"min", 60 * kUsecPerSec},
    {"h", 3600 * kUsecPerSec},
    {"hr", 3600 * kUsecPerSec},
    {"d", 86400 * kUsecPerSec},
}};

template <std::size_t N>
const Unit* findUnit(const std::array<Unit, N>& units, std::string_view name) {
    for (const Unit& u : units)
        if (equalsIgnoreCase(u.name, name))
            return &u;
    return nullptr;
}

// A percent: number, optional blanks, '%'. Returns the decimal.
Result<Decimal> scanPercent(std::string_view text, std::string_view hint) {
    std::string_view s = trimText(text);
    auto d = scanDecimal(s);
    if (!d)
        return fail("not a percentage", hint);
    skipBlanks(s);
    if (s.empty())
        return fail("missing '%'", hint);
    if (s != "%")
        return fail("not a percentage", hint);
    if (d->wholeOverflow || d->whole > 100 || (d->whole == 100 && d->fraction != 0))
        return fail("above 100%", "expected 0% to 100%");
    return *d;
}

Result<double> percentImpl(std::string_view text, std::string_view hint) {
    auto d = scanPercent(text, hint);
    if (!d)
        return d.error();
    if (d->fractionDigits > 6)
        return fail("too many decimals", "at most 6, e.g. 0.125%");
    auto v = toDouble(*d);
    if (!v)
        return fail("not a percentage", hint);
    return *v;
}

Result<Permyriad> permyriadImpl(std::string_view text, std::string_view hint) {
    auto d = scanPercent(text, hint);
    if (!d)
        return d.error();
    auto v = fixedPoint(*d, 2);
    if (!v)
        return fail("too many decimals", "at most 2, e.g. 0.05%");
    return static_cast<Permyriad>(*v);
}

template <typename E, std::size_t N>
Result<E> enumImpl(std::string_view text, const std::array<EnumName<E>, N>& names) {
    std::string_view s = trimText(text);
    for (const auto& n : names)
        if (equalsIgnoreCase(n.name, s))
            return n.value;
    std::string hint = "expected ";
    for (std::size_t i = 0; i < N; ++i) {
        if (i > 0)
            hint += (i + 1 == N) ? " or " : ", ";
        hint += names[i].name;
    }
    return fail("unknown value", hint);
}

template <typename E, std::size_t N>
std::string_view enumName(E value, const std::array<EnumName<E>, N>& names) {
    for (const auto& n : names)
        if (n.value == value)
            return n.name;
    return "?";
}

std::string toDecimalString(std::uint64_t value, int digits) {
    // value / 10^digits with trailing zeros of the fraction dropped.
    std::uint64_t div = pow10(digits);
    std::string s = std::to_string(value / div);
    std::uint64_t frac = value % div;
    if (frac != 0) {
        std::string f = std::to_string(frac);
        f.insert(0, static_cast<std::size_t>(digits) - f.size(), '0');
        while (!f.empty() && f.back() == '0')
            f.pop_back();
        s += '.';
        s += f;
    }
    return s;
}

std::string doubleToString(double v) {
    std::array<char, 400> buf{};
    auto [ptr, ec] =
        std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed);
    if (ec != std::errc{})
        return "nan";
    return std::string(buf.data(), ptr);
}

bool isPrintable(char c) {
    return c >= 0x20 && c < 0x7f;
}

} // namespace

// --- sizes -----------------------------------------------------------------

Result<Bytes> parseSize(std::string_view text) {
    std::string_view s = trimText(text);
    auto d = scanDecimal(s);
    if (!d) {
        if (equalsIgnoreCase(s, "max") || equalsIgnoreCase(s, "infinity"))
            return fail("not a size", "\"max\" is only allowed for a limit");
        return fail("not a size", kSizeHint);
    }
    skipBlanks(s);
    const Unit* unit = findUnit(kSizeUnits, s);
    if (unit == nullptr) {
        if (!s.empty() && s.back() == '%')
            return fail("not a size",
                        "a percentage is not allowed here; " + std::string(kSizeHint));
        return fail("unknown unit " + quoted(s), "expected K, M, G, T, P or E; e.g. 512M");
    }
    if (d->tooManyDigits)
        return fail("too many decimals", "at most 18");
    auto v = scale(*d, unit->factor, std::numeric_limits<Bytes>::max());
    if (!v)
        return fail("size too large", "at most 16E - 1 byte");
    return *v;
}

Result<SizeSpec> parseSizeSpec(std::string_view text) {
    std::string_view s = trimText(text);
    if (!s.empty() && s.back() == '%') {
        auto p =
            permyriadImpl(s, "expected a size such as 1G or a percentage of MemTotal such as 5%");
        if (!p)
            return p.error();
        return SizeSpec{0, *p};
    }
    auto b = parseSize(s);
    if (!b) {
        if (b.error().what.rfind("not a size", 0) == 0)
            return fail("not a size",
                        "expected e.g. 512M, 2G, 1.5G, or a percentage of MemTotal such as 5%");
        return b.error();
    }
    return SizeSpec{*b, std::nullopt};
}

Result<Limit> parseLimit(std::string_view text) {
    std::string_view s = trimText(text);
    if (equalsIgnoreCase(s, "max") || equalsIgnoreCase(s, "infinity"))
        return Limit{};
    auto b = parseSize(s);
    if (!b) {
        if (b.error().what.rfind("not a size", 0) == 0)
            return fail("not a size", "expected e.g. 512M, 2G, 1.5G, or max");
        return b.error();
    }
    return Limit{*b};
}

// --- durations -------------------------------------------------------------

Result<Usec> parseDuration(std::string_view text) {
    std::string_view s = trimText(text);
    auto d = scanDecimal(s);
    if (!d)
        return fail("not a duration", kDurationHint);
    skipBlanks(s);
    const Unit* unit = findUnit(kDurationUnits, s);
    if (unit == nullptr)
        return fail("unknown unit " + quoted(s), "expected us, ms, s, min, h or d; e.g. 30s");
    if (d->tooManyDigits)
        return fail("too many decimals", "at most 18");
    auto v = scale(*d, unit->factor, static_cast<std::uint64_t>(kMaxDuration.count()));
    if (!v)
        return fail("duration too long", "at most 365d");
    return Usec(static_cast<Usec::rep>(*v));
}

Result<Usec> parsePositiveDuration(std::string_view text) {
    auto d = parseDuration(text);
    if (!d)
        return d;
    if (d->count() == 0)
        return fail("must be greater than 0", kDurationHint);
    return d;
}

// --- percentages, ratios, factors -----------------------------------------

Result<double> parsePercent(std::string_view text) {
    return percentImpl(text, kPercentHint);
}

Result<std::optional<double>> parseOptionalPercent(std::string_view text) {
    if (isOff(trimText(text)))
        return std::optional<double>{};
    auto p = percentImpl(text, "expected e.g. 10% or 0.5%, or off");
    if (!p)
        return p.error();
    return std::optional<double>{*p};
}

Result<Permyriad> parsePermyriad(std::string_view text) {
    return permyriadImpl(text, kPercentHint);
}

Result<std::optional<Permyriad>> parseOptionalPermyriad(std::string_view text) {
    if (isOff(trimText(text)))
        return std::optional<Permyriad>{};
    auto p = permyriadImpl(text, "expected e.g. 10% or 0.5%, or off");
    if (!p)
        return p.error();
    return std::optional<Permyriad>{*p};
}

Result<bool> parseBool(std::string_view text) {
    std::string_view s = trimText(text);
    for (std::string_view t : {"yes", "true", "on", "1"})
        if (equalsIgnoreCase(s, t))
            return true;
    for (std::string_view f : {"no", "false", "off", "0"})
        if (equalsIgnoreCase(s, f))
            return false;
    return fail("not a boolean", "expected yes or no");
}

Result<double> parseRatio(std::string_view text) {
    std::string_view s = trimText(text);
    auto d = scanDecimal(s);
    if (!d || !s.empty())
        return fail("not a number", kRatioHint);
    if (d->fractionDigits > 6)
        return fail("too many decimals", "at most 6, e.g. 1.5");
    auto v = toDouble(*d);
    if (!v)
        return fail("not a number", kRatioHint);
    if (*v < 1.0)
        return fail("below 1.0", "expected a ratio ≥ 1.0, e.g. 1.5; 1.0 means no overcommit");
    if (*v > 100.0)
        return fail("above 100", "expected a ratio from 1.0 to 100");
    return *v;
}

Result<std::optional<Permyriad>> parseFactor(std::string_view text) {
    std::string_view s = trimText(text);
    if (isOff(s))
        return std::optional<Permyriad>{};
    if (!s.empty() && s.back() == '%') {
        auto p = permyriadImpl(s, kFactorHint);
        if (!p)
            return p.error();
        return std::optional<Permyriad>{*p};
    }
    std::string_view rest = s;
    auto d = scanDecimal(rest);
    if (!d || !rest.empty())
        return fail("not a factor", kFactorHint);
    auto v = fixedPoint(*d, 4);
    if (!v)
        return fail("too many decimals", "at most 4, e.g. 0.9");
    if (*v > kPermyriadOne)
        return fail("above 1", kFactorHint);
    return std::optional<Permyriad>{static_cast<Permyriad>(*v)};
}

// --- integers, enums, strings ---------------------------------------------

Result<std::int64_t> parseInt(std::string_view text, std::int64_t min, std::int64_t max) {
    std::string_view s = trimText(text);
    std::string hint =
        "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max);
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ptr != s.data() + s.size()) {
        if (ec == std::errc::result_out_of_range)
            return fail("out of range", hint);
        return fail("not a whole number", hint);
    }
    if (ec == std::errc::result_out_of_range || v < min || v > max)
        return fail("out of range", hint);
    return v;
}

Result<core::OomScoreAdjust> parseOomScoreAdjust(std::string_view text) {
    std::string_view s = trimText(text);
    if (equalsIgnoreCase(s, "burstable"))
        return core::OomScoreAdjust::burstable();
    if (equalsIgnoreCase(s, "keep"))
        return core::OomScoreAdjust::keep();
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    constexpr std::string_view kHint =
        "expected a number from -1000 to 1000, burstable or keep";
    if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size())
        return fail("not an oom_score_adj", kHint);
    if (v < -1000 || v > 1000)
        return fail("out of range", kHint);
    return core::OomScoreAdjust(static_cast<int>(v));
}

Result<std::string> parseOptionalFile(std::string_view text) {
    if (trimText(text).empty())
        return std::string();
    auto p = parseAbsolutePath(text);
    if (p && p->ends_with('/'))
        return fail("names a directory", "expected a file, e.g. "
                                         "/var/lib/prometheus/node-exporter/memqos.prom");
    return p;
}

Result<std::string> parseAbsolutePath(std::string_view text) {
    std::string_view s = trimText(text);
    if (s.empty() || s.front() != '/')
        return fail("not an absolute path", "expected e.g. /sys/fs/cgroup");
    if (s.size() > 4095)
        return fail("path too long", "at most 4095 bytes");
    for (char c : s)
        if (!isPrintable(c))
            return fail("path contains a non-printable character", "printable ASCII only");
    std::string_view rest = s;
    while (!rest.empty()) {
        std::size_t slash = rest.find('/');
        std::string_view comp = rest.substr(0, slash);
        if (comp == "." || comp == "..")
            return fail("path contains a \".\" or \"..\" component",
                        "expected a normalised absolute path");
        if (slash == std::string_view::npos)
            break;
        rest.remove_prefix(slash + 1);
    }
    return std::string(s);
}

Result<std::string> parseGlob(std::string_view text) {
    std::string_view s = trimText(text);
    if (s.empty())
        return fail("empty pattern", "expected a glob such as nginx*.service or vm:web-*");
    if (s.size() > 255)
        return fail("pattern too long", "at most 255 characters");
    for (char c : s)
        if (!isPrintable(c))
            return fail("pattern contains a non-printable character", "printable ASCII only");
    return std::string(s);
}

Result<WhenUnreachable> parseWhenUnreachable(std::string_view text) {
    return enumImpl(text, kWhenUnreachableNames);
}

Result<std::string> parseHostName(std::string_view text) {
    if (text.empty()) {
        return std::string();
    }
    if (auto ok = core::validateInstanceName(text); !ok) {
        return invalid("not a host name (expected e.g. node1.example.com: letters, digits, '-', "
                       "'_' and '.')");
    }
    return std::string(text);
}

Result<SwapCheck> parseSwapCheck(std::string_view text) {
    return enumImpl(text, kSwapCheckNames);
}
Result<core::Protection> parseProtection(std::string_view text) {
    return enumImpl(text, kProtectionNames);
}

bool isValidClassName(std::string_view name) {
    if (name.empty() || name.size() > 32)
        return false;
    if (name.front() < 'a' || name.front() > 'z')
        return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || isDigit(c) || c == '_'))
            return false;
    return true;
}

bool isValidRuleName(std::string_view name) {
    if (name.empty() || name.size() > 32)
        return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c == '_' ||
              c == '-'))
            return false;
    return true;
}

// --- formatters ------------------------------------------------------------

std::string formatSize(Bytes bytes) {
    if (bytes == 0)
        return "0";
    constexpr std::array<std::pair<char, Bytes>, 6> kUnits{{
        {'E', kGiB * kGiB},
        {'P', kGiB * kMiB},
        {'T', kGiB * kKiB},
        {'G', kGiB},
        {'M', kMiB},
        {'K', kKiB},
    }};
    for (const auto& [letter, factor] : kUnits)
        if (bytes % factor == 0)
            return std::to_string(bytes / factor) + letter;
    return std::to_string(bytes);
}

std::string formatSizeSpec(const SizeSpec& spec) {
    return spec.percent ? formatPermyriad(*spec.percent) : formatSize(spec.bytes);
}

std::string formatLimit(const Limit& limit) {
    return limit ? formatSize(*limit) : "max";
}

std::string formatDuration(Usec duration) {
    auto us = duration.count();
    if (us <= 0)
        return "0";
    constexpr std::array<std::pair<std::string_view, Usec::rep>, 6> kUnits{{
        {"d", 86400 * 1000000LL},
        {"h", 3600 * 1000000LL},
        {"min", 60 * 1000000LL},
        {"s", 1000000LL},
        {"ms", 1000LL},
        {"us", 1LL},
    }};
    for (const auto& [name, factor] : kUnits)
        if (us % factor == 0)
            return std::to_string(us / factor) + std::string(name);
    return std::to_string(us) + "us";
}

std::string formatPercent(double percent) {
    return doubleToString(percent) + "%";
}

std::string formatOptionalPercent(const std::optional<double>& percent) {
    return percent ? formatPercent(*percent) : "off";
}

std::string formatPermyriad(Permyriad value) {
    return toDecimalString(value, 2) + "%";
}

std::string formatOptionalPermyriad(const std::optional<Permyriad>& value) {
    return value ? formatPermyriad(*value) : "off";
}

std::string formatBool(bool value) {
    return value ? "yes" : "no";
}

std::string formatRatio(double ratio) {
    std::string s = doubleToString(ratio);
    if (s.find('.') == std::string::npos)
        s += ".0";
    return s;
}

std::string formatFactor(const std::optional<Permyriad>& factor) {
    if (!factor)
        return "off";
    std::string s = toDecimalString(*factor, 4);
    if (s.find('.') == std::string::npos)
        s += ".0";
    return s;
}

std::string formatOomScoreAdjust(const core::OomScoreAdjust& adj) {
    switch (adj.mode) {
    case core::OomScoreAdjust::Mode::Fixed:
        return std::to_string(adj.value);
    case core::OomScoreAdjust::Mode::Burstable:
        return "burstable";
    case core::OomScoreAdjust::Mode::Keep:
        return "keep";
    }
    return "burstable";
}

std::string_view formatWhenUnreachable(WhenUnreachable value) {
    return enumName(value, kWhenUnreachableNames);
}

std::string_view formatSwapCheck(SwapCheck value) {
    return enumName(value, kSwapCheckNames);
}
std::string_view formatProtection(core::Protection value) {
    return enumName(value, kProtectionNames);
}

} // namespace memqos::config

// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the memqosd.conf value parsers (config/values.hpp).
// The first byte picks the parser, the rest is the value. Beyond "no crash,
// no UB, no leak" it checks the contract: errors are invalid_argument with a
// bounded message, and parse(format(v)) == v for every accepted value.
#include "memqos/config/values.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace {

using namespace memqos;
using namespace memqos::config;

void check(bool ok) {
    if (!ok)
        __builtin_trap();
}

template <typename T, typename Parse, typename Format, typename Valid>
void roundTrip(std::string_view text, Parse parse, Format format, Valid valid) {
    Result<T> r = parse(text);
    if (!r) {
        check(r.error().code == std::errc::invalid_argument);
        check(!r.error().what.empty() && r.error().what.size() < 1024);
        return;
    }
    check(valid(*r));
    std::string again(format(*r));
    Result<T> r2 = parse(again);
    check(r2.ok());
    check(*r2 == *r);
    check(std::string(format(*r2)) == again); // formatting is canonical
}

auto always = [](const auto&) { return true; };

bool validPercent(double v) {
    return std::isfinite(v) && v >= 0.0 && v <= 100.0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0)
        return 0;
    const std::uint8_t which = data[0];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    switch (which % 16) {
    case 0:
        roundTrip<Bytes>(text, parseSize, formatSize, always);
        break;
    case 1:
        roundTrip<SizeSpec>(text, parseSizeSpec, formatSizeSpec, [](const SizeSpec& s) {
            return !s.percent || (*s.percent <= kPermyriadOne && s.bytes == 0);
        });
        break;
    case 2:
        roundTrip<Limit>(text, parseLimit, formatLimit, always);
        break;
    case 3:
        roundTrip<Usec>(text, parseDuration, formatDuration,
                        [](Usec d) { return d.count() >= 0 && d <= kMaxDuration; });
        break;
    case 4:
        roundTrip<Usec>(text, parsePositiveDuration, formatDuration,
                        [](Usec d) { return d.count() > 0; });
        break;
    case 5:
        roundTrip<double>(text, parsePercent, formatPercent, validPercent);
        break;
    case 6:
        roundTrip<std::optional<double>>(
            text, parseOptionalPercent, formatOptionalPercent,
            [](const std::optional<double>& v) { return !v || validPercent(*v); });
        break;
    case 7:
        roundTrip<Permyriad>(text, parsePermyriad, formatPermyriad,
                             [](Permyriad p) { return p <= kPermyriadOne; });
        break;
    case 8:
        roundTrip<std::optional<Permyriad>>(
            text, parseOptionalPermyriad, formatOptionalPermyriad,
            [](const std::optional<Permyriad>& p) { return !p || *p <= kPermyriadOne; });
        break;
    case 9:
        roundTrip<bool>(text, parseBool, formatBool, always);
        break;
    case 10:
        roundTrip<double>(text, parseRatio, formatRatio,
                          [](double r) { return std::isfinite(r) && r >= 1.0 && r <= 100.0; });
        break;
    case 11:
        roundTrip<std::optional<Permyriad>>(
            text, parseFactor, formatFactor,
            [](const std::optional<Permyriad>& p) { return !p || *p <= kPermyriadOne; });
        break;
    case 12:
        roundTrip<core::OomScoreAdjust>(
            text, parseOomScoreAdjust, formatOomScoreAdjust, [](const core::OomScoreAdjust& v) {
                return v.mode != core::OomScoreAdjust::Mode::Fixed ||
                       (v.value >= -1000 && v.value <= 1000);
            });
        break;
    case 13:
        roundTrip<SwapCheck>(text, parseSwapCheck, formatSwapCheck, always);
        roundTrip<core::Protection>(text, parseProtection, formatProtection, always);
        break;
    case 14: {
        auto r = parseInt(text, -1000, 1000);
        if (r)
            check(*r >= -1000 && *r <= 1000);
        auto p = parseAbsolutePath(text);
        if (p)
            check(!p->empty() && p->front() == '/' && parseAbsolutePath(*p).ok());
        auto g = parseGlob(text);
        if (g)
            check(!g->empty() && parseGlob(*g).ok() && *parseGlob(*g) == *g);
        break;
    }
    default:
        (void)isValidClassName(text);
        (void)isValidRuleName(text);
        break;
    }
    return 0;
}

// SPDX-License-Identifier: Apache-2.0
#include "memqos/core/oom_score.hpp"

#include <algorithm>

#include "numeric.hpp"

namespace memqos::core {

int oomScoreAdj(const ClassPolicy& cls, Bytes request, Bytes memTotal) {
    if (cls.oomScoreAdj.mode == OomScoreAdjust::Mode::Fixed) {
        // Config validates the range; clamp anyway, the kernel rejects
        // anything outside and a failed write would leave the old value.
        return std::clamp(cls.oomScoreAdj.value, kOomScoreAdjMin, kOomScoreAdjMax);
    }
    if (memTotal == 0) {
        return kBurstableOomMax;
    }
    if (request >= memTotal) {
        return kBurstableOomMin;
    }
    // 1000·request < 1000·memTotal fits in 128 bits; the quotient is < 1000.
    const auto share = static_cast<int>(detail::U128{request} * 1000U / memTotal);
    const int adj = 1000 - share;
    if (adj < kBurstableOomMin) {
        return kBurstableOomMin;
    }
    // kubelet: "== besteffortOOMScoreAdj → −1", so a Burstable workload
    // always ranks before BestEffort for the kernel OOM killer.
    return adj >= 1000 ? kBurstableOomMax : adj;
}

} // namespace memqos::core

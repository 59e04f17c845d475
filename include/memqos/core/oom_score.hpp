// SPDX-License-Identifier: Apache-2.0
#pragma once
// oom_score_adj of a workload's processes (doc/DESIGN.md §1.5), written by io/ to
// /proc/PID/oom_score_adj because systemd has no runtime property for it.

#include "memqos/core/model.hpp"
#include "memqos/core/types.hpp"

namespace memqos::core {

inline constexpr int kOomScoreAdjMin = -1000;
inline constexpr int kOomScoreAdjMax = 1000;
// kubelet's bounds for Burstable: above Guaranteed (-997 → 1000 - 997 = 3)
// and below BestEffort (1000 - 1 = 999).
inline constexpr int kBurstableOomMin = 3;
inline constexpr int kBurstableOomMax = 999;

// The class's fixed value if it has one (clamped to the kernel's
// [-1000, 1000]), else kubelet's Burstable formula (pkg/kubelet/qos/policy.go):
//   adj = 1000 − (1000·request) / memTotal   (integer division)
//   adj < 3 → 3;  adj == 1000 → 999
// Edge cases: request 0 → 999; request ≥ memTotal → 3; memTotal 0 (unknown
// capacity) → 999, the least protected Burstable value, rather than a
// division by zero. A class that keeps (OOMScoreAdjust=keep) has no value:
// callers check cls.oomScoreAdj.keeps() first; for it this returns the
// Burstable value.
int oomScoreAdj(const ClassPolicy& cls, Bytes request, Bytes memTotal);

} // namespace memqos::core

// SPDX-License-Identifier: Apache-2.0
#pragma once
// Owners for sd-bus objects and helpers for building messages, for every
// program that talks sd-bus (memqosd, memqosctl, the Ganeti hook). Header
// only and without Boost, so memqosctl needs nothing but libsystemd.

#include <systemd/sd-bus.h>

#include <memory>

namespace memqos::io {

struct BusDeleter {
    void operator()(sd_bus* b) const noexcept { sd_bus_flush_close_unref(b); }
};
using BusPtr = std::unique_ptr<sd_bus, BusDeleter>;

struct MessageDeleter {
    void operator()(sd_bus_message* m) const noexcept { sd_bus_message_unref(m); }
};
using MessagePtr = std::unique_ptr<sd_bus_message, MessageDeleter>;

struct SlotDeleter {
    void operator()(sd_bus_slot* s) const noexcept { sd_bus_slot_unref(s); }
};
using SlotPtr = std::unique_ptr<sd_bus_slot, SlotDeleter>;

// Appends to `m` an array of `contents` (its element signature, "(so)",
// "{st}", "s") with one element per item of `items`, each appended by
// `each(m, item)`. Returns the first negative errno of sd-bus or `each`,
// else >= 0.
template <typename Items, typename Each>
int appendArray(sd_bus_message* m, const char* contents, const Items& items, Each&& each) {
    int r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, contents);
    if (r < 0) {
        return r;
    }
    for (const auto& item : items) {
        if ((r = each(m, item)) < 0) {
            return r;
        }
    }
    return sd_bus_message_close_container(m);
}

} // namespace memqos::io

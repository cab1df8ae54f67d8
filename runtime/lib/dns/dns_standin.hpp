// SPDX-License-Identifier: Apache-2.0
// Stand-in for what the dns-kernel branch brings to kernel/pinned_maps.hpp
// (the merge deletes this file and takes its names_map): the layout of
// CERB_MAP_NAMES.
#pragma once

#include "kernel/pinned_maps.hpp"

namespace cerberus::kernel {
static_assert(sizeof(cerb_name_key) == 24);
static_assert(sizeof(cerb_name_value) == 16 + 4 * CERB_MAX_PORT_RANGES);
inline constexpr MapLayout names_map{CERB_NAME(CERB_MAP_NAMES), sizeof(cerb_name_key), sizeof(cerb_name_value)};
} // namespace cerberus::kernel

// The attributes of typed FFI custom calls (api_version = 4), as jaxlib's
// CPU and GPU linear algebra targets take them (lapack_calls.cc,
// gpu_solver_calls.cc): entries of the mhlo.backend_config dictionary
// (`{uplo = 76 : ui8, lower = true}`), or of a dictionary backend_config, or
// of the backend_config string XLA's HLO text keeps that dictionary in.
// Internal to src/ops.
#ifndef TPUSIM_OPS_CUSTOM_CALLS_LINALG_FFI_ATTRIBUTES_H_
#define TPUSIM_OPS_CUSTOM_CALLS_LINALG_FFI_ATTRIBUTES_H_

#include <cstdint>
#include <string_view>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::ops::linalg {

// The attribute `key`; null when absent, an error when backend_config is
// text that is no attribute dictionary.
StatusOr<ir::Attribute> ConfigAttr(const ir::Operation& op, std::string_view key);

// The ui8 character attribute `key`, which must be one of `allowed`;
// `fallback` when absent.
StatusOr<char> CharAttr(const ir::Operation& op, std::string_view key, std::string_view allowed,
                        char fallback);
// CharAttr for pricing, where a bad attribute (a verify error) reads as
// `fallback`.
char CharOr(const ir::Operation& op, std::string_view key, std::string_view allowed, char fallback);

// The integer attribute `key`; `fallback` when absent or not an integer.
int64_t IntAttr(const ir::Operation& op, std::string_view key, int64_t fallback);
// The integer attribute `key`, which must be present and in [lo, hi] (a
// jaxlib handler's required enum).
StatusOr<int64_t> IntAttrIn(const ir::Operation& op, std::string_view key, int64_t lo, int64_t hi);

// The bool attribute `key`, which must be present (jaxlib's GPU handlers
// bind their bools as required attributes).
StatusOr<bool> BoolAttr(const ir::Operation& op, std::string_view key);
// BoolAttr for pricing: `fallback` when absent or bad.
bool BoolOr(const ir::Operation& op, std::string_view key, bool fallback);

}  // namespace tpusim::ops::linalg

#endif  // TPUSIM_OPS_CUSTOM_CALLS_LINALG_FFI_ATTRIBUTES_H_

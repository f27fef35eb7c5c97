#include "ops/custom_calls/linalg/ffi_attributes.h"

#include <cstdlib>
#include <string>

namespace tpusim::ops::linalg {
namespace {

std::string_view Trim(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

// The integer or bool `key` of an attribute dictionary in text, `{uplo =
// 76 : ui8, lower = true}`, as XLA's HLO text writes a typed FFI call's
// backend_config; null when absent, an error when the text is no such
// dictionary.
StatusOr<ir::Attribute> FromConfigText(std::string_view text, std::string_view key) {
  text = Trim(text);
  if (text.empty()) return ir::Attribute();
  if (text.front() != '{' || text.back() != '}') {
    return InvalidArgument("backend_config \"" + std::string(text) +
                           "\" is not an attribute dictionary");
  }
  text = text.substr(1, text.size() - 2);
  while (!Trim(text).empty()) {
    const size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = entry.find('=');
    const std::string_view name = Trim(entry.substr(0, eq));
    if (eq == std::string_view::npos || name != key) continue;
    const std::string value(Trim(entry.substr(eq + 1, entry.find(':') - eq - 1)));
    if (value == "true" || value == "false") return ir::Attribute::Bool(value == "true");
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0') {
      return InvalidArgument("backend_config entry '" + std::string(Trim(entry)) +
                             "' is not an integer or bool");
    }
    return ir::Attribute::Int(v);
  }
  return ir::Attribute();
}

}  // namespace

StatusOr<ir::Attribute> ConfigAttr(const ir::Operation& op, std::string_view key) {
  for (const char* dict : {"mhlo.backend_config", "backend_config"}) {
    ir::Attribute d = op.attr(dict);
    if (d.kind() == ir::Attribute::Kind::kDict && d.Get(key)) return d.Get(key);
  }
  ir::Attribute text = op.attr("backend_config");
  if (text.kind() == ir::Attribute::Kind::kString) return FromConfigText(text.str(), key);
  return ir::Attribute();
}

StatusOr<char> CharAttr(const ir::Operation& op, std::string_view key, std::string_view allowed,
                        char fallback) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ConfigAttr(op, key));
  if (!a) return fallback;
  if (a.kind() == ir::Attribute::Kind::kInt) {
    const int64_t v = a.int_value();
    if (v > 0 && v < 128 && allowed.find(static_cast<char>(v)) != std::string_view::npos) {
      return static_cast<char>(v);
    }
  }
  std::string names;
  for (char c : allowed) names += std::string(names.empty() ? "'" : " or '") + c + "'";
  return InvalidArgument("backend_config attribute '" + std::string(key) + "' must be " + names +
                         " as a ui8, got " + a.ToString());
}

char CharOr(const ir::Operation& op, std::string_view key, std::string_view allowed,
            char fallback) {
  StatusOr<char> c = CharAttr(op, key, allowed, fallback);
  return c.ok() ? *c : fallback;
}

int64_t IntAttr(const ir::Operation& op, std::string_view key, int64_t fallback) {
  StatusOr<ir::Attribute> a = ConfigAttr(op, key);
  return a.ok() && a->kind() == ir::Attribute::Kind::kInt ? a->int_value() : fallback;
}

StatusOr<int64_t> IntAttrIn(const ir::Operation& op, std::string_view key, int64_t lo, int64_t hi) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ConfigAttr(op, key));
  if (a.kind() == ir::Attribute::Kind::kInt && a.int_value() >= lo && a.int_value() <= hi) {
    return a.int_value();
  }
  return InvalidArgument("backend_config needs the integer attribute '" + std::string(key) +
                         "' in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                         (a ? a.ToString() : "none"));
}

StatusOr<bool> BoolAttr(const ir::Operation& op, std::string_view key) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ConfigAttr(op, key));
  if (a.kind() == ir::Attribute::Kind::kBool) return a.bool_value();
  return InvalidArgument("backend_config needs the bool attribute '" + std::string(key) +
                         "' (true or false), got " + (a ? a.ToString() : "none"));
}

bool BoolOr(const ir::Operation& op, std::string_view key, bool fallback) {
  StatusOr<bool> b = BoolAttr(op, key);
  return b.ok() ? *b : fallback;
}

}  // namespace tpusim::ops::linalg

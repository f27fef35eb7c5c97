// Strict reading of TOML tables into fields, for the data files tpusim
// loads (chip descriptions, models): unknown keys and ill-typed values are
// errors with file:line:col. Header-only; its users link toml++.
#ifndef TPUSIM_BASE_TOML_READER_H_
#define TPUSIM_BASE_TOML_READER_H_

#include <toml++/toml.h>

#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::base {

inline std::string Where(const std::string& file, const toml::source_region& r) {
  return file + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
}

// Reads one table's keys into fields, rejecting keys it does not know.
class TableReader {
 public:
  TableReader(const toml::table& t, std::string file, std::string prefix)
      : t_(t), file_(std::move(file)), prefix_(std::move(prefix)) {}

  template <typename T>
  Status Read(const char* key, T& out) {
    known_.insert(key);
    const toml::node* n = t_.get(key);
    if (n == nullptr) return Status::Ok();  // keep the default
    // Exact node types: toml++'s value<T>() would also convert 3 to true.
    if constexpr (std::is_same_v<T, bool>) {
      if (auto* v = n->as_boolean()) {
        out = v->get();
        return Status::Ok();
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (auto* v = n->as_string()) {
        out = v->get();
        return Status::Ok();
      }
    } else if constexpr (std::is_integral_v<T>) {
      auto* v = n->as_integer();
      if (v && v->get() >= std::numeric_limits<T>::min() &&
          v->get() <= std::numeric_limits<T>::max()) {
        out = static_cast<T>(v->get());
        return Status::Ok();
      }
    } else {
      if (auto* v = n->as_floating_point()) {
        out = v->get();
        return Status::Ok();
      }
      if (auto* v = n->as_integer()) {
        out = static_cast<T>(v->get());
        return Status::Ok();
      }
    }
    return InvalidArgument(Where(file_, n->source()) + ": '" + prefix_ + key +
                           "' has the wrong type or is out of range");
  }

  Status ReadStrings(const char* key, std::vector<std::string>& out) {
    known_.insert(key);
    const toml::node* n = t_.get(key);
    if (n == nullptr) return Status::Ok();
    const toml::array* a = n->as_array();
    if (a == nullptr) {
      return InvalidArgument(Where(file_, n->source()) + ": '" + prefix_ + key +
                             "' must be a list of strings");
    }
    out.clear();
    for (const toml::node& e : *a) {
      auto v = e.value<std::string>();
      if (!v) return InvalidArgument(Where(file_, e.source()) + ": expected a string");
      out.push_back(*v);
    }
    return Status::Ok();
  }

  // A string naming one of `values` (as `name` spells them).
  template <typename E>
  Status ReadEnum(const char* key, E& out, std::initializer_list<E> values,
                  const char* (*name)(E)) {
    std::string s = name(out);
    TPUSIM_RETURN_IF_ERROR(Read(key, s));
    std::string names;
    for (E e : values) {
      if (s == name(e)) {
        out = e;
        return Status::Ok();
      }
      names += std::string(names.empty() ? "" : " | ") + name(e);
    }
    return InvalidArgument(Where(file_, t_.get(key)->source()) + ": '" + prefix_ + key +
                           "' must be " + names + ", got '" + s + "'");
  }

  void Allow(const char* key) { known_.insert(key); }

  // Call after every Read: the first key that no Read asked for.
  Status RejectUnknown() const {
    for (const auto& [k, v] : t_) {
      if (!known_.count(std::string(k.str()))) {
        return InvalidArgument(Where(file_, v.source()) + ": unknown key '" + prefix_ +
                               std::string(k.str()) + "'");
      }
    }
    return Status::Ok();
  }

 private:
  const toml::table& t_;
  std::string file_;
  std::string prefix_;
  std::set<std::string> known_;
};

}  // namespace tpusim::base

#endif  // TPUSIM_BASE_TOML_READER_H_

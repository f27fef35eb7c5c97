#include "tpusim/ir/attribute.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace tpusim::ir {

Attribute Attribute::Make(Data d) {
  Attribute a;
  a.data_ = std::make_shared<const Data>(std::move(d));
  return a;
}

Attribute Attribute::Unit() { return Make({.kind = Kind::kUnit}); }
Attribute Attribute::Bool(bool b) { return Make({.kind = Kind::kBool, .i = b}); }
Attribute Attribute::Int(int64_t v, ElementType type) {
  return Make({.kind = Kind::kInt, .i = v, .type = Type::Tensor(type, {})});
}
Attribute Attribute::Float(double v, ElementType type) {
  return Make({.kind = Kind::kFloat, .f = v, .type = Type::Tensor(type, {})});
}
Attribute Attribute::String(std::string s) {
  return Make({.kind = Kind::kString, .s = std::move(s)});
}
Attribute Attribute::TypeAttr(Type t) {
  return Make({.kind = Kind::kType, .type = std::move(t)});
}
Attribute Attribute::SymbolRef(std::string name) {
  return Make({.kind = Kind::kSymbolRef, .s = std::move(name)});
}
Attribute Attribute::Array(std::vector<Attribute> elements) {
  return Make({.kind = Kind::kArray, .array = std::move(elements)});
}
Attribute Attribute::DenseArray(ElementType type, std::vector<int64_t> values) {
  return Make({.kind = Kind::kDenseArray,
               .type = Type::Tensor(type, {static_cast<int64_t>(values.size())}),
               .ints = std::move(values)});
}
Attribute Attribute::DenseElements(Type type, std::vector<uint8_t> bytes) {
  return Make({.kind = Kind::kDenseElements,
               .type = std::move(type),
               .bytes = std::make_shared<const std::vector<uint8_t>>(std::move(bytes))});
}
Attribute Attribute::Dict(std::vector<NamedAttribute> entries) {
  return Make({.kind = Kind::kDict, .fields = std::move(entries)});
}
Attribute Attribute::Enum(std::string dialect, std::string value) {
  return Make({.kind = Kind::kEnum, .s = std::move(value), .name = std::move(dialect)});
}
Attribute Attribute::Struct(std::string name, std::vector<NamedAttribute> fields) {
  return Make({.kind = Kind::kStruct, .name = std::move(name), .fields = std::move(fields)});
}

Attribute Attribute::Get(std::string_view key) const {
  if (!data_) return {};
  for (const auto& [k, v] : data_->fields) {
    if (k == key) return v;
  }
  return {};
}

namespace {

// `{"x", "y"}`, and `?` last when `open`.
std::string SdyAxes(const Attribute& axes, bool open = false) {
  std::string s = "{";
  for (size_t i = 0; i < axes.array().size(); ++i) {
    s += (i ? ", " : "") + axes.array()[i].ToString();
  }
  if (open) s += axes.array().empty() ? "?" : ", ?";
  return s + "}";
}

// `<["x"=2, "y"=4], device_ids=[...]>`.
std::string SdyMeshBody(const Attribute& mesh) {
  std::string s = "<[";
  const auto& names = mesh.Get("axis_names").array();
  const auto& sizes = mesh.Get("axis_sizes").array();
  for (size_t i = 0; i < names.size() && i < sizes.size(); ++i) {
    s += (i ? ", " : "") + names[i].ToString() + "=" + std::to_string(sizes[i].int_value());
  }
  s += "]";
  if (Attribute ids = mesh.Get("device_ids")) {
    s += ", device_ids=[";
    for (size_t i = 0; i < ids.array().size(); ++i) {
      s += (i ? ", " : "") + std::to_string(ids.array()[i].int_value());
    }
    s += "]";
  }
  return s + ">";
}

// `<@mesh, [{"x"}, {"y", ?}p1], replicated={"z"}, unreduced={"w"}>`.
std::string SdyShardingBody(const Attribute& a) {
  const size_t rank = a.Get("dims").array().size();
  std::vector<bool> open(rank, false);
  if (Attribute o = a.Get("open")) {
    for (const Attribute& d : o.array()) {
      if (d.int_value() >= 0 && d.int_value() < static_cast<int64_t>(rank)) {
        open[d.int_value()] = true;
      }
    }
  }
  const Attribute priority_list = a.Get("priorities");
  const std::vector<Attribute> priorities = priority_list ? priority_list.array()
                                                          : std::vector<Attribute>();
  Attribute mesh = a.Get("mesh");
  std::string s = "<";
  s += mesh.kind() == Attribute::Kind::kStruct ? "mesh" + SdyMeshBody(mesh) : mesh.ToString();
  s += ", [";
  for (size_t d = 0; d < rank; ++d) {
    s += (d ? ", " : "") + SdyAxes(a.Get("dims").array()[d], open[d]);
    if (d < priorities.size() && priorities[d].int_value() >= 0) {
      s += "p" + std::to_string(priorities[d].int_value());
    }
  }
  s += "]";
  if (Attribute r = a.Get("replicated")) s += ", replicated=" + SdyAxes(r);
  if (Attribute u = a.Get("unreduced")) {
    s += ", unreduced=" + (a.Get("unreduced_kind") ? a.Get("unreduced_kind").str() : "") + SdyAxes(u);
  }
  return s + ">";
}

// `([i, j])->([i]) {i=8, j=4} reduction={j}, custom`.
std::string SdyRuleBody(const Attribute& a) {
  auto values = [](const Attribute& list) {
    std::string s = "(";
    for (size_t v = 0; v < list.array().size(); ++v) {
      s += v ? ", [" : "[";
      const std::vector<Attribute>& dims = list.array()[v].array();
      for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + dims[d].str();
      s += "]";
    }
    return s + ")";
  };
  auto names = [](const Attribute& list) {
    std::string s = "{";
    for (size_t i = 0; i < list.array().size(); ++i) s += (i ? ", " : "") + list.array()[i].str();
    return s + "}";
  };
  std::string s = values(a.Get("operands")) + "->" + values(a.Get("results"));
  const std::vector<NamedAttribute>& sizes = a.Get("factor_sizes").fields();
  if (!sizes.empty()) {
    s += " {";
    for (size_t i = 0; i < sizes.size(); ++i) {
      s += (i ? ", " : "") + sizes[i].first + "=" + std::to_string(sizes[i].second.int_value());
    }
    s += "}";
  }
  for (const char* key : {"reduction", "need_replication", "blocked_propagation", "permutation"}) {
    if (Attribute list = a.Get(key)) s += std::string(" ") + key + "=" + names(list);
  }
  if (a.Get("custom")) s += ", custom";
  return s;
}

// Shardy's attributes in Shardy's own syntax, as JAX prints them; "" for
// a struct that is not one of them.
std::string SdyToString(const Attribute& a) {
  if (a.name() == "sdy.op_sharding_rule") return "#sdy.op_sharding_rule<" + SdyRuleBody(a) + ">";
  if (a.name() == "sdy.sharding") return "#sdy.sharding" + SdyShardingBody(a);
  if (a.name() == "sdy.manual_axes") return "#sdy<manual_axes" + SdyAxes(a.Get("axes")) + ">";
  if (a.name() == "sdy.mesh") return "#sdy.mesh" + SdyMeshBody(a);
  if (a.name() == "sdy.sub_axis") {
    return a.Get("name").ToString() + ":(" + std::to_string(a.Get("pre_size").int_value()) + ")" +
           std::to_string(a.Get("size").int_value());
  }
  if (a.name() != "sdy.sharding_per_value") return "";
  std::string s = "#sdy.sharding_per_value<[";
  const std::vector<Attribute>& list = a.Get("shardings").array();
  for (size_t i = 0; i < list.size(); ++i) s += (i ? ", " : "") + SdyShardingBody(list[i]);
  return s + "]>";
}

int64_t LoadInt(const uint8_t* p, ElementType t) {
  switch (StorageBytes(t)) {
    case 1: return IsUnsignedInt(t) || IsBool(t) ? int64_t{*p} : int64_t{static_cast<int8_t>(*p)};
    case 2: { uint16_t v; std::memcpy(&v, p, 2); return IsUnsignedInt(t) ? int64_t{v} : int64_t{static_cast<int16_t>(v)}; }
    case 4: { uint32_t v; std::memcpy(&v, p, 4); return IsUnsignedInt(t) ? int64_t{v} : int64_t{static_cast<int32_t>(v)}; }
    default: { int64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

}  // namespace

std::vector<int64_t> Attribute::AsInts() const {
  switch (kind()) {
    case Kind::kDenseArray:
      return data_->ints;
    case Kind::kArray: {
      std::vector<int64_t> out;
      for (const Attribute& a : data_->array) {
        if (a.kind() != Kind::kInt) return {};
        out.push_back(a.int_value());
      }
      return out;
    }
    case Kind::kDenseElements: {
      ElementType e = data_->type.element();
      if (!IsInteger(e) && !IsBool(e)) return {};
      int64_t n = data_->type.num_elements();
      int w = StorageBytes(e);
      // A splat may be stored as one element.
      bool splat = static_cast<int64_t>(data_->bytes->size()) == w && n != 1;
      std::vector<int64_t> out(n);
      for (int64_t i = 0; i < n; ++i) {
        out[i] = LoadInt(data_->bytes->data() + (splat ? 0 : i * w), e);
      }
      return out;
    }
    default:
      return {};
  }
}

namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "\\%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string FormatDouble(double v) {
  char buf[40];
  if (!std::isfinite(v)) {  // MLIR writes these as their bits
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(bits));
    return buf;
  }
  const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
  if (!std::strpbrk(buf, ".e")) std::memcpy(buf + n, ".0", 3);  // keep it a float
  return buf;
}

// ui64 elements above INT64_MAX come back from AsInts() wrapped negative.
std::string IntText(int64_t v, ElementType e) {
  return e == ElementType::kUI64 ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
}

void PrintIntList(const std::vector<int64_t>& v, const Shape& shape, size_t dim,
                  int64_t& pos, std::string& out, ElementType e = ElementType::kSI64) {
  if (dim == shape.size()) {
    out += IntText(v[pos++], e);
    return;
  }
  out += "[";
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) out += ", ";
    PrintIntList(v, shape, dim + 1, pos, out, e);
  }
  out += "]";
}

std::string DenseToString(const Attribute& a) {
  const Type& t = a.type();
  ElementType e = t.element();
  std::string out = "dense<";
  if (a.is_splat() && (IsInteger(e) || IsBool(e))) {
    // One value stands for all; never expand (the tensor may be huge).
    int64_t v = LoadInt(a.bytes().data(), e);
    out += IsBool(e) ? (v ? "true" : "false") : IntText(v, e);
  } else if (IsInteger(e)) {
    std::vector<int64_t> v = a.AsInts();
    int64_t pos = 0;
    PrintIntList(v, t.shape(), 0, pos, out, e);
  } else if (IsBool(e)) {
    std::vector<int64_t> v = a.AsInts();
    std::string ints;
    int64_t pos = 0;
    PrintIntList(v, t.shape(), 0, pos, ints);
    for (char c : ints) {
      if (c == '0') out += "false";
      else if (c == '1') out += "true";
      else out += c;
    }
  } else {
    // Floats and complex: exact bits as a hex blob, little-endian elements.
    static const char* kHex = "0123456789ABCDEF";
    out += "\"0x";
    for (uint8_t b : a.bytes()) {
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
    out += "\"";
  }
  return out + "> : " + t.ToString();
}

}  // namespace

std::string Attribute::ToString() const {
  switch (kind()) {
    case Kind::kNull: return "<<null>>";
    case Kind::kUnit: return "unit";
    case Kind::kBool: return bool_value() ? "true" : "false";
    case Kind::kInt:
      return std::to_string(int_value()) + " : " +
             std::string(ElementTypeName(element_type()));
    case Kind::kFloat:
      return FormatDouble(float_value()) + " : " +
             std::string(ElementTypeName(element_type()));
    case Kind::kString: return Quote(str());
    case Kind::kType: return type().ToString();
    case Kind::kSymbolRef: {
      // Names outside [A-Za-z0-9_$.-] (JAX's @"<lambda>") need quotes.
      bool bare = !str().empty();
      for (char c : str()) {
        bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
                        c == '.' || c == '-');
      }
      return "@" + (bare ? str() : Quote(str()));
    }
    case Kind::kArray: {
      std::string s = "[";
      for (size_t i = 0; i < array().size(); ++i) {
        if (i) s += ", ";
        s += array()[i].ToString();
      }
      return s + "]";
    }
    case Kind::kDenseArray: {
      std::string s = "array<" + std::string(ElementTypeName(element_type()));
      for (size_t i = 0; i < ints().size(); ++i) {
        s += i ? ", " : ": ";
        if (IsBool(element_type())) s += ints()[i] ? "true" : "false";
        else s += std::to_string(ints()[i]);
      }
      return s + ">";
    }
    case Kind::kDenseElements: return DenseToString(*this);
    case Kind::kDict: {
      std::string s = "{";
      for (size_t i = 0; i < fields().size(); ++i) {
        if (i) s += ", ";
        s += fields()[i].first;
        if (fields()[i].second.kind() != Kind::kUnit) {
          s += " = " + fields()[i].second.ToString();
        }
      }
      return s + "}";
    }
    case Kind::kEnum: {
      // "stablehlo.comparison_direction" -> #stablehlo<comparison_direction EQ>
      size_t dot = name().find('.');
      return "#" + name().substr(0, dot) + "<" + name().substr(dot + 1) + " " + str() + ">";
    }
    case Kind::kStruct: {
      if (std::string sdy = SdyToString(*this); !sdy.empty()) return sdy;
      std::string s = "#" + name() + "<";
      for (size_t i = 0; i < fields().size(); ++i) {
        if (i) s += ", ";
        s += fields()[i].first + " = " + fields()[i].second.ToString();
      }
      return s + ">";
    }
  }
  return "?";
}

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.data_ == b.data_) return true;
  if (!a.data_ || !b.data_) return false;
  const auto& x = *a.data_;
  const auto& y = *b.data_;
  if (x.kind != y.kind || x.i != y.i || x.s != y.s || x.name != y.name ||
      x.type != y.type || x.array != y.array || x.ints != y.ints ||
      x.fields != y.fields) {
    return false;
  }
  if (x.kind == Attribute::Kind::kFloat &&
      std::memcmp(&x.f, &y.f, sizeof x.f) != 0) {
    return false;
  }
  if (static_cast<bool>(x.bytes) != static_cast<bool>(y.bytes)) return false;
  return !x.bytes || *x.bytes == *y.bytes;
}

void AttributeMap::Set(std::string key, Attribute value) {
  for (auto& [k, v] : entries_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

Attribute AttributeMap::Get(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return v;
  }
  return {};
}

bool AttributeMap::Erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace tpusim::ir

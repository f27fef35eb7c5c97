// Attributes: the structured, immutable compile-time data on operations.
//
// Every attribute the front ends read is kept as structure, never as source
// text: `#stablehlo.dot<lhs_batching_dimensions = [0], ...>` becomes a kStruct
// named "stablehlo.dot" with an ordered list of fields; `#stablehlo<precision
// HIGH>` becomes a kEnum; `dense<...>` literals keep their element bytes in
// the storage format of element_type.h. Copies share storage.
#ifndef TPUSIM_IR_ATTRIBUTE_H_
#define TPUSIM_IR_ATTRIBUTE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tpusim/ir/type.h"

namespace tpusim::ir {

class Attribute;
using NamedAttribute = std::pair<std::string, Attribute>;

class Attribute {
 public:
  enum class Kind : uint8_t {
    kNull,           // absent attribute (default-constructed)
    kUnit,           // `unit` or a bare key in an attribute dictionary
    kBool,           // true / false
    kInt,            // 42 : i64
    kFloat,          // 1.0 : f32
    kString,         // "text"
    kType,           // tensor<2xf32> used as an attribute
    kSymbolRef,      // @callee
    kArray,          // [a, b, c]
    kDenseArray,     // array<i64: 1, 2>  (integers and bools)
    kDenseElements,  // dense<...> : tensor<...>
    kDict,           // {a = 1, b}
    kEnum,           // #stablehlo<comparison_direction EQ>
    kStruct,         // #stablehlo.dot<field = value, ...>
  };

  Attribute() = default;

  static Attribute Unit();
  static Attribute Bool(bool b);
  static Attribute Int(int64_t v, ElementType type = ElementType::kSI64);
  static Attribute Float(double v, ElementType type = ElementType::kF32);
  static Attribute String(std::string s);
  static Attribute TypeAttr(Type t);
  static Attribute SymbolRef(std::string name);  // without '@'
  static Attribute Array(std::vector<Attribute> elements);
  static Attribute DenseArray(ElementType type, std::vector<int64_t> values);
  // bytes hold every element, or exactly one element for a splat.
  // REQUIRES: bytes.size() is num_elements or 1 times StorageBytes(element).
  static Attribute DenseElements(Type type, std::vector<uint8_t> bytes);
  static Attribute Dict(std::vector<NamedAttribute> entries);
  // dialect: "stablehlo.comparison_direction"; value: "EQ".
  static Attribute Enum(std::string dialect, std::string value);
  // name: "stablehlo.dot"; fields in source order.
  static Attribute Struct(std::string name, std::vector<NamedAttribute> fields);

  Kind kind() const { return data_ ? data_->kind : Kind::kNull; }
  explicit operator bool() const { return data_ != nullptr; }

  // Accessors. Each REQUIRES the matching kind.
  bool bool_value() const { return data_->i != 0; }
  int64_t int_value() const { return data_->i; }
  double float_value() const { return data_->f; }
  // kString text, kSymbolRef name, kEnum value, kStruct/kEnum name via name().
  const std::string& str() const { return data_->s; }
  const std::string& name() const { return data_->name; }
  // kInt/kFloat/kDenseArray element type.
  ElementType element_type() const { return data_->type.element(); }
  // kType type, kDenseElements tensor type.
  const Type& type() const { return data_->type; }
  const std::vector<Attribute>& array() const { return data_->array; }
  const std::vector<int64_t>& ints() const { return data_->ints; }
  const std::vector<uint8_t>& bytes() const { return *data_->bytes; }
  // kDenseElements holding one element that stands for all of them.
  bool is_splat() const {
    return static_cast<int64_t>(data_->bytes->size()) ==
               StorageBytes(data_->type.element()) &&
           data_->type.num_elements() != 1;
  }
  const std::vector<NamedAttribute>& fields() const { return data_->fields; }

  // kDict/kStruct field lookup; a null Attribute if absent.
  Attribute Get(std::string_view key) const;

  // Integer list view of kDenseArray, kArray of kInt, or an integer
  // kDenseElements; empty for anything else. Convenient for dimension lists.
  std::vector<int64_t> AsInts() const;

  // MLIR text of the attribute, readable back by the StableHLO parser.
  std::string ToString() const;

  friend bool operator==(const Attribute& a, const Attribute& b);

 private:
  struct Data {
    Kind kind = Kind::kNull;
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::string name;
    Type type;
    std::vector<Attribute> array;
    std::vector<int64_t> ints;
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    std::vector<NamedAttribute> fields;
  };
  static Attribute Make(Data d);
  std::shared_ptr<const Data> data_;
};

// An ordered attribute dictionary with lookup by name.
class AttributeMap {
 public:
  void Set(std::string key, Attribute value);
  Attribute Get(std::string_view key) const;  // null if absent
  bool Has(std::string_view key) const { return static_cast<bool>(Get(key)); }
  bool Erase(std::string_view key);
  const std::vector<NamedAttribute>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<NamedAttribute> entries_;
};

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_ATTRIBUTE_H_

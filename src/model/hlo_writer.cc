#include "model/hlo_writer.h"

#include <cstdio>

namespace tpusim::model {

std::string List(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string Val::Type() const {
  std::string s = "tensor<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s + element + ">";
}

void HloWriter::Line(const std::string& line) { text_ += std::string(indent_, ' ') + line + "\n"; }

std::string HloWriter::Fresh() { return "%" + std::to_string(next_++); }

Val HloWriter::Emit(const std::string& rhs, Dims shape, const std::string& element) {
  Val v{Fresh(), std::move(shape), element};
  Line(v.name + " = " + rhs + " " + v.Type());
  return v;
}

Val HloWriter::Splat(double value, const Dims& shape, const std::string& element) {
  std::string literal;
  if (element[0] == 'i' || element[0] == 'u') {
    literal = std::to_string(static_cast<long long>(value));
  } else {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    literal = buf;
    if (literal.find_first_of(".eni") == std::string::npos) literal += ".0";
  }
  return Emit("stablehlo.constant dense<" + literal + "> :", shape, element);
}

Val HloWriter::Zero(const std::string& element) { return Splat(0, {}, element); }

Val HloWriter::Unary(const std::string& op, const Val& a) {
  return Emit("stablehlo." + op + " " + a.name + " :", a.shape, a.element);
}

Val HloWriter::Convert(const Val& a, const std::string& element) {
  if (a.element == element) return a;
  Val v{Fresh(), a.shape, element};
  Line(v.name + " = stablehlo.convert " + a.name + " : (" + a.Type() + ") -> " + v.Type());
  return v;
}

Val HloWriter::Binary(const std::string& op, const Val& a, const Val& b) {
  return Emit("stablehlo." + op + " " + a.name + ", " + b.name + " :", a.shape, a.element);
}

Val HloWriter::Broadcast(const Val& a, const Dims& shape, const Dims& dims) {
  Val v{Fresh(), shape, a.element};
  Line(v.name + " = stablehlo.broadcast_in_dim " + a.name + ", dims = " + List(dims) + " : (" +
       a.Type() + ") -> " + v.Type());
  return v;
}

Val HloWriter::BinaryLeading(const std::string& op, const Val& a, const Val& b) {
  Dims dims;
  for (int64_t d = 0; d < b.rank(); ++d) dims.push_back(d);
  return Binary(op, a, Broadcast(b, a.shape, dims));
}

Val HloWriter::Reshape(const Val& a, const Dims& shape) {
  Val v{Fresh(), shape, a.element};
  Line(v.name + " = stablehlo.reshape " + a.name + " : (" + a.Type() + ") -> " + v.Type());
  return v;
}

Val HloWriter::Transpose(const Val& a, const Dims& perm) {
  Dims shape;
  for (int64_t p : perm) shape.push_back(a.shape[p]);
  Val v{Fresh(), shape, a.element};
  Line(v.name + " = stablehlo.transpose " + a.name + ", dims = " + List(perm) + " : (" + a.Type() +
       ") -> " + v.Type());
  return v;
}

Val HloWriter::Dot(const Val& a, const Val& b, const Dims& batch_a, const Dims& batch_b,
                   const Dims& contract_a, const Dims& contract_b, const std::string& element) {
  auto in = [](const Dims& list, int64_t d) {
    for (int64_t x : list) {
      if (x == d) return true;
    }
    return false;
  };
  Dims shape;
  for (int64_t d : batch_a) shape.push_back(a.shape[d]);
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (!in(batch_a, d) && !in(contract_a, d)) shape.push_back(a.shape[d]);
  }
  for (int64_t d = 0; d < b.rank(); ++d) {
    if (!in(batch_b, d) && !in(contract_b, d)) shape.push_back(b.shape[d]);
  }
  Val v{Fresh(), shape, element.empty() ? a.element : element};
  std::string dims;
  if (!batch_a.empty()) dims += "batching_dims = " + List(batch_a) + " x " + List(batch_b) + ", ";
  dims += "contracting_dims = " + List(contract_a) + " x " + List(contract_b);
  Line(v.name + " = stablehlo.dot_general " + a.name + ", " + b.name + ", " + dims + " : (" +
       a.Type() + ", " + b.Type() + ") -> " + v.Type());
  return v;
}

Val HloWriter::Reduce(const std::string& op, const Val& a, const Dims& dims) {
  const Val init = op == "maximum" ? Splat(-1e30, {}, a.element) : Zero(a.element);
  Dims shape;
  for (int64_t d = 0; d < a.rank(); ++d) {
    bool reduced = false;
    for (int64_t r : dims) reduced |= r == d;
    if (!reduced) shape.push_back(a.shape[d]);
  }
  Val v{Fresh(), shape, a.element};
  Line(v.name + " = stablehlo.reduce(" + a.name + " init: " + init.name + ") applies stablehlo." +
       op + " across dimensions = " + List(dims) + " : (" + a.Type() + ", " + init.Type() +
       ") -> " + v.Type());
  return v;
}

Val HloWriter::Iota(const Dims& shape, int64_t dim, const std::string& element) {
  return Emit("stablehlo.iota dim = " + std::to_string(dim) + " :", shape, element);
}

Val HloWriter::Compare(const std::string& direction, const Val& a, const Val& b) {
  Val v{Fresh(), a.shape, "i1"};
  Line(v.name + " = stablehlo.compare " + direction + ", " + a.name + ", " + b.name + " : (" +
       a.Type() + ", " + b.Type() + ") -> " + v.Type());
  return v;
}

Val HloWriter::Select(const Val& pred, const Val& a, const Val& b) {
  Val v{Fresh(), a.shape, a.element};
  Line(v.name + " = stablehlo.select " + pred.name + ", " + a.name + ", " + b.name + " : " +
       pred.Type() + ", " + v.Type());
  return v;
}

Val HloWriter::Take(const Val& a, int64_t dim, const Val& index) {
  const Val zero = Zero(index.element);
  Dims sizes = a.shape;
  sizes[dim] = 1;
  std::string starts, types;
  for (int64_t d = 0; d < a.rank(); ++d) {
    const Val& start = d == dim ? index : zero;
    starts += (d ? ", " : "") + start.name;
    types += (d ? ", " : "") + start.Type();
  }
  Val one{Fresh(), sizes, a.element};
  Line(one.name + " = stablehlo.dynamic_slice " + a.name + ", " + starts +
       ", sizes = " + List(sizes) + " : (" + a.Type() + ", " + types + ") -> " + one.Type());
  Dims shape = a.shape;
  shape.erase(shape.begin() + dim);
  return Reshape(one, shape);
}

Val HloWriter::UpdateSlice(const Val& a, const Val& update, const std::vector<Val>& starts) {
  std::string names, types;
  for (const Val& s : starts) {
    names += ", " + s.name;
    types += ", " + s.Type();
  }
  Val v{Fresh(), a.shape, a.element};
  Line(v.name + " = stablehlo.dynamic_update_slice " + a.name + ", " + update.name + names +
       " : (" + a.Type() + ", " + update.Type() + types + ") -> " + v.Type());
  return v;
}

Val HloWriter::Slice(const Val& a, int64_t dim, int64_t begin, int64_t end) {
  Dims start(a.shape.size(), 0), limit = a.shape, shape = a.shape;
  start[dim] = begin;
  limit[dim] = end;
  shape[dim] = end - begin;
  Val v{Fresh(), shape, a.element};
  Line(v.name + " = stablehlo.slice " + a.name + " [" +
       [&] {
         std::string r;
         for (size_t d = 0; d < shape.size(); ++d) {
           r += (d ? ", " : "") + std::to_string(start[d]) + ":" + std::to_string(limit[d]);
         }
         return r;
       }() +
       "] : (" + a.Type() + ") -> " + v.Type());
  return v;
}

Val HloWriter::SetLayer(const Val& stack, const Val& value, const Val& index) {
  Dims sizes = value.shape;
  sizes.insert(sizes.begin(), 1);
  const Val one = Reshape(value, sizes);
  const Val zero = Zero(index.element);
  std::string starts = index.name, types = index.Type();
  for (int64_t d = 1; d < stack.rank(); ++d) {
    starts += ", " + zero.name;
    types += ", " + zero.Type();
  }
  Val v{Fresh(), stack.shape, stack.element};
  Line(v.name + " = stablehlo.dynamic_update_slice " + stack.name + ", " + one.name + ", " +
       starts + " : (" + stack.Type() + ", " + one.Type() + ", " + types + ") -> " + v.Type());
  return v;
}

Val HloWriter::Gather(const Val& table, const Val& ids) {
  Dims shape = ids.shape;
  shape.push_back(table.shape[1]);
  Val v{Fresh(), shape, table.element};
  Line(v.name + " = \"stablehlo.gather\"(" + table.name + ", " + ids.name +
       ") {dimension_numbers = #stablehlo.gather<offset_dims = [" + std::to_string(ids.rank()) +
       "], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = " +
       std::to_string(ids.rank()) + ">, slice_sizes = array<i64: 1, " +
       std::to_string(table.shape[1]) + ">} : (" + table.Type() + ", " + ids.Type() + ") -> " +
       v.Type());
  return v;
}

Val HloWriter::ScatterAdd(const Val& ids, const Val& updates, int64_t rows) {
  const Val zeros = Splat(0, {rows, updates.shape.back()}, updates.element);
  const std::string scalar = "tensor<" + updates.element + ">";
  Val v{Fresh(), zeros.shape, updates.element};
  const std::string a = Fresh(), b = Fresh(), s = Fresh();
  Line(v.name + " = \"stablehlo.scatter\"(" + zeros.name + ", " + ids.name + ", " + updates.name +
       ") ({");
  Line("^bb0(" + a + ": " + scalar + ", " + b + ": " + scalar + "):");
  Line("  " + s + " = stablehlo.add " + a + ", " + b + " : " + scalar);
  Line("  stablehlo.return " + s + " : " + scalar);
  Line("}) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [" +
       std::to_string(ids.rank()) +
       "], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = " +
       std::to_string(ids.rank()) + ">} : (" + zeros.Type() + ", " + ids.Type() + ", " +
       updates.Type() + ") -> " + v.Type());
  return v;
}

Val HloWriter::Constraint(const Val& a, const std::string& sharding) {
  if (sharding.empty()) return a;
  // The pretty form drops the attribute's "#sdy.sharding" prefix.
  const std::string body = sharding.substr(sharding.find('<'));
  return Emit("sdy.sharding_constraint " + a.name + " " + body + " :", a.shape, a.element);
}

Val HloWriter::Place(const Val& a, const std::string& space) {
  const std::string placement = "{_xla_buffer_placement = \"" + space + "\"}";
  const std::string call = "stablehlo.custom_call @annotate_device_placement(" + a.name + ")";
  return Emit(call + " {has_side_effect = true, mhlo.frontend_attributes = " + placement + "} : (" +
                  a.Type() + ") ->",
              a.shape, a.element);
}

std::vector<Val> HloWriter::Generic(const std::string& name, const std::vector<Val>& operands,
                                    const std::vector<Val>& results, const std::string& attrs) {
  const std::string base = Fresh();
  std::string names, in_types, out_types;
  for (const Val& v : operands) {
    names += (names.empty() ? "" : ", ") + v.name;
    in_types += (in_types.empty() ? "" : ", ") + v.Type();
  }
  std::vector<Val> out;
  for (size_t i = 0; i < results.size(); ++i) {
    out.push_back({base + "#" + std::to_string(i), results[i].shape, results[i].element});
    out_types += (i ? ", " : "") + results[i].Type();
  }
  Line(base + ":" + std::to_string(results.size()) + " = \"" + name + "\"(" + names + ") {" +
       attrs + "} : (" + in_types + ") -> (" + out_types + ")");
  return out;
}

}  // namespace tpusim::model

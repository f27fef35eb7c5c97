// The HLO opcode and attributes of each op whose operands and results map one
// to one onto an HLO instruction's: StableHLO's generic attributes respelled
// as XLA prints them (dimensions={1,0}, window={size=3x3 pad=1_1x1_1},
// dim_labels=b01f_01io->b01f, ...). Calls and collectives: printer_calls.cc.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "frontend/hlo/opcodes.h"
#include "frontend/hlo/printer_internal.h"

namespace tpusim::frontend::hlo {

using Kind = ir::Attribute::Kind;
using Ints = std::vector<int64_t>;

Ints GetInts(const ir::Operation& op, std::string_view key) {
  ir::Attribute a = op.attr(key);
  return a ? a.AsInts() : Ints{};
}

int64_t FieldInt(const ir::Attribute& s, std::string_view key, int64_t fallback) {
  ir::Attribute a = s ? s.Get(key) : ir::Attribute();
  return a && a.kind() == Kind::kInt ? a.int_value() : fallback;
}

int64_t GetInt(const ir::Operation& op, std::string_view key, int64_t fallback) {
  ir::Attribute a = op.attr(key);
  return a && a.kind() == Kind::kInt ? a.int_value() : fallback;
}

// A unit attribute or `true`.
bool GetFlag(const ir::Operation& op, std::string_view key) {
  ir::Attribute a = op.attr(key);
  return a.kind() == Kind::kUnit || (a.kind() == Kind::kBool && a.bool_value());
}

// absl::CEscape, as XLA quotes strings.
std::string Quote(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\n':
        r += "\\n";
        break;
      case '\r':
        r += "\\r";
        break;
      case '\t':
        r += "\\t";
        break;
      case '"':
        r += "\\\"";
        break;
      case '\'':
        r += "\\'";
        break;
      case '\\':
        r += "\\\\";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[5];
          std::snprintf(buf, sizeof(buf), "\\%03o", c);
          r += buf;
        } else {
          r += static_cast<char>(c);
        }
    }
  }
  return r + "\"";
}

Status Unsupported(const ir::Operation& op, const std::string& what) {
  return Status(StatusCode::kUnimplemented, "op '" + op.name_str() + "' at " + op.loc().ToString() +
                                                ": " + what + " has no HLO spelling");
}

HloForm Form(std::string opcode, std::vector<std::string> attrs) {
  return HloForm{.opcode = std::move(opcode), .attrs = std::move(attrs)};
}

namespace {

Ints FieldInts(const ir::Attribute& s, std::string_view key) {
  ir::Attribute a = s ? s.Get(key) : ir::Attribute();
  return a ? a.AsInts() : Ints{};
}

std::string GetEnum(const ir::Operation& op, std::string_view key, std::string fallback) {
  ir::Attribute a = op.attr(key);
  return a.kind() == Kind::kEnum ? a.str() : fallback;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// XLA's Window: per spatial dimension size, stride, padding, dilations and
// reversal; each field is printed only when some dimension differs from
// the default.
struct Window {
  Ints size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate, reversal;
};

// `v` if it has `n` entries, else n copies of `fallback` (absent attribute).
Ints OrDefault(Ints v, size_t n, int64_t fallback) { return v.size() == n ? v : Ints(n, fallback); }

Window MakeWindow(const ir::Operation& op, Ints size, std::string_view stride,
                  std::string_view lhs_dilate, std::string_view rhs_dilate,
                  std::string_view reversal) {
  const size_t n = size.size();
  Window w;
  w.size = std::move(size);
  w.stride = OrDefault(GetInts(op, stride), n, 1);
  Ints pad = OrDefault(GetInts(op, "padding"), 2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    w.pad_lo.push_back(pad[2 * i]);
    w.pad_hi.push_back(pad[2 * i + 1]);
  }
  w.lhs_dilate = lhs_dilate.empty() ? Ints(n, 1) : OrDefault(GetInts(op, lhs_dilate), n, 1);
  w.rhs_dilate = rhs_dilate.empty() ? Ints(n, 1) : OrDefault(GetInts(op, rhs_dilate), n, 1);
  w.reversal = reversal.empty() ? Ints(n, 0) : OrDefault(GetInts(op, reversal), n, 0);
  return w;
}

std::string WindowString(const Window& w) {
  auto all = [](const Ints& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
  };
  auto field = [&](const char* key, const std::function<std::string(size_t)>& at) {
    std::string s = key;
    s += "=";
    for (size_t i = 0; i < w.size.size(); ++i) {
      s += i ? "x" : "";
      s += at(i);
    }
    return s;
  };
  auto plain = [](const Ints& v) { return [&v](size_t i) { return std::to_string(v[i]); }; };
  std::string s = field("size", plain(w.size));
  if (!all(w.stride, 1)) s += " " + field("stride", plain(w.stride));
  if (!all(w.pad_lo, 0) || !all(w.pad_hi, 0)) {
    s += " " + field("pad", [&](size_t i) {
           return std::to_string(w.pad_lo[i]) + "_" + std::to_string(w.pad_hi[i]);
         });
  }
  if (!all(w.lhs_dilate, 1)) s += " " + field("lhs_dilate", plain(w.lhs_dilate));
  if (!all(w.rhs_dilate, 1)) s += " " + field("rhs_dilate", plain(w.rhs_dilate));
  if (!all(w.reversal, 0)) s += " " + field("rhs_reversal", plain(w.reversal));
  return "window={" + s + "}";
}

// `operand_precision={high,default}`, only when some operand is not DEFAULT.
void AddPrecision(const ir::Operation& op, HloForm& f) {
  ir::Attribute a = op.attr("precision_config");
  if (a.kind() != Kind::kArray) return;
  std::string s;
  bool all_default = true;
  for (size_t i = 0; i < a.array().size(); ++i) {
    const ir::Attribute& p = a.array()[i];
    std::string name = p.kind() == Kind::kEnum ? p.str() : "DEFAULT";
    all_default = all_default && name == "DEFAULT";
    s += i ? "," : "";
    s += Lower(name);
  }
  if (!all_default) f.attrs.push_back("operand_precision={" + s + "}");
}

std::string Dims(const Ints& v) { return "dimensions=" + IntList(v); }

StatusOr<HloForm> Slice(const ir::Operation& op) {
  const Ints start = GetInts(op, "start_indices"), limit = GetInts(op, "limit_indices");
  const Ints stride = OrDefault(GetInts(op, "strides"), start.size(), 1);
  if (limit.size() != start.size()) return Unsupported(op, "slice bounds of unequal lengths");
  const bool strided = std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s != 1; });
  std::string s = "slice={";
  for (size_t i = 0; i < start.size(); ++i) {
    s += i ? ", [" : "[";
    s += std::to_string(start[i]) + ":" + std::to_string(limit[i]);
    if (strided) s += ":" + std::to_string(stride[i]);
    s += "]";
  }
  return Form("slice", {s + "}"});
}

StatusOr<HloForm> Pad(const ir::Operation& op) {
  const Ints lo = GetInts(op, "edge_padding_low"), hi = GetInts(op, "edge_padding_high");
  const Ints interior = OrDefault(GetInts(op, "interior_padding"), lo.size(), 0);
  if (hi.size() != lo.size()) return Unsupported(op, "padding of unequal lengths");
  const bool has_interior =
      std::any_of(interior.begin(), interior.end(), [](int64_t p) { return p != 0; });
  std::string s = "padding=";
  for (size_t i = 0; i < lo.size(); ++i) {
    s += i ? "x" : "";
    s += std::to_string(lo[i]) + "_" + std::to_string(hi[i]);
    if (has_interior) s += "_" + std::to_string(interior[i]);
  }
  return Form("pad", {s});
}

HloForm Gather(const ir::Operation& op) {
  const ir::Attribute d = op.attr("dimension_numbers");
  HloForm f = Form("gather");
  f.attrs.push_back("offset_dims=" + IntList(FieldInts(d, "offset_dims")));
  f.attrs.push_back("collapsed_slice_dims=" + IntList(FieldInts(d, "collapsed_slice_dims")));
  f.attrs.push_back("start_index_map=" + IntList(FieldInts(d, "start_index_map")));
  if (Ints b = FieldInts(d, "operand_batching_dims"); !b.empty()) {
    f.attrs.push_back("operand_batching_dims=" + IntList(b));
    f.attrs.push_back("start_indices_batching_dims=" +
                      IntList(FieldInts(d, "start_indices_batching_dims")));
  }
  f.attrs.push_back("index_vector_dim=" + std::to_string(FieldInt(d, "index_vector_dim", 0)));
  f.attrs.push_back("slice_sizes=" + IntList(GetInts(op, "slice_sizes")));
  if (GetFlag(op, "indices_are_sorted")) f.attrs.push_back("indices_are_sorted=true");
  return f;
}

HloForm Scatter(const ir::Operation& op) {
  const ir::Attribute d = op.attr("scatter_dimension_numbers");
  HloForm f = Form("scatter");
  f.attrs.push_back("update_window_dims=" + IntList(FieldInts(d, "update_window_dims")));
  f.attrs.push_back("inserted_window_dims=" + IntList(FieldInts(d, "inserted_window_dims")));
  f.attrs.push_back("scatter_dims_to_operand_dims=" +
                    IntList(FieldInts(d, "scatter_dims_to_operand_dims")));
  if (Ints b = FieldInts(d, "input_batching_dims"); !b.empty()) {
    f.attrs.push_back("input_batching_dims=" + IntList(b));
    f.attrs.push_back("scatter_indices_batching_dims=" +
                      IntList(FieldInts(d, "scatter_indices_batching_dims")));
  }
  f.attrs.push_back("index_vector_dim=" + std::to_string(FieldInt(d, "index_vector_dim", 0)));
  if (GetFlag(op, "indices_are_sorted")) f.attrs.push_back("indices_are_sorted=true");
  if (GetFlag(op, "unique_indices")) f.attrs.push_back("unique_indices=true");
  f.region_keys = {"to_apply"};
  return f;
}

StatusOr<HloForm> DotGeneral(const ir::Operation& op) {
  if (op.attr("algorithm")) return Unsupported(op, "attribute 'algorithm'");
  const ir::Attribute d = op.attr("dot_dimension_numbers");
  HloForm f = Form("dot");
  if (Ints b = FieldInts(d, "lhs_batching_dimensions"); !b.empty()) {
    f.attrs.push_back("lhs_batch_dims=" + IntList(b));
  }
  f.attrs.push_back("lhs_contracting_dims=" + IntList(FieldInts(d, "lhs_contracting_dimensions")));
  if (Ints b = FieldInts(d, "rhs_batching_dimensions"); !b.empty()) {
    f.attrs.push_back("rhs_batch_dims=" + IntList(b));
  }
  f.attrs.push_back("rhs_contracting_dims=" + IntList(FieldInts(d, "rhs_contracting_dimensions")));
  AddPrecision(op, f);
  return f;
}

// Legacy stablehlo.dot: the lhs's last dimension against the rhs's first.
StatusOr<HloForm> Dot(const ir::Operation& op) {
  if (op.num_operands() != 2 || !op.operand(0).type().is_tensor()) {
    return Unsupported(op, "this operand list");
  }
  HloForm f =
      Form("dot", {"lhs_contracting_dims={" + std::to_string(op.operand(0).type().rank() - 1) + "}",
                   "rhs_contracting_dims={0}"});
  AddPrecision(op, f);
  return f;
}

StatusOr<HloForm> Convolution(const ir::Operation& op) {
  const ir::Attribute d = op.attr("dimension_numbers");
  if (op.num_operands() != 2 || !op.operand(1).type().is_tensor() ||
      !op.result(0).type().is_tensor()) {
    return Unsupported(op, "this operand list");
  }
  const Ints in_spatial = FieldInts(d, "input_spatial_dimensions");
  const Ints k_spatial = FieldInts(d, "kernel_spatial_dimensions");
  const Ints out_spatial = FieldInts(d, "output_spatial_dimensions");
  if (in_spatial.size() > 10) return Unsupported(op, "more than 10 spatial dimensions");
  // dim_labels: one letter per dimension, digits for the spatial ones.
  auto labels = [](int64_t rank, std::map<int64_t, char> named, const Ints& spatial) {
    for (size_t s = 0; s < spatial.size(); ++s) named[spatial[s]] = static_cast<char>('0' + s);
    std::string r;
    for (int64_t i = 0; i < rank; ++i) r += named.count(i) ? named[i] : '?';
    return r;
  };
  const ir::Type& kernel = op.operand(1).type();
  const std::string dim_labels = labels(op.operand(0).type().rank(),
                                        {{FieldInt(d, "input_batch_dimension", 0), 'b'},
                                         {FieldInt(d, "input_feature_dimension", 0), 'f'}},
                                        in_spatial) +
                                 "_" +
                                 labels(kernel.rank(),
                                        {{FieldInt(d, "kernel_input_feature_dimension", 0), 'i'},
                                         {FieldInt(d, "kernel_output_feature_dimension", 0), 'o'}},
                                        k_spatial) +
                                 "->" +
                                 labels(op.result(0).type().rank(),
                                        {{FieldInt(d, "output_batch_dimension", 0), 'b'},
                                         {FieldInt(d, "output_feature_dimension", 0), 'f'}},
                                        out_spatial);
  if (dim_labels.find('?') != std::string::npos) {
    return Unsupported(op, "these dimension_numbers");
  }
  Ints size;
  for (int64_t k : k_spatial) {
    if (k < 0 || k >= kernel.rank()) return Unsupported(op, "these dimension_numbers");
    size.push_back(kernel.dim(k));
  }
  HloForm f = Form("convolution");
  if (!size.empty()) {
    f.attrs.push_back(WindowString(
        MakeWindow(op, size, "window_strides", "lhs_dilation", "rhs_dilation", "window_reversal")));
  }
  f.attrs.push_back("dim_labels=" + dim_labels);
  if (int64_t g = GetInt(op, "feature_group_count", 1); g != 1) {
    f.attrs.push_back("feature_group_count=" + std::to_string(g));
  }
  if (int64_t g = GetInt(op, "batch_group_count", 1); g != 1) {
    f.attrs.push_back("batch_group_count=" + std::to_string(g));
  }
  AddPrecision(op, f);
  return f;
}

StatusOr<HloForm> Compare(const ir::Operation& op) {
  if (op.num_operands() != 2) return Unsupported(op, "this operand list");
  HloForm f = Form("compare", {"direction=" + GetEnum(op, "comparison_direction", "EQ")});
  const std::string type = GetEnum(op, "compare_type", "NOTYPE");
  const ir::Type& t = op.operand(0).type();
  std::string fallback = "FLOAT";
  if (t.is_tensor() && (ir::IsBool(t.element()) || ir::IsUnsignedInt(t.element()))) {
    fallback = "UNSIGNED";
  } else if (t.is_tensor() && ir::IsSignedInt(t.element())) {
    fallback = "SIGNED";
  }
  if (type != "NOTYPE" && type != fallback) f.attrs.push_back("type=" + type);
  return f;
}

StatusOr<HloForm> Sort(const ir::Operation& op) {
  if (op.num_operands() < 1) return Unsupported(op, "this operand list");
  int64_t dim = GetInt(op, "dimension", -1);
  const ir::Type& t = op.operand(0).type();
  if (dim < 0 && t.is_tensor()) dim += t.rank();
  HloForm f = Form("sort", {"dimensions={" + std::to_string(dim) + "}"});
  if (GetFlag(op, "is_stable")) f.attrs.push_back("is_stable=true");
  f.region_keys = {"to_apply"};
  return f;
}

HloForm WithRegion(HloForm f, std::string key = "to_apply") {
  f.region_keys = {std::move(key)};
  return f;
}

StatusOr<HloForm> Constant(const ir::Operation& op) {
  ir::Attribute value = op.attr("value");
  if (value.kind() != Kind::kDenseElements) return Unsupported(op, "a non-dense value");
  HloForm f = Form("constant");
  f.inline_args = LiteralString(value);
  return f;
}

// reduce-window, select-and-scatter: `window={...}`, absent for a rank-0 operand.
HloForm WindowedForm(const ir::Operation& op, std::string opcode, std::string_view base_dilations,
                     std::string_view window_dilations) {
  HloForm f = Form(std::move(opcode));
  Ints size = GetInts(op, "window_dimensions");
  if (!size.empty()) {
    f.attrs.push_back(WindowString(
        MakeWindow(op, std::move(size), "window_strides", base_dilations, window_dilations, "")));
  }
  return f;
}

HloForm TriangularSolve(const ir::Operation& op) {
  HloForm f = Form("triangular-solve");
  for (const char* flag : {"left_side", "lower", "unit_diagonal"}) {
    if (GetFlag(op, flag)) f.attrs.push_back(std::string(flag) + "=true");
  }
  f.attrs.push_back("transpose_a=" + GetEnum(op, "transpose_a", "NO_TRANSPOSE"));
  return f;
}

HloForm Fusion(const ir::Operation& op) {
  ir::Attribute kind = op.attr("kind");
  return WithRegion(
      Form("fusion", {"kind=" + (kind.kind() == Kind::kString ? kind.str() : "kLoop")}), "calls");
}

// The ops with attributes, by StableHLO name; the renamed ops without any
// come from opcodes.h.
const DescriberTable& Describers() {
  using Op = const ir::Operation&;
  using Names = const ComputationNameFn&;
  static const DescriberTable* table = [] {
    auto* t = new DescriberTable{
        {"stablehlo.constant", [](Op op, Names) { return Constant(op); }},
        {"stablehlo.iota",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("iota",
                       {"iota_dimension=" + std::to_string(GetInt(op, "iota_dimension", 0))});
         }},
        {"stablehlo.broadcast_in_dim",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("broadcast", {Dims(GetInts(op, "broadcast_dimensions"))});
         }},
        {"stablehlo.transpose",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("transpose", {Dims(GetInts(op, "permutation"))});
         }},
        {"stablehlo.reverse",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("reverse", {Dims(GetInts(op, "dimensions"))});
         }},
        {"stablehlo.concatenate",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("concatenate", {Dims({GetInt(op, "dimension", 0)})});
         }},
        {"stablehlo.slice", [](Op op, Names) { return Slice(op); }},
        {"stablehlo.pad", [](Op op, Names) { return Pad(op); }},
        {"stablehlo.dynamic_slice",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("dynamic-slice",
                       {"dynamic_slice_sizes=" + IntList(GetInts(op, "slice_sizes"))});
         }},
        {"stablehlo.dynamic_update_slice",
         [](Op, Names) -> StatusOr<HloForm> { return Form("dynamic-update-slice"); }},
        {"stablehlo.get_tuple_element",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("get-tuple-element", {"index=" + std::to_string(GetInt(op, "index", 0))});
         }},
        {"stablehlo.create_token",
         [](Op, Names) -> StatusOr<HloForm> { return Form("after-all"); }},
        // The same function as stablehlo.tan, which HLO spells `tan`.
        {"chlo.tan", [](Op, Names) -> StatusOr<HloForm> { return Form("tan"); }},
        {"stablehlo.gather", [](Op op, Names) -> StatusOr<HloForm> { return Gather(op); }},
        {"stablehlo.scatter", [](Op op, Names) -> StatusOr<HloForm> { return Scatter(op); }},
        {"stablehlo.dot_general", [](Op op, Names) { return DotGeneral(op); }},
        {"stablehlo.dot", [](Op op, Names) { return Dot(op); }},
        {"stablehlo.convolution", [](Op op, Names) { return Convolution(op); }},
        {"stablehlo.compare", [](Op op, Names) { return Compare(op); }},
        {"stablehlo.sort", [](Op op, Names) { return Sort(op); }},
        {"stablehlo.reduce",
         [](Op op, Names) -> StatusOr<HloForm> {
           return WithRegion(Form("reduce", {Dims(GetInts(op, "dimensions"))}));
         }},
        {"stablehlo.map",
         [](Op op, Names) -> StatusOr<HloForm> {
           return WithRegion(Form("map", {Dims(GetInts(op, "dimensions"))}));
         }},
        {"stablehlo.reduce_window",
         [](Op op, Names) -> StatusOr<HloForm> {
           return WithRegion(
               WindowedForm(op, "reduce-window", "base_dilations", "window_dilations"));
         }},
        {"stablehlo.select_and_scatter",
         [](Op op, Names) -> StatusOr<HloForm> {
           HloForm f = WindowedForm(op, "select-and-scatter", "", "");
           f.region_keys = {"select", "scatter"};
           return f;
         }},
        {"stablehlo.rng_bit_generator",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("rng-bit-generator",
                       {"algorithm=rng_" + Lower(GetEnum(op, "rng_algorithm", "DEFAULT"))});
         }},
        {"stablehlo.reduce_precision",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("reduce-precision",
                       {"exponent_bits=" + std::to_string(GetInt(op, "exponent_bits", 0)),
                        "mantissa_bits=" + std::to_string(GetInt(op, "mantissa_bits", 0))});
         }},
        {"stablehlo.fft",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("fft", {"fft_type=" + GetEnum(op, "fft_type", "FFT"),
                               "fft_length=" + IntList(GetInts(op, "fft_length"))});
         }},
        {"stablehlo.triangular_solve",
         [](Op op, Names) -> StatusOr<HloForm> { return TriangularSolve(op); }},
        {"stablehlo.cholesky",
         [](Op op, Names) -> StatusOr<HloForm> {
           return GetFlag(op, "lower") ? Form("cholesky", {"lower=true"}) : Form("cholesky");
         }},
        {"chlo.top_k",
         [](Op op, Names) -> StatusOr<HloForm> {
           return Form("topk", {"k=" + std::to_string(GetInt(op, "k", 0)), "largest=true"});
         }},
        {"tpusim.fusion", [](Op op, Names) -> StatusOr<HloForm> { return Fusion(op); }},
    };
    AddCallForms(*t);
    return t;
  }();
  return *table;
}

}  // namespace

StatusOr<std::optional<HloForm>> DescribeOp(const ir::Operation& op,
                                            const ComputationNameFn& computation_name) {
  if (const HloOpcode* renamed = FindByStableHloName(op.name_str())) {
    return std::optional<HloForm>(Form(std::string(renamed->hlo)));
  }
  auto it = Describers().find(op.name_str());
  if (it == Describers().end()) return std::optional<HloForm>();
  TPUSIM_ASSIGN_OR_RETURN(HloForm form, it->second(op, computation_name));
  return std::optional<HloForm>(std::move(form));
}

}  // namespace tpusim::frontend::hlo

// The HLO opcode and attributes of each op whose operands and results map one
// to one onto an HLO instruction's: StableHLO's generic attributes respelled
// as XLA prints them (dimensions={1,0}, window={size=3x3 pad=1_1x1_1},
// dim_labels=b01f_01io->b01f, replica_groups={{0,1}}, ...).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "frontend/hlo_opcodes.h"
#include "frontend/hlo_printer_internal.h"

namespace tpusim::frontend::hlo {
namespace {

using Kind = ir::Attribute::Kind;
using Ints = std::vector<int64_t>;

Ints GetInts(const ir::Operation& op, std::string_view key) {
  ir::Attribute a = op.attr(key);
  return a ? a.AsInts() : Ints{};
}

Ints FieldInts(const ir::Attribute& s, std::string_view key) {
  ir::Attribute a = s ? s.Get(key) : ir::Attribute();
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

std::string GetEnum(const ir::Operation& op, std::string_view key, std::string fallback) {
  ir::Attribute a = op.attr(key);
  return a.kind() == Kind::kEnum ? a.str() : fallback;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// absl::CEscape, as XLA quotes strings.
std::string Quote(const std::string& s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      case '"': r += "\\\""; break;
      case '\'': r += "\\'"; break;
      case '\\': r += "\\\\"; break;
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
  return Status(StatusCode::kUnimplemented, "op '" + op.name_str() + "' at " +
                                                op.loc().ToString() + ": " + what +
                                                " has no HLO spelling");
}

// XLA's Window: per spatial dimension size, stride, padding, dilations and
// reversal; each field is printed only when some dimension differs from
// the default.
struct Window {
  Ints size, stride, pad_lo, pad_hi, lhs_dilate, rhs_dilate, reversal;
};

// `v` if it has `n` entries, else n copies of `fallback` (absent attribute).
Ints OrDefault(Ints v, size_t n, int64_t fallback) {
  return v.size() == n ? v : Ints(n, fallback);
}

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
    for (size_t i = 0; i < w.size.size(); ++i) s += (i ? "x" : "") + at(i);
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
    s += (i ? "," : "") + Lower(name);
  }
  if (!all_default) f.attrs.push_back("operand_precision={" + s + "}");
}

// A 2-D id list ({{0,1},{2,3}}), dropping the negative entries that pad
// uneven rows of StableHLO's dense form.
std::string Rows(const ir::Attribute& a) {
  if (a.kind() != Kind::kDenseElements || a.type().rank() != 2) return "{}";
  const Ints flat = a.AsInts();
  const int64_t cols = a.type().dim(1);
  std::string s = "{";
  for (size_t i = 0; cols > 0 && i < flat.size(); i += cols) {
    Ints row;
    for (int64_t j = 0; j < cols; ++j) {
      if (flat[i + j] >= 0) row.push_back(flat[i + j]);
    }
    s += (i ? "," : "") + IntList(row);
  }
  return s + "}";
}

// channel_id (when the op has a channel) and replica_groups, which every
// collective prints first.
void AddCollective(const ir::Operation& op, HloForm& f, bool groups) {
  const int64_t channel = FieldInt(op.attr("channel_handle"), "handle", 0);
  if (channel > 0) f.attrs.push_back("channel_id=" + std::to_string(channel));
  if (groups) f.attrs.push_back("replica_groups=" + Rows(op.attr("replica_groups")));
}

HloForm Form(std::string opcode, std::vector<std::string> attrs = {}) {
  return HloForm{.opcode = std::move(opcode), .attrs = std::move(attrs)};
}

std::string Dims(const Ints& v) { return "dimensions=" + IntList(v); }

StatusOr<HloForm> Slice(const ir::Operation& op) {
  const Ints start = GetInts(op, "start_indices"), limit = GetInts(op, "limit_indices");
  const Ints stride = OrDefault(GetInts(op, "strides"), start.size(), 1);
  if (limit.size() != start.size()) return Unsupported(op, "slice bounds of unequal lengths");
  const bool strided = std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s != 1; });
  std::string s = "slice={";
  for (size_t i = 0; i < start.size(); ++i) {
    s += (i ? ", [" : "[") + std::to_string(start[i]) + ":" + std::to_string(limit[i]);
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
    s += (i ? "x" : "") + std::to_string(lo[i]) + "_" + std::to_string(hi[i]);
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
  HloForm f = Form("dot", {"lhs_contracting_dims={" +
                               std::to_string(op.operand(0).type().rank() - 1) + "}",
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
  const std::string dim_labels =
      labels(op.operand(0).type().rank(),
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
    f.attrs.push_back(WindowString(MakeWindow(op, size, "window_strides", "lhs_dilation",
                                              "rhs_dilation", "window_reversal")));
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

HloForm Compare(const ir::Operation& op) {
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

HloForm Sort(const ir::Operation& op) {
  int64_t dim = GetInt(op, "dimension", -1);
  const ir::Type& t = op.operand(0).type();
  if (dim < 0 && t.is_tensor()) dim += t.rank();
  HloForm f = Form("sort", {"dimensions={" + std::to_string(dim) + "}"});
  if (GetFlag(op, "is_stable")) f.attrs.push_back("is_stable=true");
  f.region_keys = {"to_apply"};
  return f;
}

StatusOr<HloForm> CustomCall(const ir::Operation& op, const ComputationNameFn& computation) {
  ir::Attribute target = op.attr("call_target_name");
  HloForm f = Form("custom-call", {"custom_call_target=" +
                                   Quote(target.kind() == Kind::kString ? target.str() : "")});
  if (GetFlag(op, "has_side_effect")) f.attrs.push_back("custom_call_has_side_effect=true");
  if (ir::Attribute called = op.attr("called_computations"); called.kind() == Kind::kArray) {
    std::string s;
    for (const ir::Attribute& c : called.array()) {
      if (c.kind() != Kind::kSymbolRef) return Unsupported(op, "called_computations");
      s += (s.empty() ? "%" : ", %") + computation(c.str());
    }
    if (!s.empty()) f.attrs.push_back("called_computations={" + s + "}");
  }
  ir::Attribute config = op.attr("backend_config");
  if (config.kind() == Kind::kString && !config.str().empty()) {
    f.attrs.push_back("backend_config=" + Quote(config.str()));
  } else if (config.kind() == Kind::kDict) {
    f.attrs.push_back("backend_config=" + config.ToString());
  }
  static const char* const kApiVersions[] = {"", "", "API_VERSION_STATUS_RETURNING",
                                             "API_VERSION_STATUS_RETURNING_UNIFIED",
                                             "API_VERSION_TYPED_FFI"};
  const int64_t api = GetInt(op, "api_version", 1);
  if (api < 0 || api > 4) return Unsupported(op, "api_version " + std::to_string(api));
  if (api >= 2) f.attrs.push_back(std::string("api_version=") + kApiVersions[api]);
  return f;
}

StatusOr<HloForm> AllToAll(const ir::Operation& op) {
  const int64_t split = GetInt(op, "split_dimension", 0);
  if (GetInt(op, "concat_dimension", 0) != split) {
    return Unsupported(op, "a concat_dimension other than split_dimension");
  }
  HloForm f = Form("all-to-all");
  AddCollective(op, f, true);
  f.attrs.push_back("dimensions={" + std::to_string(split) + "}");
  return f;
}

// all-reduce, all-gather, reduce-scatter: groups, a dimension (all but
// all-reduce), the global-ids flag, and a reducer (all but all-gather).
HloForm GroupCollective(const ir::Operation& op, std::string opcode, std::string_view dim_key,
                        bool reduces) {
  HloForm f = Form(std::move(opcode));
  AddCollective(op, f, true);
  if (!dim_key.empty()) f.attrs.push_back("dimensions={" + std::to_string(GetInt(op, dim_key, 0)) + "}");
  if (GetFlag(op, "use_global_device_ids")) f.attrs.push_back("use_global_device_ids=true");
  if (reduces) f.region_keys = {"to_apply"};
  return f;
}

StatusOr<HloForm> Composite(const ir::Operation& op, const ComputationNameFn& computation) {
  ir::Attribute decomposition = op.attr("decomposition");
  if (decomposition.kind() != Kind::kSymbolRef) return Unsupported(op, "a missing decomposition");
  HloForm f = Form("call", {"to_apply=%" + computation(decomposition.str())});
  ir::Attribute name = op.attr("name");
  std::string fa;
  if (ir::Attribute a = op.attr("composite_attributes"); a.kind() == Kind::kDict) {
    fa += "composite.attributes=" + a.ToString() + ",";
  }
  fa += "composite.name=" + Quote(name.kind() == Kind::kString ? name.str() : "");
  fa += ",composite.version=" + Quote(std::to_string(GetInt(op, "version", 0)));
  f.attrs_after = {"is_composite=true", "frontend_attributes={" + fa + "}"};
  return f;
}

StatusOr<HloForm> Describe(const ir::Operation& op, const ComputationNameFn& computation,
                           bool* found) {
  *found = true;
  const std::string& n = op.name_str();
  if (const HloOpcode* renamed = FindByStableHloName(n)) return Form(std::string(renamed->hlo));
  if (n == "stablehlo.constant") {
    ir::Attribute value = op.attr("value");
    if (value.kind() != Kind::kDenseElements) return Unsupported(op, "a non-dense value");
    HloForm f = Form("constant");
    f.inline_args = LiteralString(value);
    return f;
  }
  if (n == "stablehlo.iota") {
    return Form("iota", {"iota_dimension=" + std::to_string(GetInt(op, "iota_dimension", 0))});
  }
  if (n == "stablehlo.broadcast_in_dim") {
    return Form("broadcast", {Dims(GetInts(op, "broadcast_dimensions"))});
  }
  if (n == "stablehlo.transpose") return Form("transpose", {Dims(GetInts(op, "permutation"))});
  if (n == "stablehlo.reverse") return Form("reverse", {Dims(GetInts(op, "dimensions"))});
  if (n == "stablehlo.concatenate") {
    return Form("concatenate", {"dimensions={" + std::to_string(GetInt(op, "dimension", 0)) + "}"});
  }
  if (n == "stablehlo.slice") return Slice(op);
  if (n == "stablehlo.pad") return Pad(op);
  if (n == "stablehlo.dynamic_slice") {
    return Form("dynamic-slice", {"dynamic_slice_sizes=" + IntList(GetInts(op, "slice_sizes"))});
  }
  if (n == "stablehlo.dynamic_update_slice") return Form("dynamic-update-slice");
  if (n == "stablehlo.get_tuple_element") {
    return Form("get-tuple-element", {"index=" + std::to_string(GetInt(op, "index", 0))});
  }
  if (n == "stablehlo.create_token") return Form("after-all");
  if (n == "stablehlo.gather") return Gather(op);
  if (n == "stablehlo.scatter") return Scatter(op);
  if (n == "stablehlo.dot_general") return DotGeneral(op);
  if (n == "stablehlo.dot") return Dot(op);
  if (n == "stablehlo.convolution") return Convolution(op);
  if (n == "stablehlo.compare") return Compare(op);
  if (n == "stablehlo.sort") return Sort(op);
  if (n == "stablehlo.reduce") {
    HloForm f = Form("reduce", {Dims(GetInts(op, "dimensions"))});
    f.region_keys = {"to_apply"};
    return f;
  }
  if (n == "stablehlo.map") {
    HloForm f = Form("map", {Dims(GetInts(op, "dimensions"))});
    f.region_keys = {"to_apply"};
    return f;
  }
  if (n == "stablehlo.reduce_window") {
    HloForm f = Form("reduce-window");
    Ints size = GetInts(op, "window_dimensions");
    if (!size.empty()) {
      f.attrs.push_back(WindowString(MakeWindow(op, std::move(size), "window_strides",
                                                "base_dilations", "window_dilations", "")));
    }
    f.region_keys = {"to_apply"};
    return f;
  }
  if (n == "stablehlo.select_and_scatter") {
    HloForm f = Form("select-and-scatter");
    Ints size = GetInts(op, "window_dimensions");
    if (!size.empty()) {
      f.attrs.push_back(
          WindowString(MakeWindow(op, std::move(size), "window_strides", "", "", "")));
    }
    f.region_keys = {"select", "scatter"};
    return f;
  }
  if (n == "stablehlo.rng_bit_generator") {
    return Form("rng-bit-generator",
                {"algorithm=rng_" + Lower(GetEnum(op, "rng_algorithm", "DEFAULT"))});
  }
  if (n == "stablehlo.reduce_precision") {
    return Form("reduce-precision",
                {"exponent_bits=" + std::to_string(GetInt(op, "exponent_bits", 0)),
                 "mantissa_bits=" + std::to_string(GetInt(op, "mantissa_bits", 0))});
  }
  if (n == "stablehlo.fft") {
    return Form("fft", {"fft_type=" + GetEnum(op, "fft_type", "FFT"),
                        "fft_length=" + IntList(GetInts(op, "fft_length"))});
  }
  if (n == "stablehlo.triangular_solve") {
    HloForm f = Form("triangular-solve");
    for (const char* flag : {"left_side", "lower", "unit_diagonal"}) {
      if (GetFlag(op, flag)) f.attrs.push_back(std::string(flag) + "=true");
    }
    f.attrs.push_back("transpose_a=" + GetEnum(op, "transpose_a", "NO_TRANSPOSE"));
    return f;
  }
  if (n == "stablehlo.cholesky") {
    return GetFlag(op, "lower") ? Form("cholesky", {"lower=true"}) : Form("cholesky");
  }
  if (n == "stablehlo.all_reduce") return GroupCollective(op, "all-reduce", "", true);
  if (n == "stablehlo.all_gather") {
    return GroupCollective(op, "all-gather", "all_gather_dim", false);
  }
  if (n == "stablehlo.reduce_scatter") {
    return GroupCollective(op, "reduce-scatter", "scatter_dimension", true);
  }
  if (n == "stablehlo.all_to_all") return AllToAll(op);
  if (n == "stablehlo.collective_broadcast") {
    HloForm f = Form("collective-broadcast");
    AddCollective(op, f, true);
    return f;
  }
  if (n == "stablehlo.collective_permute") {
    HloForm f = Form("collective-permute");
    AddCollective(op, f, false);
    f.attrs.push_back("source_target_pairs=" + Rows(op.attr("source_target_pairs")));
    return f;
  }
  if (n == "stablehlo.custom_call") return CustomCall(op, computation);
  if (n == "func.call") {
    ir::Attribute callee = op.attr("callee");
    if (callee.kind() != Kind::kSymbolRef) return Unsupported(op, "a missing callee");
    return Form("call", {"to_apply=%" + computation(callee.str())});
  }
  if (n == "stablehlo.composite") return Composite(op, computation);
  if (n == "chlo.top_k") {
    return Form("topk", {"k=" + std::to_string(GetInt(op, "k", 0)), "largest=true"});
  }
  if (n == "tpusim.fusion") {
    ir::Attribute kind = op.attr("kind");
    HloForm f = Form("fusion", {"kind=" + (kind.kind() == Kind::kString ? kind.str() : "kLoop")});
    f.region_keys = {"calls"};
    return f;
  }
  *found = false;
  return HloForm{};
}

}  // namespace

StatusOr<std::optional<HloForm>> DescribeOp(const ir::Operation& op,
                                            const ComputationNameFn& computation_name) {
  bool found = false;
  TPUSIM_ASSIGN_OR_RETURN(HloForm form, Describe(op, computation_name, &found));
  if (!found) return std::optional<HloForm>();
  return std::optional<HloForm>(std::move(form));
}

}  // namespace tpusim::frontend::hlo

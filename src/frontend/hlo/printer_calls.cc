// XLA's spelling of calls, custom calls and collectives: the ops whose
// attributes name other computations, replica groups or channels.
#include <string>
#include <vector>

#include "frontend/hlo/printer_internal.h"

namespace tpusim::frontend::hlo {
namespace {

using Kind = ir::Attribute::Kind;
using Ints = std::vector<int64_t>;

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
    s += i ? "," : "";
    s += IntList(row);
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

StatusOr<HloForm> CustomCall(const ir::Operation& op, const ComputationNameFn& computation) {
  ir::Attribute target = op.attr("call_target_name");
  HloForm f = Form("custom-call", {"custom_call_target=" +
                                   Quote(target.kind() == Kind::kString ? target.str() : "")});
  if (GetFlag(op, "has_side_effect")) f.attrs.push_back("custom_call_has_side_effect=true");
  if (ir::Attribute called = op.attr("called_computations"); called.kind() == Kind::kArray) {
    std::string s;
    for (const ir::Attribute& c : called.array()) {
      if (c.kind() != Kind::kSymbolRef) return Unsupported(op, "called_computations");
      s += s.empty() ? "%" : ", %";
      s += computation(c.str());
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
  if (!dim_key.empty())
    f.attrs.push_back("dimensions={" + std::to_string(GetInt(op, dim_key, 0)) + "}");
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

StatusOr<HloForm> Call(const ir::Operation& op, const ComputationNameFn& computation) {
  ir::Attribute callee = op.attr("callee");
  if (callee.kind() != Kind::kSymbolRef) return Unsupported(op, "a missing callee");
  return Form("call", {"to_apply=%" + computation(callee.str())});
}

}  // namespace

void AddCallForms(DescriberTable& table) {
  const DescriberTable forms = {
      {"stablehlo.all_reduce",
       [](const ir::Operation& op, const ComputationNameFn&) -> StatusOr<HloForm> {
         return GroupCollective(op, "all-reduce", "", true);
       }},
      {"stablehlo.all_gather",
       [](const ir::Operation& op, const ComputationNameFn&) -> StatusOr<HloForm> {
         return GroupCollective(op, "all-gather", "all_gather_dim", false);
       }},
      {"stablehlo.reduce_scatter",
       [](const ir::Operation& op, const ComputationNameFn&) -> StatusOr<HloForm> {
         return GroupCollective(op, "reduce-scatter", "scatter_dimension", true);
       }},
      {"stablehlo.all_to_all",
       [](const ir::Operation& op, const ComputationNameFn&) { return AllToAll(op); }},
      {"stablehlo.collective_broadcast",
       [](const ir::Operation& op, const ComputationNameFn&) -> StatusOr<HloForm> {
         HloForm f = Form("collective-broadcast");
         AddCollective(op, f, true);
         return f;
       }},
      {"stablehlo.collective_permute",
       [](const ir::Operation& op, const ComputationNameFn&) -> StatusOr<HloForm> {
         HloForm f = Form("collective-permute");
         AddCollective(op, f, false);
         f.attrs.push_back("source_target_pairs=" + Rows(op.attr("source_target_pairs")));
         return f;
       }},
      {"stablehlo.custom_call",
       [](const ir::Operation& op, const ComputationNameFn& names) {
         return CustomCall(op, names);
       }},
      {"func.call",
       [](const ir::Operation& op, const ComputationNameFn& names) { return Call(op, names); }},
      {"stablehlo.composite", [](const ir::Operation& op,
                                 const ComputationNameFn& names) { return Composite(op, names); }},
  };
  table.insert(forms.begin(), forms.end());
}

}  // namespace tpusim::frontend::hlo

// TOML form of a ChipSpec: every field written with a comment, and read back
// strictly (unknown keys and impossible values are errors with locations).
#include <toml++/toml.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>

#include "base/toml_reader.h"
#include "tpusim/hw/chip.h"

namespace tpusim::hw {
namespace {

using base::TableReader;
using base::Where;

const toml::table* SubTable(const toml::table& root, const char* key) {
  const toml::node* n = root.get(key);
  return n ? n->as_table() : nullptr;
}

Status ReadMxu(const toml::table& t, const std::string& file, MxuSpec& m) {
  TableReader r(t, file, "mxu.");
  TPUSIM_RETURN_IF_ERROR(r.Read("rows", m.rows));
  TPUSIM_RETURN_IF_ERROR(r.Read("cols", m.cols));
  TPUSIM_RETURN_IF_ERROR(r.Read("per_core", m.per_core));
  TPUSIM_RETURN_IF_ERROR(r.ReadEnum(
      "dataflow", m.dataflow,
      {Dataflow::kWeightStationary, Dataflow::kOutputStationary, Dataflow::kInputStationary},
      DataflowName));
  TPUSIM_RETURN_IF_ERROR(r.Read("double_buffered", m.double_buffered));
  TPUSIM_RETURN_IF_ERROR(r.ReadEnum("cycle_model", m.cycle_model,
                                    {CycleModel::kRegister, CycleModel::kScaleSim},
                                    CycleModelName));
  TPUSIM_RETURN_IF_ERROR(r.Read("int8_rate", m.int8_rate));
  TPUSIM_RETURN_IF_ERROR(r.Read("fp8_rate", m.fp8_rate));
  TPUSIM_RETURN_IF_ERROR(r.Read("sustained_fraction", m.sustained_fraction));
  return r.RejectUnknown();
}

Status ReadVpu(const toml::table& t, const std::string& file, VectorUnitSpec& v) {
  TableReader r(t, file, "vector_unit.");
  TPUSIM_RETURN_IF_ERROR(r.Read("lanes", v.lanes));
  TPUSIM_RETURN_IF_ERROR(r.Read("sublanes", v.sublanes));
  TPUSIM_RETURN_IF_ERROR(r.Read("alu_ops_per_cycle", v.alu_ops_per_cycle));
  TPUSIM_RETURN_IF_ERROR(r.Read("transcendental_ops_per_cycle", v.transcendental_ops_per_cycle));
  TPUSIM_RETURN_IF_ERROR(r.Read("transpose_units", v.transpose_units));
  return r.RejectUnknown();
}

Status ReadMemory(const toml::table& t, const std::string& file, MemorySpec& m) {
  TableReader r(t, file, "memory.");
  TPUSIM_RETURN_IF_ERROR(r.Read("vmem_bytes", m.vmem_bytes));
  TPUSIM_RETURN_IF_ERROR(r.Read("hbm_bytes", m.hbm_bytes));
  TPUSIM_RETURN_IF_ERROR(r.Read("hbm_bytes_per_s", m.hbm_bytes_per_s));
  TPUSIM_RETURN_IF_ERROR(r.Read("hbm_sustained_fraction", m.hbm_sustained_fraction));
  TPUSIM_RETURN_IF_ERROR(r.Read("dma_granule_bytes", m.dma_granule_bytes));
  return r.RejectUnknown();
}

Status ReadIci(const toml::table& t, const std::string& file, IciSpec& i) {
  TableReader r(t, file, "ici.");
  TPUSIM_RETURN_IF_ERROR(r.Read("links_per_chip", i.links_per_chip));
  TPUSIM_RETURN_IF_ERROR(r.Read("link_bytes_per_s", i.link_bytes_per_s));
  TPUSIM_RETURN_IF_ERROR(r.Read("hop_latency_s", i.hop_latency_s));
  return r.RejectUnknown();
}

Status ReadHost(const toml::table& t, const std::string& file, HostLinkSpec& h) {
  TableReader r(t, file, "host.");
  TPUSIM_RETURN_IF_ERROR(r.Read("bytes_per_s", h.bytes_per_s));
  TPUSIM_RETURN_IF_ERROR(r.Read("latency_s", h.latency_s));
  return r.RejectUnknown();
}

Status ReadSlice(const toml::table& t, const std::string& file, SliceRules& s) {
  TableReader r(t, file, "slice.");
  TPUSIM_RETURN_IF_ERROR(r.Read("rank", s.rank));
  TPUSIM_RETURN_IF_ERROR(r.Read("chips_per_host", s.chips_per_host));
  TPUSIM_RETURN_IF_ERROR(r.Read("type_prefix", s.type_prefix));
  TPUSIM_RETURN_IF_ERROR(r.Read("name_counts_cores", s.name_counts_cores));
  TPUSIM_RETURN_IF_ERROR(r.Read("cube", s.cube));
  TPUSIM_RETURN_IF_ERROR(r.Read("wrap_length", s.wrap_length));
  TPUSIM_RETURN_IF_ERROR(r.ReadStrings("topologies", s.topologies));
  TPUSIM_RETURN_IF_ERROR(r.Read("dcn_bytes_per_s_per_chip", s.dcn_bytes_per_s_per_chip));
  return r.RejectUnknown();
}

StatusOr<ChipSpec> FromTable(const toml::table& root, const std::string& file) {
  ChipSpec c;
  TableReader r(root, file, "");
  // A file may start from a preset and change a few fields.
  std::string base;
  TPUSIM_RETURN_IF_ERROR(r.Read("base", base));
  if (!base.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(c, FindPreset(base));
  }
  TPUSIM_RETURN_IF_ERROR(r.Read("name", c.name));
  std::string description;
  TPUSIM_RETURN_IF_ERROR(r.Read("description", description));
  TPUSIM_RETURN_IF_ERROR(r.Read("tensor_cores", c.tensor_cores));
  TPUSIM_RETURN_IF_ERROR(r.Read("megacore", c.megacore));
  TPUSIM_RETURN_IF_ERROR(r.Read("clock_hz", c.clock_hz));
  TPUSIM_RETURN_IF_ERROR(r.Read("op_overhead_s", c.op_overhead_s));
  TPUSIM_RETURN_IF_ERROR(r.Read("published_bf16_flops", c.published_bf16_flops));
  TPUSIM_RETURN_IF_ERROR(r.ReadStrings("sources", c.sources));
  struct Sub { const char* key; std::function<Status(const toml::table&)> read; };
  const Sub subs[] = {
      {"mxu", [&](const toml::table& t) { return ReadMxu(t, file, c.mxu); }},
      {"vector_unit", [&](const toml::table& t) { return ReadVpu(t, file, c.vpu); }},
      {"memory", [&](const toml::table& t) { return ReadMemory(t, file, c.memory); }},
      {"ici", [&](const toml::table& t) { return ReadIci(t, file, c.ici); }},
      {"host", [&](const toml::table& t) { return ReadHost(t, file, c.host); }},
      {"slice", [&](const toml::table& t) { return ReadSlice(t, file, c.slice); }},
  };
  for (const Sub& s : subs) {
    r.Allow(s.key);
    if (const toml::table* t = SubTable(root, s.key)) TPUSIM_RETURN_IF_ERROR(s.read(*t));
  }
  TPUSIM_RETURN_IF_ERROR(r.RejectUnknown());
  // Validate's messages start with the field's path: point at its line.
  if (Status valid = Validate(c); !valid.ok()) {
    const std::string& m = valid.message();
    const toml::node_view<const toml::node> n = root.at_path(m.substr(0, m.find(' ')));
    return InvalidArgument((n ? Where(file, n.node()->source()) : file) + ": " + m);
  }
  // A description the file does not give says what its fields make: a
  // preset's would name the preset's MXUs and memory, not these.
  c.description = !description.empty() ? description
                  : base.empty()       ? DescribeFields(c)
                                       : "from " + base + ": " + DescribeFields(c);
  return c;
}

std::string Quoted(const std::string& s) {
  std::ostringstream os;
  os << toml::value<std::string>(s);
  return os.str();
}

}  // namespace

StatusOr<ChipSpec> LoadChipToml(std::string_view text, const std::string& filename) {
  try {
    toml::table root = toml::parse(text, filename);
    return FromTable(root, filename);
  } catch (const toml::parse_error& e) {
    return InvalidArgument(Where(filename, e.source()) + ": " + std::string(e.description()));
  }
}

namespace {

// The shortest text that reads back as `v`: 3.5e-07, not 3.4999999999999998e-07.
std::string Shortest(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

}  // namespace

std::string DumpChipToml(const ChipSpec& c) {
  std::ostringstream os;
  os << "# tpusim chip description. Load with --chip-file; 'base = \"v5e\"' may\n"
     << "# replace the fields below to start from a preset.\n"
     << "name = " << Quoted(c.name) << "\n"
     << "description = " << Quoted(c.description) << "\n"
     << "tensor_cores = " << c.tensor_cores << "  # per chip\n"
     << "megacore = " << (c.megacore ? "true" : "false")
     << "  # cores act as one device\n"
     << "clock_hz = " << Shortest(c.clock_hz) << "\n"
     << "op_overhead_s = " << Shortest(c.op_overhead_s) << "  # fixed cost per op\n"
     << "published_bf16_flops = " << Shortest(c.published_bf16_flops) << "  # 0 if unknown\n"
     << "sources = [";
  for (size_t i = 0; i < c.sources.size(); ++i) os << (i ? ", " : "") << Quoted(c.sources[i]);
  os << "]\n\n[mxu]\n"
     << "rows = " << c.mxu.rows << "  # PEs along K\n"
     << "cols = " << c.mxu.cols << "  # PEs along N\n"
     << "per_core = " << c.mxu.per_core << "\n"
     << "dataflow = \"" << DataflowName(c.mxu.dataflow)
     << "\"  # weight_stationary | output_stationary | input_stationary\n"
     << "double_buffered = " << (c.mxu.double_buffered ? "true" : "false")
     << "  # the next load (ws, is) or the last drain (os) overlaps compute\n"
     << "cycle_model = \"" << CycleModelName(c.mxu.cycle_model)
     << "\"  # register | scale_sim (SCALE-Sim's count, without double buffering)\n"
     << "int8_rate = " << Shortest(c.mxu.int8_rate) << "  # int8 MACs per bf16 MAC\n"
     << "fp8_rate = " << Shortest(c.mxu.fp8_rate) << "  # fp8 MACs per bf16 MAC\n"
     << "sustained_fraction = " << Shortest(c.mxu.sustained_fraction)
     << "  # calibration: share of the cycle count's rate kernels reach\n\n"
     << "[vector_unit]\n"
     << "lanes = " << c.vpu.lanes << "\n"
     << "sublanes = " << c.vpu.sublanes << "\n"
     << "alu_ops_per_cycle = " << Shortest(c.vpu.alu_ops_per_cycle) << "  # per element slot\n"
     << "transcendental_ops_per_cycle = " << Shortest(c.vpu.transcendental_ops_per_cycle) << "\n"
     << "transpose_units = " << c.vpu.transpose_units << "\n\n"
     << "[memory]\n"
     << "vmem_bytes = " << c.memory.vmem_bytes << "  # per TensorCore\n"
     << "hbm_bytes = " << c.memory.hbm_bytes << "  # per chip, shared by its devices\n"
     << "hbm_bytes_per_s = " << Shortest(c.memory.hbm_bytes_per_s) << "  # per chip, peak\n"
     << "hbm_sustained_fraction = " << Shortest(c.memory.hbm_sustained_fraction)
     << "  # measured: share of the peak a large copy sustains\n"
     << "dma_granule_bytes = " << c.memory.dma_granule_bytes
     << "  # smallest HBM transfer (assumed)\n\n"
     << "[ici]\n"
     << "links_per_chip = " << c.ici.links_per_chip << "  # torus neighbours\n"
     << "link_bytes_per_s = " << Shortest(c.ici.link_bytes_per_s) << "  # one link, one way\n"
     << "hop_latency_s = " << Shortest(c.ici.hop_latency_s) << "\n\n"
     << "[host]\n"
     << "bytes_per_s = " << Shortest(c.host.bytes_per_s) << "  # PCIe to host memory, one way; 0: none\n"
     << "latency_s = " << Shortest(c.host.latency_s) << "  # per transfer\n\n"
     << "[slice]\n"
     << "rank = " << c.slice.rank << "  # torus dimensions\n"
     << "chips_per_host = " << c.slice.chips_per_host << "\n"
     << "type_prefix = " << Quoted(c.slice.type_prefix) << "  # accelerator type names\n"
     << "name_counts_cores = " << (c.slice.name_counts_cores ? "true" : "false")
     << "  # else the name counts chips\n"
     << "cube = " << c.slice.cube << "  # > 0: slices of whole cubes wrap around\n"
     << "wrap_length = " << c.slice.wrap_length << "  # > 0: axes of this length wrap around\n"
     << "topologies = [";
  for (size_t i = 0; i < c.slice.topologies.size(); ++i) {
    os << (i ? ", " : "") << Quoted(c.slice.topologies[i]);
  }
  os << "]\n"
     << "dcn_bytes_per_s_per_chip = " << Shortest(c.slice.dcn_bytes_per_s_per_chip) << "  # between slices\n";
  return os.str();
}

}  // namespace tpusim::hw

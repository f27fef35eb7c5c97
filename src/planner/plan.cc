#include "tpusim/planner/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "planner/step_timing.h"
#include "report/html/page.h"
#include "runtime/sharding_flags.h"
#include "tpusim/hw/chip.h"
#include "tpusim/model/train_step.h"
#include "tpusim/planner/prices.h"
#include "tpusim/pod/collective_cost.h"
#include "tpusim/pod/slice.h"

namespace tpusim::planner {
namespace {

// The sizes worth trying for an axis of a mesh of `devices`: those up to
// `most` that divide the devices and each of `parts`.
std::vector<int64_t> AxisSizes(int64_t devices, int64_t most, std::vector<int64_t> parts) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= std::min(devices, most); ++n) {
    bool divides = devices % n == 0;
    for (int64_t p : parts) divides = divides && p % n == 0;
    if (divides) out.push_back(n);
  }
  return out;
}

// A slice and the costs of its collective patterns, shared by its candidates.
using Patterns = std::shared_ptr<pod::CollectivePatterns>;

// The meshes of `devices` worth trying: a tensor axis that splits the
// query heads and the MLP evenly (kv heads it cannot split are kept whole),
// an expert axis that splits a mixture's experts, a sequence axis that
// splits the sequence, the rest split between data and fsdp so that the
// batch axes (data x fsdp x expert) divide each microbatch and the weights'
// axes (fsdp x sequence x expert) the model dimension. Over several slices the
// data axis, outermost, spans them, so that only its gradient reduction
// crosses DCN.
StatusOr<std::vector<Candidate>> Meshes(const PlanRequest& r, const pod::Slice& slice) {
  const model::ModelSpec& m = r.model;
  // --mesh: its axes' sizes (those it leaves out are 1).
  std::map<std::string, int64_t> only;
  if (!r.mesh.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(auto axes, runtime::ParseMeshFlag(r.mesh));
    for (const auto& [name, size] : axes) {
      if (name != "data" && name != "fsdp" && name != "sequence" && name != "tensor" &&
          name != "expert") {
        return InvalidArgument("--mesh axis '" + name +
                               "': expected data, fsdp, sequence, expert or tensor");
      }
      only[name] = size;
    }
  }
  auto size = [&](const char* axis) { return only.count(axis) ? only[axis] : 1; };
  // An axis --mesh sizes is tried at that size, whatever the search's limit.
  auto most = [&](const char* axis, int64_t limit) {
    return only.count(axis) ? only[axis] : limit;
  };
  const int64_t devices = slice.num_devices();
  std::vector<Candidate> out;
  const int64_t seq = r.seq > 0 ? r.seq : m.max_seq;
  for (int64_t t : AxisSizes(devices, most("tensor", r.max_tensor), {m.heads, m.d_ff})) {
    for (int64_t e : AxisSizes(devices / t, m.IsMoe() ? m.experts : 1, {m.experts})) {
      for (int64_t q : AxisSizes(devices / t / e, most("sequence", r.max_sequence), {seq})) {
        const int64_t rest = devices / t / e / q;  // data x fsdp
        if (r.global_batch % (rest * e * std::max<int64_t>(r.microbatches, 1)) != 0) continue;
        for (int64_t data = slice.num_slices; data <= rest; data += slice.num_slices) {
          if (rest % data != 0 || m.d_model % (rest / data * e * q) != 0) continue;
          Candidate c;
          c.slice = slice.name;
          c.generation = slice.chip.name;
          c.chips = slice.total_chips();
          c.data = data;
          c.fsdp = rest / data;
          c.sequence = q;
          c.expert = e;
          c.tensor = t;
          if (only.empty() ||
              (c.data == size("data") && c.fsdp == size("fsdp") && c.sequence == size("sequence") &&
               c.expert == size("expert") && c.tensor == size("tensor"))) {
            out.push_back(c);
          }
        }
      }
    }
  }
  if (!r.mesh.empty() && out.empty()) {
    return InvalidArgument("--mesh " + r.mesh + " does not suit " + slice.name + " (" +
                           std::to_string(devices) +
                           " devices): give data=D,fsdp=F,tensor=T,sequence=Q (and expert=E for "
                           "a mixture of experts) with their product the devices, D x F x E "
                           "dividing the batch, F x Q x E d_model, T the heads and d_ff, Q the "
                           "sequence, E the experts" +
                           (slice.num_slices > 1 ? ", D a multiple of the slices" : ""));
  }
  return out;
}

// Runs candidate `c`'s train step on `slice`; errors are those that would
// fail every candidate alike (a model the step cannot be built for).
Status Evaluate(const PlanRequest& r, const Patterns& patterns, Candidate& c) {
  const pod::Slice& slice = patterns->slice();
  model::TrainStepOptions o;
  o.batch = r.global_batch;
  o.seq = r.seq;
  o.dtype = r.dtype;
  o.param_dtype = r.param_dtype;
  o.fp8 = r.fp8;
  o.int8 = r.int8;
  o.mesh = {{"data", c.data}, {"fsdp", c.fsdp}, {"tensor", c.tensor}};
  if (c.expert > 1) o.mesh.emplace_back("expert", c.expert);
  if (c.sequence > 1) o.mesh.emplace_back("sequence", c.sequence);
  TPUSIM_RETURN_IF_ERROR(model::SetRemat(c.remat, o));
  o.microbatches = c.microbatches;
  TPUSIM_ASSIGN_OR_RETURN(std::string text, model::EmitTrainStep(r.model, o));
  TPUSIM_ASSIGN_OR_RETURN(StepTiming t, TimeStep(text, r.model.name + ".step.mlir", patterns));
  const hw::ChipSpec& chip = slice.chip;
  c.hbm_capacity_bytes = chip.HbmBytesPerDevice();
  c.devices_per_chip = chip.DevicesPerChip();
  c.rejected = t.rejected;
  c.hbm_peak_bytes = t.hbm_peak_bytes;
  if (!c.fits()) return Status::Ok();
  c.step_seconds = t.seconds;
  c.exposed_communication_seconds = t.exposed_communication_seconds;
  const int64_t seq = r.seq > 0 ? r.seq : r.model.max_seq;
  const double tokens = static_cast<double>(r.global_batch * seq);
  const double chips = static_cast<double>(slice.total_chips());
  c.mfu = model::TrainingFlopsPerToken(r.model, seq) * tokens /
          (c.step_seconds * chips * chip.PeakBf16FlopsPerS());
  c.tokens_per_s_per_chip = tokens / c.step_seconds / chips;
  if (const double usd = r.pricing.PerChipHour(chip.name); usd > 0) {
    c.usd_per_million_tokens = usd / 3600 / c.tokens_per_s_per_chip * 1e6;
  }
  return Status::Ok();
}

// The microbatch counts worth trying on mesh `c`, fewest first: those
// that split its sequences per data x fsdp shard evenly.
std::vector<int64_t> MicrobatchCounts(const PlanRequest& r, const Candidate& c) {
  if (r.microbatches > 0) return {r.microbatches};
  const int64_t per_shard = r.global_batch / (c.data * c.fsdp * c.expert);
  std::vector<int64_t> out;
  for (int64_t m = 1; m <= per_shard; ++m) {
    if (per_shard % m == 0) out.push_back(m);
  }
  return out;
}

// The policy that keeps what `policy` keeps but in host memory, MaxText's
// way: the layer inputs for full remat, the matmuls' outputs for selective.
// Empty where there is none.
std::string Offloaded(const std::string& policy) {
  if (policy == "full") return "custom:decoder_layer_input=offload";
  if (policy == "selective") return "minimal_offloaded";
  return "";
}

// Where `policy` needed more microbatches than the policy before it (it
// did not fit at counts[from]), its offloaded form at that count: appended
// if it fits there.
Status TryOffloaded(const PlanRequest& r, const Patterns& slice, const Candidate& mesh,
                    const std::string& policy, const std::vector<int64_t>& counts, size_t from,
                    size_t fit, std::vector<Candidate>& out) {
  const std::string offloaded = Offloaded(policy);
  if (offloaded.empty() || fit == from) return Status::Ok();
  Candidate c = mesh;
  c.remat = offloaded;
  c.microbatches = counts[from];
  TPUSIM_RETURN_IF_ERROR(Evaluate(r, slice, c));
  if (c.fits()) out.push_back(std::move(c));
  return Status::Ok();
}

// Mesh `mesh` under each policy of `policies` (least memory first), each
// with the fewest microbatches that fit: a policy that keeps more needs at
// least the count the one before it needed, and none fits where that one
// did not. Appends one candidate per policy tried, and the offloaded forms
// that fit with fewer microbatches than their policies (TryOffloaded).
Status SearchMesh(const PlanRequest& r, const Patterns& slice, const Candidate& mesh,
                  const std::vector<std::string>& policies, std::vector<Candidate>& out) {
  const std::vector<int64_t> counts = MicrobatchCounts(r, mesh);
  size_t from = 0;
  for (const std::string& policy : policies) {
    if (from == counts.size()) break;
    Candidate c = mesh;
    c.remat = policy;
    size_t fit = from;
    for (; fit < counts.size(); ++fit) {
      c.microbatches = counts[fit];
      TPUSIM_RETURN_IF_ERROR(Evaluate(r, slice, c));
      if (c.fits()) break;
    }
    out.push_back(std::move(c));
    if (r.remat.empty()) {
      TPUSIM_RETURN_IF_ERROR(TryOffloaded(r, slice, mesh, policy, counts, from, fit, out));
    }
    from = fit;
  }
  return Status::Ok();
}

std::string GiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

// The chip generations of `candidates`' slices, each once, in order.
std::vector<std::string> Generations(const std::vector<Candidate>& candidates) {
  std::vector<std::string> out;
  for (const Candidate& c : candidates) {
    if (std::find(out.begin(), out.end(), c.generation) == out.end()) out.push_back(c.generation);
  }
  return out;
}

}  // namespace

std::string Candidate::Mesh() const {
  return "data=" + std::to_string(data) + ",fsdp=" + std::to_string(fsdp) +
         (sequence > 1 ? ",sequence=" + std::to_string(sequence) : "") +
         (expert > 1 ? ",expert=" + std::to_string(expert) : "") +
         ",tensor=" + std::to_string(tensor);
}

std::string Candidate::Options() const {
  return "--mesh " + Mesh() + " --remat " + remat + " --microbatches " +
         std::to_string(microbatches);
}

StatusOr<std::vector<Candidate>> Plan(const PlanRequest& r, const Progress& progress) {
  if (r.global_batch <= 0) return InvalidArgument("--global-batch must be > 0");
  if (r.microbatches < 0) return InvalidArgument("--microbatches must be > 0");
  TPUSIM_RETURN_IF_ERROR(r.pricing.CheckRegion());
  std::vector<std::string> policies = {"full", "selective", "none"};
  if (!r.remat.empty()) {
    model::TrainStepOptions o;
    TPUSIM_RETURN_IF_ERROR(model::SetRemat(r.remat, o));
    policies = {r.remat};
  }
  std::vector<std::pair<Patterns, std::vector<Candidate>>> work;
  size_t total = 0;
  for (const std::string& name : r.slices) {
    TPUSIM_ASSIGN_OR_RETURN(pod::Slice slice, pod::FindSlice(name));
    auto patterns = std::make_shared<pod::CollectivePatterns>(slice);
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Candidate> meshes, Meshes(r, slice));
    total += meshes.size();
    work.emplace_back(std::move(patterns), std::move(meshes));
  }
  if (total == 0) {
    return InvalidArgument("a global batch of " + std::to_string(r.global_batch) + " sequences" +
                           (r.microbatches > 1
                                ? " in " + std::to_string(r.microbatches) + " microbatches"
                                : std::string()) +
                           " splits over the data and fsdp axes of no mesh of " +
                           (r.slices.size() == 1 ? r.slices[0] : "these slices") +
                           ": give a multiple of the devices (or of devices / tensor)");
  }
  std::vector<Candidate> out;
  int done = 0;
  for (auto& [slice, meshes] : work) {
    for (const Candidate& mesh : meshes) {
      TPUSIM_RETURN_IF_ERROR(
          SearchMesh(r, slice, mesh, policies, out).WithContext(mesh.slice + " " + mesh.Mesh()));
      if (progress) progress(mesh, ++done, static_cast<int>(total));
    }
  }
  // Unpriced candidates rank after priced ones by cost.
  auto cost = [](const Candidate& c) {
    return c.usd_per_million_tokens > 0 ? c.usd_per_million_tokens : HUGE_VAL;
  };
  const bool by_cost = r.objective == PlanRequest::Objective::kCost;
  std::stable_sort(out.begin(), out.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.fits() != b.fits()) return a.fits();
    if (by_cost && cost(a) != cost(b)) return cost(a) < cost(b);
    return a.step_seconds < b.step_seconds;
  });
  return out;
}

namespace {

// The candidates that did not fit: every one with r.verbose, else their
// count and the closest miss (the least HBM over capacity).
std::string RejectedLines(const PlanRequest& r, const std::vector<Candidate>& candidates) {
  std::string out;
  const Candidate* closest = nullptr;
  int rejected = 0;
  auto over = [](const Candidate& c) {
    return static_cast<double>(c.hbm_peak_bytes) / static_cast<double>(c.hbm_capacity_bytes);
  };
  for (const Candidate& c : candidates) {
    if (c.fits()) continue;
    ++rejected;
    if (r.verbose) out += "  rejected " + c.slice + " " + c.Options() + ": " + c.rejected + "\n";
    if (closest == nullptr || over(c) < over(*closest)) closest = &c;
  }
  if (r.verbose || closest == nullptr) return out;
  if (rejected > 1) {
    out += "  rejected " + std::to_string(rejected) +
           " candidates that do not fit HBM (--verbose or --json lists them); the closest:\n";
  }
  return out + "  rejected " + closest->slice + " " + closest->Options() + ": " +
         closest->rejected + "\n";
}

}  // namespace

std::string PlanTable(const PlanRequest& r, const std::vector<Candidate>& candidates) {
  const int64_t seq = r.seq > 0 ? r.seq : r.model.max_seq;
  std::string out = "plan: " + r.model.name + ", global batch " + std::to_string(r.global_batch) +
                    " x " + std::to_string(seq) + " tokens, " + r.dtype + " activations, " +
                    r.param_dtype + " weights" + (r.fp8 ? ", fp8 matmuls" : "") +
                    (r.int8 ? ", int8 matmuls" : "") + "; " +
                    r.pricing.Title() + "\n";
  char line[512];
  int remat_width = 9;  // a custom policy's name may be longer
  for (const Candidate& c : candidates) {
    remat_width = std::max(remat_width, static_cast<int>(std::min<size_t>(c.remat.size(), 120)));
  }
  std::snprintf(line, sizeof line, "  %-12s %-40s %-*s %3s %10s %7s %14s %18s %10s %10s\n", "slice",
                "mesh", remat_width, "remat", "mb", "step", "MFU", "tokens/s/chip",
                "HBM/device (GiB)", "exposed", "$/1M tok");
  out += line;
  for (const Candidate& c : candidates) {
    if (!c.fits()) continue;
    char usd[32] = "-";
    if (c.usd_per_million_tokens > 0) {
      std::snprintf(usd, sizeof usd, "%.2f", c.usd_per_million_tokens);
    }
    std::snprintf(line, sizeof line,
                  "  %-12s %-40s %-*s %3lld %9.3fs %6.1f%% %14.0f %18s %9.3fs %10s\n",
                  c.slice.c_str(), c.Mesh().c_str(), remat_width, c.remat.c_str(),
                  static_cast<long long>(c.microbatches), c.step_seconds, 100 * c.mfu,
                  c.tokens_per_s_per_chip,
                  (GiB(c.hbm_peak_bytes) + " of " + GiB(c.hbm_capacity_bytes)).c_str(),
                  c.exposed_communication_seconds, usd);
    out += line;
  }
  std::set<std::string> split_chips;
  for (const Candidate& c : candidates) {
    if (c.devices_per_chip > 1) split_chips.insert(c.generation);
  }
  for (const std::string& g : split_chips) {
    out += "  " + g + ": each TensorCore is a device with its share of the chip's HBM\n";
  }
  out += RejectedLines(r, candidates);
  if (!candidates.empty() && candidates[0].fits()) {
    const Candidate& best = candidates[0];
    out += std::string(r.objective == PlanRequest::Objective::kCost ? "cheapest: " : "best: ") +
           best.slice + " with " + best.Options() + "\n";
  } else {
    out += "no mesh fits: every candidate runs out of HBM\n";
  }
  for (const std::string& g : Generations(candidates))
    out += "price " + r.pricing.Describe(g) + "\n";
  return out;
}

Status NoneFits(const PlanRequest& r, const std::vector<Candidate>& candidates) {
  for (const Candidate& c : candidates) {
    if (c.fits()) return Status::Ok();
  }
  std::string slices;
  for (const std::string& s : r.slices) slices += (slices.empty() ? "" : ", ") + s;
  return ResourceExhausted(r.model.name + " at batch " + std::to_string(r.global_batch) +
                           " fits no mesh of " + slices +
                           " in HBM (the table lists each candidate's memory)");
}

namespace {

// `tpusim plan --json`'s document (docs/planner.md).
nlohmann::json PlanDoc(const PlanRequest& r, const std::vector<Candidate>& candidates) {
  nlohmann::json j;
  j["model"] = r.model.name;
  j["global_batch"] = r.global_batch;
  j["seq"] = r.seq > 0 ? r.seq : r.model.max_seq;
  j["dtype"] = r.dtype;
  j["param_dtype"] = r.param_dtype;
  j["fp8"] = r.fp8;
  j["int8"] = r.int8;
  j["pricing"] = r.pricing.Kind();
  if (!r.pricing.region.empty()) j["region"] = r.pricing.region;
  nlohmann::json& prices = j["prices"] = nlohmann::json::array();
  for (const std::string& g : Generations(candidates)) {
    prices.push_back({{"generation", g},
                      {"usd_per_chip_hour", r.pricing.PerChipHour(g)},
                      {"note", r.pricing.Describe(g)}});
  }
  nlohmann::json& list = j["candidates"] = nlohmann::json::array();
  for (const Candidate& c : candidates) {
    nlohmann::json e = {{"slice", c.slice},
                        {"chips", c.chips},
                        {"data", c.data},
                        {"fsdp", c.fsdp},
                        {"sequence", c.sequence},
                        {"expert", c.expert},
                        {"tensor", c.tensor},
                        {"remat", c.remat},
                        {"microbatches", c.microbatches},
                        {"fits", c.fits()},
                        {"hbm_capacity_bytes", c.hbm_capacity_bytes},
                        {"devices_per_chip", c.devices_per_chip}};
    if (c.hbm_peak_bytes > 0) e["hbm_peak_bytes"] = c.hbm_peak_bytes;
    if (c.fits()) {
      e["step_seconds"] = c.step_seconds;
      e["mfu"] = c.mfu;
      e["tokens_per_s_per_chip"] = c.tokens_per_s_per_chip;
      e["exposed_communication_seconds"] = c.exposed_communication_seconds;
      if (c.usd_per_million_tokens > 0) e["usd_per_million_tokens"] = c.usd_per_million_tokens;
    } else {
      e["rejected"] = c.rejected;
    }
    list.push_back(std::move(e));
  }
  return j;
}

}  // namespace

std::string PlanJson(const PlanRequest& r, const std::vector<Candidate>& candidates) {
  return PlanDoc(r, candidates).dump(2) + "\n";
}

std::string PlanHtml(const PlanRequest& r, const std::vector<Candidate>& candidates) {
  nlohmann::json doc = PlanDoc(r, candidates);
  for (size_t i = 0; i < candidates.size(); ++i) {
    doc["candidates"][i]["mesh"] = candidates[i].Mesh();  // as the table names it
  }
  const bool best = !candidates.empty() && candidates[0].fits();  // as PlanTable names it
  nlohmann::json data = {
      {"plan", std::move(doc)},
      {"best", best ? nlohmann::json(0) : nlohmann::json(nullptr)},
      {"objective", r.objective == PlanRequest::Objective::kCost ? "cost" : "time"}};
  return report::html::Page("tpusim plan: " + r.model.name, data, report::html::PlanPageJs());
}

}  // namespace tpusim::planner

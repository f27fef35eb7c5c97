// `tpusim plan`: which mesh trains a model fastest on a slice. Each
// candidate is the model's train step emitted with that mesh's shardings,
// partitioned by the SPMD partitioner, compiled (a program that does not fit
// HBM is rejected with its memory breakdown) and timed on the slice: the
// same path as `tpusim run --slice --timing-only`, no separate formula.
#ifndef TPUSIM_PLANNER_PLAN_H_
#define TPUSIM_PLANNER_PLAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/model/model.h"
#include "tpusim/planner/prices.h"

namespace tpusim::planner {

struct PlanRequest {
  model::ModelSpec model;
  // Accelerator types ("v5p-128"), or a generation and torus ("v4:4x4x12").
  std::vector<std::string> slices;
  int64_t global_batch = 0;         // sequences per step
  int64_t seq = 0;                  // 0: the model's max_seq
  std::string dtype = "bf16";       // activations
  std::string param_dtype = "f32";  // weights and optimizer moments
  bool fp8 = false;                 // the projections' matmuls in fp8
  bool int8 = false;                // or in int8
  int64_t max_tensor = 8;           // the largest tensor-parallel axis tried
  int64_t max_sequence = 4;         // the largest sequence (context) axis tried
  Pricing pricing;                  // the cost column's prices
  // Rank candidates by step time, or by dollars per token.
  enum class Objective { kTime, kCost } objective = Objective::kTime;
  // One mesh to try in place of the search ("data=2,fsdp=256,tensor=12";
  // axes left out are 1); empty: every mesh.
  std::string mesh;
  // The remat policy ("full", "selective", "none"); empty: each of them.
  std::string remat;
  // Microbatches per step; 0: for each mesh and policy, the fewest that fit
  // HBM.
  int64_t microbatches = 0;
  // The table lists every candidate that does not fit, not only their count
  // and the closest miss.
  bool verbose = false;
};

// One mesh on one slice, and what the simulation made of it.
struct Candidate {
  std::string slice;
  std::string generation;  // the slice's chips, as prices.h names them
  int64_t chips = 0;
  int64_t data = 1, fsdp = 1, tensor = 1;
  int64_t sequence = 1;  // context parallelism: splits the sequence
  int64_t expert = 1;    // a mixture of experts' expert axis
  std::string remat = "full";
  int64_t microbatches = 1;
  // Empty when it ran; else why not (the memory breakdown of a program that
  // does not fit, or what the step cannot be built for).
  std::string rejected;
  double step_seconds = 0;
  double mfu = 0;  // model FLOPs (TrainingFlopsPerToken) over the chips' bf16 peak
  double tokens_per_s_per_chip = 0;
  // One device's: a chip, or a TensorCore where each is a device (v2, v3,
  // 7x). The peak is what it needs, rejected or not.
  int64_t hbm_peak_bytes = 0, hbm_capacity_bytes = 0;
  int devices_per_chip = 1;
  double exposed_communication_seconds = 0;
  // Dollars per million tokens trained at the request's prices
  // (prices.h); 0 when the generation has no recorded price.
  double usd_per_million_tokens = 0;

  bool fits() const { return rejected.empty(); }
  // "data=1,fsdp=64,tensor=2" (",sequence=S" and ",expert=E" where above 1)
  std::string Mesh() const;
  std::string Options() const;  // "--mesh data=1,fsdp=64,tensor=2 --remat full --microbatches 1"
};

// Called after each mesh is searched under every policy: the mesh, and how
// many meshes are done of how many.
using Progress = std::function<void(const Candidate& mesh, int done, int total)>;

// Every mesh of every slice with every remat policy (each with the fewest
// microbatches that fit), fastest first, rejected ones last.
// kInvalidArgument when no mesh of any slice splits the batch or
// request.mesh is malformed or does not suit a slice or the pricing names
// a region its list has no price in; kNotFound for an
// unknown slice. Candidates that do not fit HBM are returned, rejected
// (NoneFits tells whether all are).
StatusOr<std::vector<Candidate>> Plan(const PlanRequest& request, const Progress& progress = {});

// OK, or kResourceExhausted naming the slices when no candidate fits HBM.
Status NoneFits(const PlanRequest& request, const std::vector<Candidate>& candidates);

// The candidates as a text table / as JSON (docs/planner.md).
std::string PlanTable(const PlanRequest& request, const std::vector<Candidate>& candidates);
std::string PlanJson(const PlanRequest& request, const std::vector<Candidate>& candidates);
// The candidates as a self-contained HTML page a browser draws offline
// (docs/report.md): each a point at its HBM per device and step time, the
// best marked, the rejected ones with their memory breakdown. Drawn from
// PlanJson's document.
std::string PlanHtml(const PlanRequest& request, const std::vector<Candidate>& candidates);

}  // namespace tpusim::planner

#endif  // TPUSIM_PLANNER_PLAN_H_

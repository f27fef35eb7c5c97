// `tpusim plan --serve`: how a model serves on a slice. Its prefill and
// decode steps (model/serve_step.h) are partitioned, compiled and timed on
// the slice at a few batch sizes and context lengths, as `run --slice
// --timing-only` would; a discrete-event simulation of continuous batching
// over those times then gives throughput and latency percentiles for a
// request rate.
#ifndef TPUSIM_PLANNER_SERVE_H_
#define TPUSIM_PLANNER_SERVE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/model/model.h"
#include "tpusim/planner/prices.h"

namespace tpusim::planner {

struct ServeRequest {
  model::ModelSpec model;
  std::string slice;        // as plan's slices
  int64_t batch = 0;        // the most sequences decoding at once
  int64_t prompt = 0;       // tokens per request's prompt
  int64_t gen = 0;          // tokens each request generates
  double rate = 0;          // requests per second (Poisson); 0: one closed batch
  int64_t requests = 1000;  // simulated requests at `rate`
  uint64_t seed = 1;
  std::string dtype = "bf16";  // weights and activations
  std::string mesh;            // "data=D,tensor=T"; empty: tensor over the heads
  Pricing pricing;             // the cost line's prices
};

// Step times from the simulator, at the batch sizes and contexts sampled;
// times in between are interpolated linearly (prefill in the batch,
// decode in the batch and the context).
struct StepTimes {
  int64_t min_batch = 1, max_batch = 1;  // the mesh's data axis, and the batch
  int64_t first_context = 0, last_context = 0;
  double prefill_min = 0, prefill_max = 0;  // a prefill of min_batch / max_batch
  // decode[b][c]: batch min/max, context first/last.
  double decode[2][2] = {{0, 0}, {0, 0}};

  double Prefill(int64_t sequences) const;
  double Decode(int64_t sequences, double context) const;
};

struct Percentiles {
  double p50 = 0, p95 = 0, p99 = 0;
};

struct ServeLoad {
  int64_t batch = 1, prompt = 0, gen = 1;
  double rate = 0;  // 0: `batch` requests at time 0
  int64_t requests = 0;
  uint64_t seed = 1;
};

struct ServeStats {
  int64_t requests = 0;
  double seconds = 0;       // first arrival to last token
  double tokens_per_s = 0;  // generated tokens over `seconds`
  Percentiles time_to_first_token, time_per_output_token, latency;
};

// Continuous batching, one event per step: arrived requests fill free slots
// and are prefilled together (their first token), then every running
// sequence decodes one token; a sequence leaves after `gen` tokens. Empty
// stats for a batch or gen below 1.
ServeStats SimulateServing(const StepTimes& times, const ServeLoad& load);

struct ServePlan {
  std::string slice, mesh;
  std::string generation;  // the slice's chips, as prices.h names them
  int64_t chips = 0;
  StepTimes times;
  int64_t kv_cache_bytes = 0;                          // the slice's, at the longest context
  // Per device (a chip, or a TensorCore on v2, v3, 7x), the largest decode step.
  int64_t hbm_peak_bytes = 0, hbm_capacity_bytes = 0;
  int devices_per_chip = 1;
  ServeStats closed;                                   // `batch` requests at once
  ServeStats loaded;                  // at `rate` (requests == 0 when no rate was given)
  // At the request's prices, of what was simulated: `loaded` when a rate
  // was given, else `closed`; 0: no price.
  double usd_per_million_tokens = 0;
};

// kInvalidArgument for bad sizes, a mesh the slice cannot hold or a
// pricing region its list has no price in,
// kNotFound for an unknown slice, kResourceExhausted when the largest
// decode step does not fit HBM (with the breakdown).
StatusOr<ServePlan> PlanServing(const ServeRequest& request);

std::string ServeTable(const ServeRequest& request, const ServePlan& plan);
std::string ServeJson(const ServeRequest& request, const ServePlan& plan);

}  // namespace tpusim::planner

#endif  // TPUSIM_PLANNER_SERVE_H_

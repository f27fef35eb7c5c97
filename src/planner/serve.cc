#include "tpusim/planner/serve.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "planner/step_timing.h"
#include "runtime/sharding_flags.h"
#include "tpusim/model/serve_step.h"
#include "tpusim/planner/prices.h"
#include "tpusim/pod/slice.h"

namespace tpusim::planner {
namespace {

double Lerp(double a, double b, double f) { return a + (b - a) * f; }

double Fraction(double x, double lo, double hi) {
  return hi > lo ? std::clamp((x - lo) / (hi - lo), 0.0, 1.0) : 0.0;
}

Percentiles Of(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  p.p50 = at(0.50);
  p.p95 = at(0.95);
  p.p99 = at(0.99);
  return p;
}

struct Running {
  double arrival, first_token;
  int64_t generated;
};

}  // namespace

double StepTimes::Prefill(int64_t sequences) const {
  return Lerp(prefill_min, prefill_max,
              Fraction(static_cast<double>(sequences), static_cast<double>(min_batch),
                       static_cast<double>(max_batch)));
}

double StepTimes::Decode(int64_t sequences, double context) const {
  const double b = Fraction(static_cast<double>(sequences), static_cast<double>(min_batch),
                            static_cast<double>(max_batch));
  const double c =
      Fraction(context, static_cast<double>(first_context), static_cast<double>(last_context));
  return Lerp(Lerp(decode[0][0], decode[0][1], c), Lerp(decode[1][0], decode[1][1], c), b);
}

ServeStats SimulateServing(const StepTimes& times, const ServeLoad& load) {
  if (load.batch < 1 || load.gen < 1) return {};  // no slot would ever free
  // Arrival times: Poisson at `rate`, or `batch` at once.
  std::vector<double> arrivals;
  if (load.rate > 0) {
    std::mt19937_64 rng(load.seed);
    std::exponential_distribution<double> gap(load.rate);
    double t = 0;
    for (int64_t i = 0; i < load.requests; ++i) arrivals.push_back(t += gap(rng));
  } else {
    arrivals.assign(static_cast<size_t>(load.batch), 0.0);
  }
  std::vector<double> ttft, tpot, latency;
  std::vector<Running> running;
  size_t next = 0;
  double t = arrivals.empty() ? 0 : arrivals.front();
  const double start = t;
  int64_t tokens = 0;
  while (next < arrivals.size() || !running.empty()) {
    if (running.empty() && arrivals[next] > t) t = arrivals[next];
    // Arrived requests take the free slots and are prefilled together.
    int64_t admitted = 0;
    while (next < arrivals.size() && arrivals[next] <= t &&
           static_cast<int64_t>(running.size()) < load.batch) {
      running.push_back({arrivals[next++], 0, 0});
      ++admitted;
    }
    if (admitted > 0) {
      t += times.Prefill(admitted);
      for (size_t i = running.size() - static_cast<size_t>(admitted); i < running.size(); ++i) {
        running[i].first_token = t;
        running[i].generated = 1;
        ttft.push_back(t - running[i].arrival);
        ++tokens;
      }
    }
    // Sequences done at their first token leave; the rest decode a token.
    double context = 0;
    std::vector<Running> still;
    for (const Running& r : running) {
      if (r.generated >= load.gen) {
        latency.push_back(t - r.arrival);
        continue;
      }
      still.push_back(r);
      context += static_cast<double>(load.prompt + r.generated);
    }
    running = std::move(still);
    if (running.empty()) continue;
    const auto n = static_cast<int64_t>(running.size());
    t += times.Decode(n, context / static_cast<double>(n));
    tokens += n;
    std::vector<Running> after;
    for (Running& r : running) {
      if (++r.generated < load.gen) {
        after.push_back(r);
        continue;
      }
      latency.push_back(t - r.arrival);
      tpot.push_back((t - r.first_token) / static_cast<double>(load.gen - 1));
    }
    running = std::move(after);
  }
  ServeStats s;
  s.requests = static_cast<int64_t>(arrivals.size());
  s.seconds = t - start;
  s.tokens_per_s = s.seconds > 0 ? static_cast<double>(tokens) / s.seconds : 0;
  s.time_to_first_token = Of(ttft);
  s.time_per_output_token = Of(tpot);
  s.latency = Of(latency);
  return s;
}

namespace {

// The default serving mesh: the largest tensor axis that divides the
// devices, the query heads and the MLP; the rest data.
std::pair<int64_t, int64_t> DefaultMesh(const model::ModelSpec& m, int64_t devices) {
  int64_t t = 1;
  for (int64_t k = 1; k <= devices; ++k) {
    if (devices % k == 0 && m.heads % k == 0 && m.d_ff % k == 0) t = k;
  }
  return {devices / t, t};
}

StatusOr<StepTiming> TimeServing(const ServeRequest& r,
                                 const std::shared_ptr<pod::CollectivePatterns>& slice,
                                 const model::TrainStepOptions& base, int64_t batch,
                                 int64_t context, bool prefill) {
  model::TrainStepOptions o = base;
  o.batch = batch;
  o.seq = r.prompt;
  TPUSIM_ASSIGN_OR_RETURN(std::string text, prefill ? model::EmitPrefillStep(r.model, o)
                                                    : model::EmitDecodeStep(r.model, o, context));
  return TimeStep(text, r.model.name + (prefill ? ".prefill.mlir" : ".decode.mlir"), slice);
}

std::string Ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  return buf;
}

std::string GiBText(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1 << 30));
  return buf;
}

}  // namespace

StatusOr<ServePlan> PlanServing(const ServeRequest& r) {
  std::string missing;
  for (const auto& [flag, value] :
       {std::pair{"--batch", r.batch}, {"--prompt", r.prompt}, {"--gen", r.gen}}) {
    if (value <= 0) missing += (missing.empty() ? "" : ", ") + std::string(flag);
  }
  if (!missing.empty()) {
    return InvalidArgument(
        "plan --serve needs --batch (the most sequences decoding at once), --prompt (tokens "
        "per prompt) and --gen (tokens each request generates), each > 0; missing: " +
        missing);
  }
  if (r.rate < 0 || (r.rate > 0 && r.requests <= 0)) {
    return InvalidArgument("--rate must be >= 0, and --requests > 0 with it");
  }
  TPUSIM_RETURN_IF_ERROR(r.pricing.CheckRegion());
  TPUSIM_ASSIGN_OR_RETURN(pod::Slice slice, pod::FindSlice(r.slice));
  const auto patterns = std::make_shared<pod::CollectivePatterns>(slice);
  const int64_t devices = slice.num_devices();
  auto [data, tensor] = DefaultMesh(r.model, devices);
  if (!r.mesh.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(auto axes, runtime::ParseMeshFlag(r.mesh));
    data = tensor = 1;
    for (const auto& [name, size] : axes) {
      if (name == "data")
        data = size;
      else if (name == "tensor")
        tensor = size;
      else
        return InvalidArgument("--mesh axis '" + name + "': serving takes data and tensor");
    }
  }
  if (data * tensor != devices || r.model.heads % tensor != 0 || r.model.d_ff % tensor != 0) {
    return InvalidArgument("mesh data=" + std::to_string(data) +
                           ",tensor=" + std::to_string(tensor) + " does not suit " + slice.name +
                           " (" + std::to_string(devices) +
                           " devices): data x tensor = devices, tensor dividing the heads and "
                           "d_ff");
  }
  if (r.batch % data != 0) {
    return InvalidArgument("a batch of " + std::to_string(r.batch) +
                           " does not split over data = " + std::to_string(data));
  }
  model::TrainStepOptions base{.dtype = r.dtype, .param_dtype = r.dtype};
  base.mesh = {{"data", data}, {"tensor", tensor}};
  ServePlan plan;
  plan.slice = slice.name;
  plan.generation = slice.chip.name;
  plan.mesh = "data=" + std::to_string(data) + ",tensor=" + std::to_string(tensor);
  plan.chips = slice.total_chips();
  plan.hbm_capacity_bytes = slice.chip.HbmBytesPerDevice();
  plan.devices_per_chip = slice.chip.DevicesPerChip();
  StepTimes& st = plan.times;
  st.min_batch = data;
  st.max_batch = r.batch;
  st.first_context = r.prompt;
  st.last_context = r.prompt + r.gen - 1;
  // The largest step first: if it does not fit, nothing else matters.
  TPUSIM_ASSIGN_OR_RETURN(StepTiming big,
                          TimeServing(r, patterns, base, r.batch, st.last_context, false));
  if (!big.rejected.empty()) {
    return ResourceExhausted("the decode step at batch " + std::to_string(r.batch) +
                             " and context " + std::to_string(st.last_context) + " on " +
                             slice.name + ": " + big.rejected);
  }
  plan.hbm_peak_bytes = big.hbm_peak_bytes;
  st.decode[1][1] = big.seconds;
  const int64_t batches[2] = {data, r.batch};
  const int64_t contexts[2] = {st.first_context, st.last_context};
  for (int b = 0; b < 2; ++b) {
    TPUSIM_ASSIGN_OR_RETURN(StepTiming p, TimeServing(r, patterns, base, batches[b], 0, true));
    if (!p.rejected.empty()) return ResourceExhausted("the prefill step: " + p.rejected);
    (b == 0 ? st.prefill_min : st.prefill_max) = p.seconds;
    for (int c = 0; c < 2; ++c) {
      if (b == 1 && c == 1) continue;
      TPUSIM_ASSIGN_OR_RETURN(StepTiming d,
                              TimeServing(r, patterns, base, batches[b], contexts[c], false));
      if (!d.rejected.empty()) return ResourceExhausted("the decode step: " + d.rejected);
      st.decode[b][c] = d.seconds;
    }
  }
  const int64_t element = r.dtype == "f32" ? 4 : r.dtype == "f64" ? 8 : 2;
  plan.kv_cache_bytes = 2 * r.model.layers * r.batch * (st.last_context + 1) * r.model.kv_heads *
                        r.model.head_dim * element;
  plan.closed = SimulateServing(st, {.batch = r.batch, .prompt = r.prompt, .gen = r.gen});
  if (r.rate > 0) {
    plan.loaded = SimulateServing(st, {.batch = r.batch,
                                       .prompt = r.prompt,
                                       .gen = r.gen,
                                       .rate = r.rate,
                                       .requests = r.requests,
                                       .seed = r.seed});
  }
  // The price of what was simulated: the requests at the rate when one was
  // given, else the one batch.
  const ServeStats& priced = r.rate > 0 ? plan.loaded : plan.closed;
  if (const double usd = r.pricing.PerChipHour(slice.chip.name);
      usd > 0 && priced.tokens_per_s > 0) {
    plan.usd_per_million_tokens =
        usd / 3600 * static_cast<double>(plan.chips) / priced.tokens_per_s * 1e6;
  }
  return plan;
}

std::string ServeTable(const ServeRequest& r, const ServePlan& p) {
  const StepTimes& t = p.times;
  std::string out = "serve: " + r.model.name + " on " + p.slice + " (mesh " + p.mesh + "), up to " +
                    std::to_string(r.batch) + " sequences, prompt " + std::to_string(r.prompt) +
                    ", " + std::to_string(r.gen) + " generated, " + r.dtype + " weights\n";
  out += "  prefill     " + Ms(t.prefill_max) + " for " + std::to_string(t.max_batch) +
         " prompts, " + Ms(t.prefill_min) + " for " + std::to_string(t.min_batch) + "\n";
  out += "  decode      " + Ms(t.decode[1][0]) + " a step of " + std::to_string(t.max_batch) +
         " at context " + std::to_string(t.first_context) + ", " + Ms(t.decode[1][1]) + " at " +
         std::to_string(t.last_context) + " (" + Ms(t.decode[0][0]) + ", " + Ms(t.decode[0][1]) +
         " for " + std::to_string(t.min_batch) + ")\n";
  out += "  memory      KV cache " +
         GiBText(static_cast<double>(p.kv_cache_bytes) / static_cast<double>(p.chips)) +
         " per chip; HBM peak " + GiBText(static_cast<double>(p.hbm_peak_bytes)) + " of " +
         GiBText(static_cast<double>(p.hbm_capacity_bytes)) +
         (p.devices_per_chip > 1 ? " per device (a TensorCore)" : " per chip") + "\n";
  auto stats = [&](const char* title, const ServeStats& s) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "  %s: %.0f tokens/s (%.0f per chip) over %.2f s\n"
                  "    time to first token  p50 %s  p95 %s  p99 %s\n"
                  "    per output token     p50 %s  p95 %s  p99 %s\n"
                  "    request latency      p50 %s  p95 %s  p99 %s\n",
                  title, s.tokens_per_s, s.tokens_per_s / static_cast<double>(p.chips), s.seconds,
                  Ms(s.time_to_first_token.p50).c_str(), Ms(s.time_to_first_token.p95).c_str(),
                  Ms(s.time_to_first_token.p99).c_str(), Ms(s.time_per_output_token.p50).c_str(),
                  Ms(s.time_per_output_token.p95).c_str(), Ms(s.time_per_output_token.p99).c_str(),
                  Ms(s.latency.p50).c_str(), Ms(s.latency.p95).c_str(), Ms(s.latency.p99).c_str());
    out += line;
  };
  stats(("one batch of " + std::to_string(r.batch) + " requests").c_str(), p.closed);
  if (p.loaded.requests > 0) {
    char title[128];
    std::snprintf(title, sizeof title, "%lld requests at %.3g/s (Poisson, seed %llu)",
                  static_cast<long long>(p.loaded.requests), r.rate,
                  static_cast<unsigned long long>(r.seed));
    stats(title, p.loaded);
  }
  if (p.usd_per_million_tokens > 0) {
    char line[200];
    char at[64];
    if (p.loaded.requests > 0) {
      std::snprintf(at, sizeof at, "at %g requests/s", r.rate);
    } else {
      std::snprintf(at, sizeof at, "in one batch of %lld", static_cast<long long>(r.batch));
    }
    std::snprintf(line, sizeof line, "  cost        $%.3f per 1M generated tokens %s (%s)\n",
                  p.usd_per_million_tokens, at, r.pricing.Title().c_str());
    out += line;
  }
  out += "  price       " + r.pricing.Describe(p.generation) + "\n";
  return out;
}

std::string ServeJson(const ServeRequest& r, const ServePlan& p) {
  auto pct = [](const Percentiles& x) {
    return nlohmann::json{{"p50", x.p50}, {"p95", x.p95}, {"p99", x.p99}};
  };
  auto stats = [&](const ServeStats& s) {
    return nlohmann::json{{"requests", s.requests},
                          {"seconds", s.seconds},
                          {"tokens_per_s", s.tokens_per_s},
                          {"time_to_first_token_s", pct(s.time_to_first_token)},
                          {"time_per_output_token_s", pct(s.time_per_output_token)},
                          {"latency_s", pct(s.latency)}};
  };
  const StepTimes& t = p.times;
  nlohmann::json j = {{"model", r.model.name},
                      {"slice", p.slice},
                      {"mesh", p.mesh},
                      {"chips", p.chips},
                      {"batch", r.batch},
                      {"prompt", r.prompt},
                      {"gen", r.gen},
                      {"prefill_s", {{"batch", t.max_batch}, {"seconds", t.prefill_max}}},
                      {"decode_s",
                       {{"batch", t.max_batch},
                        {"first_context", t.first_context},
                        {"last_context", t.last_context},
                        {"seconds", {t.decode[1][0], t.decode[1][1]}}}},
                      {"kv_cache_bytes", p.kv_cache_bytes},
                      {"hbm_peak_bytes", p.hbm_peak_bytes},
                      {"hbm_capacity_bytes", p.hbm_capacity_bytes},
                      {"devices_per_chip", p.devices_per_chip},
                      {"closed_batch", stats(p.closed)}};
  if (p.loaded.requests > 0) {
    j["rate"] = r.rate;
    j["at_rate"] = stats(p.loaded);
  }
  if (p.usd_per_million_tokens > 0) {
    j["usd_per_million_tokens"] = p.usd_per_million_tokens;
    j["priced"] = p.loaded.requests > 0 ? "at_rate" : "closed_batch";
  }
  j["pricing"] = r.pricing.Kind();
  if (!r.pricing.region.empty()) j["region"] = r.pricing.region;
  j["price"] = {{"generation", p.generation},
                {"usd_per_chip_hour", r.pricing.PerChipHour(p.generation)},
                {"note", r.pricing.Describe(p.generation)}};
  return j.dump(2) + "\n";
}

}  // namespace tpusim::planner

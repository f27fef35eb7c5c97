// stablehlo.fft: FFT, IFFT, RFFT and IRFFT over the last fft_length
// dimensions. Computed by FFTW in double precision and rounded once to the
// result type.
#include <fftw3.h>

#include <cmath>
#include <complex>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using c128 = std::complex<double>;

Status Error(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}

// C1-C5; returns the checked fft_type.
StatusOr<std::string> CheckFft(const ir::Operation& op) {
  const std::string type = GetEnumOr(op, "fft_type", "");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> len, GetInts(op, "fft_length"));
  const ir::Type& in = op.operand(0).type();
  const ir::Type& out = op.result(0).type();
  const auto l = static_cast<int64_t>(len.size());
  if (l < 1 || l > 3 || l > in.rank()) {
    return Error(op, "needs 1 to 3 fft_length entries, at most the operand's rank");
  }
  const bool real_in = type == "RFFT", real_out = type == "IRFFT";
  if (type != "FFT" && type != "IFFT" && !real_in && !real_out) {
    return Error(op, "fft_type must be FFT, IFFT, RFFT or IRFFT, got '" + type + "'");
  }
  const ir::ElementType ie = in.element(), oe = out.element();
  const bool types_ok =
      real_in    ? ir::IsFloat(ie) && ir::IsComplex(oe) && ir::ComplexPartType(oe) == ie
      : real_out ? ir::IsComplex(ie) && ir::IsFloat(oe) && ir::ComplexPartType(ie) == oe
                 : ir::IsComplex(ie) && ie == oe;
  if (!types_ok) return Error(op, "has element types that do not fit fft_type " + type);
  // The full-length side is the real one for RFFT/IRFFT, both for FFT/IFFT.
  ir::Shape full = real_out ? out.shape() : in.shape();
  for (int64_t i = 0; i < l; ++i) {
    if (full[full.size() - l + i] != len[i]) {
      return Error(op, "fft_length " + FormatInts(len) + " must match the trailing dimensions");
    }
  }
  ir::Shape expected = in.shape();
  if (real_in) expected.back() = len.back() == 0 ? 0 : len.back() / 2 + 1;
  if (real_out) expected.back() = len.back();
  if (real_out && in.shape().back() != (len.back() == 0 ? 0 : len.back() / 2 + 1)) {
    return Error(op, "IRFFT operand's last dimension must be fft_length / 2 + 1");
  }
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, ir::Type::Tensor(oe, expected)));
  return type;
}

Status VerifyFft(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  return CheckFft(op).status();
}

std::vector<c128> Load(const Tensor& t) {
  const ir::ElementType e = t.element();
  const int w = ir::StorageBytes(e);
  std::vector<c128> v(t.num_elements());
  for (int64_t i = 0, n = t.num_elements(); i < n; ++i) {
    const uint8_t* p = t.raw() + i * w;
    if (ir::IsComplex(e)) {
      const ir::ElementType part = ir::ComplexPartType(e);
      v[i] = c128(numerics::LoadAsDouble(part, p), numerics::LoadAsDouble(part, p + w / 2));
    } else {
      v[i] = numerics::LoadAsDouble(e, p);
    }
  }
  return v;
}

void Store(const std::vector<c128>& v, Tensor& t) {
  const ir::ElementType e = t.element();
  const int w = ir::StorageBytes(e);
  for (int64_t i = 0, n = t.num_elements(); i < n; ++i) {
    uint8_t* p = t.mutable_raw() + i * w;
    if (ir::IsComplex(e)) {
      const ir::ElementType part = ir::ComplexPartType(e);
      numerics::StoreDouble(part, v[i].real(), p);
      numerics::StoreDouble(part, v[i].imag(), p + w / 2);
    } else {
      numerics::StoreDouble(e, v[i].real(), p);
    }
  }
}

// FFTW's planner is not thread-safe (fftw_execute is), and ops may run on
// several interpreter threads at once.
std::mutex& PlannerMutex() {
  static std::mutex m;
  return m;
}

// One FFTW plan, destroyed under the planner lock.
struct Plan {
  fftw_plan p = nullptr;
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(PlannerMutex());
    fftw_destroy_plan(p);
  }
};

fftw_complex* AsFftw(std::vector<c128>& v) { return reinterpret_cast<fftw_complex*>(v.data()); }

// Runs `type` over the trailing len.size() dimensions of `in`. They are the
// innermost ones, so each transform is one contiguous block and the batch a
// plain stride. `in` holds complex values (real ones in .real() for RFFT);
// the result holds out_elements values (real ones in .real() for IRFFT),
// inverse transforms without their 1/N.
StatusOr<std::vector<c128>> RunFftw(const ir::Operation& op, const std::string& type,
                                    const std::vector<int64_t>& len, std::vector<c128> in,
                                    int64_t out_elements) {
  std::vector<c128> out(out_elements);
  int64_t n_total = 1;
  for (int64_t l : len) n_total *= l;
  if (n_total == 0 || in.empty() || out.empty()) return out;
  const bool r2c = type == "RFFT", c2r = type == "IRFFT";
  // One transform's elements on the complex side of RFFT and IRFFT.
  const int64_t half_total = n_total / len.back() * (len.back() / 2 + 1);
  const int64_t in_block = c2r ? half_total : n_total, out_block = r2c ? half_total : n_total;
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (static_cast<int64_t>(in.size()) > kMax || out_elements > kMax) {
    return Unimplemented("'" + op.name_str() + "' over 2^31 or more elements");
  }
  const std::vector<int> n(len.begin(), len.end());
  const int rank = static_cast<int>(n.size());
  const int howmany = static_cast<int>(static_cast<int64_t>(in.size()) / in_block);
  const int idist = static_cast<int>(in_block), odist = static_cast<int>(out_block);
  // The real side of RFFT and IRFFT, packed densely.
  std::vector<double> real(r2c ? in.size() : c2r ? out.size() : 0);
  if (r2c) {
    for (size_t i = 0; i < in.size(); ++i) real[i] = in[i].real();
  }
  Plan plan;
  {
    std::lock_guard<std::mutex> lock(PlannerMutex());
    if (r2c) {
      plan.p = fftw_plan_many_dft_r2c(rank, n.data(), howmany, real.data(), nullptr, 1, idist,
                                      AsFftw(out), nullptr, 1, odist, FFTW_ESTIMATE);
    } else if (c2r) {  // destroys `in`, a copy
      plan.p = fftw_plan_many_dft_c2r(rank, n.data(), howmany, AsFftw(in), nullptr, 1, idist,
                                      real.data(), nullptr, 1, odist, FFTW_ESTIMATE);
    } else {
      plan.p = fftw_plan_many_dft(rank, n.data(), howmany, AsFftw(in), nullptr, 1, idist,
                                  AsFftw(out), nullptr, 1, odist,
                                  type == "FFT" ? FFTW_FORWARD : FFTW_BACKWARD, FFTW_ESTIMATE);
    }
  }
  if (plan.p == nullptr) return Internal("FFTW could not plan '" + op.name_str() + "'");
  fftw_execute(plan.p);
  if (c2r) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = real[i];
  }
  return out;
}

StatusOr<std::vector<Tensor>> EvalFft(EvalContext&, const ir::Operation& op,
                                      std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(std::string type, CheckFft(op));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> len, GetInts(op, "fft_length"));
  const Tensor& in = operands[0];
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<c128> data,
                          RunFftw(op, type, len, Load(in), out.num_elements()));
  if (type == "IFFT" || type == "IRFFT") {
    double n = 1;
    for (int64_t l : len) n *= static_cast<double>(l);
    for (c128& v : data) v /= n;
  }
  Store(data, out);
  return std::vector<Tensor>{std::move(out)};
}

// The textbook 5 N log2 N real FLOPs per N-point complex transform, all
// priced as vector multiplies; a real transform (RFFT, IRFFT) is half that.
Work FftWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  auto len = GetInts(op, "fft_length");
  const std::string type = GetEnumOr(op, "fft_type", "");
  if (!len.ok() || op.num_results() != 1) return w;
  int64_t n = 1;
  for (int64_t l : *len) n *= l;
  if (n <= 1) return w;
  // The side that holds all n points of each transform.
  const ir::Type& full = type == "IRFFT" ? op.result(0).type() : op.operand(0).type();
  const int64_t transforms = full.num_elements() / n;
  const bool real = type == "RFFT" || type == "IRFFT";
  const auto flops = static_cast<int64_t>(5.0 * static_cast<double>(n) *
                                          std::log2(static_cast<double>(n)) / (real ? 2 : 1));
  w.flops = transforms * flops;
  w.AddVector(VectorClass::kMultiply, w.flops);
  return w;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.fft", .verify = VerifyFft, .eval = EvalFft,
                    .work = FftWork});

}  // namespace
}  // namespace tpusim::ops

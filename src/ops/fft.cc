// stablehlo.fft: FFT, IFFT, RFFT and IRFFT over the last fft_length
// dimensions. Computed in complex<f64> (radix-2 for power-of-two lengths, a
// direct DFT with exact twiddle indices otherwise) and rounded once to the
// result type.
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "ops/op_util.h"
#include "ops/work_util.h"
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

// In-place DFT of x (sign -1: forward, +1: inverse without the 1/n).
void Dft(std::vector<c128>& x, int sign) {
  const auto n = static_cast<int64_t>(x.size());
  if (n <= 1) return;
  const double step = sign * 2 * std::numbers::pi / static_cast<double>(n);
  if ((n & (n - 1)) == 0) {
    for (int64_t i = 1, j = 0; i < n; ++i) {  // bit reversal
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      for (int64_t k = 0; k < len / 2; ++k) {
        const c128 w = std::polar(1.0, step * static_cast<double>(k * (n / len)));
        for (int64_t i = k; i < n; i += len) {
          const c128 u = x[i], v = x[i + len / 2] * w;
          x[i] = u + v;
          x[i + len / 2] = u - v;
        }
      }
    }
    return;
  }
  std::vector<c128> twiddle(n), out(n);
  for (int64_t k = 0; k < n; ++k) twiddle[k] = std::polar(1.0, step * static_cast<double>(k));
  for (int64_t k = 0; k < n; ++k) {
    c128 s = 0;
    for (int64_t j = 0; j < n; ++j) s += x[j] * twiddle[(j * k) % n];
    out[k] = s;
  }
  x = out;
}

// Transforms every line along dimension `dim` of a row-major array.
void TransformAxis(std::vector<c128>& data, const ir::Shape& shape, size_t dim, bool inverse) {
  const int64_t n = shape[dim];
  if (n == 0 || data.empty()) return;
  int64_t inner = 1;
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t outer = static_cast<int64_t>(data.size()) / (n * inner);
  std::vector<c128> line(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      c128* base = data.data() + o * n * inner + i;
      for (int64_t k = 0; k < n; ++k) line[k] = base[k * inner];
      Dft(line, inverse ? 1 : -1);
      const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
      for (int64_t k = 0; k < n; ++k) base[k * inner] = line[k] * scale;
    }
  }
}

std::vector<c128> Load(const Tensor& t) {
  const ir::ElementType e = t.element();
  const int w = ir::StorageBytes(e);
  std::vector<c128> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
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
  for (int64_t i = 0; i < t.num_elements(); ++i) {
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

// An IRFFT operand's last dimension (n/2 + 1 values) extended to n by
// Hermitian symmetry, X[n - k] = conj(X[k]).
std::vector<c128> HermitianExtend(const std::vector<c128>& half, int64_t half_len, int64_t n) {
  const int64_t lines = half_len == 0 ? 0 : static_cast<int64_t>(half.size()) / half_len;
  std::vector<c128> full(lines * n);
  for (int64_t l = 0; l < lines; ++l) {
    for (int64_t k = 0; k < n; ++k) {
      full[l * n + k] = k < half_len ? half[l * half_len + k] : std::conj(half[l * half_len + n - k]);
    }
  }
  return full;
}

StatusOr<std::vector<Tensor>> EvalFft(EvalContext&, const ir::Operation& op,
                                      std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(std::string type, CheckFft(op));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> len, GetInts(op, "fft_length"));
  const Tensor& in = operands[0];
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(op.result(0).type()));
  std::vector<c128> data = Load(in);
  ir::Shape shape = in.shape();
  const size_t rank = shape.size(), l = len.size();
  if (type == "FFT" || type == "RFFT") {
    for (size_t d = rank - l; d < rank; ++d) TransformAxis(data, shape, d, false);
    if (type == "RFFT") {  // keep the first n/2 + 1 of the last dimension
      const int64_t n = shape.back(), keep = out.shape().back();
      std::vector<c128> kept;
      for (int64_t i = 0; n > 0 && i < static_cast<int64_t>(data.size()); i += n) {
        kept.insert(kept.end(), data.begin() + i, data.begin() + i + keep);
      }
      data = std::move(kept);
    }
  } else {
    // Inverse transforms on the outer fft dimensions first (they commute);
    // for IRFFT the last one runs after the Hermitian extension.
    const bool irfft = type == "IRFFT";
    for (size_t d = rank - l; d < rank - (irfft ? 1 : 0); ++d) TransformAxis(data, shape, d, true);
    if (irfft) {
      data = HermitianExtend(data, shape.back(), len.back());
      shape.back() = len.back();
      TransformAxis(data, shape, rank - 1, true);
    }
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

#include "ops/kernels/matmul.h"

#include <algorithm>
#include <atomic>
#include <complex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/kernels/dnnl_kernels.h"
#include "ops/kernels/elementwise_kernel.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/parallel.h"
#include "tpusim/numerics/float_arrays.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;
using numerics::MatmulPrecision;
using ew::Bf16Codec;
using ew::StoreFromDouble;
using ew::VisitCodec;

// ------------------------------------------------------------ conversions

template <class T> struct IsStdComplex : std::false_type {};
template <class T> struct IsStdComplex<std::complex<T>> : std::true_type {};

// A value of one class converted to the accumulator type of its class.
template <class Acc, class V>
Acc ToAcc(V v) {
  if constexpr (IsStdComplex<Acc>::value) {
    if constexpr (IsStdComplex<V>::value) {
      return Acc(v.real(), v.imag());
    } else {
      return Acc(static_cast<typename Acc::value_type>(v), 0);
    }
  } else if constexpr (IsStdComplex<V>::value) {
    return static_cast<Acc>(v.real());
  } else if constexpr (std::is_same_v<Acc, uint64_t> && std::is_signed_v<V> &&
                       std::is_integral_v<V>) {
    return static_cast<uint64_t>(static_cast<int64_t>(v));  // sign-extend
  } else {
    return static_cast<Acc>(v);
  }
}

template <class T>
auto RealPart(T v) {
  if constexpr (IsStdComplex<T>::value) {
    return v.real();
  } else {
    return v;
  }
}

// The storage form of accumulator value v in the codec's type. `tpu_bf16`
// rounds f32 to bf16 the TPU's way.
template <class Codec, class Acc>
typename Codec::Storage FromAcc(const Codec& codec, Acc v, bool tpu_bf16) {
  using Compute = typename Codec::Compute;
  if constexpr (std::is_same_v<Codec, Bf16Codec> && std::is_same_v<Acc, float>) {
    return tpu_bf16 ? numerics::TpuFloatToBf16(v) : codec.Store(v);
  } else if constexpr (IsStdComplex<Compute>::value) {
    using Part = typename Compute::value_type;
    if constexpr (IsStdComplex<Acc>::value) {
      return codec.Store(Compute(static_cast<Part>(v.real()), static_cast<Part>(v.imag())));
    } else {
      return codec.Store(Compute(static_cast<Part>(v), 0));
    }
  } else if constexpr (std::is_same_v<Compute, bool>) {
    return codec.Store(RealPart(v) != 0);
  } else if constexpr (std::is_integral_v<Compute>) {
    return codec.Store(static_cast<Compute>(RealPart(v)));  // wraps; integer Acc only
  } else if constexpr (std::is_same_v<decltype(RealPart(v)), double>) {
    return StoreFromDouble(codec, RealPart(v));  // one rounding to narrow types
  } else {
    return codec.Store(static_cast<Compute>(RealPart(v)));
  }
}

// Copies a [batch, rows, cols] view into a dense array of Acc.
template <class Acc>
void PackAs(const MatrixView& v, int64_t batch, int64_t rows, int64_t cols, Acc* out) {
  const int64_t shape[3] = {batch, rows, cols};
  const int64_t dense[3] = {rows * cols, cols, 1};
  VisitCodec(v.tensor->element(), [&](const auto& codec) {
    using Storage = typename std::decay_t<decltype(codec)>::Storage;
    const Storage* base = v.tensor->template data<Storage>() + v.offset;
    ForEachStrided(shape, v.strides, dense, [&](int64_t s, int64_t d) {
      out[d] = ToAcc<Acc>(codec.Load(base[s]));
    });
  });
}

// Writes a dense Acc array into `out`'s storage with `out`'s element type,
// on the host's cores.
template <class Acc>
void StoreAll(const Acc* acc, Tensor& out, bool tpu_bf16) {
  const int64_t n = out.num_elements();
  if constexpr (std::is_same_v<Acc, float>) {
    if (tpu_bf16 && out.element() == ElementType::kBF16) {  // FromAcc's rounding, vectorised
      uint16_t* dst = out.mutable_data<uint16_t>();
      ParallelFor(
          n, kParallelElements,
          [&](int64_t begin, int64_t end) {
            numerics::TpuFloatToBf16Array(acc + begin, dst + begin, end - begin);
          },
          /*align=*/1024);
      return;
    }
  }
  VisitCodec(out.element(), [&](const auto& codec) {
    using Storage = typename std::decay_t<decltype(codec)>::Storage;
    Storage* dst = out.template mutable_data<Storage>();
    ParallelFor(n, kParallelElements, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] = FromAcc(codec, acc[i], tpu_bf16);
    });
  });
}

template <class Acc> constexpr ElementType kAccType = ElementType::kF32;
template <> constexpr ElementType kAccType<double> = ElementType::kF64;
template <> constexpr ElementType kAccType<uint64_t> = ElementType::kUI64;
template <> constexpr ElementType kAccType<std::complex<float>> = ElementType::kC64;
template <> constexpr ElementType kAccType<std::complex<double>> = ElementType::kC128;

// Scratch arrays are tensors so that they count against the memory budget.
StatusOr<Tensor> Scratch(ElementType t, ir::Shape shape) {
  TPUSIM_RETURN_IF_ERROR(CheckedByteSize(shape, ir::StorageBytes(t)).status());
  return Tensor::Allocate(ir::Type::Tensor(t, std::move(shape)));
}

// ------------------------------------------------------------ portable loops

// c[b] (+)= a[b] * b[b] on dense arrays; i-k-j order so the inner loop
// streams rows and vectorizes.
template <class Acc>
void Gemm(int64_t batch, int64_t m, int64_t k, int64_t n, const Acc* a, const Acc* b, Acc* c) {
  for (int64_t bb = 0; bb < batch; ++bb) {
    for (int64_t i = 0; i < m; ++i) {
      Acc* __restrict crow = c + (bb * m + i) * n;
      for (int64_t kk = 0; kk < k; ++kk) {
        const Acc aik = a[(bb * m + i) * k + kk];
        const Acc* __restrict brow = b + (bb * k + kk) * n;
        for (int64_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
      }
    }
  }
}

template <class Acc>
Status GenericMatmul(const MatmulProblem& p, Tensor& out, bool tpu_bf16) {
  const ElementType t = kAccType<Acc>;
  TPUSIM_ASSIGN_OR_RETURN(Tensor a, Scratch(t, {p.batch, p.m, p.k}));
  TPUSIM_ASSIGN_OR_RETURN(Tensor b, Scratch(t, {p.batch, p.k, p.n}));
  TPUSIM_ASSIGN_OR_RETURN(Tensor c, Scratch(t, {p.batch, p.m, p.n}));
  PackAs(p.lhs, p.batch, p.m, p.k, a.mutable_data<Acc>());
  PackAs(p.rhs, p.batch, p.k, p.n, b.mutable_data<Acc>());
  Gemm(p.batch, p.m, p.k, p.n, a.data<Acc>(), b.data<Acc>(), c.mutable_data<Acc>());
  StoreAll(c.data<Acc>(), out, tpu_bf16);
  return Status::Ok();
}

enum class Class { kBool, kInt, kFloat, kComplex };

Class ClassOf(ElementType t) {
  if (ir::IsBool(t)) return Class::kBool;
  if (ir::IsInteger(t)) return Class::kInt;
  if (ir::IsComplex(t)) return Class::kComplex;
  return Class::kFloat;
}

Status GenericMatmulAnyType(const MatmulProblem& p, Tensor& out, bool tpu_bf16) {
  const ElementType types[3] = {p.lhs.tensor->element(), p.rhs.tensor->element(), out.element()};
  auto any = [&](ElementType e) { return std::find(types, types + 3, e) != types + 3; };
  switch (ClassOf(types[0])) {
    case Class::kBool:
    case Class::kInt: return GenericMatmul<uint64_t>(p, out, tpu_bf16);
    case Class::kComplex:
      return any(ElementType::kC128) ? GenericMatmul<std::complex<double>>(p, out, tpu_bf16)
                                     : GenericMatmul<std::complex<float>>(p, out, tpu_bf16);
    case Class::kFloat:
      return any(ElementType::kF64) ? GenericMatmul<double>(p, out, tpu_bf16)
                                    : GenericMatmul<float>(p, out, tpu_bf16);
  }
  return Internal("unreachable element class");
}

// ------------------------------------------------------------ oneDNN paths

// Strides of size-1 dimensions are arbitrary (a missing batch dimension has
// stride 0); give them the values of a dense layout so that oneDNN
// recognizes plain and transposed matrices.
std::array<int64_t, 3> CanonicalStrides(std::array<int64_t, 3> s, int64_t batch, int64_t rows,
                                        int64_t cols) {
  if (cols == 1) s[2] = (s[1] == 1 && rows > 1) ? rows : 1;
  if (rows == 1) s[1] = s[2] == 1 ? cols : 1;
  if (batch == 1) s[0] = std::max(rows * s[1], cols * s[2]);
  return s;
}

// A dense copy of a view in its own element type.
StatusOr<Tensor> PackDense(const MatrixView& v, int64_t batch, int64_t rows, int64_t cols) {
  ElementType t = v.tensor->element();
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Scratch(t, {batch, rows, cols}));
  const int64_t shape[3] = {batch, rows, cols};
  const int64_t dense[3] = {rows * cols, cols, 1};
  const int w = ir::StorageBytes(t);
  StridedCopier(w, shape, v.strides, dense).Run(v.tensor->raw() + v.offset * w,
                                                 out.mutable_raw());
  return out;
}

// ------------------------------------------------------------ subnormals

// Subnormal f32 and bf16 matmul operands count as (signed) zero, as on the
// TPU and in XLA's CPU backend. Besides matching them, this keeps the f32
// kernels at speed: many CPUs run subnormal arithmetic in microcode, and a
// 512x1024x8192 product over a subnormal-bearing gradient took 5.1 s instead
// of 31 ms. A view whose tensor holds a subnormal is packed densely, flushed;
// `keep` owns the copy.
StatusOr<MatrixView> WithoutSubnormals(const MatrixView& v, int64_t batch, int64_t rows,
                                       int64_t cols, std::optional<Tensor>& keep) {
  const ElementType t = v.tensor->element();
  const int64_t n = v.tensor->num_elements();
  const bool f32 = t == ElementType::kF32;
  if (!f32 && t != ElementType::kBF16) return v;
  std::atomic<bool> any{false};
  ParallelFor(
      n, kParallelElements,
      [&](int64_t begin, int64_t end) {
        if (any.load(std::memory_order_relaxed)) return;
        const int64_t m = end - begin;
        if (f32 ? numerics::AnySubnormalFloat(v.tensor->data<float>() + begin, m)
                : numerics::AnySubnormalBf16(v.tensor->data<uint16_t>() + begin, m)) {
          any.store(true, std::memory_order_relaxed);
        }
      },
      /*align=*/1024);
  if (!any.load()) return v;
  TPUSIM_ASSIGN_OR_RETURN(keep, PackDense(v, batch, rows, cols));
  if (f32) {
    numerics::FlushSubnormalFloats(keep->mutable_data<float>(), keep->num_elements());
  } else {
    numerics::FlushSubnormalBf16s(keep->mutable_data<uint16_t>(), keep->num_elements());
  }
  return MatrixView{&*keep, 0, {rows * cols, cols, 1}};
}

// Runs a oneDNN matmul on two views; when oneDNN rejects their layouts,
// packs them densely and retries. kUnimplemented if it still has no kernel.
// An lhs not in row-major order is packed first in any case: for it, some
// of oneDNN's kernels (AMX's) split the sum over K between threads, so that
// the bits would depend on the thread count.
Status DnnlOnViews(const MatmulProblem& p, DnnlType in_type, DnnlType dst_type, void* dst) {
  const std::array<int64_t, 3> dense_a = {p.m * p.k, p.k, 1};
  std::optional<Tensor> packed_a;
  const std::array<int64_t, 3> a_strides = CanonicalStrides(p.lhs.strides, p.batch, p.m, p.k);
  if (a_strides != dense_a) {
    TPUSIM_ASSIGN_OR_RETURN(packed_a, PackDense(p.lhs, p.batch, p.m, p.k));
  }
  DnnlMatmul mm{.batch = p.batch, .m = p.m, .k = p.k, .n = p.n, .a_type = in_type,
                .b_type = in_type, .dst_type = dst_type,
                .a_strides = packed_a ? dense_a : a_strides,
                .b_strides = CanonicalStrides(p.rhs.strides, p.batch, p.k, p.n)};
  const int w = ir::StorageBytes(p.lhs.tensor->element());
  const uint8_t* a = packed_a ? packed_a->raw() : p.lhs.tensor->raw() + p.lhs.offset * w;
  Status s = RunDnnlMatmul(mm, a, p.rhs.tensor->raw() + p.rhs.offset * w, dst);
  if (s.code() != StatusCode::kUnimplemented) return s;
  if (!packed_a) {
    TPUSIM_ASSIGN_OR_RETURN(packed_a, PackDense(p.lhs, p.batch, p.m, p.k));
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor b, PackDense(p.rhs, p.batch, p.k, p.n));
  mm.a_strides = dense_a;
  mm.b_strides = {p.k * p.n, p.n, 1};
  return RunDnnlMatmul(mm, packed_a->raw(), b.raw(), dst);
}

// Reference f32 x f32 or bf16 x bf16 -> f32 / bf16 on oneDNN.
Status DnnlMatmulReference(const MatmulProblem& p, Tensor& out, bool tpu_bf16) {
  const DnnlType in = p.lhs.tensor->element() == ElementType::kF32 ? DnnlType::kF32
                                                                   : DnnlType::kBF16;
  if (out.element() == ElementType::kF32) {
    return DnnlOnViews(p, in, DnnlType::kF32, out.mutable_raw());
  }
  if (out.element() == ElementType::kBF16 && !tpu_bf16) {
    return DnnlOnViews(p, in, DnnlType::kBF16, out.mutable_raw());
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor acc, Scratch(ElementType::kF32, {p.batch, p.m, p.n}));
  TPUSIM_RETURN_IF_ERROR(DnnlOnViews(p, in, DnnlType::kF32, acc.mutable_raw()));
  StoreAll(acc.data<float>(), out, tpu_bf16);
  return Status::Ok();
}

// ------------------------------------------------------------ TPU f32 passes

int NumParts(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::kDefault: return 1;
    case MatmulPrecision::kHigh: return 2;
    case MatmulPrecision::kHighest: return 3;
  }
  return 1;
}

// The (lhs part, rhs part) products of each pass, smallest first so that
// the large terms are added last. Part 0 is hi, 1 mid (or lo), 2 lo.
std::vector<std::pair<int, int>> Passes(MatmulPrecision p) {
  switch (p) {
    case MatmulPrecision::kDefault: return {{0, 0}};
    case MatmulPrecision::kHigh: return {{1, 0}, {0, 1}, {0, 0}};
    case MatmulPrecision::kHighest: return {{2, 0}, {0, 2}, {1, 1}, {1, 0}, {0, 1}, {0, 0}};
  }
  return {{0, 0}};
}

// Splits an f32 view into `parts` dense bf16 planes [parts][batch, rows, cols],
// rows on the host's cores.
StatusOr<Tensor> SplitPlanes(const MatrixView& v, int64_t batch, int64_t rows, int64_t cols,
                             int parts) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor planes, Scratch(ElementType::kBF16, {parts, batch, rows, cols}));
  const int64_t plane = batch * rows * cols;
  const float* src = v.tensor->data<float>() + v.offset;
  uint16_t* dst = planes.mutable_data<uint16_t>();
  if (v.strides[2] != 1) {  // columns apart: element by element
    const int64_t shape[3] = {batch, rows, cols};
    const int64_t dense[3] = {rows * cols, cols, 1};
    ForEachStrided(shape, v.strides, dense, [&](int64_t s, int64_t d) {
      numerics::SplitBf16Array(src + s, 1, parts, dst + d, plane);
    });
    return planes;
  }
  ParallelFor(batch * rows, std::max<int64_t>(1, kParallelElements / std::max<int64_t>(cols, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) {
                  const int64_t at = r / rows * v.strides[0] + r % rows * v.strides[1];
                  numerics::SplitBf16Array(src + at, cols, parts, dst + r * cols, plane);
                }
              });
  return planes;
}

// One bf16 pass on the portable loops: acc += lhs_plane * rhs_plane.
Status GenericPass(const MatmulProblem& p, const uint16_t* a, const uint16_t* b, float* acc) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor fa, Scratch(ElementType::kF32, {p.batch, p.m, p.k}));
  TPUSIM_ASSIGN_OR_RETURN(Tensor fb, Scratch(ElementType::kF32, {p.batch, p.k, p.n}));
  TPUSIM_ASSIGN_OR_RETURN(Tensor pass, Scratch(ElementType::kF32, {p.batch, p.m, p.n}));
  std::transform(a, a + fa.num_elements(), fa.mutable_data<float>(), numerics::Bf16ToFloat);
  std::transform(b, b + fb.num_elements(), fb.mutable_data<float>(), numerics::Bf16ToFloat);
  float* out = pass.mutable_data<float>();
  Gemm(p.batch, p.m, p.k, p.n, fa.data<float>(), fb.data<float>(), out);
  for (int64_t i = 0, n = pass.num_elements(); i < n; ++i) acc[i] += out[i];
  return Status::Ok();
}

Status TpuF32Matmul(const MatmulProblem& p, const MatmulNumerics& num, Tensor& out) {
  const int parts = NumParts(num.precision);
  TPUSIM_ASSIGN_OR_RETURN(Tensor a, SplitPlanes(p.lhs, p.batch, p.m, p.k, parts));
  TPUSIM_ASSIGN_OR_RETURN(Tensor b, SplitPlanes(p.rhs, p.batch, p.k, p.n, parts));
  Tensor acc = out;
  if (out.element() != ElementType::kF32) {
    TPUSIM_ASSIGN_OR_RETURN(acc, Scratch(ElementType::kF32, {p.batch, p.m, p.n}));
  }
  const int64_t a_plane = p.batch * p.m * p.k, b_plane = p.batch * p.k * p.n;
  bool first = true;
  for (auto [i, j] : Passes(num.precision)) {
    const uint16_t* ap = a.data<uint16_t>() + i * a_plane;
    const uint16_t* bp = b.data<uint16_t>() + j * b_plane;
    Status s = Unimplemented("oneDNN disabled");
    if (num.allow_dnnl) {
      DnnlMatmul mm{.batch = p.batch, .m = p.m, .k = p.k, .n = p.n,
                    .a_type = DnnlType::kBF16, .b_type = DnnlType::kBF16,
                    .dst_type = DnnlType::kF32, .a_strides = {p.m * p.k, p.k, 1},
                    .b_strides = {p.k * p.n, p.n, 1}, .accumulate = !first};
      s = RunDnnlMatmul(mm, ap, bp, acc.mutable_raw());
    }
    if (s.code() == StatusCode::kUnimplemented) {
      s = GenericPass(p, ap, bp, acc.mutable_data<float>());  // acc starts zeroed
    }
    TPUSIM_RETURN_IF_ERROR(s);
    first = false;
  }
  if (out.element() != ElementType::kF32) StoreAll(acc.data<float>(), out, /*tpu_bf16=*/true);
  return Status::Ok();
}

// ------------------------------------------------------------ precision

StatusOr<MatmulPrecision> ParsePrecision(const ir::Attribute& a) {
  if (a.kind() == ir::Attribute::Kind::kEnum) {
    if (a.str() == "DEFAULT") return MatmulPrecision::kDefault;
    if (a.str() == "HIGH") return MatmulPrecision::kHigh;
    if (a.str() == "HIGHEST") return MatmulPrecision::kHighest;
  }
  return InvalidArgument("precision must be DEFAULT, HIGH or HIGHEST, got " + a.ToString());
}

// True when a #stablehlo.dot_algorithm sets any field.
bool HasAlgorithm(const ir::Operation& op) {
  ir::Attribute alg = op.attr("algorithm");
  return alg && alg.kind() == ir::Attribute::Kind::kStruct && !alg.fields().empty();
}

std::string FieldText(const ir::Attribute& alg, std::string_view key) {
  ir::Attribute f = alg.Get(key);
  if (!f) return "";
  if (f.kind() == ir::Attribute::Kind::kString || f.kind() == ir::Attribute::Kind::kEnum) {
    return f.str();
  }
  if (f.kind() == ir::Attribute::Kind::kType) return f.type().ToString();
  return f.ToString();
}

// The MXU pass count a dot algorithm asks for: bf16 inputs with 1, 3 or 6
// primitive operations, or f32 (which the TPU runs as 6 passes).
StatusOr<MatmulPrecision> AlgorithmPrecision(const ir::Attribute& alg) {
  std::string lhs = FieldText(alg, "lhs_precision_type");
  std::string rhs = FieldText(alg, "rhs_precision_type");
  std::string acc = FieldText(alg, "accumulation_type");
  int64_t ops = 1;
  if (ir::Attribute f = alg.Get("num_primitive_operations");
      f && f.kind() == ir::Attribute::Kind::kInt) {
    ops = f.int_value();
  }
  if (lhs == rhs && acc == "f32") {
    if (lhs == "f32" && ops == 1) return MatmulPrecision::kHighest;
    if (lhs == "bf16" && ops == 1) return MatmulPrecision::kDefault;
    if (lhs == "bf16" && ops == 3) return MatmulPrecision::kHigh;
    if (lhs == "bf16" && ops == 6) return MatmulPrecision::kHighest;
  }
  return Unimplemented("dot algorithm " + alg.ToString() +
                       " is not supported with TPU numerics (supported: bf16 x bf16 -> f32 in "
                       "1, 3 or 6 passes, and f32 x f32 -> f32)");
}

// Dimensions `dims` of a row-major tensor merged into one (size, stride), if
// stepping through them in order walks memory with a single stride.
std::optional<std::pair<int64_t, int64_t>> Collapse(const std::vector<int64_t>& dims,
                                                    const ir::Shape& shape,
                                                    const std::vector<int64_t>& strides) {
  int64_t size = 1, stride = 0;
  bool first = true;
  for (int64_t d : dims) {
    if (shape[d] == 1) continue;  // contributes nothing to the walk
    if (!first && stride != strides[d] * shape[d]) return std::nullopt;
    stride = strides[d];
    size *= shape[d];
    first = false;
  }
  return std::make_pair(size, stride);
}

}  // namespace

std::vector<int64_t> RemainingDims(int64_t rank, const std::vector<int64_t>& excluded) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(excluded.begin(), excluded.end(), d) == excluded.end()) out.push_back(d);
  }
  return out;
}

int64_t DimsProduct(const ir::Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape[d];
  return p;
}

StatusOr<MatrixView> GroupedView(const Tensor& t, const std::vector<int64_t>& batch,
                                 const std::vector<int64_t>& rows,
                                 const std::vector<int64_t>& cols, Tensor* packed) {
  const ir::Shape& shape = t.shape();
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  auto b = Collapse(batch, shape, strides);
  auto r = Collapse(rows, shape, strides);
  auto c = Collapse(cols, shape, strides);
  if (b && r && c) return MatrixView{&t, 0, {b->second, r->second, c->second}};
  // Transpose into [batch..., rows..., cols...] order.
  std::vector<int64_t> order = batch;
  order.insert(order.end(), rows.begin(), rows.end());
  order.insert(order.end(), cols.begin(), cols.end());
  ir::Shape permuted;
  std::vector<int64_t> src_strides;
  for (int64_t d : order) {
    permuted.push_back(shape[d]);
    src_strides.push_back(strides[d]);
  }
  TPUSIM_ASSIGN_OR_RETURN(*packed, Tensor::Allocate(ir::Type::Tensor(t.element(), permuted)));
  StridedCopier(ir::StorageBytes(t.element()), permuted, src_strides, RowMajorStrides(permuted))
      .Run(t.raw(), packed->mutable_raw());
  const int64_t nr = DimsProduct(shape, rows), nc = DimsProduct(shape, cols);
  return MatrixView{packed, 0, {nr * nc, nc, 1}};
}

StatusOr<Tensor> BatchedMatmul(const MatmulProblem& p, ElementType result_type,
                               const MatmulNumerics& num) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Scratch(result_type, {p.batch, p.m, p.n}));
  if (out.num_elements() == 0) return out;
  const ElementType lt = p.lhs.tensor->element(), rt = p.rhs.tensor->element();
  const bool tpu = num.numerics == Numerics::kTpu;
  const bool f32 = lt == ElementType::kF32 && rt == ElementType::kF32;
  const bool bf16 = lt == ElementType::kBF16 && rt == ElementType::kBF16;
  // K = 0 still has to write the result type's zero (not all-zero bits for
  // every type), which the portable loops do.
  if (f32 && tpu && p.k > 0) {  // its bf16 planes flush subnormals themselves
    TPUSIM_RETURN_IF_ERROR(TpuF32Matmul(p, num, out));
    return out;
  }
  std::optional<Tensor> keep_lhs, keep_rhs;
  MatmulProblem q = p;
  TPUSIM_ASSIGN_OR_RETURN(q.lhs, WithoutSubnormals(p.lhs, p.batch, p.m, p.k, keep_lhs));
  TPUSIM_ASSIGN_OR_RETURN(q.rhs, WithoutSubnormals(p.rhs, p.batch, p.k, p.n, keep_rhs));
  if (num.allow_dnnl && p.k > 0 && (f32 || bf16) &&
      (result_type == ElementType::kF32 || result_type == ElementType::kBF16)) {
    Status s = DnnlMatmulReference(q, out, tpu);
    if (s.code() != StatusCode::kUnimplemented) {
      TPUSIM_RETURN_IF_ERROR(s);
      return out;
    }
  }
  TPUSIM_RETURN_IF_ERROR(GenericMatmulAnyType(q, out, tpu));
  return out;
}

StatusOr<MatmulNumerics> SelectMatmulNumerics(const EvalContext& ctx, const ir::Operation& op) {
  MatmulNumerics num;
  num.numerics = ctx.options().numerics;
  if (num.numerics != Numerics::kTpu) return num;
  if (ctx.options().override_precision) {
    num.precision = ctx.options().precision;
    return num;
  }
  // An algorithm fixes the passes of f32 products only; for other operand
  // types there is nothing to choose.
  if (HasAlgorithm(op) && op.num_operands() > 0 &&
      op.operand(0).type().element() == ElementType::kF32) {
    TPUSIM_ASSIGN_OR_RETURN(num.precision, AlgorithmPrecision(op.attr("algorithm")));
    return num;
  }
  ir::Attribute config = op.attr("precision_config");
  if (config && config.kind() == ir::Attribute::Kind::kArray) {
    for (const ir::Attribute& a : config.array()) {
      TPUSIM_ASSIGN_OR_RETURN(MatmulPrecision p, ParsePrecision(a));
      num.precision = std::max(num.precision, p);
    }
  }
  return num;
}

Status VerifyMatmulTypes(const ir::Operation& op, ElementType lhs, ElementType rhs,
                         ElementType result) {
  if (ClassOf(lhs) == ClassOf(rhs) && ClassOf(lhs) == ClassOf(result)) return Status::Ok();
  return InvalidArgument("'" + op.name_str() + "' mixes element types " +
                         std::string(ir::ElementTypeName(lhs)) + ", " +
                         std::string(ir::ElementTypeName(rhs)) + " -> " +
                         std::string(ir::ElementTypeName(result)) +
                         " (operands and result must be all bool, all integer, all float or all "
                         "complex)");
}

Status VerifyPrecisionConfig(const ir::Operation& op) {
  ir::Attribute config = op.attr("precision_config");
  if (!config) return Status::Ok();
  if (config.kind() != ir::Attribute::Kind::kArray ||
      (!config.array().empty() && config.array().size() != 2)) {
    return InvalidArgument("'" + op.name_str() +
                           "' precision_config must list two precisions, got " +
                           config.ToString());
  }
  bool all_default = true;
  for (const ir::Attribute& a : config.array()) {
    StatusOr<MatmulPrecision> p = ParsePrecision(a);
    if (!p.ok()) return InvalidArgument("'" + op.name_str() + "' " + p.status().message());
    all_default = all_default && *p == MatmulPrecision::kDefault;
  }
  if (HasAlgorithm(op) && !all_default) {
    return InvalidArgument("'" + op.name_str() +
                           "' with a dot algorithm needs DEFAULT precision_config");
  }
  return Status::Ok();
}

MatmulWork MxuWork(const ir::Operation& op, int64_t batch, int64_t m, int64_t k, int64_t n) {
  MatmulWork w{.batch = batch, .m = m, .k = k, .n = n,
               .lhs = op.operand(0).type().element(), .rhs = op.operand(1).type().element()};
  if (w.lhs != ir::ElementType::kF32 && w.rhs != ir::ElementType::kF32) return w;
  numerics::MatmulPrecision p = numerics::MatmulPrecision::kDefault;
  ir::Attribute config = op.attr("precision_config");
  if (config.kind() == ir::Attribute::Kind::kArray) {
    for (const ir::Attribute& e : config.array()) {
      if (e.kind() != ir::Attribute::Kind::kEnum) continue;
      if (e.str() == "HIGHEST") p = numerics::MatmulPrecision::kHighest;
      if (e.str() == "HIGH" && p == numerics::MatmulPrecision::kDefault) {
        p = numerics::MatmulPrecision::kHigh;
      }
    }
  }
  w.passes = numerics::NumPasses(p);
  return w;
}

}  // namespace tpusim::ops

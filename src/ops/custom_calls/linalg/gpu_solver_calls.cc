// jaxlib's GPU linear algebra kernels, as JAX's CUDA and ROCm exports call
// them: typed FFI custom calls (api_version = 4) to cuSOLVER / hipSOLVER
// ({cu,hip}solver_<routine>_ffi), cuSPARSE / hipSPARSE's tridiagonal solve
// ({cu,hip}sparse_gtsv2_ffi) and jaxlib's own kernels
// ({cu,hip}_lu_pivots_to_permutation, {cu,hip}_threefry2x32_ffi). Operands
// and results are those of jaxlib's handlers (jaxlib/gpu/*_kernels*.cc):
// one target name takes f32, f64, c64 and c128 (the PRNG: ui32), batch
// dimensions lead, pivots are 1-based i32, `info` carries the solver's
// status, and bool attributes are entries of mhlo.backend_config.
//
// JAX's layouts hand the kernels column-major buffers of the logical
// matrices, so LAPACK on the logical matrices (as for the CPU targets)
// gives the values JAX gets; gesvd's `transposed` is the exception, whose
// row-major layouts make slot 2 hold V^H and slot 3 U. tpusim computes the
// calls with LAPACK on the host and prices each as the TPU would run the
// equivalent: its LAPACK routine's flop count on the vector units
// (GpuWork). The legacy descriptor forms are in gpu_legacy_solver_calls.cc.
#include "ops/custom_calls/linalg/gpu_solver_calls.h"

#include <algorithm>
#include <array>
#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "ops/custom_calls/linalg/ffi_attributes.h"
#include "ops/kernels/threefry.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops::linalg {

using ir::ElementType;
using la::Batch;
using la::Real;
using la::Reshape;
using la::TensorOf;

std::string GpuCallName(std::string_view target) {
  struct Library {
    std::string_view prefix, name, kind;
  };
  static constexpr Library kLibraries[] = {{"cusolver_", "cuSOLVER", "a GPU solver call"},
                                           {"hipsolver_", "hipSOLVER", "a GPU solver call"},
                                           {"cusparse_", "cuSPARSE", "a GPU solver call"},
                                           {"hipsparse_", "hipSPARSE", "a GPU solver call"},
                                           {"cu_", "CUDA", "a jaxlib GPU kernel"},
                                           {"hip_", "ROCm", "a jaxlib GPU kernel"}};
  for (const Library& l : kLibraries) {
    if (!target.starts_with(l.prefix)) continue;
    std::string_view routine = target.substr(l.prefix.size());
    if (routine.ends_with("_ffi")) routine.remove_suffix(4);
    return std::string(l.name) + " " + std::string(routine) + " (" + std::string(l.kind) + ")";
  }
  return std::string(target);
}

WorkFn GpuWork(WorkFn routine) {
  return [routine](const ir::Operation& op) {
    Work w = routine(op);
    if (w.priced_as.empty()) return w;  // a call that fails verification: its traffic
    w.priced_as =
        GpuCallName(CallTarget(op)) + ", priced as " + w.priced_as + " on the vector units";
    return w;
  };
}

bool RegisterGpuFamily(std::string target, Family f) {
  f.work = GpuWork(f.work);
  return RegisterFamily(std::move(target), f);
}

namespace {

constexpr ElementType kI32 = ElementType::kSI32;

// Registers `f` as cu<name> and hip<name>.
bool RegisterBoth(const std::string& name, const Family& f) {
  for (const char* platform : {"cu", "hip"}) RegisterGpuFamily(platform + name, f);
  return true;
}

// ------------------------------------------------------------ getrf, geqrf, orgqr, potrf,
// syevd, sytrd: linalg_family.h, the triangle as the bool `lower`.

StatusOr<Options> Lower(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(bool lower, BoolAttr(op, "lower"));
  return Options{.uplo = lower ? 'L' : 'U'};
}

// syevd's `algorithm` (0 default, 1 divide and conquer, 2 Jacobi) picks
// how the GPU finds the same eigenpairs; eigenvectors are always computed.
StatusOr<Options> LowerAndAlgorithm(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(IntAttrIn(op, "algorithm", 0, 2).status());
  return Lower(op);
}

[[maybe_unused]] const bool kGetrf = RegisterBoth("solver_getrf_ffi", GetrfFamily());
[[maybe_unused]] const bool kGeqrf = RegisterBoth("solver_geqrf_ffi", GeqrfFamily());
[[maybe_unused]] const bool kOrgqr = RegisterBoth("solver_orgqr_ffi", OrgqrFamily());
[[maybe_unused]] const bool kPotrf = RegisterBoth("solver_potrf_ffi", PotrfFamily(Lower));
[[maybe_unused]] const bool kSyevd =
    RegisterBoth("solver_syevd_ffi", SyevdFamily(LowerAndAlgorithm));
[[maybe_unused]] const bool kSytrd = RegisterBoth("solver_sytrd_ffi", SytrdFamily(Lower));

// ------------------------------------------------------------ SVD

// gesvd (QR iteration, m >= n as the kernel sees it), gesdd (divide and
// conquer, ROCm) and gesvdj / gesvdp (Jacobi, polar), which give V in place
// of V^H and always allocate u and v.
enum class Svd { kGesvd, kGesdd, kGesvdj };

struct SvdAttrs {
  bool full = true, compute_uv = true, transposed = false;
};

StatusOr<SvdAttrs> ReadSvdAttrs(const ir::Operation& op, Svd kind) {
  SvdAttrs at;
  TPUSIM_ASSIGN_OR_RETURN(at.full, BoolAttr(op, "full_matrices"));
  TPUSIM_ASSIGN_OR_RETURN(at.compute_uv, BoolAttr(op, "compute_uv"));
  if (kind != Svd::kGesvdj) {
    TPUSIM_ASSIGN_OR_RETURN(at.transposed, BoolAttr(op, "transposed"));
  }
  if (kind == Svd::kGesdd && at.transposed) {
    return Unimplemented("transposed = true is unsupported (JAX passes false)");
  }
  return at;
}

// a, s [..., k], u and vt (gesvdj: v), info. gesvd's `transposed` (JAX sets
// it when rows < cols) swaps u and vt; without compute_uv, gesvd's and
// gesdd's u and vt are rank-0 placeholders.
StatusOr<Signature> SvdSignature(const ir::Operation& op, Svd kind) {
  TPUSIM_ASSIGN_OR_RETURN(SvdAttrs at, ReadSvdAttrs(op, kind));
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  const int64_t m = b.rows, n = b.cols, k = std::min(m, n);
  if (kind == Svd::kGesvd && (at.transposed ? m > n : m < n)) {
    return InvalidArgument(
        std::string("needs ") + (at.transposed ? "rows <= cols" : "rows >= cols") +
        " with transposed = " + (at.transposed ? "true" : "false") + ", got " + a.ToString());
  }
  auto matrices = [&](int64_t rows, int64_t cols) {
    return TensorOf(a.element(), Reshape(a.shape(), 2, {rows, cols}));
  };
  ir::Type u = matrices(m, at.full ? m : k), vt = matrices(at.full ? n : k, n);
  if (kind == Svd::kGesvdj) {
    vt = matrices(n, at.full ? n : k);
  } else if (!at.compute_uv) {
    u = vt = TensorOf(a.element(), {});
  } else if (at.transposed) {
    std::swap(u, vt);
  }
  return Signature{{a}, {a, Vector(op, RealOf(a.element()), k), u, vt, Info(op)}};
}

// to[..., j, i] = conj(from[..., i, j]).
void ConjugateTranspose(const Tensor& from, Tensor& to) {
  la::Dispatch(from.element(), [&](auto tag) {
    using T = decltype(tag);
    const Batch b = la::SplitBatch(from.shape());
    const T* f = from.data<T>();
    T* t = la::Data<T>(to);
    for (int64_t m = 0; m < b.batch; ++m) {
      for (int64_t i = 0; i < b.rows; ++i) {
        for (int64_t j = 0; j < b.cols; ++j) {
          T x = f[(m * b.rows + i) * b.cols + j];
          if constexpr (la::kIsComplex<T>) x = std::conj(x);
          t[(m * b.cols + j) * b.rows + i] = x;
        }
      }
    }
  });
}

Status EvalGpuSvd(Svd kind, ElementType e, const ir::Operation& op, std::span<const Tensor> in,
                  std::vector<Tensor>& out) {
  TPUSIM_ASSIGN_OR_RETURN(SvdAttrs at, ReadSvdAttrs(op, kind));
  // 'S' and 'A' agree on the square side, so one job serves u and vt.
  const char job = !at.compute_uv ? 'N' : at.full ? 'A' : 'S';
  if (kind != Svd::kGesvdj) {
    Tensor& u = at.transposed ? out[3] : out[2];
    Tensor& vt = at.transposed ? out[2] : out[3];
    return EvalSvd(kind == Svd::kGesvd, job, job, in[0], {out[0], out[1], u, vt, out[4]});
  }
  const ir::Shape& v = out[3].shape();  // [..., n, n or k]
  TPUSIM_ASSIGN_OR_RETURN(
      Tensor vt, Tensor::Allocate(TensorOf(e, Reshape(v, 2, {v.back(), v[v.size() - 2]}))));
  TPUSIM_RETURN_IF_ERROR(EvalSvd(false, job, job, in[0], {out[0], out[1], out[2], vt, out[4]}));
  if (at.compute_uv) ConjugateTranspose(vt, out[3]);
  return Status::Ok();
}

Family SvdFamily(Svd kind) {
  return {.signature = [kind](const ir::Operation& op) { return SvdSignature(op, kind); },
          .eval = [kind](ElementType e, const ir::Operation& op, std::span<const Tensor> in,
                         std::vector<Tensor>& out) { return EvalGpuSvd(kind, e, op, in, out); },
          .work =
              [kind](const ir::Operation& op) {
                const Batch b = MatrixBatch(op);
                const char job = !BoolOr(op, "compute_uv", true)     ? 'N'
                                 : BoolOr(op, "full_matrices", true) ? 'A'
                                                                     : 'S';
                return PricedAs(
                    la::FactorizationWork(op, b.batch, la::SvdCost(b.rows, b.cols, job)),
                    kind == Svd::kGesvd ? "LAPACK gesvd" : "LAPACK gesdd");
              }};
}

[[maybe_unused]] const bool kGesvd = RegisterBoth("solver_gesvd_ffi", SvdFamily(Svd::kGesvd));
[[maybe_unused]] const bool kGesvdj = RegisterBoth("solver_gesvdj_ffi", SvdFamily(Svd::kGesvdj));
// Polar decomposition (CUDA) and divide and conquer (ROCm) exist on one
// platform each.
[[maybe_unused]] const bool kGesvdp =
    RegisterGpuFamily("cusolver_gesvdp_ffi", SvdFamily(Svd::kGesvdj));
[[maybe_unused]] const bool kGesdd =
    RegisterGpuFamily("hipsolver_gesdd_ffi", SvdFamily(Svd::kGesdd));

// ------------------------------------------------------------ ormqr

// a [..., r, na] holding k reflectors in its columns (r = m from the left,
// n from the right), taus [..., k], c [..., m, n] -> op(Q) c or c op(Q).
StatusOr<Signature> OrmqrSignature(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(bool left, BoolAttr(op, "left"));
  TPUSIM_RETURN_IF_ERROR(BoolAttr(op, "transpose").status());
  const ir::Type& a = Operand(op, 0);
  const ir::Type& taus = Operand(op, 1);
  const ir::Type& c = Operand(op, 2);
  if (taus.rank() < 1 || c.rank() < 2) {
    return InvalidArgument("takes taus [..., k] and c [..., m, n], got " + taus.ToString() +
                           " and " + c.ToString());
  }
  const Batch ab = MatrixBatch(op), cb = MatrixBatch(op, 2);
  const int64_t k = taus.shape().back(), r = left ? cb.rows : cb.cols;
  if (ab.rows != r || k > std::min(ab.rows, ab.cols)) {
    return InvalidArgument("needs a with " + std::to_string(r) + " rows (c's " +
                           (left ? "rows" : "columns") + ") and at least k = " + std::to_string(k) +
                           " columns and rows, got a of " + a.ToString());
  }
  const ElementType e = c.element();
  return Signature{{TensorOf(e, Reshape(c.shape(), 2, {ab.rows, ab.cols})),
                    TensorOf(e, Reshape(c.shape(), 2, {k})), c},
                   {c}};
}

Work OrmqrWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op, 2);
  const double k = static_cast<double>(Operand(op, 1).shape().back());
  const bool left = BoolOr(op, "left", true);
  return PricedAs(la::FactorizationWork(op, b.batch, la::OrmqrCost(b.rows, b.cols, k, left)),
                  "LAPACK ormqr");
}

[[maybe_unused]] const bool kOrmqr = RegisterBoth(
    "solver_ormqr_ffi",
    {.operands = 3,
     .signature = OrmqrSignature,
     .eval = TPUSIM_LAPACK_EVAL({
       TPUSIM_ASSIGN_OR_RETURN(bool left, BoolAttr(op, "left"));
       TPUSIM_ASSIGN_OR_RETURN(bool transpose, BoolAttr(op, "transpose"));
       const char trans = !transpose ? 'N' : la::kIsComplex<T> ? 'C' : 'T';
       const Batch ab = la::SplitBatch(in[0].shape()), cb = la::SplitBatch(in[2].shape());
       const int64_t k = in[1].shape().back();
       CopyInto(in[2], out[0]);
       for (int64_t i = 0; i < cb.batch; ++i) {
         la::Ormqr<T>(left ? 'L' : 'R', trans, cb.rows, cb.cols, k,
                      in[0].data<T>() + i * ab.rows * ab.cols, ab.cols, in[1].data<T>() + i * k,
                      la::Data<T>(out[0]) + i * cb.rows * cb.cols);
       }
       return Status::Ok();
     }),
     .work = OrmqrWork});

// ------------------------------------------------------------ geev (CUDA)

StatusOr<Signature> GeevSignature(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(BoolAttr(op, "left").status());
  TPUSIM_RETURN_IF_ERROR(BoolAttr(op, "right").status());
  const ir::Type& a = Operand(op, 0);
  const ElementType c = a.element() == ElementType::kF32   ? ElementType::kC64
                        : a.element() == ElementType::kF64 ? ElementType::kC128
                                                           : a.element();
  return SquareSignature(op, {Vector(op, c, MatrixBatch(op).cols), a, a, Info(op)});
}

// Eigenvectors in the input's type: real ones keep LAPACK's packing of a
// conjugate pair (w[j] with positive imaginary part, w[j+1] its conjugate)
// as columns j = Re v_j and j + 1 = Im v_j. `v` holds complex columns.
template <typename T>
void PackEigenvectors(int64_t n, const std::complex<Real<T>>* w, const std::complex<Real<T>>* v,
                      T* out) {
  for (int64_t j = 0; j < n; ++j) {
    const bool pair = !la::kIsComplex<T> && w[j].imag() > 0 && j + 1 < n;
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (la::kIsComplex<T>) {
        out[i * n + j] = v[i * n + j];
      } else {
        out[i * n + j] = v[i * n + j].real();
        if (pair) out[i * n + j + 1] = v[i * n + j].imag();
      }
    }
    if (pair) ++j;
  }
}

[[maybe_unused]] const bool kGeev = RegisterGpuFamily(
    "cusolver_geev_ffi",
    {.signature = GeevSignature,
     .eval = TPUSIM_LAPACK_EVAL({
       TPUSIM_ASSIGN_OR_RETURN(bool left, BoolAttr(op, "left"));
       TPUSIM_ASSIGN_OR_RETURN(bool right, BoolAttr(op, "right"));
       using C = std::complex<Real<T>>;
       const Batch b = la::SplitBatch(in[0].shape());
       const int64_t n = b.cols;
       std::vector<C> vl(std::max<int64_t>(n * n, 1)), vr(vl.size());
       CopyInto(in[0], out[0]);
       for (int64_t i = 0; i < b.batch; ++i) {
         C* w = la::Data<C>(out[1]) + i * n;
         la::Data<int32_t>(out[4])[i] =
             la::Geev<T>(left ? 'V' : 'N', right ? 'V' : 'N', n, la::Data<T>(out[0]) + i * n * n, w,
                         vl.data(), vr.data());
         if (left) PackEigenvectors<T>(n, w, vl.data(), la::Data<T>(out[2]) + i * n * n);
         if (right) PackEigenvectors<T>(n, w, vr.data(), la::Data<T>(out[3]) + i * n * n);
       }
       return Status::Ok();
     }),
     .work = [](const ir::Operation& op) {
       const int sides = BoolOr(op, "left", false) + BoolOr(op, "right", true);
       const Batch b = MatrixBatch(op);
       return PricedAs(la::FactorizationWork(op, b.batch, la::GeevCost(b.cols, sides)),
                       "LAPACK geev");
     }});

// ------------------------------------------------------------ gtsv2

// dl, d, du [..., m] (dl[0] and du[m-1] unused) and b [..., m, n] -> x.
StatusOr<Signature> Gtsv2Signature(const ir::Operation& op) {
  const ir::Type& b = Operand(op, 3);
  const ir::Type diag = TensorOf(b.element(), Reshape(b.shape(), 1, {}));
  return Signature{{diag, diag, diag, b}, {b}};
}

[[maybe_unused]] const bool kGtsv2 = RegisterBoth(
    "sparse_gtsv2_ffi",
    {.operands = 4,
     .matrix = 3,
     .signature = Gtsv2Signature,
     .eval = TPUSIM_LAPACK_EVAL({
       const Batch b = la::SplitBatch(in[3].shape());
       const int64_t m = b.rows;
       std::vector<T> dl(std::max<int64_t>(m, 1)), d(dl.size()), du(dl.size());
       CopyInto(in[3], out[0]);
       for (int64_t i = 0; m > 0 && i < b.batch; ++i) {
         std::copy_n(in[0].data<T>() + i * m, m, dl.begin());
         std::copy_n(in[1].data<T>() + i * m, m, d.begin());
         std::copy_n(in[2].data<T>() + i * m, m, du.begin());
         T* x = la::Data<T>(out[0]) + i * m * b.cols;
         // No info result: a singular system's x is NaN, as the GPU's
         // elimination gives non-finite values.
         if (la::Gtsv<T>(m, b.cols, dl.data() + 1, d.data(), du.data(), x) != 0) {
           std::fill(x, x + m * b.cols, T(std::numeric_limits<Real<T>>::quiet_NaN()));
         }
       }
       return Status::Ok();
     }),
     .work = [](const ir::Operation& op) {
       const Batch b = MatrixBatch(op, 3);
       return PricedAs(la::FactorizationWork(op, b.batch, la::GtsvCost(b.rows, b.cols)),
                       "LAPACK gtsv");
     }});

// ------------------------------------------------------------ lu_pivots_to_permutation

// pivots [..., k] i32 (0-based) -> permutation [..., P] i32, P >= k from
// the result type. Legacy exports' `permutation_size` attribute says P too
// and is ignored.
Status VerifyLuPivots(const ir::Operation& op) {
  if (op.num_operands() != 1 || op.num_results() != 1) {
    return InvalidArgument("takes the pivots and gives the permutation, got " +
                           std::to_string(op.num_operands()) + " operand(s) and " +
                           std::to_string(op.num_results()) + " result(s)");
  }
  const ir::Type& p = op.operand(0).type();
  const ir::Type& perm = op.result(0).type();
  if (!p.is_tensor() || p.element() != kI32 || p.rank() < 1) {
    return InvalidArgument("takes pivots as an i32 array [..., k], got " + p.ToString());
  }
  const bool fits = perm.is_tensor() && perm.element() == kI32 && perm.rank() == p.rank() &&
                    std::equal(p.shape().begin(), p.shape().end() - 1, perm.shape().begin()) &&
                    perm.shape().back() >= p.shape().back() &&
                    perm.shape().back() <= std::numeric_limits<int32_t>::max();
  if (!fits) {
    return InvalidArgument(
        "gives an i32 permutation [..., P] with the pivots' batch dimensions "
        "and k <= P < 2^31, got " +
        perm.ToString() + " for pivots " + p.ToString());
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalLuPivots(EvalContext&, const ir::Operation& op,
                                           std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateResults(op));
  const int64_t k = in[0].shape().back(), p = out[0].shape().back();
  const int64_t batch = p == 0 ? 0 : out[0].num_elements() / p;
  for (int64_t i = 0; i < batch; ++i) {
    la::PivotsToPermutation(in[0].data<int32_t>() + i * k, k, p, la::Data<int32_t>(out[0]) + i * p);
  }
  return out;
}

// An iota and k swaps (two loads, two stores) per permutation.
Work LuPivotsWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (!VerifyLuPivots(op).ok()) return w;
  const int64_t k = Operand(op, 0).shape().back();
  const int64_t p = op.result(0).type().shape().back();
  const int64_t batch = p == 0 ? 0 : op.result(0).type().num_elements() / p;
  w.AddVector(VectorClass::kAlu, batch * (p + 4 * k));
  w.priced_as = "an iota and its pivot swaps";
  return w;
}

[[maybe_unused]] const bool kLuPivots = [] {
  for (const char* target : {"cu_lu_pivots_to_permutation", "hip_lu_pivots_to_permutation"}) {
    CustomCallRegistry::Register({.target = target,
                                  .verify = VerifyLuPivots,
                                  .eval = EvalLuPivots,
                                  .work = GpuWork(LuPivotsWork)});
  }
  return true;
}();

// ------------------------------------------------------------ threefry2x32

// key0, key1, data0, data1 -> out0, out1, all ui32 of one shape (JAX
// broadcasts them first); elementwise Threefry-2x32.
Status VerifyThreefry(const ir::Operation& op) {
  if (op.num_operands() != 4 || op.num_results() != 2) {
    return InvalidArgument("takes key0, key1, data0, data1 and gives 2 results, got " +
                           std::to_string(op.num_operands()) + " operand(s) and " +
                           std::to_string(op.num_results()) + " result(s)");
  }
  const ir::Type& t = op.operand(0).type();
  if (!t.is_tensor() || t.element() != ElementType::kUI32) {
    return InvalidArgument("operates on ui32 arrays, got " + t.ToString());
  }
  return la::ExpectTypes(op, {t, t, t, t}, {t, t});
}

StatusOr<std::vector<Tensor>> EvalThreefry(EvalContext&, const ir::Operation& op,
                                           std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateResults(op));
  for (int64_t i = 0; i < out[0].num_elements(); ++i) {
    const std::array<uint32_t, 2> x =
        Threefry2x32({in[0].data<uint32_t>()[i], in[1].data<uint32_t>()[i]},
                     {in[2].data<uint32_t>()[i], in[3].data<uint32_t>()[i]});
    la::Data<uint32_t>(out[0])[i] = x[0];
    la::Data<uint32_t>(out[1])[i] = x[1];
  }
  return out;
}

Work ThreefryWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (!VerifyThreefry(op).ok()) return w;
  w.AddVector(VectorClass::kAlu, op.result(0).type().num_elements() * kThreefryOpsPerBlock);
  w.priced_as = "Threefry-2x32 (20 rounds)";
  return w;
}

[[maybe_unused]] const bool kThreefry = [] {
  for (const char* target : {"cu_threefry2x32_ffi", "hip_threefry2x32_ffi"}) {
    CustomCallRegistry::Register({.target = target,
                                  .verify = VerifyThreefry,
                                  .eval = EvalThreefry,
                                  .work = GpuWork(ThreefryWork)});
  }
  return true;
}();

}  // namespace
}  // namespace tpusim::ops::linalg

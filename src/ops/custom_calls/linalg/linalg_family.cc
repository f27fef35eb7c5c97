#include "ops/custom_calls/linalg/linalg_family.h"

#include <algorithm>
#include <cstring>

#include "ops/util/work_util.h"

namespace tpusim::ops::linalg {

using ir::ElementType;
using la::Batch;
using la::Real;
using la::Reshape;
using la::TensorOf;

namespace {

constexpr ElementType kI32 = ElementType::kSI32;

VerifyFn MakeVerify(const Family& f, std::optional<ElementType> element) {
  return [f, element](const ir::Operation& op) -> Status {
    const int most = f.operands + f.trailing_optional;
    if (op.num_operands() > f.operands && op.num_operands() <= most) {
      TPUSIM_RETURN_IF_ERROR(la::ExpectMatrixOperands(op, op.num_operands(), f.matrix));
    } else if (f.trailing_optional > 0 && op.num_operands() != f.operands) {
      return InvalidArgument("takes " + std::to_string(f.operands) + " to " + std::to_string(most) +
                             " operands, got " + std::to_string(op.num_operands()));
    } else {
      TPUSIM_RETURN_IF_ERROR(la::ExpectMatrixOperands(op, f.operands, f.matrix));
    }
    if (element && op.operand(0).type().element() != *element) {
      return InvalidArgument("operates on " + std::string(ir::ElementTypeName(*element)) +
                             " arrays, got " + op.operand(0).type().ToString());
    }
    TPUSIM_ASSIGN_OR_RETURN(Signature s, f.signature(op));
    if (f.tuple_results && HasTupleResult(op)) s.results = {ir::Type::Tuple(s.results)};
    return la::ExpectTypes(op, s.operands, s.results);
  };
}

EvalFn MakeEval(const Family& f) {
  return [f](EvalContext&, const ir::Operation& op,
             std::span<const Tensor> in) -> StatusOr<std::vector<Tensor>> {
    TPUSIM_RETURN_IF_ERROR(la::LoadLapack());
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, AllocateFlat(op));
    TPUSIM_RETURN_IF_ERROR(f.eval(in[0].element(), op, in, out));
    return InOpForm(op, std::move(out));
  };
}

}  // namespace

CustomCallDef FamilyDef(std::string target, const Family& f, std::optional<ElementType> element) {
  VerifyFn verify = MakeVerify(f, element);
  // The pricing rules read the shapes the signature checked; a call that
  // fails it is priced by its traffic alone.
  WorkFn work = [verify, price = f.work](const ir::Operation& op) {
    return verify(op).ok() ? price(op) : ReadsAndWrites(op);
  };
  return {.target = std::move(target), .verify = verify, .eval = MakeEval(f), .work = work};
}

bool RegisterFamily(std::string target, const Family& f, std::optional<ElementType> element) {
  return CustomCallRegistry::Register(FamilyDef(std::move(target), f, element));
}

// ------------------------------------------------------------ helpers

void CopyInto(const Tensor& from, Tensor& to) {
  if (from.size_bytes() > 0) std::memcpy(to.mutable_raw(), from.raw(), from.size_bytes());
}

ElementType RealOf(ElementType e) { return ir::IsComplex(e) ? ir::ComplexPartType(e) : e; }

const ir::Type& Operand(const ir::Operation& op, int i) { return op.operand(i).type(); }

Work PricedAs(Work w, std::string what) {
  w.priced_as = std::move(what);
  return w;
}

Batch MatrixBatch(const ir::Operation& op, int i) { return la::SplitBatch(Operand(op, i).shape()); }

ir::Type Info(const ir::Operation& op) {
  return TensorOf(kI32, Reshape(Operand(op, 0).shape(), 2, {}));
}

ir::Type Vector(const ir::Operation& op, ElementType e, int64_t n) {
  return TensorOf(e, Reshape(Operand(op, 0).shape(), 2, {n}));
}

StatusOr<Signature> SquareSignature(const ir::Operation& op, std::vector<ir::Type> extra) {
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  if (b.rows != b.cols) return InvalidArgument("needs square matrices, got " + a.ToString());
  std::vector<ir::Type> results{a};
  results.insert(results.end(), extra.begin(), extra.end());
  return Signature{{a}, results};
}

bool HasTupleResult(const ir::Operation& op) {
  return op.num_results() == 1 && op.result(0).type().is_tuple();
}

std::vector<ir::Type> FlatResultTypes(const ir::Operation& op) {
  if (HasTupleResult(op)) return op.result(0).type().tuple_elements();
  std::vector<ir::Type> v;
  for (int i = 0; i < op.num_results(); ++i) v.push_back(op.result(i).type());
  return v;
}

StatusOr<std::vector<Tensor>> AllocateFlat(const ir::Operation& op) {
  std::vector<Tensor> out;
  for (const ir::Type& t : FlatResultTypes(op)) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor r, Tensor::Allocate(t));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Tensor> InOpForm(const ir::Operation& op, std::vector<Tensor> flat) {
  if (HasTupleResult(op)) return {Tensor::Tuple(std::move(flat))};
  return flat;
}

// ------------------------------------------------------------ getrf

namespace {

StatusOr<Signature> GetrfSignature(const ir::Operation& op) {
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  return Signature{
      {a}, {a, TensorOf(kI32, Reshape(a.shape(), 2, {std::min(b.rows, b.cols)})), Info(op)}};
}

Work GetrfWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  return PricedAs(la::FactorizationWork(op, b.batch, la::GetrfCost(b.rows, b.cols)),
                  "LAPACK getrf");
}

}  // namespace

Family GetrfFamily() {
  return {.signature = GetrfSignature,
          .eval = TPUSIM_LAPACK_EVAL({
            const Batch b = la::SplitBatch(in[0].shape());
            const int64_t k = std::min(b.rows, b.cols);
            CopyInto(in[0], out[0]);
            for (int64_t i = 0; i < b.batch; ++i) {
              la::Data<int32_t>(out[2])[i] =
                  la::Getrf<T>(b.rows, b.cols, la::Data<T>(out[0]) + i * b.rows * b.cols,
                               la::Data<int32_t>(out[1]) + i * k);
            }
            return Status::Ok();
          }),
          .work = GetrfWork};
}

// ------------------------------------------------------------ geqrf / orgqr

namespace {

StatusOr<Signature> GeqrfSignature(const ir::Operation& op) {
  const ir::Type& a = Operand(op, 0);
  const Batch b = MatrixBatch(op);
  return Signature{{a}, {a, Vector(op, a.element(), std::min(b.rows, b.cols))}};
}

Work GeqrfWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  return PricedAs(la::FactorizationWork(op, b.batch, la::GeqrfCost(b.rows, b.cols)),
                  "LAPACK geqrf");
}

// a [..., m, n] and taus [..., k] with m >= n >= k, as orgqr needs.
StatusOr<Signature> OrgqrSignature(const ir::Operation& op) {
  const ir::Type& a = Operand(op, 0);
  const ir::Type& taus = Operand(op, 1);
  const Batch b = MatrixBatch(op);
  const int64_t k = taus.rank() >= 1 ? taus.shape().back() : 0;
  if (b.rows < b.cols || k > b.cols) {
    return InvalidArgument("needs m >= n >= k for a of " + a.ToString() + " and taus of " +
                           taus.ToString());
  }
  return Signature{{a, Vector(op, a.element(), k)}, {a}};
}

Work OrgqrWork(const ir::Operation& op) {
  const Batch b = MatrixBatch(op);
  const int64_t k = Operand(op, 1).shape().back();
  return PricedAs(la::FactorizationWork(op, b.batch, la::OrgqrCost(b.rows, b.cols, k)),
                  "LAPACK orgqr");
}

}  // namespace

Family GeqrfFamily() {
  return {.signature = GeqrfSignature,
          .eval = TPUSIM_LAPACK_EVAL({
            const Batch b = la::SplitBatch(in[0].shape());
            const int64_t k = std::min(b.rows, b.cols);
            CopyInto(in[0], out[0]);
            for (int64_t i = 0; i < b.batch; ++i) {
              la::Geqrf<T>(b.rows, b.cols, la::Data<T>(out[0]) + i * b.rows * b.cols,
                           la::Data<T>(out[1]) + i * k);
            }
            return Status::Ok();
          }),
          .work = GeqrfWork};
}

Family OrgqrFamily() {
  return {.operands = 2,
          .signature = OrgqrSignature,
          .eval = TPUSIM_LAPACK_EVAL({
            const Batch b = la::SplitBatch(in[0].shape());
            const int64_t k = in[1].shape().back();
            CopyInto(in[0], out[0]);
            for (int64_t i = 0; i < b.batch; ++i) {
              la::Orgqr<T>(b.rows, b.cols, k, la::Data<T>(out[0]) + i * b.rows * b.cols,
                           in[1].data<T>() + i * k);
            }
            return Status::Ok();
          }),
          .work = OrgqrWork};
}

// ------------------------------------------------------------ potrf / syevd / sytrd

Family PotrfFamily(OptionsFn options) {
  return {.signature = [options](const ir::Operation& op) -> StatusOr<Signature> {
            TPUSIM_RETURN_IF_ERROR(options(op).status());
            return SquareSignature(op, {Info(op)});
          },
          .eval = TPUSIM_LAPACK_EVAL_CAPTURING(options,
                                               {
                                                 TPUSIM_ASSIGN_OR_RETURN(Options o, options(op));
                                                 const Batch b = la::SplitBatch(in[0].shape());
                                                 CopyInto(in[0], out[0]);
                                                 for (int64_t i = 0; i < b.batch; ++i) {
                                                   la::Data<int32_t>(out[1])[i] = la::Potrf<T>(
                                                       o.uplo, b.cols,
                                                       la::Data<T>(out[0]) + i * b.cols * b.cols);
                                                 }
                                                 return Status::Ok();
                                               }),
          .work =
              [](const ir::Operation& op) {
                const Batch b = MatrixBatch(op);
                return PricedAs(la::FactorizationWork(op, b.batch, la::PotrfCost(b.cols)),
                                "LAPACK potrf");
              }};
}

Family SyevdFamily(OptionsFn options) {
  return {.signature = [options](const ir::Operation& op) -> StatusOr<Signature> {
            TPUSIM_RETURN_IF_ERROR(options(op).status());
            const int64_t n = MatrixBatch(op).cols;
            return SquareSignature(op, {Vector(op, RealOf(Operand(op, 0).element()), n), Info(op)});
          },
          .eval = TPUSIM_LAPACK_EVAL_CAPTURING(options,
                                               {
                                                 TPUSIM_ASSIGN_OR_RETURN(Options o, options(op));
                                                 const Batch b = la::SplitBatch(in[0].shape());
                                                 const int64_t n = b.cols;
                                                 CopyInto(in[0], out[0]);
                                                 for (int64_t i = 0; i < b.batch; ++i) {
                                                   la::Data<int32_t>(out[2])[i] = la::Syevd<T>(
                                                       o.jobz, o.uplo, n,
                                                       la::Data<T>(out[0]) + i * n * n,
                                                       la::Data<Real<T>>(out[1]) + i * n);
                                                 }
                                                 return Status::Ok();
                                               }),
          .work =
              [options](const ir::Operation& op) {
                const Batch b = MatrixBatch(op);
                StatusOr<Options> o = options(op);
                const bool vectors = !o.ok() || o->jobz == 'V';
                return PricedAs(la::FactorizationWork(op, b.batch, la::SyevdCost(b.cols, vectors)),
                                "LAPACK syevd");
              }};
}

Family SytrdFamily(OptionsFn options) {
  return {.signature = [options](const ir::Operation& op) -> StatusOr<Signature> {
            TPUSIM_RETURN_IF_ERROR(options(op).status());
            const ir::Type& a = Operand(op, 0);
            const int64_t n = MatrixBatch(op).cols;
            if (n < 1) return InvalidArgument("needs non-empty matrices, got " + a.ToString());
            const ElementType r = RealOf(a.element());
            return SquareSignature(op, {Vector(op, r, n), Vector(op, r, n - 1),
                                        Vector(op, a.element(), n - 1), Info(op)});
          },
          .eval = TPUSIM_LAPACK_EVAL_CAPTURING(
              options,
              {
                TPUSIM_ASSIGN_OR_RETURN(Options o, options(op));
                const Batch b = la::SplitBatch(in[0].shape());
                const int64_t n = b.cols;
                CopyInto(in[0], out[0]);
                for (int64_t i = 0; i < b.batch; ++i) {
                  la::Data<int32_t>(out[4])[i] = la::Sytrd<T>(
                      o.uplo, n, la::Data<T>(out[0]) + i * n * n, la::Data<Real<T>>(out[1]) + i * n,
                      la::Data<Real<T>>(out[2]) + i * (n - 1), la::Data<T>(out[3]) + i * (n - 1));
                }
                return Status::Ok();
              }),
          .work =
              [](const ir::Operation& op) {
                const Batch b = MatrixBatch(op);
                return PricedAs(la::FactorizationWork(op, b.batch, la::SytrdCost(b.cols)),
                                "LAPACK sytrd");
              }};
}

// ------------------------------------------------------------ SVD

Status EvalSvd(bool gesvd, char jobu, char jobvt, const Tensor& a, SvdSlots out) {
  if (!gesvd && jobu != jobvt) return Internal("gesdd computes U and V^H alike");
  return la::Dispatch(a.element(), [&](auto tag) -> Status {
    using T = decltype(tag);
    const Batch b = la::SplitBatch(a.shape());
    const int64_t m = b.rows, n = b.cols, k = std::min(m, n);
    const int64_t ucols = jobu == 'A' ? m : k, vtrows = jobvt == 'A' ? n : k;
    T unused{};  // LAPACK reads no U or V^H for 'N'
    CopyInto(a, out.a);
    for (int64_t i = 0; i < b.batch; ++i) {
      T* u = jobu == 'N' ? &unused : la::Data<T>(out.u) + i * m * ucols;
      T* vt = jobvt == 'N' ? &unused : la::Data<T>(out.vt) + i * vtrows * n;
      T* matrix = la::Data<T>(out.a) + i * m * n;
      Real<T>* s = la::Data<Real<T>>(out.s) + i * k;
      la::Data<int32_t>(out.info)[i] =
          gesvd ? la::Gesvd<T>(jobu, jobvt, m, n, matrix, s, u, ucols, vt)
                : la::Gesdd<T>(jobu, m, n, matrix, s, u, ucols, vt);
    }
    return Status::Ok();
  });
}

}  // namespace tpusim::ops::linalg

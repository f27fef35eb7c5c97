// jaxlib's GPU eigensolvers in their legacy form, as exports of jax <=
// 0.4.34 call them: cusolver_syevd / cusolver_syevj and hipsolver_syevd /
// hipsolver_syevj with api_version = 2. backend_config holds the raw bytes
// of jaxlib's SyevdDescriptor {i32 type, uplo, batch, n, lwork}
// (little-endian); the results are the eigenvectors, the eigenvalues,
// info and a workspace array (returned as zeros), flat or as one tuple.
// Only the triangle comes from the descriptor (CUDA's fill mode: lower 0,
// upper 1; ROCm's: lower 122, upper 121); its type, batch and n must agree
// with the shapes. Computed and priced as the FFI syevd (linalg_family.h,
// GpuWork).
#include <cstdint>
#include <string>

#include "ops/custom_calls/linalg/gpu_solver_calls.h"

namespace tpusim::ops::linalg {
namespace {

struct SyevdDescriptor {
  int32_t type = 0, uplo = 0, batch = 0, n = 0, lwork = 0;
};
constexpr size_t kDescriptorBytes = 5 * sizeof(int32_t);

struct Platform {
  const char* prefix;
  int32_t lower, upper;
};
constexpr Platform kCuda{"cusolver_", 0, 1}, kRocm{"hipsolver_", 122, 121};

int32_t LittleEndian32(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return static_cast<int32_t>(v);
}

StatusOr<SyevdDescriptor> ReadDescriptor(const ir::Operation& op) {
  ir::Attribute config = op.attr("backend_config");
  if (config.kind() != ir::Attribute::Kind::kString || config.str().size() != kDescriptorBytes) {
    return InvalidArgument(
        "backend_config must hold the 20 bytes of jaxlib's syevd descriptor, got " +
        (config.kind() == ir::Attribute::Kind::kString
             ? std::to_string(config.str().size()) + " bytes"
         : config ? config.ToString()
                  : std::string("none")));
  }
  const std::string& b = config.str();
  SyevdDescriptor d{LittleEndian32(b, 0), LittleEndian32(b, 4), LittleEndian32(b, 8),
                    LittleEndian32(b, 12), LittleEndian32(b, 16)};
  if (d.batch == -1) {
    return Unimplemented(
        "the dynamic-batch form (batch -1 in the descriptor, the batch size as an operand) is "
        "unsupported");
  }
  return d;
}

// jaxlib's SolverType: F32, F64, C64, C128.
int32_t SolverType(ir::ElementType e) {
  switch (e) {
    case ir::ElementType::kF32:
      return 0;
    case ir::ElementType::kF64:
      return 1;
    case ir::ElementType::kC64:
      return 2;
    default:
      return 3;
  }
}

// The triangle, after checking the descriptor against operand 0.
StatusOr<Options> DescriptorOptions(const ir::Operation& op, const Platform& p) {
  TPUSIM_ASSIGN_OR_RETURN(SyevdDescriptor d, ReadDescriptor(op));
  const ir::Type& a = Operand(op, 0);
  const la::Batch b = MatrixBatch(op);
  if (d.type != SolverType(a.element()) || d.batch != b.batch || d.n != b.cols) {
    return InvalidArgument("descriptor (type " + std::to_string(d.type) + ", batch " +
                           std::to_string(d.batch) + ", n " + std::to_string(d.n) +
                           ") does not describe operand " + a.ToString());
  }
  if (d.uplo != p.lower && d.uplo != p.upper) {
    return InvalidArgument("descriptor uplo " + std::to_string(d.uplo) + " is neither lower (" +
                           std::to_string(p.lower) + ") nor upper (" + std::to_string(p.upper) +
                           ")");
  }
  return Options{.uplo = d.uplo == p.lower ? 'L' : 'U'};
}

// The workspace result: a vector of a's type, any length (its lwork).
ir::Type Workspace(const ir::Operation& op) {
  const std::vector<ir::Type> results = FlatResultTypes(op);
  const ir::Type& last = results.empty() ? Operand(op, 0) : results.back();
  const int64_t lwork = last.is_tensor() && last.rank() == 1 ? last.dim(0) : 0;
  return la::TensorOf(Operand(op, 0).element(), {lwork});
}

bool RegisterLegacySyevd(const Platform& p, const char* routine) {
  Family f = SyevdFamily([p](const ir::Operation& op) { return DescriptorOptions(op, p); });
  f.tuple_results = true;
  f.signature = [syevd = f.signature](const ir::Operation& op) -> StatusOr<Signature> {
    TPUSIM_ASSIGN_OR_RETURN(Signature s, syevd(op));
    s.results.push_back(Workspace(op));
    return s;
  };
  f.work = GpuWork(f.work);
  CustomCallDef def = FamilyDef(std::string(p.prefix) + routine, f);
  // The descriptor first: its dynamic-batch form has an extra operand.
  def.verify = [family = def.verify](const ir::Operation& op) -> Status {
    TPUSIM_RETURN_IF_ERROR(ReadDescriptor(op).status());
    return family(op);
  };
  return CustomCallRegistry::Register(std::move(def));
}

[[maybe_unused]] const bool kLegacySyevd = [] {
  for (const Platform& p : {kCuda, kRocm}) {
    for (const char* routine : {"syevd", "syevj"}) RegisterLegacySyevd(p, routine);
  }
  return true;
}();

}  // namespace
}  // namespace tpusim::ops::linalg

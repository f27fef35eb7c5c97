#include "runtime/run_io.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <limits>

#include "numerics/vector_clones.h"
#include "ops/util/parallel.h"
#include "tpusim/io/npy.h"
#include "tpusim/numerics/float_arrays.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/numerics/random.h"

namespace tpusim::runtime {
namespace {

using ir::ElementType;

// Scalars [first, first + n) of random input `stream`, of element type e
// (complex numbers are two scalars), into `out`.
void FillRandomScalars(ElementType e, uint64_t seed, uint64_t stream, int64_t first, int64_t n,
                       uint8_t* out) {
  constexpr int64_t kChunk = 4096;
  float normals[kChunk];
  uint32_t words[kChunk];
  const int w = ir::StorageBytes(e);
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    uint8_t* dst = out + i * w;
    if (ir::IsFloat(e)) {
      numerics::RandomNormals(seed, stream, first + i, normals, m);
      numerics::ConvertFloatArray(ElementType::kF32, normals, e, dst, m);
      continue;
    }
    numerics::RandomWords(seed, stream, first + i, words, m);
    if (ir::IsBool(e)) {
      for (int64_t j = 0; j < m; ++j) dst[j] = static_cast<uint8_t>(words[j] >> 31);
      continue;
    }
    // [-span, span) when signed, else [0, 2 * span): fits even 2-bit types.
    const int bits = ir::BitWidth(e) < 4 ? 2 : 4;
    const int64_t span = int64_t{1} << (bits - 1);
    for (int64_t j = 0; j < m; ++j) {
      auto v = static_cast<int64_t>(words[j] >> (32 - bits));
      numerics::StoreInt64(e, ir::IsSignedInt(e) ? v - span : v, dst + j * w);
    }
  }
}

// Standard normal floats, small integers and fair bools from a counter-based
// generator: input `index`'s element i depends only on (seed, index, i), so a
// seed gives the same inputs everywhere, however many threads fill them.
StatusOr<Tensor> RandomInput(const ir::Type& type, uint64_t seed, uint64_t index,
                             const std::string& label) {
  if (type.is_token()) return Tensor::Token();
  if (!type.is_tensor()) {
    return Unimplemented(label + ": random " + type.ToString() + " values are not supported");
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateUninitialized(type));
  const ElementType e = type.element();
  const ElementType scalar = ir::IsComplex(e) ? ir::ComplexPartType(e) : e;
  const int64_t scalars = ir::IsComplex(e) ? 2 * t.num_elements() : t.num_elements();
  const int w = ir::StorageBytes(scalar);
  uint8_t* raw = t.mutable_raw();
  // Any split gives the same values: each depends on its index alone.
  ops::ParallelFor(scalars, ops::kParallelElements, [&](int64_t begin, int64_t end) {
    FillRandomScalars(scalar, seed, index, begin, end - begin, raw + begin * w);
  });
  return t;
}

}  // namespace

std::string InputLabel(const ir::Function& f, int i) {
  std::string name = f.entry().argument(i).name();
  return "input %" + (name.empty() ? "arg" + std::to_string(i) : name);
}

StatusOr<Tensor> ConvertInput(const Tensor& t, const ir::Type& want, const std::string& label) {
  if (t.type() == want) return t;
  std::string mismatch = label + ": given " + t.type().ToString() +
                         " but the program takes " + want.ToString();
  if (!want.is_tensor() || t.shape() != want.shape()) return InvalidArgument(mismatch);
  ElementType from = t.element(), to = want.element();
  bool floats = ir::IsFloat(from) && ir::IsFloat(to);
  bool small_ints = io::NpyElementType(to) == from && ir::IsInteger(to);
  if (!floats && !small_ints) return InvalidArgument(mismatch);
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::AllocateUninitialized(want));
  if (floats) {
    // Each element converts alone: any split gives the same bits.
    const int in_w = ir::StorageBytes(from), out_w = ir::StorageBytes(to);
    const uint8_t* in = t.raw();
    uint8_t* dst = out.mutable_raw();
    ops::ParallelFor(
        t.num_elements(), ops::kParallelElements,
        [&](int64_t begin, int64_t end) {
          numerics::ConvertFloatArray(from, in + begin * in_w, to, dst + begin * out_w,
                                      end - begin);
        },
        /*align=*/1024);
    return out;
  }
  int in_w = ir::StorageBytes(from), out_w = ir::StorageBytes(to);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const uint8_t* src = t.raw() + i * in_w;
    uint8_t* dst = out.mutable_raw() + i * out_w;
    int64_t v = numerics::LoadAsInt64(from, src);
    numerics::StoreInt64(to, v, dst);
    if (numerics::LoadAsInt64(to, dst) != v) {
      return InvalidArgument(label + ": value " + std::to_string(v) + " does not fit " +
                             std::string(ir::ElementTypeName(to)));
    }
  }
  return out;
}


StatusOr<std::vector<std::string>> InputFiles(const ir::Function& f, const RunOptions& options) {
  const size_t n = f.type().inputs.size();
  std::vector<std::string> files(n);
  size_t next_positional = 0;
  for (const std::string& spec : options.inputs) {
    size_t eq = spec.find('=');
    size_t index = next_positional;
    std::string path = spec;
    if (eq != std::string::npos) {
      std::string name = spec.substr(0, eq);
      path = spec.substr(eq + 1);
      index = n;
      for (size_t i = 0; i < n; ++i) {
        if (f.entry().argument(static_cast<int>(i)).name() == name) index = i;
      }
      if (index == n) return NotFound("@" + f.name() + " has no parameter %" + name);
    } else {
      while (next_positional < n && !files[next_positional].empty()) ++next_positional;
      index = next_positional;
    }
    if (index >= n) {
      return InvalidArgument("too many inputs: @" + f.name() + " takes " + std::to_string(n));
    }
    if (!files[index].empty()) {
      return InvalidArgument(InputLabel(f, static_cast<int>(index)) + " is given twice");
    }
    if (path.empty()) {
      return InvalidArgument(InputLabel(f, static_cast<int>(index)) + ": empty file name");
    }
    files[index] = path;
  }
  return files;
}

bool PerDeviceFile(std::string_view file) { return file.find(kDeviceField) != file.npos; }

std::string DeviceFile(std::string file, int64_t device) {
  for (size_t at; (at = file.find(kDeviceField)) != std::string::npos;) {
    file.replace(at, kDeviceField.size(), std::to_string(device));
  }
  return file;
}

StatusOr<Tensor> ReadInput(const ir::Function& f, int i, const std::string& file,
                           const ir::Type& type) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, io::ReadNpy(file));
  return ConvertInput(t, type, InputLabel(f, i) + " (" + file + ")");
}

StatusOr<std::vector<Tensor>> Inputs(const ir::Function& f, const RunOptions& options,
                                     const std::vector<ir::Type>& types,
                                     const std::vector<bool>& skip) {
  const size_t n = types.size();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::string> files, InputFiles(f, options));
  std::vector<Tensor> args(n);
  for (size_t i = 0; i < n; ++i) {
    if (files[i].empty() || (i < skip.size() && skip[i])) continue;
    // One device alone reads its own file.
    TPUSIM_ASSIGN_OR_RETURN(args[i],
                            ReadInput(f, static_cast<int>(i), DeviceFile(files[i], 0), types[i]));
  }
  for (size_t i = 0; i < n; ++i) {
    if (args[i].valid() || (i < skip.size() && skip[i])) continue;
    const ir::Type& type = types[i];
    if (type.is_token()) {
      args[i] = Tensor::Token();
    } else if (options.random_inputs) {
      TPUSIM_ASSIGN_OR_RETURN(args[i],
                              RandomInput(type, options.seed, i, InputLabel(f, static_cast<int>(i))));
    } else {
      return InvalidArgument("missing " + InputLabel(f, static_cast<int>(i)) + " of type " +
                             type.ToString() + " (give --input or --random-inputs)");
    }
  }
  return args;
}

namespace {

std::string Number(double v, int digits = 6) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// The value of a one-element tensor, exactly for integers.
std::string OnlyValue(const Tensor& t) {
  ElementType e = t.element();
  if (ir::IsBool(e)) return t.raw()[0] ? "true" : "false";
  if (ir::IsUnsignedInt(e)) return std::to_string(numerics::LoadAsUint64(e, t.raw()));
  if (ir::IsInteger(e)) return std::to_string(numerics::LoadAsInt64(e, t.raw()));
  if (!ir::IsComplex(e)) return Number(numerics::LoadAsDouble(e, t.raw()), 9);
  ElementType part = ir::ComplexPartType(e);
  return "(" + Number(numerics::LoadAsDouble(part, t.raw()), 9) + ", " +
         Number(numerics::LoadAsDouble(part, t.raw() + ir::StorageBytes(part)), 9) + ")";
}

// The values of elements [begin, begin + n) of `t` (complex: real parts)
// as doubles, exactly as LoadAsDouble gives them.
void LoadDoubles(const Tensor& t, int64_t begin, int64_t n, double* out) {
  ElementType e = t.element();
  const int w = ir::StorageBytes(e);
  const uint8_t* in = t.raw() + begin * w;
  if (ir::IsFloat(e)) {
    numerics::ConvertFloatArray(e, in, ElementType::kF64, out, n);
    return;
  }
  ElementType part = ir::IsComplex(e) ? ir::ComplexPartType(e) : e;
  for (int64_t i = 0; i < n; ++i) out[i] = numerics::LoadAsDouble(part, in + i * w);
}

// Min and max (NaNs skipped) and the sum of a tensor's values, in eight
// lanes (element i in lane i % 8) so that the loop vectorises.
struct Stats {
  static constexpr int kLanes = 8;
  double lo[kLanes], hi[kLanes], sum[kLanes];
  Stats() {
    for (int k = 0; k < kLanes; ++k) {
      lo[k] = std::numeric_limits<double>::infinity();
      hi[k] = -lo[k];
      sum[k] = 0;
    }
  }
  // REQUIRES: n % kLanes == 0 unless this is the last call.
  template <class T>
  TPUSIM_VECTOR_CLONES void Add(const T* v, int64_t n) {
    // The lanes in locals, which stay in registers through the loop.
    double l[kLanes], h[kLanes], s[kLanes];
    for (int k = 0; k < kLanes; ++k) l[k] = lo[k], h[k] = hi[k], s[k] = sum[k];
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) {
        double x = v[i + k];
        l[k] = x < l[k] ? x : l[k];  // as std::min(lo, x): NaN never taken
        h[k] = h[k] < x ? x : h[k];
        s[k] += x;
      }
    }
    for (int k = 0; i < n; ++i, ++k) {
      double x = v[i];
      l[k] = x < l[k] ? x : l[k];
      h[k] = h[k] < x ? x : h[k];
      s[k] += x;
    }
    for (int k = 0; k < kLanes; ++k) lo[k] = l[k], hi[k] = h[k], sum[k] = s[k];
  }
};

// "tensor<2x3xf32> min=... max=... mean=..." or, for one element, "= value".
std::string Summary(const Tensor& t) {
  std::string s = t.type().ToString();
  if (!t.type().is_tensor()) return s;
  int64_t n = t.num_elements();
  if (n == 0) return s + " (empty)";
  if (n == 1) return s + " = " + OnlyValue(t);
  constexpr int64_t kChunk = 4096;  // a multiple of Stats::kLanes
  double values[kChunk];
  Stats stats;
  if (t.element() == ElementType::kF32) {
    stats.Add(t.data<float>(), n);  // exact in double as it goes
  } else {
    for (int64_t i = 0; i < n; i += kChunk) {
      int64_t m = std::min(kChunk, n - i);
      LoadDoubles(t, i, m, values);
      stats.Add(values, m);
    }
  }
  double lo = stats.lo[0], hi = stats.hi[0];
  for (int k = 1; k < Stats::kLanes; ++k) {
    lo = std::min(lo, stats.lo[k]);
    hi = std::max(hi, stats.hi[k]);
  }
  const double* u = stats.sum;
  double sum = ((u[0] + u[1]) + (u[2] + u[3])) + ((u[4] + u[5]) + (u[6] + u[7]));
  // A zero extreme is the first zero's, with its sign, as one running
  // minimum over the elements in order would have it.
  if (lo == 0 || hi == 0) {
    for (int64_t i = 0; i < n; i += kChunk) {
      int64_t m = std::min(kChunk, n - i);
      LoadDoubles(t, i, m, values);
      const double* zero = std::find(values, values + m, 0.0);
      if (zero == values + m) continue;
      if (lo == 0) lo = *zero;
      if (hi == 0) hi = *zero;
      break;
    }
  }
  std::string part = ir::IsComplex(t.element()) ? " real" : "";
  return s + part + " min=" + Number(lo) + " max=" + Number(hi) + " mean=" + Number(sum / n);
}

}  // namespace

Status WriteResults(const std::vector<Tensor>& results, const std::vector<std::string>& names,
                    const std::string& dir, std::FILE* out) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidArgument("cannot create " + dir + ": " + ec.message());
  const size_t n = results.size();
  std::vector<std::string> lines(n), paths(n);
  std::vector<Status> status(n, Status::Ok());
  std::vector<char> written(n, 0);  // not vector<bool>: set from several threads
  for (size_t i = 0; i < n; ++i) {
    std::string name = i < names.size() ? names[i] : "result" + std::to_string(i);
    if (results[i].type().is_tensor()) {
      paths[i] = (std::filesystem::path(dir) / (name + ".npy")).string();
    }
    lines[i] = std::move(name) + ": ";
  }
  // A result's statistics and its file are two tasks, so that one core sums
  // while the other copies bytes into the page cache (most of a large
  // result's time). After a failed write, the files not yet begun are not.
  std::atomic<bool> any_failed{false};
  ops::ParallelTasks(static_cast<int64_t>(2 * n), [&](int64_t k, int64_t) {
    const size_t i = static_cast<size_t>(k / 2);
    if (k % 2 == 0) {
      lines[i] += Summary(results[i]);
    } else if (!paths[i].empty() && !any_failed.load()) {
      status[i] = io::WriteNpy(paths[i], results[i]);
      written[i] = status[i].ok();
      if (!status[i].ok()) any_failed = true;
    }
  });
  auto failed = std::find_if(status.begin(), status.end(), [](const Status& s) { return !s.ok(); });
  if (failed != status.end()) {
    for (size_t i = 0; i < n; ++i) {
      if (written[i]) std::filesystem::remove(paths[i], ec);
    }
    return *failed;
  }
  for (size_t i = 0; i < n; ++i) {
    lines[i] += paths[i].empty() ? " (not written)" : " -> " + paths[i];
    std::fprintf(out, "%s\n", lines[i].c_str());
  }
  return Status::Ok();
}

}  // namespace tpusim::runtime

#include "runtime/run_io.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <random>

#include "tpusim/io/npy.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::runtime {
namespace {

using ir::ElementType;

// Standard normal floats, small integers and fair bools, from a fixed
// generator so that a seed gives the same inputs everywhere.
StatusOr<Tensor> RandomInput(const ir::Type& type, std::mt19937_64& rng, const std::string& label) {
  if (type.is_token()) return Tensor::Token();
  if (!type.is_tensor()) {
    return Unimplemented(label + ": random " + type.ToString() + " values are not supported");
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type));
  ElementType e = type.element();
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53; };
  auto normal = [&] {
    return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * std::numbers::pi * uniform());
  };
  int w = ir::StorageBytes(e);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    uint8_t* p = t.mutable_raw() + i * w;
    if (ir::IsComplex(e)) {
      ElementType part = ir::ComplexPartType(e);
      numerics::StoreDouble(part, normal(), p);
      numerics::StoreDouble(part, normal(), p + ir::StorageBytes(part));
    } else if (ir::IsFloat(e)) {
      numerics::StoreDouble(e, normal(), p);
    } else if (ir::IsBool(e)) {
      *p = rng() & 1;
    } else {
      // [-span, span) when signed, else [0, 2 * span): fits even 2-bit types.
      int64_t span = ir::BitWidth(e) < 4 ? 2 : 8;
      int64_t v = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * span));
      numerics::StoreInt64(e, ir::IsSignedInt(e) ? v - span : v, p);
    }
  }
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
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(want));
  int in_w = ir::StorageBytes(from), out_w = ir::StorageBytes(to);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const uint8_t* src = t.raw() + i * in_w;
    uint8_t* dst = out.mutable_raw() + i * out_w;
    if (floats) {
      numerics::StoreDouble(to, numerics::LoadAsDouble(from, src), dst);
      continue;
    }
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
  std::mt19937_64 rng(options.seed);
  for (size_t i = 0; i < n; ++i) {
    if (args[i].valid() || (i < skip.size() && skip[i])) continue;
    const ir::Type& type = types[i];
    if (type.is_token()) {
      args[i] = Tensor::Token();
    } else if (options.random_inputs) {
      TPUSIM_ASSIGN_OR_RETURN(args[i], RandomInput(type, rng, InputLabel(f, static_cast<int>(i))));
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

// "tensor<2x3xf32> min=... max=... mean=..." or, for one element, "= value".
std::string Summary(const Tensor& t) {
  std::string s = t.type().ToString();
  if (!t.type().is_tensor()) return s;
  ElementType e = ir::IsComplex(t.element()) ? ir::ComplexPartType(t.element()) : t.element();
  int stride = ir::StorageBytes(t.element());
  int64_t n = t.num_elements();
  if (n == 0) return s + " (empty)";
  if (n == 1) return s + " = " + OnlyValue(t);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = numerics::LoadAsDouble(e, t.raw() + i * stride);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
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
  std::vector<std::string> written;
  std::vector<std::string> lines;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string name = i < names.size() ? names[i] : "result" + std::to_string(i);
    std::string line = name + ": " + Summary(results[i]);
    if (results[i].type().is_tensor()) {
      std::string path = (std::filesystem::path(dir) / (name + ".npy")).string();
      Status st = io::WriteNpy(path, results[i]);
      if (!st.ok()) {
        for (const std::string& p : written) std::filesystem::remove(p, ec);
        return st;
      }
      written.push_back(path);
      line += " -> " + path;
    } else {
      line += " (not written)";
    }
    lines.push_back(std::move(line));
  }
  for (const std::string& line : lines) std::fprintf(out, "%s\n", line.c_str());
  return Status::Ok();
}

}  // namespace tpusim::runtime

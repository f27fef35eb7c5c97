// What `tpusim run` reads and writes: a program's inputs from .npy files or
// random values, and its results as .npy files with one summary line each.
#ifndef TPUSIM_RUNTIME_RUN_IO_H_
#define TPUSIM_RUNTIME_RUN_IO_H_

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/runtime/run.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::runtime {

// The file each parameter of `f` reads ("" for none), from options.inputs:
// FILE for the next parameter, or NAME=FILE. kInvalidArgument / kNotFound
// for too many files, a parameter given twice, or an unknown name.
StatusOr<std::vector<std::string>> InputFiles(const ir::Function& f, const RunOptions& options);

// "input %name" for parameter i of `f`, as errors name it.
std::string InputLabel(const ir::Function& f, int i);

// `t` as parameter type `want`: the same type, or a float tensor rounded to
// another float type, or int8/uint8 narrowed to 2- and 4-bit integers (the
// types .npy files widen these to). Values that do not fit and other types
// are kInvalidArgument naming `label`.
StatusOr<Tensor> ConvertInput(const Tensor& t, const ir::Type& want, const std::string& label);

// A file name with this field stands for one file per device, the field
// replaced by the device's index ("x.device{device}.npy").
inline constexpr std::string_view kDeviceField = "{device}";
bool PerDeviceFile(std::string_view file);
std::string DeviceFile(std::string file, int64_t device);

// Parameter i of `f` from `file`, converted to `type` (floats rounded to a
// narrower float type; small integer types from int8/uint8).
StatusOr<Tensor> ReadInput(const ir::Function& f, int i, const std::string& file,
                           const ir::Type& type);

// The arguments of `f`, of `types` (f's parameter types, or what a device's
// parameters make together): their files read (a per-device file as device
// 0's) and converted, the rest random if options.random_inputs. Parameters
// with skip[i] are left empty, for the caller to give per device.
StatusOr<std::vector<Tensor>> Inputs(const ir::Function& f, const RunOptions& options,
                                     const std::vector<ir::Type>& types,
                                     const std::vector<bool>& skip = {});

// Writes `results` into `dir` as <name>.npy, names[i] or "result<i>", and
// prints a summary line each; every file or none (a failure removes those
// already written).
Status WriteResults(const std::vector<Tensor>& results, const std::vector<std::string>& names,
                    const std::string& dir, std::FILE* out);

}  // namespace tpusim::runtime

#endif  // TPUSIM_RUNTIME_RUN_IO_H_

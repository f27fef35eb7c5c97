// libFuzzer target: the ONNX importer on arbitrary bytes. Any input must give
// a Status (never a crash, hang or sanitizer report): malformed protobuf,
// tensors whose stored size disagrees with their dimensions, undefined or
// cyclic inputs, wrong shapes for an op. Dynamic dimensions are sized 2, and
// small inputs take zero values, so that lowerings that read them run too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tpusim/frontend/onnx/importer.h"
#include "tpusim/ir/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A model may claim any size: allocations beyond this fail as a Status.
  tpusim::SetHostMemoryLimit(int64_t{1} << 30);
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto inputs = tpusim::frontend::ReadOnnxInputs(bytes, "fuzz.onnx");
  if (!inputs.ok()) return 0;
  tpusim::frontend::OnnxImportOptions options;
  for (const tpusim::frontend::OnnxInput& in : *inputs) {
    tpusim::ir::Shape shape = in.dims;
    for (int64_t& d : shape) d = d < 0 ? 2 : d;
    options.input_shapes[in.name] = shape;
  }
  options.input_value = [&](const std::string& name) -> tpusim::StatusOr<tpusim::Tensor> {
    for (const tpusim::frontend::OnnxInput& in : *inputs) {
      if (in.name == name) {
        if (tpusim::ir::NumElements(options.input_shapes[name]) > (1 << 20)) {
          return tpusim::InvalidArgument(name + " is too large to read");
        }
        return tpusim::Tensor::Allocate(
            tpusim::ir::Type::Tensor(in.element, options.input_shapes[name]));
      }
    }
    return tpusim::NotFound(name);
  };
  auto m = tpusim::frontend::ImportOnnx(bytes, "fuzz.onnx", options);
  // Printing walks every op, attribute and type the lowering built.
  if (m.ok()) (void)tpusim::ir::PrintModule(**m);
  return 0;
}

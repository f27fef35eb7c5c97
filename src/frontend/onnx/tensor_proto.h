// ONNX's TensorProto to tpusim's Tensor: element types, the typed and raw
// storage forms, and tensors stored outside the model (external data).
// Internal to src/frontend/onnx.
#ifndef TPUSIM_FRONTEND_ONNX_TENSOR_PROTO_H_
#define TPUSIM_FRONTEND_ONNX_TENSOR_PROTO_H_

#include <onnx/onnx_pb.h>

#include <string>

#include "tpusim/base/status.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::frontend::onnx_import {

// The element type of TensorProto.DataType `t`; kUnimplemented for strings
// and types tpusim lacks.
StatusOr<ir::ElementType> ElementOfOnnx(int32_t t);

// `proto`'s elements. Errors name the tensor: a size that disagrees with
// its dimensions, a missing or short external file.
StatusOr<Tensor> TensorOfProto(const onnx::TensorProto& proto);

// Reads every external tensor of `model` (the main graph's initializers and
// those of subgraphs and Constant nodes) from files relative to `dir` into
// raw_data, so that the rest of the importer sees one self-contained model.
// A location may not leave `dir`.
Status LoadExternalData(onnx::ModelProto& model, const std::string& dir);

}  // namespace tpusim::frontend::onnx_import

#endif  // TPUSIM_FRONTEND_ONNX_TENSOR_PROTO_H_

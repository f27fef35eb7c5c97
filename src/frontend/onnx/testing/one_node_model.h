// Test helpers for lowerings that ONNX's backend cases do not reach: a model
// of one node built with ONNX's own messages, imported and verified, and
// tensors to feed it.
#ifndef TPUSIM_FRONTEND_ONNX_TESTING_ONE_NODE_MODEL_H_
#define TPUSIM_FRONTEND_ONNX_TESTING_ONE_NODE_MODEL_H_

#include <onnx/onnx_pb.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tpusim/frontend/onnx/importer.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::frontend::onnx_testing {

using Dims = std::vector<int64_t>;

inline void SetType(onnx::ValueInfoProto* v, const std::string& name, int elem, const Dims& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// A node input: a graph input when `fed`, else an initializer of `floats`
// or, when `ints` is given, of integers of type `int_elem`. An empty name
// is an absent optional input.
struct Arg {
  std::string name;
  Dims dims;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  bool fed = false;
  int int_elem = onnx::TensorProto::INT64;
};

struct Out {
  std::string name;
  Dims dims;
  int elem = onnx::TensorProto::FLOAT;
};

// The serialized model of one `op` node of the default domain at `opset`.
inline std::string OneNodeModel(const std::string& op, int opset, const std::vector<Arg>& args,
                                const std::vector<Out>& outs,
                                const std::vector<onnx::AttributeProto>& attrs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name(op + "_test");
  onnx::NodeProto* node = g->add_node();
  node->set_op_type(op);
  for (const Arg& a : args) {
    node->add_input(a.name);
    if (a.name.empty()) continue;
    const int elem = a.ints.empty() ? onnx::TensorProto::FLOAT : a.int_elem;
    if (a.fed) {
      SetType(g->add_input(), a.name, elem, a.dims);
      continue;
    }
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(a.name);
    t->set_data_type(elem);
    for (int64_t d : a.dims) t->add_dims(d);
    for (float f : a.floats) t->add_float_data(f);
    for (int64_t i : a.ints) {
      if (elem == onnx::TensorProto::INT64) {
        t->add_int64_data(i);
      } else {
        t->add_int32_data(static_cast<int32_t>(i));
      }
    }
  }
  for (const Out& o : outs) {
    node->add_output(o.name);
    SetType(g->add_output(), o.name, o.elem, o.dims);
  }
  for (const onnx::AttributeProto& a : attrs) *node->add_attribute() = a;
  return m.SerializeAsString();
}

// The model imported as `file` and verified.
inline StatusOr<std::unique_ptr<ir::Module>> ImportVerified(const std::string& bytes,
                                                            const std::string& file) {
  TPUSIM_ASSIGN_OR_RETURN(auto module, ImportOnnx(bytes, file, {}));
  TPUSIM_RETURN_IF_ERROR(verify::VerifyModule(*module));
  return module;
}

inline onnx::AttributeProto IntAttr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

inline onnx::AttributeProto IntsAttr(const std::string& name, const Dims& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

inline onnx::AttributeProto StringAttr(const std::string& name, const std::string& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

inline onnx::AttributeProto StringsAttr(const std::string& name,
                                        const std::vector<std::string>& v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& s : v) a.add_strings(s);
  return a;
}

// A tensor of element type `e` holding `v` (whose C++ type is its storage).
template <typename T>
Tensor TensorOf(ir::ElementType e, const Dims& dims, const std::vector<T>& v) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, dims)).value();
  std::memcpy(t.mutable_raw(), v.data(), v.size() * sizeof(T));
  return t;
}

inline Tensor F32(const Dims& dims, const std::vector<float>& v) {
  return TensorOf(ir::ElementType::kF32, dims, v);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> out(t.num_elements());
  std::memcpy(out.data(), t.raw(), out.size() * sizeof(T));
  return out;
}

}  // namespace tpusim::frontend::onnx_testing

#endif  // TPUSIM_FRONTEND_ONNX_TESTING_ONE_NODE_MODEL_H_

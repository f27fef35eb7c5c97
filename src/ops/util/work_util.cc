#include "ops/util/work_util.h"

#include <algorithm>

namespace tpusim::ops {

Work ReadsAndWrites(const ir::Operation& op) {
  Work w;
  for (ir::Value v : op.operands()) w.reads.push_back(v.type());
  for (int i = 0; i < op.num_results(); ++i) w.writes.push_back(op.result(i).type());
  return w;
}

Work ElementwiseWork(const ir::Operation& op, VectorClass c, int64_t ops_per_element) {
  Work w = ReadsAndWrites(op);
  if (op.num_results() == 0 || !op.result(0).type().is_tensor()) return w;
  const ir::Type& t = op.result(0).type();
  const int64_t n = t.num_elements() * ops_per_element;
  w.AddVector(c, n);
  if (ir::IsFloat(t.element()) || ir::IsComplex(t.element())) w.flops = n;
  return w;
}

Work ElementwiseWork(const ir::Operation& op, const ElementOps& ops) {
  Work w = ReadsAndWrites(op);
  if (op.num_results() == 0 || !op.result(0).type().is_tensor()) return w;
  const ir::Type& t = op.result(0).type();
  const int64_t n = t.num_elements();
  w.AddVector(VectorClass::kAlu, ops.alu * n);
  w.AddVector(VectorClass::kMultiply, ops.multiply * n);
  w.AddVector(VectorClass::kDivide, ops.divide * n);
  w.AddVector(VectorClass::kTranscendental, ops.transcendental * n);
  if (ir::IsFloat(t.element()) || ir::IsComplex(t.element())) {
    w.flops = (ops.alu + ops.multiply + ops.divide + ops.transcendental) * n;
  }
  return w;
}

bool HasComplexElements(const ir::Operation& op) {
  auto complex = [](const ir::Type& t) { return t.is_tensor() && ir::IsComplex(t.element()); };
  for (ir::Value v : op.operands()) {
    if (complex(v.type())) return true;
  }
  for (int i = 0; i < op.num_results(); ++i) {
    if (complex(op.result(i).type())) return true;
  }
  return false;
}

WorkFn ElementwiseRule(ElementOps real, ElementOps complex) {
  return [real, complex](const ir::Operation& op) {
    return ElementwiseWork(op, HasComplexElements(op) ? complex : real);
  };
}

WorkFn ElementwiseRule(ElementOps ops) { return ElementwiseRule(ops, ops); }

Work CopyWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  for (int i = 0; i < op.num_results(); ++i) {
    if (op.result(i).type().is_tensor()) {
      w.AddVector(VectorClass::kAlu, op.result(i).type().num_elements());
    }
  }
  return w;
}

Work FreeWork(const ir::Operation&) {
  Work w;
  w.free = true;
  return w;
}

VectorClass RegionClass(const ir::Region& region, int64_t* ops_in_region) {
  VectorClass dearest = VectorClass::kAlu;
  int64_t n = 0;
  if (!region.empty()) {
    for (const auto& op : region.front().ops()) {
      const std::string& name = op->name_str();
      if (name == "stablehlo.return") continue;
      ++n;
      VectorClass c = VectorClass::kAlu;
      if (name == "stablehlo.multiply") c = VectorClass::kMultiply;
      if (name == "stablehlo.divide" || name == "stablehlo.remainder" ||
          name == "stablehlo.sqrt" || name == "stablehlo.rsqrt") {
        c = VectorClass::kDivide;
      }
      if (name == "stablehlo.exponential" || name == "stablehlo.log" ||
          name == "stablehlo.tanh" || name == "stablehlo.logistic" ||
          name == "stablehlo.power") {
        c = VectorClass::kTranscendental;
      }
      dearest = std::max(dearest, c);
    }
  }
  *ops_in_region = std::max<int64_t>(n, 1);
  return dearest;
}

void AddRegionWork(Work& w, const ir::Region& region, int64_t evaluations, bool is_float) {
  int64_t ops = 1;
  const VectorClass c = RegionClass(region, &ops);
  w.AddVector(c, evaluations * ops);
  if (is_float) w.flops += evaluations * ops;
}

bool IsFloatTensor(const ir::Type& t) {
  return t.is_tensor() && (ir::IsFloat(t.element()) || ir::IsComplex(t.element()));
}

}  // namespace tpusim::ops

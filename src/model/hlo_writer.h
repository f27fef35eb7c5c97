// Writes StableHLO text as JAX prints it, one SSA value per op, tracking
// each value's shape so that callers state only what an op does. Internal
// to src/model: the train-step builder's vocabulary.
#ifndef TPUSIM_MODEL_HLO_WRITER_H_
#define TPUSIM_MODEL_HLO_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tpusim::model {

using Dims = std::vector<int64_t>;

// A value: its SSA name and type.
struct Val {
  std::string name;  // "%7"
  Dims shape;
  std::string element;  // "f32", "bf16", "i32", "i1"

  std::string Type() const;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

class HloWriter {
 public:
  // Lines go at `indent` spaces.
  explicit HloWriter(int indent = 4) : indent_(indent) {}

  const std::string& text() const { return text_; }
  void Line(const std::string& line);
  // A fresh SSA name.
  std::string Fresh();

  Val Splat(double value, const Dims& shape, const std::string& element);
  Val Unary(const std::string& op, const Val& a);  // "exponential", "rsqrt", ...
  Val Convert(const Val& a, const std::string& element);
  Val Binary(const std::string& op, const Val& a, const Val& b);  // same shapes
  // `a` broadcast to `shape`, its dimensions becoming `dims` of it.
  Val Broadcast(const Val& a, const Dims& shape, const Dims& dims);
  // Binary op of `a` with `b`, whose dimensions are the leading ones of a's.
  Val BinaryLeading(const std::string& op, const Val& a, const Val& b);
  Val Reshape(const Val& a, const Dims& shape);
  Val Transpose(const Val& a, const Dims& perm);
  // dot_general: batch dimensions, then a's free, then b's free; the
  // result in `element` (default a's).
  Val Dot(const Val& a, const Val& b, const Dims& batch_a, const Dims& batch_b,
          const Dims& contract_a, const Dims& contract_b, const std::string& element = "");
  // Sum ("add") or max ("maximum") over `dims`.
  Val Reduce(const std::string& op, const Val& a, const Dims& dims);
  Val Iota(const Dims& shape, int64_t dim, const std::string& element);
  Val Compare(const std::string& direction, const Val& a, const Val& b);
  Val Select(const Val& pred, const Val& a, const Val& b);
  // a[index, ...] with the leading dimension dropped: a layer of a stack.
  Val Layer(const Val& stack, const Val& index) { return Take(stack, 0, index); }
  // Entry `index` of `a` along `dim`, that dimension dropped.
  Val Take(const Val& a, int64_t dim, const Val& index);
  // `stack` with layer `index` replaced by `value`.
  Val SetLayer(const Val& stack, const Val& value, const Val& index);
  // `a` with `update` (of a's rank) written at `starts` (i32 scalars).
  Val UpdateSlice(const Val& a, const Val& update, const std::vector<Val>& starts);
  // Rows [begin, end) of `a` along `dim`.
  Val Slice(const Val& a, int64_t dim, int64_t begin, int64_t end);
  // Rows `ids` (i32, any shape) of `table` [rows, d]: shape ids x d.
  Val Gather(const Val& table, const Val& ids);
  // `updates` (ids x d) added into a zero table of `rows` rows at `ids`.
  Val ScatterAdd(const Val& ids, const Val& updates, int64_t rows);
  // An op in generic form: `"name"(operands) {attrs} : (types) -> (results)`.
  std::vector<Val> Generic(const std::string& name, const std::vector<Val>& operands,
                           const std::vector<Val>& results, const std::string& attrs);
  // `a` held as `sharding` says (a #sdy.sharding attribute; empty: `a`).
  Val Constraint(const Val& a, const std::string& sharding);
  // `a` moved to memory `space` ("pinned_host", or "device" to bring it
  // back), as JAX marks an offloaded value.
  Val Place(const Val& a, const std::string& space);

 private:
  Val Emit(const std::string& rhs, Dims shape, const std::string& element);
  Val Zero(const std::string& element);

  int indent_;
  int next_ = 0;
  std::string text_;
};

// "[1, 2, 3]".
std::string List(const Dims& dims);

}  // namespace tpusim::model

#endif  // TPUSIM_MODEL_HLO_WRITER_H_

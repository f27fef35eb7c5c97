// The machinery behind buffer_assignment.h: liveness of the buffers of one
// function, scope by scope (the function's block, then each loop, branch and
// call body inside it), and their placement in a best-fit heap per scope.
#ifndef TPUSIM_COMPILER_BUFFER_PLANNER_H_
#define TPUSIM_COMPILER_BUFFER_PLANNER_H_

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/compiler/memory_plan.h"
#include "tpusim/ir/ir.h"

namespace tpusim::compiler {

// A body's plan, as the op that runs it sees it: one temporary of `heap`
// bytes while the op runs.
struct BodyPlan {
  int64_t heap = 0;
  std::vector<LiveBuffer> live_at_peak;  // largest first, capped
  int64_t sum_of_buffers = 0;
  int num_buffers = 0;
};

// What the functions planned for one entry share: callee plans (a function
// called twice is planned once) and the constants of callees, which live in
// the program's constant region with the entry's own.
class ModulePlanner {
 public:
  explicit ModulePlanner(const ir::Module& module) : module_(module) {}
  const ir::Module& module() const { return module_; }
  // The plan of the body of `callee`; kUnimplemented for recursion.
  StatusOr<const BodyPlan*> PlanCallee(const ir::Function& callee);
  // Constants of every callee planned so far.
  std::vector<LiveBuffer>& callee_constants() { return callee_constants_; }

 private:
  const ir::Module& module_;
  std::map<const ir::Function*, BodyPlan> callees_;
  std::set<const ir::Function*> in_progress_;
  std::vector<LiveBuffer> callee_constants_;
};

class FunctionPlanner {
 public:
  // `is_entry`: arguments and results are buffers of this function; a
  // callee's are its caller's.
  FunctionPlanner(ModulePlanner& module, const ir::Function& f, bool is_entry)
      : module_(module), f_(f), is_entry_(is_entry) {}

  // Plans the function. REQUIRES: f.Renumber() since its last change.
  Status Run();

  // After Run: the function's plan, and its totals.
  const BodyPlan& body() const { return body_; }
  // The entry's plan for a chip of `capacity_bytes` of HBM. REQUIRES: is_entry.
  MemoryPlan Plan(int64_t capacity_bytes) const;
  // Where each tensor of `v` is stored: (offset, bytes) pairs, (-1, 0) for
  // tensors without storage (tokens); empty for values with no HBM buffer
  // (values inside fusion and reduction bodies).
  std::vector<std::pair<int64_t, int64_t>> Placement(ir::Value v) const;

 private:
  struct Buffer {
    LiveBuffer info;
    int64_t bytes = 0;      // the space it takes: 0 for a body's returned values
    int scope = 0;          // -1: a callee's constant, placed by the entry
    int start = 0, end = 0;  // first and last position in its scope's block; -1 = before the first op
    bool pinned = false;    // live to the end of the program
    int redirect = -1;      // a body's returned value: stored in this buffer of the parent
    int64_t offset = -1;    // relative to its scope's chunk
    bool chunk = false;     // a body's temporaries
    std::vector<LiveBuffer> inner;  // a chunk's: the body's buffers live at its peak
  };
  struct Scope {
    int chunk = -1;  // the buffer of the parent scope that holds this one; -1 at the top
    std::vector<int> buffers;
    int64_t heap = 0;
    int64_t max_live = 0;
    std::vector<int64_t> live;  // bytes live before the first op, then at each op
    int peak_pos = -2;  // position of the op at the peak; -1 before the first op
    std::vector<LiveBuffer> live_at_peak;
    int64_t by_kind[4] = {0, 0, 0, 0};  // bytes live at the peak, by BufferKind
  };

  Status PlanBlock(const ir::Block& block, int scope, const std::vector<int>& returned_into);
  Status PlanOp(const ir::Block& block, const ir::Operation& op, int scope, int pos);
  bool UpdatesInPlace(const ir::Block& block, const ir::Operation& loop, int i, int scope, int pos);
  Status PlanBodies(const ir::Operation& op, int scope, int pos);
  Status PlanCall(const ir::Operation& op, int scope, int pos);
  Status ExtendUses(const ir::Operation& op, int scope, int pos);
  void MarkReturned(const ir::Operation& ret, int scope, const std::vector<int>& returned_into);
  // The argument buffer donated to entry result `result`, or -1.
  int DonatedBuffer(size_t result) const;
  void Place(const ir::Block& block, int scope);
  Status NewBuffers(ir::Value v, BufferKind kind, int scope, int pos);
  int AddChunk(const ir::Operation& op, int scope, int pos, const BodyPlan& body);
  StatusOr<std::vector<int>*> LeavesOf(ir::Value v);
  std::vector<int> ResultLeaves(const ir::Operation& op) const;
  int64_t AbsoluteOffset(int buffer) const;
  std::string Name(ir::Value v) const;

  ModulePlanner& module_;
  const ir::Function& f_;
  bool is_entry_;
  std::vector<Buffer> buffers_;
  std::vector<Scope> scopes_;
  std::vector<std::vector<int>> leaves_;  // by value id: a buffer per tensor, -1 for none
  std::vector<bool> host_;                // by value id: stored in host memory, not HBM
  int64_t host_bytes_ = 0;
  BodyPlan body_;
};

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_BUFFER_PLANNER_H_

// The HLO front end end to end: lowered programs run on the interpreter and
// timed, against numbers worked out by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "frontend/hlo/test_util.h"
#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/timing/timing.h"

namespace tpusim::frontend {
namespace {

using hlo_test::F32;
using hlo_test::FindOp;
using hlo_test::Make;
using hlo_test::MustParse;
using hlo_test::RunMain;
using hlo_test::Values;

TEST(HloLowerTest, DotAddReduceComputes) {
  auto m = MustParse(R"(HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(f32[] %a, f32[] %b)
}
ENTRY %main (x: f32[2,3], w: f32[3,2]) -> (f32[2,2], f32[2]) {
  %x = f32[2,3]{1,0} parameter(0)
  %w = f32[3,2]{1,0} parameter(1)
  %d = f32[2,2]{1,0} dot(f32[2,3]{1,0} %x, f32[3,2]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bias = f32[2]{0} constant({10, 20})
  %b = f32[2,2]{1,0} broadcast(f32[2]{0} %bias), dimensions={1}
  %y = f32[2,2]{1,0} add(%d, %b)
  %zero = f32[] constant(0)
  %r = f32[2]{0} reduce(%y, %zero), dimensions={1}, to_apply=%sum
  ROOT %t = (f32[2,2]{1,0}, f32[2]{0}) tuple(%y, %r)
})");
  ASSERT_NE(m, nullptr);
  auto out = RunMain(*m, {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {1, 0, 0, 1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 2u);
  // x @ w = [[4, 5], [10, 11]]; + [10, 20]; row sums.
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{14, 25, 20, 31}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{39, 51}));
}

TEST(HloLowerTest, LiteralsOfEveryKind) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  a = bf16[2] constant({0.5, -inf})
  b = pred[3] constant({true, false, true})
  c = s8[2,2] constant({ { -128, 1 }, { 2, 127 } })
  d = c64[] constant((1, -2))
  e = u32[] constant(4294967295)
  f = f16[] constant(nan)
  ROOT t = (bf16[2], pred[3], s8[2,2], c64[], u32[], f16[]) tuple(a, b, c, d, e, f)
})");
  ASSERT_NE(m, nullptr);
  auto out = RunMain(*m, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<uint16_t>((*out)[0]), (std::vector<uint16_t>{0x3F00, 0xFF80}));
  EXPECT_EQ(Values<uint8_t>((*out)[1]), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(Values<int8_t>((*out)[2]), (std::vector<int8_t>{-128, 1, 2, 127}));
  EXPECT_EQ(Values<std::complex<float>>((*out)[3])[0], std::complex<float>(1, -2));
  EXPECT_EQ(Values<uint32_t>((*out)[4])[0], 4294967295u);
  EXPECT_EQ(Values<uint16_t>((*out)[5])[0] & 0x7C00, 0x7C00);  // an f16 NaN
}

// A counted loop as jax.lax.fori_loop lowers it: i from 0 while i < 5, acc += x.
constexpr std::string_view kLoop = R"(HloModule loop
%cond (s: (s32[], f32[3])) -> pred[] {
  %s = (s32[], f32[3]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(5)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[3])) -> (s32[], f32[3]) {
  %s = (s32[], f32[3]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %acc = f32[3] get-tuple-element(%s), index=1
  %two = f32[3] constant({1, 2, 3})
  %sum = f32[3] add(%acc, %two)
  ROOT %t = (s32[], f32[3]) tuple(%next, %sum)
}
ENTRY %main (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[3]) tuple(%zero, %x)
  %w = (s32[], f32[3]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[3] get-tuple-element(%w), index=1
}
)";

TEST(HloLowerTest, WhileLoopRunsAndItsTripCountIsInferred) {
  auto m = MustParse(kLoop);
  ASSERT_NE(m, nullptr);
  const ir::Operation* w = FindOp(*m, "stablehlo.while");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->num_operands(), 2);  // the tuple state, split
  EXPECT_EQ(timing::InferTripCount(*w), 5);
  auto out = RunMain(*m, {F32({3}, {0, 0, 1})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{5, 10, 16}));
}

TEST(HloLowerTest, ConditionalBranchesCaptureTheirOperands) {
  auto m = MustParse(R"(HloModule m
neg { p = f32[2] parameter(0)  ROOT n = f32[2] negate(p) }
dbl { p = f32[2] parameter(0)  ROOT n = f32[2] add(p, p) }
idn { p = (f32[2]) parameter(0)  ROOT n = f32[2] get-tuple-element(p), index=0 }
ENTRY e {
  b = pred[] parameter(0)
  i = s32[] parameter(1)
  x = f32[2] parameter(2)
  t = (f32[2]) tuple(x)
  c = f32[2] conditional(b, x, x), true_computation=neg, false_computation=dbl
  ROOT k = f32[2] conditional(i, c, t, c), branch_computations={neg, idn, dbl}
})");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(FindOp(*m, "stablehlo.if"), nullptr);
  EXPECT_NE(FindOp(*m, "stablehlo.case"), nullptr);
  Tensor x = F32({2}, {1, -3});
  auto run = [&](bool b, int32_t i) {
    auto out = RunMain(*m, {Make<uint8_t>(ir::ElementType::kI1, {}, {b}),
                            Make<int32_t>(ir::ElementType::kSI32, {}, {i}), x});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? Values<float>((*out)[0]) : std::vector<float>{};
  };
  EXPECT_EQ(run(true, 0), (std::vector<float>{1, -3}));    // neg(neg(x))
  EXPECT_EQ(run(false, 2), (std::vector<float>{4, -12}));  // dbl(dbl(x))
  EXPECT_EQ(run(true, 1), (std::vector<float>{1, -3}));    // idn((x)), the tuple branch
}

TEST(HloLowerTest, SortAndVariadicReduceSplitTheirTuples) {
  auto m = MustParse(R"(HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  c = s32[] parameter(2)  d = s32[] parameter(3)
     ROOT r = pred[] compare(a, b), direction=LT }
argmax {
  av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[4] parameter(0)
  k = s32[4] iota(), iota_dimension=0
  s = (f32[4], s32[4]) sort(x, k), dimensions={0}, is_stable=true, to_apply=lt
  sk = s32[4] get-tuple-element(s), index=1
  lo = f32[] constant(-inf)
  z = s32[] constant(0)
  r = (f32[], s32[]) reduce(x, k, lo, z), dimensions={0}, to_apply=argmax
  ri = s32[] get-tuple-element(r), index=1
  ROOT o = (s32[4], s32[]) tuple(sk, ri)
})");
  ASSERT_NE(m, nullptr);
  auto out = RunMain(*m, {F32({4}, {3, 1, 4, 2})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<int32_t>((*out)[0]), (std::vector<int32_t>{1, 3, 0, 2}));
  EXPECT_EQ(Values<int32_t>((*out)[1])[0], 2);
}

TEST(HloLowerTest, FusionRunsItsComputation) {
  auto m = MustParse(R"(HloModule m
%fc (p0: f32[2,2], p1: f32[2]) -> f32[2,2] {
  %p0 = f32[2,2] parameter(0)
  %p1 = f32[2] parameter(1)
  %b = f32[2,2] broadcast(%p1), dimensions={0}
  ROOT %m = f32[2,2] multiply(%p0, %b)
}
ENTRY %e (x: f32[2,2], y: f32[2]) -> f32[2,2] {
  %x = f32[2,2]{1,0} parameter(0)
  %y = f32[2]{0} parameter(1)
  %f = f32[2,2]{1,0} fusion(%x, %y), kind=kLoop, calls=%fc
  %c = f32[2,2]{0,1} copy(%f)
  ROOT %n = f32[2,2]{0,1} negate(%c)
})");
  ASSERT_NE(m, nullptr);
  auto out = RunMain(*m, {F32({2, 2}, {1, 2, 3, 4}), F32({2}, {10, 100})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{-10, -20, -300, -400}));
}

// After layout assignment XLA relabels buffers with bitcasts: the values
// follow the physical order.
TEST(HloLowerTest, BitcastsFollowLayouts) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  c = f32[2,3]{0,1} copy(x)
  t = f32[3,2]{1,0} bitcast(c)
  f = f32[6]{0} bitcast(c)
  r = f32[3,2]{0,1} bitcast(x)
  ROOT o = (f32[3,2], f32[6], f32[3,2]{0,1}) tuple(t, f, r)
})");
  ASSERT_NE(m, nullptr);
  auto out = RunMain(*m, {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // Row-major [2,3] read as column-major [3,2]: element (i,j) is x[j*3+i].
  EXPECT_EQ(Values<float>((*out)[2]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

// One instruction of each remaining family, as XLA prints them: the
// attributes must come out in the forms the ops' shape rules accept.
TEST(HloLowerTest, EveryFamilyVerifies) {
  auto m = MustParse(R"(HloModule m, num_partitions=1
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = f32[] add(a, b) }
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
async_body { a = f32[4] parameter(0)  ROOT n = f32[4] negate(a) }
ENTRY e {
  x = f32[4,4] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2,4] parameter(2)
  tok = token[] after-all()
  s0 = s32[] constant(1)
  g = f32[2,1,4] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  sc = f32[4,4] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  z = f32[] constant(0)
  rw = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=add
  ss = f32[4,4] select-and-scatter(x, rw, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
  ds = f32[2,2] dynamic-slice(x, s0, s0), dynamic_slice_sizes={2,2}
  dus = f32[4,4] dynamic-update-slice(x, ds, s0, s0)
  mp = f32[4,4] map(x, dus), dimensions={0,1}, to_apply=add
  rv = f32[4,4] reverse(mp), dimensions={0}
  bc = f32[16] bitcast(rv)
  io = f32[16] iota(), iota_dimension=0
  cc = f32[32] concatenate(bc, io), dimensions={0}
  rp = f32[32] reduce-precision(cc), exponent_bits=5, mantissa_bits=10
  cv = bf16[32] convert(rp)
  cl = f32[32] clamp(z, rp, rp)
  st = u64[2] constant({1, 2})
  rb = (u64[2], u32[4]) rng-bit-generator(st), algorithm=rng_three_fry
  ch = f32[4,4] cholesky(x), lower=true
  ts = f32[4,4] triangular-solve(x, ch), left_side=true, lower=true, transpose_a=TRANSPOSE
  cx = c64[4,4] convert(x)
  ft = c64[4,4] fft(cx), fft_type=FFT, fft_length={4}
  rs = f32[4,4] reduce-scatter(x), replica_groups={{0}}, dimensions={0}, to_apply=add
  a2a = f32[4,4] all-to-all(x), replica_groups={{0}}, dimensions={1}
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  inf = ((f32[4]), token[]) infeed(tok), infeed_config="cfg"
  infd = (f32[4]) get-tuple-element(inf), index=0
  infv = f32[4] get-tuple-element(infd), index=0
  intok = token[] get-tuple-element(inf), index=1
  outtok = token[] outfeed(infv, intok), outfeed_shape=f32[4]{0}
  sd = (f32[4], u32[], token[]) send(infv, outtok), channel_id=1
  sdd = token[] send-done(sd), channel_id=1
  rc = (f32[4], u32[], token[]) recv(sdd), channel_id=1
  rcd = (f32[4], token[]) recv-done(rc), channel_id=1
  obt = (f32[4,4], f32[32]) tuple(ts, cl)
  ob = (f32[4,4], f32[32]) opt-barrier((f32[4,4], f32[32]) obt)
  cs = (f32[4], f32[4], u32[]) copy-start(infv)
  cd = f32[4] copy-done(cs)
  as = ((f32[4]), f32[4], s32[]) async-start(cd), calls=async_body
  ad = f32[4] async-done(as), calls=async_body
  cu = (f32[4], s32[]) custom-call(ad), custom_call_target="foo", backend_config="x"
  ROOT r = (f32[2,1,4], f32[4,4], f32[4,4], bf16[32], (u64[2], u32[4]), c64[4,4], f32[4,4], f32[4,4], u32[], u32[], (f32[4], token[]), (f32[4,4], f32[32]), (f32[4], s32[])) tuple(g, sc, ss, cv, rb, ft, rs, a2a, pid, rid, rcd, ob, cu)
})");
  ASSERT_NE(m, nullptr);
  for (std::string_view name :
       {"stablehlo.gather", "stablehlo.scatter", "stablehlo.reduce_window",
        "stablehlo.select_and_scatter", "stablehlo.map", "stablehlo.rng_bit_generator",
        "stablehlo.triangular_solve", "stablehlo.fft", "stablehlo.reduce_scatter",
        "stablehlo.all_to_all", "stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send",
        "stablehlo.recv", "stablehlo.optimization_barrier", "tpusim.copy",
        "stablehlo.custom_call"}) {
    EXPECT_NE(FindOp(*m, name), nullptr) << name;
  }
}

// XLA's optimized HLO is scheduled, and partitioned already.
TEST(HloLowerTest, ScheduledModulesAreMarkedPerDevice) {
  auto scheduled = MustParse(R"(HloModule m, is_scheduled=true, num_partitions=2
ENTRY e {
  ROOT x = f32[4] parameter(0), sharding={devices=[2]0,1}
})");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_TRUE(scheduled->attrs().Has(ir::kSpmdPartitioned));
  auto global = MustParse(R"(HloModule m, num_partitions=2
ENTRY e {
  ROOT x = f32[4] parameter(0), sharding={devices=[2]0,1}
})");
  ASSERT_NE(global, nullptr);
  EXPECT_FALSE(global->attrs().Has(ir::kSpmdPartitioned));
}

TEST(HloLowerTest, SendRecvPairsComeFromTheFrontendAttribute) {
  auto m = MustParse(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[4] parameter(0)
  tok = token[] after-all()
  sd = (f32[4], u32[], token[]) send(x, tok), channel_id=2, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,3}}"}
  sdd = token[] send-done(sd), channel_id=2
  rc = (f32[4], u32[], token[]) recv(sdd), channel_id=2, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,3}}"}
  rcd = (f32[4], token[]) recv-done(rc), channel_id=2
  ROOT r = f32[4] get-tuple-element(rcd), index=0
})");
  ASSERT_NE(m, nullptr);
  for (std::string_view name : {"stablehlo.send", "stablehlo.recv"}) {
    const ir::Operation* op = FindOp(*m, name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(op->attr("source_target_pairs").ToString(),
              "dense<[[0, 1], [1, 2], [2, 3]]> : tensor<3x2xi64>")
        << name;
  }
  auto bad = ParseHlo(R"(HloModule m
ENTRY e {
  tok = token[] after-all()
  ROOT rc = (f32[4], u32[], token[]) recv(tok), channel_id=2, frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1;2}}"}
})",
                      "bad.hlo");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("bad.hlo:4:"), std::string::npos)
      << bad.status().ToString();
}

constexpr std::string_view kCustomCall = R"(HloModule m
ENTRY e {
  x = f32[128,128] parameter(0)
  ROOT y = f32[128,128] custom-call(x), custom_call_target="my_kernel", api_version=API_VERSION_STATUS_RETURNING
})";

TEST(HloLowerTest, CustomCallIsTimedFromShapesWithANote) {
  auto m = MustParse(kCustomCall);
  ASSERT_NE(m, nullptr);
  const ir::Operation* cc = FindOp(*m, "stablehlo.custom_call");
  ASSERT_NE(cc, nullptr);
  EXPECT_EQ(cc->attr("call_target_name").str(), "my_kernel");
  auto t = timing::TimeStatically(*m, "main", *hw::FindPreset("v5e"), {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_GT(t->total_seconds(), 0);
  ASSERT_EQ(t->notes().size(), 1u);
  EXPECT_EQ(t->notes()[0],
            "custom-call 'my_kernel' at t.hlo:4:8 timed from its shapes (reads 65536 bytes, "
            "writes 65536 bytes); it has no values");
}

TEST(HloLowerTest, CustomCallHasNoValues) {
  auto m = MustParse(kCustomCall);
  ASSERT_NE(m, nullptr);
  auto out = RunMain(*m, {F32({128, 128}, std::vector<float>(128 * 128, 1.0f))});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(out.status().ToString().find("'my_kernel'"), std::string::npos);
}

// The HLO spellings of one training step, before and after XLA's
// optimizations, compute what its StableHLO spelling computes.
class MlpStepTest : public testing::TestWithParam<const char*> {};

TEST_P(MlpStepTest, MatchesTheStableHloTwin) {
  std::string hlo = test::ReadFile(std::string(TPUSIM_SOURCE_DIR "/examples/") + GetParam());
  std::string mlir = test::ReadFile(TPUSIM_SOURCE_DIR "/examples/mlp_step.mlir");
  ASSERT_FALSE(hlo.empty());
  auto from_hlo = MustParse(hlo);
  auto from_mlir = ParseStableHlo(mlir, "mlp_step.mlir");
  ASSERT_NE(from_hlo, nullptr);
  ASSERT_TRUE(from_mlir.ok()) << from_mlir.status().ToString();
  std::vector<Tensor> args;
  uint32_t seed = 1;
  for (const ir::Type& t : (*from_mlir)->Lookup("main")->type().inputs) {
    std::vector<float> v(t.num_elements());
    for (float& f : v) {
      seed = seed * 1664525u + 1013904223u;
      f = static_cast<float>(seed >> 8) / static_cast<float>(1u << 24) - 0.5f;
    }
    args.push_back(F32(t.shape(), v));
  }
  auto a = RunMain(*from_hlo, args);
  auto b = RunMain(**from_mlir, args);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_TRUE((*a)[i].BitwiseEquals((*b)[i])) << "result " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, MlpStepTest,
                         testing::Values("mlp_step.hlo", "mlp_step.after_optimizations.hlo"));

}  // namespace
}  // namespace tpusim::frontend

// The HLO text front end: syntax of both dump styles, lowering of structure
// and attributes, and located errors.
#include "tpusim/frontend/hlo/parser.h"

#include <gtest/gtest.h>

#include "frontend/hlo/test_util.h"

namespace tpusim::frontend {
namespace {

using hlo_test::FindOp;
using hlo_test::MustParse;

// A newer dump: `%` sigils, operand shapes inline, metadata, a fusion.
constexpr std::string_view kFusedDump =
    R"(HloModule jit_f, entry_computation_layout={(f32[8,16]{1,0}, f32[16]{0})->f32[8,16]{1,0}}, frontend_attributes={fingerprint_before_lhs="abc"}

%fused_computation (param_0.1: f32[8,16], param_1: f32[16]) -> f32[8,16] {
  %param_0.1 = f32[8,16]{1,0} parameter(0)
  %param_1 = f32[16]{0} parameter(1)
  %broadcast.1 = f32[8,16]{1,0} broadcast(f32[16]{0} %param_1), dimensions={1}
  ROOT %add.0 = f32[8,16]{1,0} add(f32[8,16]{1,0} %param_0.1, f32[8,16]{1,0} %broadcast.1), metadata={op_name="jit(f)/add" source_file="x.py" source_line=3}
}

ENTRY %main.5 (Arg_0.1: f32[8,16], Arg_1.2: f32[16]) -> f32[8,16] {
  %Arg_0.1 = f32[8,16]{0,1} parameter(0), sharding={replicated}
  %Arg_1.2 = f32[16]{0} parameter(1), sharding={replicated}
  ROOT %fusion = f32[8,16]{1,0} fusion(%Arg_0.1, /*index=1*/%Arg_1.2), kind=kLoop, calls=%fused_computation, backend_config={"flag":{"a":[1,2]}}
}
)";

TEST(HloParserTest, LowersFusionIntoFusionOpWithLayouts) {
  auto m = ParseHlo(kFusedDump, "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->name(), "jit_f");
  const ir::Function* main = (*m)->Lookup("main");
  ASSERT_NE(main, nullptr);
  EXPECT_TRUE(main->is_public());
  ASSERT_EQ(main->type().inputs.size(), 2u);
  EXPECT_EQ(main->type().inputs[0].layout(), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(main->type().inputs[1].layout().empty());  // {0} is the default
  const ir::Operation* fusion = FindOp(**m, "tpusim.fusion");
  ASSERT_NE(fusion, nullptr);
  EXPECT_EQ(fusion->attr("kind").str(), "kLoop");
  EXPECT_EQ(fusion->attr("name").str(), "fusion");
  ASSERT_EQ(fusion->num_regions(), 1);
  const ir::Block& body = fusion->region(0).front();
  ASSERT_EQ(body.num_arguments(), 2);
  ASSERT_EQ(body.ops().size(), 3u);
  EXPECT_EQ(body.ops()[0]->name_str(), "stablehlo.broadcast_in_dim");
  EXPECT_EQ(body.ops()[0]->attr("broadcast_dimensions").AsInts(), (std::vector<int64_t>{1}));
  EXPECT_EQ(body.ops()[1]->name_str(), "stablehlo.add");
  EXPECT_EQ(body.ops()[2]->name_str(), "stablehlo.return");
  // The module's own functions: the fused computation is a region only.
  EXPECT_EQ((*m)->functions().size(), 1u);
}

TEST(HloParserTest, ReadsTheOldStyleWithoutSigilsOrOperandShapes) {
  auto m = MustParse(R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  p = f32[2,3] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[2] reduce(p, zero), dimensions={1}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const ir::Operation* reduce = FindOp(*m, "stablehlo.reduce");
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->attr("dimensions").AsInts(), (std::vector<int64_t>{1}));
  const ir::Block& body = reduce->region(0).front();
  ASSERT_EQ(body.num_arguments(), 2);
  EXPECT_EQ(body.argument(0).type(), ir::Type::Tensor(ir::ElementType::kF32, {}));
  EXPECT_TRUE(LooksLikeHlo("/* dump */\n  HloModule m"));
  EXPECT_FALSE(LooksLikeHlo("module @m {}"));
}

TEST(HloParserTest, TiledLayoutsKeepMinorToMajorOnly) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  ROOT p = bf16[16,256]{0,1:T(8,128)(2,1)S(1)} parameter(0)
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->Lookup("main")->type().inputs[0].layout(), (std::vector<int64_t>{0, 1}));
}

TEST(HloParserTest, ConvertsAttributesToGenericForms) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={high,default}
  s = f32[2,2,5] slice(d), slice={[0:2], [1:3], [0:5:1]}
  p = f32[] constant(0)
  q = f32[3,4,6] pad(s, p), padding=0_1x0_0_2x1_0
  c = pred[3,4,6] compare(q, q), direction=LT, type=TOTALORDER
  ROOT t = f32[6,4,3] transpose(q), dimensions={2,1,0}
})");
  ASSERT_NE(m, nullptr);
  const ir::Operation* dot = FindOp(*m, "stablehlo.dot_general");
  ASSERT_NE(dot, nullptr);
  ir::Attribute dn = dot->attr("dot_dimension_numbers");
  EXPECT_EQ(dn.name(), "stablehlo.dot");
  EXPECT_EQ(dn.Get("lhs_batching_dimensions").AsInts(), (std::vector<int64_t>{0}));
  EXPECT_EQ(dn.Get("rhs_contracting_dimensions").AsInts(), (std::vector<int64_t>{1}));
  EXPECT_EQ(dot->attr("precision_config").array()[0].str(), "HIGH");
  const ir::Operation* slice = FindOp(*m, "stablehlo.slice");
  EXPECT_EQ(slice->attr("start_indices").AsInts(), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(slice->attr("limit_indices").AsInts(), (std::vector<int64_t>{2, 3, 5}));
  const ir::Operation* pad = FindOp(*m, "stablehlo.pad");
  EXPECT_EQ(pad->attr("edge_padding_low").AsInts(), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(pad->attr("edge_padding_high").AsInts(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(pad->attr("interior_padding").AsInts(), (std::vector<int64_t>{0, 2, 0}));
  const ir::Operation* cmp = FindOp(*m, "stablehlo.compare");
  EXPECT_EQ(cmp->attr("comparison_direction").str(), "LT");
  EXPECT_EQ(cmp->attr("compare_type").str(), "TOTALORDER");
  EXPECT_EQ(FindOp(*m, "stablehlo.transpose")->attr("permutation").AsInts(),
            (std::vector<int64_t>{2, 1, 0}));
}

TEST(HloParserTest, ConvolutionWindowAndDimLabels) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  ROOT y = f32[1,4,4,4] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  ASSERT_NE(m, nullptr);
  const ir::Operation* conv = FindOp(*m, "stablehlo.convolution");
  ASSERT_NE(conv, nullptr);
  ir::Attribute dn = conv->attr("dimension_numbers");
  EXPECT_EQ(dn.Get("input_batch_dimension").int_value(), 0);
  EXPECT_EQ(dn.Get("input_feature_dimension").int_value(), 3);
  EXPECT_EQ(dn.Get("input_spatial_dimensions").AsInts(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(dn.Get("kernel_input_feature_dimension").int_value(), 2);
  EXPECT_EQ(dn.Get("kernel_output_feature_dimension").int_value(), 3);
  EXPECT_EQ(conv->attr("window_strides").AsInts(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv->attr("padding").AsInts(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->attr("feature_group_count").int_value(), 1);
}

TEST(HloParserTest, ReplicaGroupsInBothForms) {
  auto m = MustParse(R"(HloModule m, replica_count=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  r = f32[8] all-reduce(x), replica_groups={{0,1},{2,3}}, to_apply=sum
  ROOT g = f32[16] all-gather(r), dimensions={0}, replica_groups=[2,2]<=[2,2]T(1,0), channel_id=3, use_global_device_ids=true
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->attrs().Get("mhlo.num_replicas").int_value(), 4);
  const ir::Operation* ar = FindOp(*m, "stablehlo.all_reduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->attr("replica_groups").AsInts(), (std::vector<int64_t>{0, 1, 2, 3}));
  const ir::Operation* ag = FindOp(*m, "stablehlo.all_gather");
  ASSERT_NE(ag, nullptr);
  // iota [2,2]<=[2,2]T(1,0): ids laid out 2x2 and transposed.
  EXPECT_EQ(ag->attr("replica_groups").AsInts(), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(ag->attr("replica_groups").type().shape(), (ir::Shape{2, 2}));
  EXPECT_EQ(ag->attr("all_gather_dim").int_value(), 0);
  EXPECT_EQ(ag->attr("channel_handle").Get("handle").int_value(), 3);
  EXPECT_TRUE(ag->attr("use_global_device_ids"));
}

TEST(HloParserTest, AsyncPairsBecomeTheSynchronousOp) {
  auto m = MustParse(R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] all-reduce-start(x), replica_groups={}, to_apply=sum
  d = f32[8] all-reduce-done(s)
  gs = (f32[8], f32[16]) all-gather-start(d), dimensions={0}, replica_groups={{0,1}}
  g = f32[16] all-gather-done(gs)
  cs = (f32[16], f32[16], u32[], u32[]) collective-permute-start(g), source_target_pairs={{0,1},{1,0}}
  ROOT cd = f32[16] collective-permute-done(cs)
})");
  ASSERT_NE(m, nullptr);
  std::vector<std::string> names;
  for (const auto& op : m->Lookup("main")->entry().ops()) names.push_back(op->name_str());
  EXPECT_EQ(names, (std::vector<std::string>{"stablehlo.all_reduce", "stablehlo.all_gather",
                                             "stablehlo.collective_permute", "func.return"}));
  const ir::Operation* cp = FindOp(*m, "stablehlo.collective_permute");
  EXPECT_EQ(cp->attr("source_target_pairs").AsInts(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(cp->result(0).type(), ir::Type::Tensor(ir::ElementType::kF32, {16}));
}

TEST(HloParserTest, TuplesStaySplitUntilNeeded) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  t = (f32[2], f32[2]) tuple(a, a)
  b = f32[2] get-tuple-element(t), index=1
  ROOT r = (f32[2], (f32[2], f32[2])) tuple(b, t)
})");
  ASSERT_NE(m, nullptr);
  const ir::Function* main = m->Lookup("main");
  // The tuple parameter stays a tuple; the root tuple is main's results.
  EXPECT_TRUE(main->type().inputs[0].is_tuple());
  ASSERT_EQ(main->type().results.size(), 2u);
  EXPECT_TRUE(main->type().results[1].is_tuple());
  const ir::Operation* gte = FindOp(*m, "stablehlo.get_tuple_element");
  ASSERT_NE(gte, nullptr);
  EXPECT_EQ(gte->attr("index").int_value(), 0);
  EXPECT_NE(FindOp(*m, "stablehlo.tuple"), nullptr);  // t, built for the result
}

TEST(HloParserTest, CallBecomesAPrivateFunction) {
  auto m = MustParse(R"(HloModule m
%twice (x: f32[4]) -> (f32[4], f32[4]) {
  %x = f32[4] parameter(0)
  %y = f32[4] add(%x, %x)
  ROOT %t = (f32[4], f32[4]) tuple(%y, %x)
}
ENTRY %e (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %c = (f32[4], f32[4]) call(%a), to_apply=%twice
  ROOT %r = f32[4] get-tuple-element(%c), index=0
})");
  ASSERT_NE(m, nullptr);
  const ir::Function* twice = m->Lookup("twice");
  ASSERT_NE(twice, nullptr);
  EXPECT_FALSE(twice->is_public());
  EXPECT_EQ(twice->type().results.size(), 2u);
  const ir::Operation* call = FindOp(*m, "func.call");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->attr("callee").str(), "twice");
}

TEST(HloParserTest, ShardingsBecomeArgumentAndResultAttributes) {
  auto m = MustParse(R"(HloModule m, num_partitions=2
ENTRY e {
  a = f32[4,2] parameter(0), sharding={devices=[2,1]<=[2]}
  b = f32[4,2] parameter(1)
  s = f32[4,2] custom-call(a), custom_call_target="Sharding", sharding={replicated}
  ROOT t = (f32[4,2], f32[4,2]) tuple(s, b), sharding={{replicated}, {devices=[1,2]0,1}}
})");
  ASSERT_NE(m, nullptr);
  const ir::Function* main = m->Lookup("main");
  EXPECT_EQ(main->arg_attrs()[0].Get("mhlo.sharding").str(), "{devices=[2,1]<=[2]}");
  EXPECT_FALSE(main->arg_attrs()[1].Has("mhlo.sharding"));
  EXPECT_EQ(main->result_attrs()[0].Get("mhlo.sharding").str(), "{replicated}");
  EXPECT_EQ(main->result_attrs()[1].Get("mhlo.sharding").str(), "{devices=[1,2]0,1}");
  EXPECT_EQ(FindOp(*m, "stablehlo.custom_call")->attr("mhlo.sharding").str(), "{replicated}");
}

TEST(HloParserTest, ElidedConstantKeepsItsShapeAndNamesItself) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  ROOT c = f32[1024,1024]{1,0} constant({...})
})");
  ASSERT_NE(m, nullptr);
  const ir::Operation* c = FindOp(*m, "stablehlo.custom_call");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->attr("call_target_name").str(), "hlo.elided_constant");
  EXPECT_EQ(c->result(0).type(), ir::Type::Tensor(ir::ElementType::kF32, {1024, 1024}));
}

Status ParseError(std::string_view text) { return ParseHlo(text, "t.hlo").status(); }

TEST(HloParserErrorTest, UndefinedOperandIsLocated) {
  Status s = ParseError(
      "HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, c)\n}\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.ToString().find("t.hlo:4:25: use of undefined instruction %c") != std::string::npos,
            true)
      << s.ToString();
  EXPECT_NE(s.ToString().find("  ROOT b = f32[] add(a, c)\n                        ^"),
            std::string::npos)
      << s.ToString();
}

// An operand's written shape must be its instruction's, layouts aside, as
// XLA's parser demands.
TEST(HloParserErrorTest, OperandShapesMustMatchTheirInstructions) {
  Status s = ParseError(
      "HloModule m\nENTRY e {\n  %p = f32[2]{0} parameter(0)\n"
      "  ROOT %a = f32[2]{0} add(s32[7,7]{1,0} %p, pred[] %p)\n}\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.ToString().find("t.hlo:4:27: operand %p is f32[2], not s32[7,7] as written here"),
            std::string::npos)
      << s.ToString();
  // The same shape without its layout, or in a tuple, is fine.
  EXPECT_TRUE(ParseHlo("HloModule m\nENTRY e {\n  %p = f32[2]{0} parameter(0)\n"
                       "  %t = (f32[2]{0}) tuple(f32[2] %p)\n"
                       "  ROOT %a = f32[2]{0} get-tuple-element((f32[2]{0}) %t), index=0\n}\n",
                       "t.hlo")
                  .ok());
}

TEST(HloParserErrorTest, UnsupportedOpcodeIsUnimplementedAtTheOpcode) {
  Status s = ParseError("HloModule m\nENTRY e {\n  ROOT a = f32[2] frobnicate()\n}\n");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.ToString().find("t.hlo:3:19: HLO opcode 'frobnicate' is not supported"),
            std::string::npos)
      << s.ToString();
}

TEST(HloParserErrorTest, MalformedInputs) {
  struct Case {
    std::string_view text;
    std::string_view message;
  };
  const Case cases[] = {
      {"", "t.hlo:1:1: expected 'HloModule'"},
      {"HloModule m\nENTRY e {\n  a = f32[2 parameter(0)\n}", "t.hlo:3:13: expected ',' or ']'"},
      {"HloModule m\nENTRY e {\n  a = q32[2] parameter(0)\n}", "unknown element type 'q32'"},
      {"HloModule m\nENTRY e {\n  a = f32[2]{0,0} parameter(0)\n}", "is not a permutation"},
      {"HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  a = f32[2] parameter(1)\n}",
       "t.hlo:4:3: instruction %a is defined twice"},
      {"HloModule m\nENTRY e {\n  a = f32[2] constant({1, 2, 3})\n}", "more than 2 elements"},
      {"HloModule m\nENTRY e {\n  a = s8[] constant(300)\n}", "is not a value of i8"},
      {"HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] add(a, b)\n}",
       "cycle"},
      {"HloModule m\nENTRY e {\n  a = f32[2] parameter(0), metadata={op_name=\"x\n}",
       "unterminated string"},
      {"HloModule m\nENTRY e {\n  a = f32[2] call(), to_apply=e\n}", "calls itself"},
      {"HloModule m\nENTRY e {\n  a = f32[<=2] parameter(0)\n}", "dynamic dimensions"},
  };
  for (const Case& c : cases) {
    Status s = ParseError(c.text);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.ToString().find(c.message), std::string::npos)
        << "input:\n"
        << c.text << "\ngot: " << s.ToString();
  }
}

TEST(HloParserErrorTest, NestedReuseOfBodiesIsBounded) {
  // Each level maps the one below twice: 2^30 copies if inlined naively.
  std::string text =
      "HloModule m\nc0 { a = f32[] parameter(0) b = f32[] parameter(1) "
      "ROOT r = f32[] add(a, b) }\n";
  for (int k = 1; k <= 30; ++k) {
    std::string prev = "c" + std::to_string(k - 1);
    text += "c" + std::to_string(k) +
            " { a = f32[] parameter(0) b = f32[] parameter(1) "
            "x = f32[] map(a, b), dimensions={}, to_apply=" +
            prev + " ROOT y = f32[] map(x, b), dimensions={}, to_apply=" + prev + " }\n";
  }
  text +=
      "ENTRY e { p = f32[] parameter(0) ROOT q = f32[] map(p, p), dimensions={}, to_apply=c30 }";
  EXPECT_EQ(ParseError(text).code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace tpusim::frontend

#include "tpusim/frontend/stablehlo/parser.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tpusim/ir/printer.h"

namespace tpusim::frontend {
namespace {

std::unique_ptr<ir::Module> MustParse(std::string_view text) {
  auto m = ParseStableHlo(text, "test.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : nullptr;
}

// Parses `body` as the body of `func.func @f(<args>)` and returns the first op.
const ir::Operation* FirstOp(const ir::Module& m) {
  const ir::Block& b = m.functions().at(0)->entry();
  return b.ops().empty() ? nullptr : b.ops()[0].get();
}

// The pretty and generic spellings must build the same operations.
void ExpectSameAsGeneric(std::string_view pretty, std::string_view generic) {
  auto a = MustParse(pretty);
  auto b = MustParse(generic);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(ir::PrintModule(*a), ir::PrintModule(*b));
}

TEST(PrettyFormTest, ElementwiseSameType) {
  ExpectSameAsGeneric(R"(func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.add %a, %b : tensor<2xf32>
      return %0 : tensor<2xf32>
    })",
                      R"(func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "func.return"(%0) : (tensor<2xf32>) -> ()
    })");
}

TEST(PrettyFormTest, CompareAndBroadcast) {
  ExpectSameAsGeneric(R"(func.func @f(%a: tensor<f32>) -> tensor<2xi1> {
      %0 = stablehlo.compare  NE, %a, %a,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<i1>) -> tensor<2xi1>
      func.return %1 : tensor<2xi1>
    })",
                      R"(func.func @f(%a: tensor<f32>) -> tensor<2xi1> {
      %0 = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<2xi1>
      "func.return"(%1) : (tensor<2xi1>) -> ()
    })");
}

TEST(PrettyFormTest, SliceTransposePadConcatIota) {
  ExpectSameAsGeneric(R"(func.func @f(%x: tensor<4x4xf32>, %v: tensor<f32>) -> () {
      %0 = stablehlo.slice %x [0:2, 1:4:2] : (tensor<4x4xf32>) -> tensor<2x2xf32>
      %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %2 = stablehlo.pad %1, %v, low = [0, 1], high = [1, 0], interior = [0, 0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<3x3xf32>
      %3 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
      %4 = stablehlo.iota dim = 1 : tensor<2x3xi32>
      %5 = stablehlo.reduce_precision %v, format = e5m10 : tensor<f32>
      func.return
    })",
                      R"(func.func @f(%x: tensor<4x4xf32>, %v: tensor<f32>) -> () {
      %0 = "stablehlo.slice"(%x) <{start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 4>, strides = array<i64: 1, 2>}> : (tensor<4x4xf32>) -> tensor<2x2xf32>
      %1 = "stablehlo.transpose"(%0) {permutation = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %2 = "stablehlo.pad"(%1, %v) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>} : (tensor<2x2xf32>, tensor<f32>) -> tensor<3x3xf32>
      %3 = "stablehlo.concatenate"(%0, %1) {dimension = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
      %4 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi32>
      %5 = "stablehlo.reduce_precision"(%v) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32} : (tensor<f32>) -> tensor<f32>
      "func.return"() : () -> ()
    })");
}

TEST(PrettyFormTest, DotGeneral) {
  ExpectSameAsGeneric(R"(func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> () {
      %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      func.return
    })",
                      R"(func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> () {
      %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      func.return
    })");
}

TEST(PrettyFormTest, ConvolutionRawDimensionNumbers) {
  auto m = MustParse(R"(func.func @f(%a: tensor<1x4x4x1xf32>, %b: tensor<3x3x1x2xf32>) -> () {
      %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [0, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x2xf32>) -> tensor<1x2x4x2xf32>
      func.return
    })");
  ASSERT_TRUE(m);
  const ir::Operation* op = FirstOp(*m);
  ir::Attribute dn = op->attr("dimension_numbers");
  EXPECT_EQ(dn.name(), "stablehlo.conv");
  EXPECT_EQ(dn.Get("input_batch_dimension").int_value(), 0);
  EXPECT_EQ(dn.Get("input_feature_dimension").int_value(), 3);
  EXPECT_EQ(dn.Get("input_spatial_dimensions").AsInts(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(dn.Get("kernel_input_feature_dimension").int_value(), 2);
  EXPECT_EQ(dn.Get("kernel_output_feature_dimension").int_value(), 3);
  EXPECT_EQ(dn.Get("kernel_spatial_dimensions").AsInts(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(op->attr("window_strides").AsInts(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(op->attr("padding").AsInts(), (std::vector<int64_t>{1, 1, 0, 2}));
  EXPECT_EQ(op->attr("padding").type(), ir::Type::Tensor(ir::ElementType::kSI64, {2, 2}));
  EXPECT_EQ(op->attr("rhs_dilation").AsInts(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(op->attr("window_reversal").AsInts(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(op->attr("feature_group_count").int_value(), 1);
}

TEST(PrettyFormTest, ReduceAppliesBuildsRegion) {
  ExpectSameAsGeneric(R"(func.func @f(%x: tensor<2x3xf32>, %c: tensor<f32>) -> () {
      %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
      func.return
    })",
                      R"(func.func @f(%x: tensor<2x3xf32>, %c: tensor<f32>) -> () {
      %0 = "stablehlo.reduce"(%x, %c) <{dimensions = array<i64: 1>}> ({
      ^bb0(%l: tensor<f32>, %r: tensor<f32>):
        %s = "stablehlo.add"(%l, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
      }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
      func.return
    })");
}

TEST(PrettyFormTest, ReduceWithReducerPairsArguments) {
  auto m = MustParse(R"(func.func @f(%x: tensor<4xf32>, %i: tensor<4xi32>, %c: tensor<f32>, %d: tensor<i32>) -> () {
      %0:2 = stablehlo.reduce(%x init: %c), (%i init: %d) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
       reducer(%a: tensor<f32>, %b: tensor<f32>) (%e: tensor<i32>, %g: tensor<i32>) {
        stablehlo.return %a, %e : tensor<f32>, tensor<i32>
      }
      func.return
    })");
  ASSERT_TRUE(m);
  const ir::Block& body = FirstOp(*m)->region(0).front();
  ASSERT_EQ(body.num_arguments(), 4);
  // Group i holds arguments i and i + N.
  EXPECT_EQ(body.argument(0).name(), "a");
  EXPECT_EQ(body.argument(1).name(), "e");
  EXPECT_EQ(body.argument(2).name(), "b");
  EXPECT_EQ(body.argument(3).name(), "g");
}

TEST(PrettyFormTest, WhileMultiResult) {
  ExpectSameAsGeneric(R"(func.func @f(%i: tensor<i64>, %s: tensor<f32>) -> () {
      %0:2 = stablehlo.while(%iterArg = %i, %iterArg_0 = %s) : tensor<i64>, tensor<f32>
      cond {
        %c = stablehlo.compare LT, %iterArg, %iterArg : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        stablehlo.return %iterArg, %iterArg_0 : tensor<i64>, tensor<f32>
      }
      %1 = stablehlo.add %0#1, %0#1 : tensor<f32>
      func.return
    })",
                      R"(func.func @f(%i: tensor<i64>, %s: tensor<f32>) -> () {
      %0:2 = "stablehlo.while"(%i, %s) ({
      ^bb0(%a: tensor<i64>, %b: tensor<f32>):
        %c = "stablehlo.compare"(%a, %a) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
        "stablehlo.return"(%c) : (tensor<i1>) -> ()
      }, {
      ^bb0(%a: tensor<i64>, %b: tensor<f32>):
        "stablehlo.return"(%a, %b) : (tensor<i64>, tensor<f32>) -> ()
      }) : (tensor<i64>, tensor<f32>) -> (tensor<i64>, tensor<f32>)
      %1 = "stablehlo.add"(%0#1, %0#1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      func.return
    })");
}

TEST(PrettyFormTest, CustomCallCompositeCallTupleCheck) {
  ExpectSameAsGeneric(R"(func.func @g(%x: tensor<i64>) -> tensor<i64> {
      return %x : tensor<i64>
    }
    func.func @f(%x: tensor<i64>) -> () {
      %0 = stablehlo.custom_call @foo(%x) {has_side_effect = true} : (tensor<i64>) -> tensor<i64>
      %1 = stablehlo.composite "my.op" %0 {decomposition = @g} : (tensor<i64>) -> tensor<i64>
      %2 = call @g(%1) : (tensor<i64>) -> tensor<i64>
      %3 = stablehlo.tuple %2, %2 : tuple<tensor<i64>, tensor<i64>>
      %4 = stablehlo.get_tuple_element %3[1] : (tuple<tensor<i64>, tensor<i64>>) -> tensor<i64>
      check.expect_eq_const %4, dense<1> : tensor<i64>
      check.expect_almost_eq %4, %4, tolerance = 0.5 : tensor<i64>
      check.expect_close %4, %4, max_ulp_difference = 3, min_ulp_difference = 1 : tensor<i64>, tensor<i64>
      func.return
    })",
                      R"(func.func @g(%x: tensor<i64>) -> tensor<i64> {
      "func.return"(%x) : (tensor<i64>) -> ()
    }
    func.func @f(%x: tensor<i64>) -> () {
      %0 = "stablehlo.custom_call"(%x) {call_target_name = "foo", has_side_effect = true} : (tensor<i64>) -> tensor<i64>
      %1 = "stablehlo.composite"(%0) {name = "my.op", decomposition = @g} : (tensor<i64>) -> tensor<i64>
      %2 = "func.call"(%1) {callee = @g} : (tensor<i64>) -> tensor<i64>
      %3 = "stablehlo.tuple"(%2, %2) : (tensor<i64>, tensor<i64>) -> tuple<tensor<i64>, tensor<i64>>
      %4 = "stablehlo.get_tuple_element"(%3) {index = 1 : i32} : (tuple<tensor<i64>, tensor<i64>>) -> tensor<i64>
      "check.expect_eq_const"(%4) {value = dense<1> : tensor<i64>} : (tensor<i64>) -> ()
      "check.expect_almost_eq"(%4, %4) {tolerance = 0.5 : f64} : (tensor<i64>, tensor<i64>) -> ()
      "check.expect_close"(%4, %4) {max_ulp_difference = 3 : i64, min_ulp_difference = 1 : i64} : (tensor<i64>, tensor<i64>) -> ()
      "func.return"() : () -> ()
    })");
}

TEST(PrettyFormTest, ChloForms) {
  ExpectSameAsGeneric(R"(func.func @f(%x: tensor<4xf32>) -> () {
      %0 = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>
      %1 = chlo.next_after %0, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      %2:2 = chlo.top_k(%1, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)
      func.return
    })",
                      R"(func.func @f(%x: tensor<4xf32>) -> () {
      %0 = "chlo.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %1 = "chlo.next_after"(%0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %2:2 = "chlo.top_k"(%1) {k = 2 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi32>)
      func.return
    })");
}

TEST(ModuleTest, JaxModuleWithAttributesAndLocations) {
  auto m = MustParse(R"(#loc1 = loc("x.py":3:4)
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"} loc("x")) -> (tensor<2xf32> {jax.result_info = ""}) {
    %0 = stablehlo.sine %arg0 : tensor<2xf32> loc(#loc1)
    return %0 : tensor<2xf32> loc(#loc)
  } loc(#loc)
  func.func private @helper() {
    func.return
  }
} loc(#loc)
#loc = loc(unknown)
)");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name(), "jit_f");
  EXPECT_EQ(m->attrs().Get("mhlo.num_partitions").int_value(), 1);
  const ir::Function* main = m->Lookup("main");
  ASSERT_NE(main, nullptr);
  EXPECT_TRUE(main->is_public());
  EXPECT_FALSE(m->Lookup("helper")->is_public());
  EXPECT_EQ(main->arg_attrs()[0].Get("mhlo.sharding").str(), "{replicated}");
  EXPECT_EQ(main->result_attrs()[0].Get("jax.result_info").str(), "");
  const ir::Operation* sine = main->entry().ops()[0].get();
  EXPECT_EQ(sine->loc().ToString(), "test.mlir:4:5");
}

TEST(ModuleTest, GenericRegionsAndProperties) {
  auto m = MustParse(R"(func.func @f(%x: tensor<3xi64>) -> tensor<3xi64> {
    %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %1 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%1) : (tensor<i1>) -> ()
    }) : (tensor<3xi64>) -> tensor<3xi64>
    "func.return"(%0) : (tensor<3xi64>) -> ()
  })");
  ASSERT_TRUE(m);
  const ir::Operation* sort = FirstOp(*m);
  EXPECT_EQ(sort->attr("dimension").int_value(), 0);
  EXPECT_TRUE(sort->attr("is_stable").bool_value());
  ASSERT_EQ(sort->num_regions(), 1);
  EXPECT_EQ(sort->region(0).front().num_arguments(), 2);
  EXPECT_EQ(m->functions()[0]->num_values(), 5);  // x, a, b, compare, sort
}

TEST(ModuleTest, StructAttributes) {
  auto m = MustParse(R"(func.func @f(%x: tensor<3xi64>, %i: tensor<1x1xi32>) -> () {
    %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>}> : (tensor<3xi64>, tensor<1x1xi32>) -> tensor<1xi64>
    %1 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      "stablehlo.return"(%a) : (tensor<i64>) -> ()
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<3xi64>) -> tensor<3xi64>
    func.return
  })");
  ASSERT_TRUE(m);
  const auto& ops = m->functions()[0]->entry().ops();
  ir::Attribute dn = ops[0]->attr("dimension_numbers");
  EXPECT_EQ(dn.name(), "stablehlo.gather");
  EXPECT_EQ(dn.Get("index_vector_dim").int_value(), 1);
  EXPECT_EQ(dn.Get("start_index_map").AsInts(), std::vector<int64_t>{0});
  EXPECT_FALSE(dn.Get("offset_dims"));
  EXPECT_EQ(ops[1]->attr("channel_handle").Get("handle").int_value(), 1);
  EXPECT_EQ(ops[1]->attr("replica_groups").AsInts(), (std::vector<int64_t>{0, 1}));
}

// Shardy attributes are read only in Shardy's own syntax, so that every
// "sdy.sharding" in the IR has its fields.
TEST(ModuleTest, ShardyAttributesInAnyOtherFormAreErrors) {
  for (const char* sharding :
       {"#sdy.sharding<mesh = @m, dims = 3>", "#sdy.sharding_per_value<shardings = 3>"}) {
    auto m = ParseStableHlo(std::string("func.func @f(%a: tensor<8xf32> {sdy.sharding = ") +
                                sharding + "}) {\n  func.return\n}\n",
                            "test.mlir");
    ASSERT_FALSE(m.ok()) << sharding;
    EXPECT_NE(m.status().ToString().find("test.mlir:1:"), std::string::npos)
        << m.status().ToString();
  }
}

// Shardy's op sharding rules, as JAX puts them on custom calls, are kept
// as structure and print back as written.
TEST(ModuleTest, OpShardingRulesRoundTrip) {
  const std::string rule =
      "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=4} reduction={j} "
      "need_replication={k}, custom>";
  auto m = MustParse(
      "func.func @f(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> () {\n"
      "  %0 = stablehlo.custom_call @k(%a, %b) {sdy.sharding_rule = " +
      rule +
      "} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
      "  func.return\n}\n");
  ASSERT_TRUE(m);
  ir::Attribute parsed = FirstOp(*m)->attr("sdy.sharding_rule");
  EXPECT_EQ(parsed.name(), "sdy.op_sharding_rule");
  EXPECT_EQ(parsed.Get("factor_sizes").Get("j").int_value(), 16);
  EXPECT_EQ(parsed.Get("reduction").array().size(), 1u);
  EXPECT_EQ(parsed.ToString(), rule);
  auto with = [](const std::string& attr) {
    return ParseStableHlo(
        "func.func @f() {\n  %0 = \"stablehlo.constant\"() {value = dense<1.0> : "
        "tensor<f32>, r = " +
            attr + "} : () -> tensor<f32>\n  func.return\n}\n",
        "test.mlir");
  };
  EXPECT_TRUE(with("#sdy.op_sharding_rule<([i])->([i]) {i=4}>").ok());
  for (const char* bad :
       {"#sdy.op_sharding_rule<([i])>", "#sdy.op_sharding_rule<([i])->([i]) {i=}>",
        "#sdy.op_sharding_rule<([1])->([i])>",
        "#sdy.op_sharding_rule<([i])->([i]) {i=4}, other>"}) {
    auto e = with(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().ToString().find("test.mlir:2:"), std::string::npos)
        << e.status().ToString();
  }
}

// JAX's CPU exports state custom call layouts as index tensors; they parse as
// i64, while values typed index stay unsupported.
TEST(ModuleTest, IndexTypedAttributesAreI64) {
  auto m = MustParse(R"(func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = stablehlo.custom_call @foo(%a) {api_version = 4 : i32, mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[]> : tensor<0xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })");
  ASSERT_TRUE(m);
  ir::Attribute layouts = FirstOp(*m)->attr("operand_layouts");
  ASSERT_EQ(layouts.kind(), ir::Attribute::Kind::kArray);
  ASSERT_EQ(layouts.array().size(), 1u);
  EXPECT_EQ(layouts.array()[0].type().element(), ir::ElementType::kSI64);
  EXPECT_EQ(layouts.array()[0].AsInts(), (std::vector<int64_t>{0, 1}));
  ir::Attribute empty = FirstOp(*m)->attr("result_layouts").array().at(0);
  EXPECT_EQ(empty.type().num_elements(), 0);
  EXPECT_EQ(FirstOp(*m)->attr("mhlo.backend_config").Get("uplo").int_value(), 'L');

  auto value = ParseStableHlo(
      "func.func @f(%a: tensor<2xindex>) -> tensor<2xindex> {\n  return %a : tensor<2xindex>\n}\n",
      "test.mlir");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().ToString().find("'index' is unsupported"), std::string::npos)
      << value.status().ToString();
}

}  // namespace
}  // namespace tpusim::frontend

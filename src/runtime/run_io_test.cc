#include "runtime/run_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/numerics/random.h"

namespace tpusim::runtime {
namespace {

using ir::ElementType;

Tensor RandomBits(ElementType e, int64_t n, uint64_t seed) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, {n})).value();
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < t.size_bytes(); ++i) t.mutable_raw()[i] = static_cast<uint8_t>(rng());
  return t;
}

// Float inputs are converted as one LoadAsDouble and StoreDouble each.
TEST(ConvertInputTest, FloatsConvertAsThePerElementPath) {
  const ElementType floats[] = {ElementType::kF64, ElementType::kF32, ElementType::kF16,
                                ElementType::kBF16, ElementType::kF8E4M3FN, ElementType::kF8E5M2};
  for (ElementType from : {ElementType::kF64, ElementType::kF32, ElementType::kF16}) {
    Tensor in = RandomBits(from, 50001, 1);
    for (ElementType to : floats) {
      if (to == from) continue;
      SCOPED_TRACE(std::string(ir::ElementTypeName(from)) + " -> " +
                   std::string(ir::ElementTypeName(to)));
      StatusOr<Tensor> out = ConvertInput(in, ir::Type::Tensor(to, {50001}), "x");
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const int in_w = ir::StorageBytes(from), out_w = ir::StorageBytes(to);
      std::vector<uint8_t> want(out->size_bytes());
      for (int64_t i = 0; i < in.num_elements(); ++i) {
        numerics::StoreDouble(to, numerics::LoadAsDouble(from, in.raw() + i * in_w),
                              want.data() + i * out_w);
      }
      ASSERT_EQ(std::memcmp(out->raw(), want.data(), want.size()), 0);
    }
  }
}

TEST(ConvertInputTest, NarrowIntegersStillCheckTheirRange) {
  Tensor in = Tensor::Allocate(ir::Type::Tensor(ElementType::kSI8, {3})).value();
  in.mutable_data<int8_t>()[1] = 9;
  StatusOr<Tensor> out = ConvertInput(in, ir::Type::Tensor(ElementType::kSI4, {3}), "x");
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  in.mutable_data<int8_t>()[1] = -8;
  out = ConvertInput(in, ir::Type::Tensor(ElementType::kSI4, {3}), "x");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->data<int8_t>()[1], -8);
}

class WriteResultsTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpusim_run_io_test_" + std::to_string(getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The summary line WriteResults prints for `t`.
  std::string Line(const Tensor& t) {
    std::FILE* out = std::tmpfile();
    EXPECT_TRUE(WriteResults({t}, {"r"}, dir_.string(), out).ok());
    std::rewind(out);
    char buf[512] = {};
    EXPECT_NE(std::fgets(buf, sizeof buf, out), nullptr);
    std::fclose(out);
    std::string line = buf;
    return line.substr(0, line.find(" -> "));
  }

  std::filesystem::path dir_;
};

Tensor F32(std::vector<float> v) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(ElementType::kF32, {static_cast<int64_t>(v.size())}))
                 .value();
  std::memcpy(t.mutable_raw(), v.data(), v.size() * 4);
  return t;
}

TEST_F(WriteResultsTest, SummariesSkipNaNsAndKeepTheFirstZerosSign) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Line(F32({-0.5f, 4.5f, 1, 2, 3, 2})), "r: tensor<6xf32> min=-0.5 max=4.5 mean=2");
  EXPECT_EQ(Line(F32({nan, 1, -2})), "r: tensor<3xf32> min=-2 max=1 mean=nan");
  // Running min and max in order: the first of equal zeros is kept.
  EXPECT_EQ(Line(F32({0.0f, -0.0f, 1})), "r: tensor<3xf32> min=0 max=1 mean=0.333333");
  EXPECT_EQ(Line(F32({-0.0f, 0.0f, 1})), "r: tensor<3xf32> min=-0 max=1 mean=0.333333");
  EXPECT_EQ(Line(F32({-1, -0.0f, 0.0f})), "r: tensor<3xf32> min=-1 max=-0 mean=-0.333333");
  // Lanes and chunks: 10000 values 0..9999, their zero in the middle.
  std::vector<float> many(10000);
  for (int i = 0; i < 10000; ++i) many[i] = static_cast<float>((i * 7919) % 10000);
  EXPECT_EQ(Line(F32(many)), "r: tensor<10000xf32> min=0 max=9999 mean=4999.5");
}

TEST_F(WriteResultsTest, SummariesOfOtherTypes) {
  Tensor bf16 = Tensor::Allocate(ir::Type::Tensor(ElementType::kBF16, {3})).value();
  uint16_t bits[] = {numerics::FloatToBf16(1.5f), numerics::FloatToBf16(-3), 0x7FC0};
  std::memcpy(bf16.mutable_raw(), bits, sizeof bits);
  EXPECT_EQ(Line(bf16), "r: tensor<3xbf16> min=-3 max=1.5 mean=nan");
  Tensor ints = Tensor::Allocate(ir::Type::Tensor(ElementType::kSI32, {4})).value();
  int32_t v[] = {5, -7, 2, 0};
  std::memcpy(ints.mutable_raw(), v, sizeof v);
  EXPECT_EQ(Line(ints), "r: tensor<4xi32> min=-7 max=5 mean=0");
  Tensor c = Tensor::Allocate(ir::Type::Tensor(ElementType::kC64, {2})).value();
  float parts[] = {1, 9, 3, -9};
  std::memcpy(c.mutable_raw(), parts, sizeof parts);
  EXPECT_EQ(Line(c), "r: tensor<2xcomplex<f32>> real min=1 max=3 mean=2");
}

// Results are summarised and written by several threads; the lines come out
// in the results' order all the same.
TEST_F(WriteResultsTest, ManyResultsPrintInOrder) {
  std::vector<Tensor> results;
  std::vector<std::string> names;
  for (int i = 0; i < 9; ++i) {
    results.push_back(F32(std::vector<float>(size_t{1} << (i + 8), static_cast<float>(i))));
    names.push_back("r" + std::to_string(i));
  }
  std::FILE* out = std::tmpfile();
  ASSERT_TRUE(WriteResults(results, names, dir_.string(), out).ok());
  std::rewind(out);
  char buf[512];
  for (int i = 0; i < 9; ++i) {
    ASSERT_NE(std::fgets(buf, sizeof buf, out), nullptr);
    std::string want = "r" + std::to_string(i) + ": tensor<" + std::to_string(1 << (i + 8)) +
                       "xf32> min=" + std::to_string(i);
    EXPECT_EQ(std::string(buf).substr(0, want.size()), want);
    EXPECT_EQ(std::filesystem::file_size(dir_ / ("r" + std::to_string(i) + ".npy")),
              128u + (4u << (i + 8)));
  }
  std::fclose(out);
}

// One file that cannot be written: no result file stays, and nothing is
// printed.
TEST_F(WriteResultsTest, AFailedWriteLeavesNoResultFile) {
  std::filesystem::create_directories(dir_ / "r3.npy.tmp");  // r3's temporary name taken
  std::vector<Tensor> results;
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    results.push_back(F32(std::vector<float>(1 << 16, 1.0f)));
    names.push_back("r" + std::to_string(i));
  }
  std::FILE* out = std::tmpfile();
  Status st = WriteResults(results, names, dir_.string(), out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_EQ(std::ftell(out), 0);
  std::fclose(out);
  std::filesystem::remove(dir_ / "r3.npy.tmp");
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

class RandomInputsTest : public testing::Test {
 protected:
  std::vector<Tensor> Random(const std::string& params, uint64_t seed) {
    module_ = frontend::ParseStableHlo("func.func @main(" + params + ") { return }", "t.mlir")
                  .value();
    const ir::Function& f = *module_->Lookup("main");
    RunOptions options;
    options.random_inputs = true;
    options.seed = seed;
    return Inputs(f, options, f.type().inputs).value();
  }
  std::unique_ptr<ir::Module> module_;
};

// Input i's element j depends on (seed, i, j) alone: the generator's normals
// at those indices, however large the input (parallel fills included).
TEST_F(RandomInputsTest, FloatsAreTheGeneratorsNormals) {
  std::vector<Tensor> in =
      Random("%a: tensor<3xf32>, %b: tensor<300x1000xf32>, %c: tensor<5xbf16>", 11);
  std::vector<float> want(300000);
  numerics::RandomNormals(11, 1, 0, want.data(), 300000);
  ASSERT_EQ(in[1].num_elements(), 300000);
  EXPECT_EQ(std::memcmp(in[1].raw(), want.data(), 300000 * 4), 0);
  numerics::RandomNormals(11, 0, 0, want.data(), 3);
  EXPECT_EQ(std::memcmp(in[0].raw(), want.data(), 3 * 4), 0);
  numerics::RandomNormals(11, 2, 0, want.data(), 5);
  for (int j = 0; j < 5; ++j) {
    EXPECT_EQ(in[2].data<uint16_t>()[j], numerics::EncodeSmallFloat(ElementType::kBF16, want[j]));
  }
  // The same parameter alone, or another seed.
  std::vector<Tensor> again = Random("%a: tensor<3xf32>, %b: tensor<300x1000xf32>", 11);
  EXPECT_TRUE(again[1].BitwiseEquals(in[1]));
  EXPECT_FALSE(Random("%a: tensor<3xf32>", 12)[0].BitwiseEquals(in[0]));
}

TEST_F(RandomInputsTest, IntegersBoolsAndComplexKeepTheirShapes) {
  std::vector<Tensor> in = Random(
      "%i: tensor<100000xi32>, %u: tensor<100000xui8>, %s: tensor<100000xi2>, "
      "%b: tensor<100000xi1>, %c: tensor<1000xcomplex<f32>>",
      3);
  int64_t ones = 0;
  std::vector<int64_t> seen(16, 0);
  for (int64_t j = 0; j < 100000; ++j) {
    int32_t i = in[0].data<int32_t>()[j];
    ASSERT_TRUE(i >= -8 && i < 8) << i;
    ++seen[i + 8];
    ASSERT_LT(in[1].data<uint8_t>()[j], 16);
    int8_t s = in[2].data<int8_t>()[j];
    ASSERT_TRUE(s >= -2 && s < 2) << int{s};
    uint8_t b = in[3].data<uint8_t>()[j];
    ASSERT_LE(b, 1);
    ones += b;
  }
  for (int64_t count : seen) EXPECT_NEAR(count, 100000 / 16, 400);
  EXPECT_NEAR(ones, 50000, 800);
  // complex<f32>: real and imaginary parts are scalars 2j and 2j + 1.
  std::vector<float> want(2000);
  numerics::RandomNormals(3, 4, 0, want.data(), 2000);
  EXPECT_EQ(std::memcmp(in[4].raw(), want.data(), 2000 * 4), 0);
}

}  // namespace
}  // namespace tpusim::runtime

#include "mpi/wire.h"

#include <gtest/gtest.h>

namespace tpusim::mpi {
namespace {

Tensor Iota(ir::ElementType e, ir::Shape shape) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, shape)).value();
  for (int64_t i = 0; i < t.size_bytes(); ++i) t.mutable_raw()[i] = static_cast<uint8_t>(i * 7);
  return t;
}

TEST(Wire, TensorsRoundTrip) {
  std::vector<Tensor> values = {Iota(ir::ElementType::kBF16, {3, 5}),
                                Tensor::Tuple({Iota(ir::ElementType::kSI32, {}), Tensor::Token()}),
                                Iota(ir::ElementType::kF32, {0, 4})};
  std::string bytes;
  WriteString("meeting #1", bytes);
  WriteTensors(values, bytes);
  std::string_view in(bytes);
  EXPECT_EQ(ReadString(in).value(), "meeting #1");
  std::vector<Tensor> back = ReadTensors(in).value();
  EXPECT_TRUE(in.empty());
  ASSERT_EQ(back.size(), 3u);
  EXPECT_TRUE(back[0].BitwiseEquals(values[0]));
  EXPECT_EQ(back[1].type(), values[1].type());
  EXPECT_TRUE(back[1].tuple_elements()[0].BitwiseEquals(values[1].tuple_elements()[0]));
  EXPECT_EQ(back[2].type(), values[2].type());
}

TEST(Wire, EveryTruncationFailsCleanly) {
  std::string bytes;
  WriteTensors({Iota(ir::ElementType::kF32, {2, 3}), Tensor::Token()}, bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string_view in(bytes.data(), n);
    EXPECT_FALSE(ReadTensors(in).ok()) << n;
  }
}

}  // namespace
}  // namespace tpusim::mpi

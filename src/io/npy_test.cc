#include "tpusim/io/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tpusim/io/file.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::io {
namespace {

using ir::ElementType;

Tensor Filled(ElementType e, ir::Shape shape) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(e, shape)).value();
  int w = ir::StorageBytes(e);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (ir::IsFloat(e) || ir::IsComplex(e)) {
      ElementType part = ir::IsComplex(e) ? ir::ComplexPartType(e) : e;
      numerics::StoreDouble(part, 0.5 * static_cast<double>(i) - 2, t.mutable_raw() + i * w);
    } else {
      numerics::StoreInt64(e, i % 3 - 1, t.mutable_raw() + i * w);
    }
  }
  return t;
}

// A .npy file with the given header dict and data bytes, as numpy lays it out.
std::string NpyBytes(const std::string& dict, const std::string& data, int version = 1) {
  std::string header = dict;
  size_t prefix = 6 + 2 + (version == 1 ? 2 : 4);
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  for (size_t i = 0; i < (version == 1 ? 2u : 4u); ++i) {
    out += static_cast<char>(header.size() >> (8 * i));
  }
  return out + header + data;
}

class NpyRoundTrip : public testing::TestWithParam<ElementType> {};

TEST_P(NpyRoundTrip, KeepsTypeAndBits) {
  Tensor t = Filled(GetParam(), {2, 3});
  StatusOr<std::string> bytes = EncodeNpy(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  size_t header_len = static_cast<uint8_t>((*bytes)[8]) | static_cast<uint8_t>((*bytes)[9]) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);  // data starts 64-byte aligned
  StatusOr<Tensor> back = DecodeNpy(*bytes, "t.npy");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->BitwiseEquals(t)) << back->ToString() << " vs " << t.ToString();
}

INSTANTIATE_TEST_SUITE_P(AllNumpyTypes, NpyRoundTrip,
                         testing::Values(ElementType::kI1, ElementType::kSI8, ElementType::kSI16,
                                         ElementType::kSI32, ElementType::kSI64, ElementType::kUI8,
                                         ElementType::kUI16, ElementType::kUI32, ElementType::kUI64,
                                         ElementType::kF16, ElementType::kF32, ElementType::kF64,
                                         ElementType::kC64, ElementType::kC128));

TEST(Npy, WidensTypesNumpyLacks) {
  Tensor bf16 = Filled(ElementType::kBF16, {4});
  Tensor back = DecodeNpy(EncodeNpy(bf16).value(), "b.npy").value();
  ASSERT_EQ(back.type(), ir::Type::Tensor(ElementType::kF32, {4}));
  EXPECT_EQ(back.data<float>()[3], -0.5f);

  Tensor i4 = Filled(ElementType::kSI4, {3});
  back = DecodeNpy(EncodeNpy(i4).value(), "i.npy").value();
  ASSERT_EQ(back.element(), ElementType::kSI8);
  EXPECT_EQ(back.data<int8_t>()[0], -1);
}

// Arrays in memory are read as files are: in place when nothing needs
// changing, else copied and brought to tpusim's form.
TEST(Npy, ArraysInMemoryAdoptedOrCopied) {
  alignas(64) float aligned[17] = {1, 2, 3};
  int releases = 0;
  auto count = [&releases] { ++releases; };
  {
    Tensor t = FromNpyMemory("<f4", {16}, reinterpret_cast<uint8_t*>(aligned), count, "a").value();
    EXPECT_EQ(t.data<float>(), aligned);
    EXPECT_FALSE(t.unique_storage());
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
  // Misaligned storage is copied, and released at once.
  Tensor copy =
      FromNpyMemory("<f4", {16}, reinterpret_cast<uint8_t*>(aligned + 1), count, "b").value();
  EXPECT_EQ(releases, 2);
  EXPECT_NE(copy.data<float>(), aligned + 1);
  EXPECT_EQ(copy.data<float>()[1], 3.0f);
  // Big-endian words are swapped, bools made 0 or 1, both in a copy.
  alignas(64) uint8_t be[8] = {0, 0, 0, 1, 0, 0, 1, 0};
  Tensor swapped = FromNpyMemory(">i4", {2}, be, count, "c").value();
  EXPECT_EQ(swapped.data<int32_t>()[1], 256);
  EXPECT_EQ(be[3], 1);  // the caller's data is left alone
  alignas(64) uint8_t bools[3] = {0, 7, 1};
  Tensor b = FromNpyMemory("|b1", {3}, bools, count, "d").value();
  EXPECT_EQ(b.data<uint8_t>()[1], 1);
  EXPECT_EQ(bools[1], 7);
  EXPECT_EQ(releases, 4);
  // Errors release too, and name the input.
  StatusOr<Tensor> bad = FromNpyMemory("<U3", {2}, be, count, "input 3");
  EXPECT_EQ(bad.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(bad.status().message(), "input 3: numpy dtype '<U3' is not supported");
  StatusOr<Tensor> huge = FromNpyMemory("<f8", {int64_t{1} << 40, 1 << 30}, be, count, "e");
  EXPECT_FALSE(huge.ok());
  EXPECT_EQ(releases, 6);
  // An empty array needs no storage of the caller's.
  Tensor empty = FromNpyMemory("<f4", {0, 3}, nullptr, count, "f").value();
  EXPECT_EQ(empty.num_elements(), 0);
}

TEST(Npy, ElementsAsNumpyHoldsThem) {
  Tensor bf16 = Filled(ElementType::kBF16, {4});
  EXPECT_EQ(NpyDtype(ElementType::kBF16), "<f4");
  float widened[4];
  ToNpyElements(bf16, reinterpret_cast<uint8_t*>(widened));
  EXPECT_EQ(widened[0], -2.0f);
  EXPECT_EQ(widened[3], -0.5f);
  Tensor i16 = Filled(ElementType::kSI16, {3});
  EXPECT_EQ(NpyDtype(ElementType::kSI16), "<i2");
  int16_t same[3];
  ToNpyElements(i16, reinterpret_cast<uint8_t*>(same));
  EXPECT_EQ(same[0], -1);
  EXPECT_EQ(same[2], 1);
}

TEST(Npy, ScalarAndEmptyShapes) {
  for (ir::Shape shape : {ir::Shape{}, ir::Shape{0}, ir::Shape{2, 0, 3}}) {
    Tensor t = Filled(ElementType::kF32, shape);
    Tensor back = DecodeNpy(EncodeNpy(t).value(), "s.npy").value();
    EXPECT_EQ(back.type(), t.type());
  }
}

TEST(Npy, ReadsBigEndian) {
  std::string data = {0, 0, 0, 1, 0, 0, 1, 0};
  Tensor t = DecodeNpy(NpyBytes("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data),
                       "be.npy")
                 .value();
  EXPECT_EQ(t.data<int32_t>()[0], 1);
  EXPECT_EQ(t.data<int32_t>()[1], 256);
}

TEST(Npy, ReadsFortranOrder) {
  // Column-major [[0, 1, 2], [3, 4, 5]] is 0 3 1 4 2 5.
  std::string data = {0, 3, 1, 4, 2, 5};
  Tensor t = DecodeNpy(NpyBytes("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 3), }", data),
                       "f.npy")
                 .value();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data<int8_t>()[i], i);
}

TEST(Npy, ReadsVersion3Headers) {
  std::string data(4, '\0');
  StatusOr<Tensor> t = DecodeNpy(
      NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", data, 3), "v3.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->type(), ir::Type::Tensor(ElementType::kF32, {}));
}

TEST(Npy, RejectsBadFilesCleanly) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  struct Case {
    std::string bytes;
    StatusCode code;
    std::string message;
  } cases[] = {
      {"", StatusCode::kInvalidArgument, "bad magic"},
      {"\x93NUMPX\x01\x00\x00\x00", StatusCode::kInvalidArgument, "bad magic"},
      {std::string("\x93NUMPY\x01\x00\xff\x00", 10), StatusCode::kInvalidArgument, "truncated"},
      {NpyBytes(ok_dict, "abc"), StatusCode::kInvalidArgument, "data bytes"},
      {NpyBytes(ok_dict, std::string(12, '\0')), StatusCode::kInvalidArgument, "data bytes"},
      {NpyBytes("{'descr': '<f4', 'shape': (2,), }", ""), StatusCode::kInvalidArgument,
       "fortran_order"},
      {NpyBytes("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", ""),
       StatusCode::kInvalidArgument, "True or False"},
      {NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", ""),
       StatusCode::kInvalidArgument, "dimension"},
      {NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""),
       StatusCode::kInvalidArgument, "too large"},
      {NpyBytes("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", ""),
       StatusCode::kUnimplemented, "'<U3'"},
      {NpyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", ""),
       StatusCode::kUnimplemented, "structured"},
      {NpyBytes(ok_dict, "", 9), StatusCode::kUnimplemented, "version 9"},
  };
  for (const Case& c : cases) {
    StatusOr<Tensor> t = DecodeNpy(c.bytes, "bad.npy");
    ASSERT_FALSE(t.ok()) << c.message;
    EXPECT_EQ(t.status().code(), c.code) << t.status().ToString();
    EXPECT_NE(t.status().message().find(c.message), std::string::npos) << t.status().message();
  }
}

TEST(Npy, HugeShapeIsAnErrorNotACrash) {
  StatusOr<Tensor> t = DecodeNpy(
      NpyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
      "huge.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kResourceExhausted);
}

TEST(Npy, WritesAtomicallyAndReadsBack) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tpusim_npy_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "x.npy").string();
  Tensor t = Filled(ElementType::kF64, {3, 2});
  ASSERT_TRUE(WriteNpy(path, t).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_TRUE(ReadNpy(path).value().BitwiseEquals(t));

  Status st = WriteNpy((dir / "no" / "such" / "dir.npy").string(), t);
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
  EXPECT_EQ(ReadNpy((dir / "missing.npy").string()).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(WriteNpy(path, Tensor::Token()).ok());
  std::filesystem::remove_all(dir);
}

// A fresh directory for one test's files, removed with it.
class NpyFiles : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tpusim_npy_files_" + std::to_string(getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void WriteBytes(const std::string& name, const std::string& bytes) const {
    ASSERT_TRUE(WriteFileAtomically(Path(name), bytes).ok());
  }
  static std::string ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::filesystem::path dir_;
};

// Large files are mapped; writing to the tensor must not reach the file, and
// the mapping is counted as host memory while the tensor lives.
TEST_F(NpyFiles, LargeFilesReadWithoutCopiesAndPrivately) {
  Tensor t = Filled(ElementType::kF32, {512, 1024});  // 2 MiB
  ASSERT_TRUE(WriteNpy(Path("big.npy"), t).ok());
  std::string before = ReadBytes(Path("big.npy"));
  EXPECT_EQ(before, EncodeNpy(t).value());
  int64_t in_use = HostMemoryInUse();
  {
    StatusOr<Tensor> back = ReadNpy(Path("big.npy"));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(HostMemoryInUse(), in_use + t.size_bytes());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(back->raw()) % 64, 0u);
    EXPECT_TRUE(back->BitwiseEquals(t));
    Tensor copy = *back;  // shares the mapping
    back->mutable_data<float>()[0] = 1234.5f;
    EXPECT_EQ(copy.data<float>()[0], 1234.5f);
    EXPECT_EQ(ReadBytes(Path("big.npy")), before);
    // Replacing the file (as WriteNpy does, by rename) leaves the mapping be.
    ASSERT_TRUE(WriteNpy(Path("big.npy"), Filled(ElementType::kF32, {2})).ok());
    EXPECT_EQ(copy.data<float>()[1], t.data<float>()[1]);
  }
  EXPECT_EQ(HostMemoryInUse(), in_use);
}

// Files that need their bytes changed (byte order, bools, Fortran order) or
// whose data is not 64-byte aligned in the file are read, not mapped, and
// give what DecodeNpy gives.
TEST_F(NpyFiles, FilesThatCannotBeMappedReadTheSame) {
  const int64_t n = 300000;
  std::string be(n * 4, '\0'), bools(n, '\0'), fortran(n, '\0');
  for (int64_t i = 0; i < n; ++i) {
    be[4 * i + 3] = static_cast<char>(i);
    bools[i] = static_cast<char>(i % 3);
    fortran[i] = static_cast<char>(i % 7);
  }
  std::string unaligned = std::string("\x93NUMPY\x01\x00", 8);
  std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (300000,), }\n";
  unaligned += static_cast<char>(dict.size());
  unaligned += '\0';
  unaligned += dict + be;  // little-endian read of the same bytes, data at 74
  const std::pair<std::string, std::string> files[] = {
      {"be.npy", NpyBytes("{'descr': '>i4', 'fortran_order': False, 'shape': (300000,), }", be)},
      {"bool.npy", NpyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (300000,), }", bools)},
      {"f.npy", NpyBytes("{'descr': '|i1', 'fortran_order': True, 'shape': (600, 500), }", fortran)},
      {"unaligned.npy", unaligned},
      // A header past the first 4096 bytes of the file.
      {"long.npy", NpyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (300000,), " +
                                std::string(5000, ' ') + "}",
                            be, 2)},
  };
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    WriteBytes(name, bytes);
    StatusOr<Tensor> read = ReadNpy(Path(name));
    StatusOr<Tensor> decoded = DecodeNpy(bytes, name);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(read->BitwiseEquals(*decoded));
  }
  Tensor b = ReadNpy(Path("bool.npy")).value();
  EXPECT_EQ(b.data<uint8_t>()[2], 1);
  Tensor f = ReadNpy(Path("f.npy")).value();
  EXPECT_EQ(f.data<int8_t>()[1], 600 % 7);  // element (0, 1) is column-major 600
  Tensor big_endian = ReadNpy(Path("be.npy")).value();
  EXPECT_EQ(big_endian.data<int32_t>()[5], 5);
}

TEST_F(NpyFiles, BadFilesAreOneLineErrors) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (70000,), }";
  WriteBytes("short.npy", NpyBytes(ok_dict, std::string(1000, '\0')));
  WriteBytes("long.npy", NpyBytes(ok_dict, std::string(280004, '\0')));
  WriteBytes("cut.npy", NpyBytes(ok_dict, "").substr(0, 40));
  WriteBytes("empty.npy", "");
  for (std::string name : {"short.npy", "long.npy", "cut.npy", "empty.npy"}) {
    StatusOr<Tensor> t = ReadNpy(Path(name));
    ASSERT_FALSE(t.ok()) << name;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << t.status().ToString();
    EXPECT_EQ(t.status().message().find('\n'), std::string::npos);
    EXPECT_NE(t.status().message().find(Path(name)), std::string::npos);
  }
}

TEST_F(NpyFiles, ReadsFromAPipe) {
  Tensor t = Filled(ElementType::kF32, {100, 100});
  std::string bytes = EncodeNpy(t).value();
  ASSERT_EQ(::mkfifo(Path("pipe").c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(Path("pipe"), std::ios::binary) << bytes; });
  StatusOr<Tensor> back = ReadNpy(Path("pipe"));
  writer.join();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->BitwiseEquals(t));
}

// Widened types are written in pieces: the file has EncodeNpy's bytes.
TEST_F(NpyFiles, WritesWidenedTypesInPieces) {
  for (ElementType e : {ElementType::kBF16, ElementType::kF8E4M3FN, ElementType::kSI4}) {
    Tensor t = Filled(e, {3, 70001});
    ASSERT_TRUE(WriteNpy(Path("w.npy"), t).ok());
    EXPECT_EQ(ReadBytes(Path("w.npy")), EncodeNpy(t).value());
    ASSERT_TRUE(WriteNpyDurably(Path("d.npy"), t).ok());
    EXPECT_EQ(ReadBytes(Path("d.npy")), EncodeNpy(t).value());
  }
  // bf16 values widen exactly.
  Tensor back = ReadNpy(Path("w.npy")).value();
  EXPECT_EQ(back.element(), ElementType::kSI8);
}

}  // namespace
}  // namespace tpusim::io

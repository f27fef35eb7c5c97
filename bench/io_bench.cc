// I/O and conversions against memory speed, measured in the same run:
//   - f32 <-> bf16/f16/f8 array conversions (numerics/float_arrays.h) in
//     GB/s (bytes read + written) against memcpy of the source bytes, and
//     against the per-element path they replace (LoadAsDouble/StoreDouble);
//   - random standard normals (numerics/random.h) against memcpy;
//   - .npy read and write of a 16 MiB f32 array (io/npy.h) against a plain
//     read()/write() of the same bytes (each read followed by one pass over
//     the data, so that a mapped file pays for its page faults too).
// Best of several repeats; ratios near 1 mean memory speed.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "clock.h"
#include "tpusim/io/npy.h"
#include "tpusim/numerics/float_arrays.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/numerics/random.h"

namespace {

using tpusim::Tensor;
using tpusim::bench::Clock;
using tpusim::bench::Seconds;
using tpusim::ir::ElementType;

constexpr int64_t kN = int64_t{1} << 22;  // 4M elements: 16 MiB of f32
constexpr int kRepeats = 7;

double Best(const std::function<void()>& f) { return tpusim::bench::BestSeconds(kRepeats, f); }

// Keeps a value alive so that the compiler cannot drop the loop making it.
volatile double sink;

double SumOf(const float* v, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += v[i];
  return s;
}

void Row(const char* what, double bytes, double seconds, double reference) {
  std::printf("%-34s %8.2f ms %7.2f GB/s   x%.2f of reference\n", what, seconds * 1e3,
              bytes / seconds / 1e9, seconds / reference);
}

void Conversions() {
  std::vector<float> f32(kN), back(kN);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (float& x : f32) x = normal(rng) * 100;
  std::vector<uint16_t> u16(kN);
  std::vector<uint8_t> u8(kN);
  std::vector<float> copy(kN);

  std::printf("conversions of %lld elements (reference: memcpy of the f32 source)\n",
              static_cast<long long>(kN));
  double memcpy_s = Best([&] { std::memcpy(copy.data(), f32.data(), kN * 4); });
  Row("memcpy f32", 8.0 * kN, memcpy_s, memcpy_s);
  auto row = [&](const char* what, double bytes, const std::function<void()>& f) {
    Row(what, bytes, Best(f), memcpy_s);
  };
  using namespace tpusim::numerics;
  row("f32 -> bf16", 6.0 * kN, [&] { FloatToBf16Array(f32.data(), u16.data(), kN); });
  row("bf16 -> f32", 6.0 * kN, [&] { Bf16ToFloatArray(u16.data(), back.data(), kN); });
  row("f32 -> f16", 6.0 * kN, [&] { FloatToHalfArray(f32.data(), u16.data(), kN); });
  row("f16 -> f32", 6.0 * kN, [&] { HalfToFloatArray(u16.data(), back.data(), kN); });
  row("f32 -> bf16 (EncodeSmallFloat form)", 6.0 * kN,
      [&] { EncodeSmallFloatArray(ElementType::kBF16, f32.data(), u16.data(), kN); });
  row("f32 -> f8E4M3FN", 5.0 * kN,
      [&] { EncodeSmallFloatArray(ElementType::kF8E4M3FN, f32.data(), u8.data(), kN); });
  row("f8E4M3FN -> f32", 5.0 * kN,
      [&] { DecodeSmallFloatArray(ElementType::kF8E4M3FN, u8.data(), back.data(), kN); });
  row("f8E5M2 -> f32 (ConvertFloatArray)", 5.0 * kN, [&] {
    ConvertFloatArray(ElementType::kF8E5M2, u8.data(), ElementType::kF32, back.data(), kN);
  });
  // The per-element path these replace, on a slice (it is slow) scaled up.
  const int64_t slice = kN / 16;
  double old_s = 16 * Best([&] {
    for (int64_t i = 0; i < slice; ++i) {
      StoreDouble(ElementType::kBF16,
                  LoadAsDouble(ElementType::kF32, reinterpret_cast<uint8_t*>(&f32[i])),
                  reinterpret_cast<uint8_t*>(&u16[i]));
    }
  });
  Row("f32 -> bf16, old per-element path", 6.0 * kN, old_s, memcpy_s);
  double old_f8 = 16 * Best([&] {
    for (int64_t i = 0; i < slice; ++i) {
      StoreDouble(ElementType::kF8E4M3FN,
                  LoadAsDouble(ElementType::kF32, reinterpret_cast<uint8_t*>(&f32[i])), &u8[i]);
    }
  });
  Row("f32 -> f8E4M3FN, old per-element", 5.0 * kN, old_f8, memcpy_s);
}

void Random() {
  std::vector<float> v(kN), copy(kN);
  std::printf("\nrandom standard normals (reference: memcpy of as many bytes)\n");
  double memcpy_s = Best([&] { std::memcpy(copy.data(), v.data(), kN * 4); });
  Row("memcpy f32", 8.0 * kN, memcpy_s, memcpy_s);
  Row("Philox + erfinv normals", 4.0 * kN,
      Best([&] { tpusim::numerics::RandomNormals(5, 0, 0, v.data(), kN); }), memcpy_s);
  // The generator they replace: mt19937_64 and Box-Muller, per element.
  const int64_t slice = kN / 16;
  double old_s = 16 * Best([&] {
    std::mt19937_64 rng(5);
    auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53; };
    for (int64_t i = 0; i < slice; ++i) {
      v[i] = static_cast<float>(std::sqrt(-2 * std::log(uniform())) *
                                std::cos(2 * std::numbers::pi * uniform()));
    }
  });
  Row("old mt19937_64 + Box-Muller", 4.0 * kN, old_s, memcpy_s);
}

bool ReadAll(const std::string& path, std::vector<char>& out) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return done == out.size();
}

bool WriteAll(const std::string& path, const char* data, size_t size) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return ::close(fd) == 0 && done == size && std::rename(tmp.c_str(), path.c_str()) == 0;
}

int Npy() {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tpusim_io_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string npy = (dir / "a.npy").string(), plain = (dir / "plain.bin").string();
  Tensor t = Tensor::AllocateUninitialized(
                 tpusim::ir::Type::Tensor(ElementType::kF32, {2048, 2048}))
                 .value();
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = 0.25f * i;
  if (!tpusim::io::WriteNpy(npy, t).ok()) {
    std::fprintf(stderr, "cannot write %s\n", npy.c_str());
    return 1;
  }
  std::vector<char> bytes(fs::file_size(npy));
  std::printf("\n.npy of a 2048x2048 f32 array, %zu bytes (reference: read()/write())\n",
              bytes.size());
  double read_s = Best([&] {
    ReadAll(npy, bytes);
    sink = SumOf(reinterpret_cast<const float*>(bytes.data() + 128), t.num_elements());
  });
  Row("read() + one pass", bytes.size(), read_s, read_s);
  Row("ReadNpy + one pass", bytes.size(), Best([&] {
        Tensor r = tpusim::io::ReadNpy(npy).value();
        sink = SumOf(r.data<float>(), r.num_elements());
      }),
      read_s);
  double write_s = Best([&] { WriteAll(plain, bytes.data(), bytes.size()); });
  Row("write()", bytes.size(), write_s, write_s);
  Row("WriteNpy f32", bytes.size(),
      Best([&] { (void)tpusim::io::WriteNpy((dir / "b.npy").string(), t); }), write_s);
  Tensor bf16 =
      Tensor::AllocateUninitialized(tpusim::ir::Type::Tensor(ElementType::kBF16, {2048, 2048}))
          .value();
  tpusim::numerics::FloatToBf16Array(t.data<float>(), bf16.mutable_data<uint16_t>(),
                                     t.num_elements());
  Row("WriteNpy bf16 (widened to f32)", bytes.size(),
      Best([&] { (void)tpusim::io::WriteNpy((dir / "c.npy").string(), bf16); }), write_s);
  fs::remove_all(dir);
  return 0;
}

}  // namespace

int main() {
  Conversions();
  Random();
  return Npy();
}

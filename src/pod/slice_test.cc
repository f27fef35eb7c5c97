#include "tpusim/pod/slice.h"

#include <gtest/gtest.h>

namespace tpusim::pod {
namespace {

TEST(PodSliceTest, AcceleratorTypesAsCloudTpuNamesThem) {
  struct Case {
    const char* name;
    int64_t chips, devices, hosts;
    const char* topology;
    std::vector<bool> wrap;
  };
  const Case cases[] = {
      {"v5p-128", 64, 64, 16, "4x4x4", {true, true, true}},   // one cube: wraps
      {"v5p-32", 16, 16, 4, "2x2x4", {false, false, false}},  // part of a cube: no wraps
      {"v4-8", 4, 4, 1, "2x2x1", {false, false, false}},
      {"v5litepod-16", 16, 16, 2, "4x4", {false, false}},
      {"v5e-256", 256, 256, 32, "16x16", {true, true}},
      {"v6e-128", 128, 128, 16, "8x16", {false, true}},  // wraps on the axis of 16
      {"v3-32", 16, 32, 4, "4x4", {false, false}},       // a device per TensorCore
      {"tpu7x-8", 4, 8, 1, "2x2x1", {false, false, false}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto s = FindSlice(c.name);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->chips(), c.chips);
    EXPECT_EQ(s->num_devices(), c.devices);
    EXPECT_EQ(s->hosts(), c.hosts);
    EXPECT_EQ(s->topology.ToString(), c.topology);
    EXPECT_EQ(s->topology.wrap, c.wrap);
  }
}

TEST(PodSliceTest, MultisliceAndAnyShape) {
  auto multi = FindSlice("2xv5e-256");
  ASSERT_TRUE(multi.ok()) << multi.status().ToString();
  EXPECT_EQ(multi->num_slices, 2);
  EXPECT_EQ(multi->num_devices(), 512);
  EXPECT_EQ(multi->name, "2xv5litepod-256");

  auto any = MakeSlice(*hw::FindPreset("v5p"), "4x4x12");
  ASSERT_TRUE(any.ok()) << any.status().ToString();
  EXPECT_EQ(any->chips(), 192);
  EXPECT_EQ(any->name, "v5p-384");
  EXPECT_EQ(any->topology.wrap, (std::vector<bool>{true, true, true}));
}

TEST(PodSliceTest, BadNamesSayWhatExists) {
  auto size = FindSlice("v5p-100");
  EXPECT_EQ(size.status().code(), StatusCode::kNotFound);
  EXPECT_NE(size.status().message().find("v5p-128"), std::string::npos) << size.status().message();
  EXPECT_EQ(FindSlice("v9-8").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FindSlice("v5p").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FindSlice("0xv5p-8").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FindSlice("1025xv5p-8").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeSlice(*hw::FindPreset("v5p"), "1024x1024x1024").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeSlice(*hw::FindPreset("v5p"), "16x16x16", 1000).status().code(),
            StatusCode::kInvalidArgument);
  const hw::ChipSpec v5p = *hw::FindPreset("v5p");
  for (const char* bad : {"4x4", "4xx4x4", "0x4x4", "4x4x4x", "a", "2000x1x1"}) {
    EXPECT_EQ(ParseTopology(v5p, bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  Status twisted = ParseTopology(*hw::FindPreset("v4"), "4x4x8_twisted").status();
  EXPECT_EQ(twisted.code(), StatusCode::kUnimplemented);
  EXPECT_NE(twisted.message().find("not modelled; use '4x4x8'"), std::string::npos)
      << twisted.ToString();
}

// Device ids as JAX prints them on a v5litepod-16 (id = x + 4y) and a v3-32
// (two cores a chip: id = core + 2 (x + 4y)).
TEST(PodSliceTest, DevicesAreNumberedCoreThenXThenYThenZ) {
  auto v5e = FindSlice("v5litepod-16");
  DevicePlace p = v5e->Place(6);
  EXPECT_EQ(p.coords, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(p.core, 0);
  EXPECT_EQ(v5e->ChipIndex(p), 6);

  auto v3 = FindSlice("v3-32");
  p = v3->Place(9);
  EXPECT_EQ(p.core, 1);
  EXPECT_EQ(p.coords, (std::vector<int64_t>{0, 1}));
  p = v3->Place(31);
  EXPECT_EQ(p.core, 1);
  EXPECT_EQ(p.coords, (std::vector<int64_t>{3, 3}));

  auto multi = FindSlice("2xv5p-8");
  p = multi->Place(5);
  EXPECT_EQ(p.slice, 1);
  EXPECT_EQ(p.coords, (std::vector<int64_t>{1, 0, 0}));
}

// One-way links: a wrapped axis of d chips has d links a line, an open one
// d - 1, each in both directions.
TEST(PodSliceTest, CountsTheIciLinks) {
  EXPECT_EQ(FindSlice("v5p-128")->ici_links(), 3 * 16 * 4 * 2);
  EXPECT_EQ(FindSlice("v5litepod-16")->ici_links(), 2 * 4 * 3 * 2);
  EXPECT_EQ(FindSlice("v6e-128")->ici_links(), 16 * 7 * 2 + 8 * 16 * 2);
  EXPECT_EQ(FindSlice("2xv5e-16")->ici_links(), 2 * 48);
}

TEST(PodSliceTest, EveryOfferedSliceIsWellFormed) {
  std::vector<Slice> all = StandardSlices();
  EXPECT_GT(all.size(), 50u);
  for (const Slice& s : all) {
    SCOPED_TRACE(s.name);
    auto again = FindSlice(s.name);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->topology.dims, s.topology.dims);
    EXPECT_GE(s.hosts(), 1);
  }
}

}  // namespace
}  // namespace tpusim::pod

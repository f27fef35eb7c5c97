#include "spmd/mesh.h"

#include <gtest/gtest.h>

namespace tpusim::spmd {
namespace {

ir::HloSharding Parse(const char* text) {
  StatusOr<ir::HloSharding> s = ir::ParseHloSharding(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

TEST(Mesh, SplitsDevicesIntoPrimeAxesMajorFirst) {
  Mesh mesh(12);
  ASSERT_EQ(mesh.num_axes(), 3);
  EXPECT_EQ(mesh.axis_size(0), 3);
  EXPECT_EQ(mesh.axis_stride(0), 4);
  EXPECT_EQ(mesh.axis_stride(2), 1);
  EXPECT_EQ(mesh.Index(7, {{0}}), 1);     // 7 = 1*4 + 1*2 + 1
  EXPECT_EQ(mesh.Index(7, {{2, 1}}), 3);  // axis 2 major
}

// A named mesh keeps its axes' order: data=2 major over fsdp=6, which is
// 3 then 2 within.
TEST(Mesh, NamedAxesKeepTheirOrder) {
  Mesh mesh(std::vector<int64_t>{2, 6});
  ASSERT_EQ(mesh.num_axes(), 3);
  EXPECT_EQ(mesh.devices(), 12);
  EXPECT_EQ(mesh.axis_size(0), 2);
  EXPECT_EQ(mesh.axis_stride(0), 6);
  EXPECT_EQ(mesh.axis_size(1), 3);
  auto s = FromHlo(mesh, Parse("{devices=[2,6]<=[12]}"), 2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dims, (std::vector<Axes>{{0}, {1, 2}}));
  s = FromHlo(mesh, Parse("{devices=[12,1]<=[12]}"), 2);  // the batch over data x fsdp
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dims, (std::vector<Axes>{{0, 1, 2}, {}}));
  EXPECT_EQ(ToHlo(mesh, *s).devices, Parse("{devices=[12,1]<=[12]}").devices);
  // Prime axes largest first cannot hold data=2 major.
  EXPECT_FALSE(FromHlo(Mesh(12), Parse("{devices=[2,6]<=[12]}"), 2).ok());
}

TEST(Mesh, GroupsDifferAlongTheirAxesOnly) {
  Mesh mesh(8);
  EXPECT_EQ(mesh.Groups({{0}}),
            (std::vector<std::vector<int64_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(mesh.Groups({{2, 1}}), (std::vector<std::vector<int64_t>>{{0, 2, 1, 3}, {4, 6, 5, 7}}));
}

TEST(MeshSharding, IotaTilesMapOntoAxes) {
  Mesh mesh(8);
  auto s = FromHlo(mesh, Parse("{devices=[4,2]<=[8]}"), 2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dims, (std::vector<Axes>{{0, 1}, {2}}));
  s = FromHlo(mesh, Parse("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"), 2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dims, (std::vector<Axes>{{0}, {}}));
}

// <=[4,2]T(1,0): tile (i, j) lives on device 2*j + i over the [4,2] grid's
// transpose, so dimension 0 steps along the minor axis.
TEST(MeshSharding, TransposedIotaRoundTrips) {
  Mesh mesh(8);
  const ir::HloSharding hlo = Parse("{devices=[2,4]<=[4,2]T(1,0)}");
  auto s = FromHlo(mesh, hlo, 2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dims, (std::vector<Axes>{{2}, {0, 1}}));
  EXPECT_EQ(ToHlo(mesh, *s), hlo);
}

TEST(MeshSharding, ReplicatedAxesBecomeALastReplicaDimension) {
  Mesh mesh(8);
  Sharding s{{{1}, {}}};
  ir::HloSharding hlo = ToHlo(mesh, s);
  EXPECT_EQ(hlo.ToString(), "{devices=[2,1,4]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
  auto back = FromHlo(mesh, hlo, 2);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
}

TEST(MeshSharding, RefusesWhatNoMeshHolds) {
  Mesh mesh(4);
  auto permuted = FromHlo(mesh, Parse("{devices=[4]0,2,3,1}"), 1);
  EXPECT_EQ(permuted.status().code(), StatusCode::kUnimplemented);
  auto too_few = FromHlo(mesh, Parse("{devices=[2]0,1}"), 1);
  EXPECT_EQ(too_few.status().code(), StatusCode::kInvalidArgument);
  auto rank = FromHlo(mesh, Parse("{devices=[2,2]<=[4]}"), 1);
  EXPECT_EQ(rank.status().code(), StatusCode::kInvalidArgument);
  auto maximal = FromHlo(mesh, Parse("{maximal device=1}"), 1);
  EXPECT_EQ(maximal.status().code(), StatusCode::kUnimplemented);
}

TEST(MeshSharding, UnevenTilesArePaddedAtTheEnd) {
  Mesh mesh(4);
  Sharding s{{{0, 1}, {}}};
  const ir::Type even = ir::Type::Tensor(ir::ElementType::kF32, {8, 3});
  EXPECT_EQ(LocalType(mesh, even, s).shape(), (ir::Shape{2, 3}));
  EXPECT_TRUE(SplitsEvenly(mesh, even, s));
  const ir::Type uneven = ir::Type::Tensor(ir::ElementType::kF32, {6, 3});
  EXPECT_EQ(LocalType(mesh, uneven, s).shape(), (ir::Shape{2, 3}));
  EXPECT_FALSE(SplitsEvenly(mesh, uneven, s));
  const ir::Type tiny = ir::Type::Tensor(ir::ElementType::kF32, {3, 3});
  EXPECT_EQ(LocalType(mesh, tiny, s).shape(), (ir::Shape{1, 3}));  // the last device: padding
}

}  // namespace
}  // namespace tpusim::spmd

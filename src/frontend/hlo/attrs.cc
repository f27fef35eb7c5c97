// Readers of HLO attribute values (`dimensions={1,0}`, `window={...}`,
// `replica_groups=[2,2]<=[4]`, ...) and builders of the IR attributes the
// ops read.
#include <charconv>
#include <cstring>

#include "frontend/hlo/lower.h"

namespace tpusim::frontend {
namespace {

const HloAttr* Find(const HloInstruction& inst, std::string_view key) { return inst.Attr(key); }

Status Missing(const HloLowering& l, const HloInstruction& inst, std::string_view key) {
  return l.Error(inst, std::string(inst.opcode) + " needs attribute '" + std::string(key) + "'");
}

// A whole attribute value must be consumed.
Status ExpectEnd(HloCursor& c, const HloAttr& a) {
  if (c.AtEnd()) return Status::Ok();
  return c.Error("unexpected text in the value of '" + std::string(a.key) + "'");
}

}  // namespace

StatusOr<std::vector<int64_t>> AttrInts(const HloLowering& l, const HloInstruction& inst,
                                        std::string_view key) {
  const HloAttr* a = Find(inst, key);
  if (a == nullptr) return Missing(l, inst, key);
  HloCursor c = CursorOver(l.source(), a->value);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> v, c.ReadIntList());
  TPUSIM_RETURN_IF_ERROR(ExpectEnd(c, *a));
  return v;
}

StatusOr<std::vector<int64_t>> AttrIntsOr(const HloLowering& l, const HloInstruction& inst,
                                          std::string_view key, std::vector<int64_t> fallback) {
  if (Find(inst, key) == nullptr) return fallback;
  return AttrInts(l, inst, key);
}

StatusOr<int64_t> AttrInt(const HloLowering& l, const HloInstruction& inst, std::string_view key) {
  const HloAttr* a = Find(inst, key);
  if (a == nullptr) return Missing(l, inst, key);
  HloCursor c = CursorOver(l.source(), a->value);
  TPUSIM_ASSIGN_OR_RETURN(int64_t v, c.ReadInt());
  TPUSIM_RETURN_IF_ERROR(ExpectEnd(c, *a));
  return v;
}

StatusOr<int64_t> AttrIntOr(const HloLowering& l, const HloInstruction& inst, std::string_view key,
                            int64_t fallback) {
  if (Find(inst, key) == nullptr) return fallback;
  return AttrInt(l, inst, key);
}

StatusOr<bool> AttrBoolOr(const HloLowering& l, const HloInstruction& inst, std::string_view key,
                          bool fallback) {
  const HloAttr* a = Find(inst, key);
  if (a == nullptr) return fallback;
  if (a->value == "true") return true;
  if (a->value == "false") return false;
  return l.source().ErrorAt(a->key_offset, "'" + std::string(key) + "' must be true or false");
}

std::string_view AttrWord(const HloInstruction& inst, std::string_view key) {
  const HloAttr* a = Find(inst, key);
  return a == nullptr ? std::string_view() : a->value;
}

StatusOr<std::string> AttrString(const HloLowering& l, const HloInstruction& inst,
                                 std::string_view key) {
  const HloAttr* a = Find(inst, key);
  if (a == nullptr) return std::string();
  HloCursor c = CursorOver(l.source(), a->value);
  TPUSIM_ASSIGN_OR_RETURN(std::string s, c.ReadString());
  TPUSIM_RETURN_IF_ERROR(ExpectEnd(c, *a));
  return s;
}

namespace {

// Bounds the ids an iota replica-group list may expand to.
constexpr int64_t kMaxGroupIds = 1 << 20;

StatusOr<std::vector<int64_t>> ReadSquareList(HloCursor& c) {
  TPUSIM_RETURN_IF_ERROR(c.Expect('[', "'['"));
  std::vector<int64_t> out;
  do {
    size_t at = c.pos();
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, c.ReadInt());
    if (v < 0 || v > kMaxGroupIds) return c.ErrorAt(at, "iota dimension out of range");
    out.push_back(v);
  } while (c.Consume(','));
  TPUSIM_RETURN_IF_ERROR(c.Expect(']', "',' or ']'"));
  return out;
}

// `[G,S]<=[d0,d1,...]` with an optional `T(perm)`: the ids 0..N-1 laid out
// as dims, transposed by perm, read row-major as G groups of S.
StatusOr<std::vector<std::vector<int64_t>>> ReadIotaGroups(HloCursor& c) {
  size_t start = c.pos();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> groups, ReadSquareList(c));
  if (!c.ConsumeText("<=")) return c.Error("expected '<=' in an iota replica-group list");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadSquareList(c));
  std::vector<int64_t> perm;
  for (size_t i = 0; i < dims.size(); ++i) perm.push_back(static_cast<int64_t>(i));
  if (c.ConsumeText("T")) {
    TPUSIM_RETURN_IF_ERROR(c.Expect('(', "'(' after T"));
    perm.clear();
    do {
      TPUSIM_ASSIGN_OR_RETURN(int64_t p, c.ReadInt());
      perm.push_back(p);
    } while (c.Consume(','));
    TPUSIM_RETURN_IF_ERROR(c.Expect(')', "')'"));
  }
  int64_t total = 1;
  for (int64_t d : dims) {
    total *= d;
    if (total > kMaxGroupIds) return c.ErrorAt(start, "too many ids in replica groups");
  }
  if (groups.size() != 2 || groups[0] * groups[1] != total ||
      !ir::IsValidLayout(perm, static_cast<int64_t>(dims.size()))) {
    return c.ErrorAt(start, "malformed iota replica groups");
  }
  std::vector<int64_t> tdims(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) tdims[k] = dims[perm[k]];
  std::vector<int64_t> strides(dims.size(), 1);  // of the untransposed layout
  for (size_t k = dims.size(); k-- > 1;) strides[k - 1] = strides[k] * dims[k];
  std::vector<std::vector<int64_t>> rows(groups[0]);
  std::vector<int64_t> index(tdims.size(), 0);
  for (int64_t j = 0; j < total; ++j) {
    int64_t id = 0;
    for (size_t k = 0; k < tdims.size(); ++k) id += index[k] * strides[perm[k]];
    rows[j / groups[1]].push_back(id);
    for (size_t k = tdims.size(); k-- > 0;) {
      if (++index[k] < tdims[k]) break;
      index[k] = 0;
    }
  }
  return rows;
}

// `{{0,1},{2,3}}`.
StatusOr<std::vector<std::vector<int64_t>>> ReadGroupList(HloCursor& c) {
  std::vector<std::vector<int64_t>> rows;
  TPUSIM_RETURN_IF_ERROR(c.Expect('{', "'{' opening a list of groups"));
  while (!c.Consume('}')) {
    if (!rows.empty()) TPUSIM_RETURN_IF_ERROR(c.Expect(',', "',' or '}'"));
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> row, c.ReadIntList());
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

StatusOr<std::vector<std::vector<int64_t>>> AttrGroups(const HloLowering& l,
                                                       const HloInstruction& inst,
                                                       std::string_view key) {
  const HloAttr* a = Find(inst, key);
  if (a == nullptr) return std::vector<std::vector<int64_t>>{};
  HloCursor c = CursorOver(l.source(), a->value);
  std::vector<std::vector<int64_t>> rows;
  if (c.Peek() == '[') {
    TPUSIM_ASSIGN_OR_RETURN(rows, ReadIotaGroups(c));
  } else {
    TPUSIM_ASSIGN_OR_RETURN(rows, ReadGroupList(c));
  }
  TPUSIM_RETURN_IF_ERROR(ExpectEnd(c, *a));
  return rows;
}

StatusOr<std::vector<std::vector<int64_t>>> FrontendGroups(const HloLowering& l,
                                                           const HloInstruction& inst,
                                                           std::string_view key) {
  const std::string_view attrs = AttrWord(inst, "frontend_attributes");
  const std::string opening = std::string(key) + "=\"";
  const size_t at = attrs.find(opening);
  if (at == std::string_view::npos) return std::vector<std::vector<int64_t>>{};
  const std::string_view rest = attrs.substr(at + opening.size());
  HloCursor c = CursorOver(l.source(), rest.substr(0, rest.find('"')));
  TPUSIM_ASSIGN_OR_RETURN(auto rows, ReadGroupList(c));
  if (!c.AtEnd()) return c.Error("unexpected text in frontend attribute " + std::string(key));
  return rows;
}

namespace {

// `3x3`, `1_1x0_2`: the numbers of each 'x'-separated part, split on '_'.
Status ReadWindowField(const HloSource& src, std::string_view text, size_t parts,
                       std::vector<std::vector<int64_t>>* out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t x = text.find('x', start);
    std::string_view dim = text.substr(start, x == std::string_view::npos ? x : x - start);
    std::vector<int64_t> numbers;
    size_t pos = 0;
    while (pos <= dim.size()) {
      size_t sep = dim.find('_', pos);
      std::string_view num = dim.substr(pos, sep == std::string_view::npos ? sep : sep - pos);
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
      if (num.empty() || ec != std::errc() || ptr != num.data() + num.size()) {
        return src.ErrorAt(static_cast<size_t>(num.data() - src.text().data()),
                           "expected a number in the window");
      }
      numbers.push_back(v);
      if (sep == std::string_view::npos) break;
      pos = sep + 1;
    }
    if (numbers.size() != parts) {
      return src.ErrorAt(static_cast<size_t>(dim.data() - src.text().data()),
                         parts == 2 ? "expected low_high padding" : "expected one number");
    }
    out->push_back(std::move(numbers));
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<HloWindow> AttrWindow(const HloLowering& l, const HloInstruction& inst, int64_t rank) {
  HloWindow w;
  w.size.assign(rank, 1);
  w.stride.assign(rank, 1);
  w.pad_low.assign(rank, 0);
  w.pad_high.assign(rank, 0);
  w.lhs_dilate.assign(rank, 1);
  w.rhs_dilate.assign(rank, 1);
  w.reversal.assign(rank, 0);
  const HloAttr* a = Find(inst, "window");
  if (a == nullptr) {
    if (rank == 0) return w;
    return Missing(l, inst, "window");
  }
  const HloSource& src = l.source();
  HloCursor c = CursorOver(src, a->value);
  TPUSIM_RETURN_IF_ERROR(c.Expect('{', "'{' opening the window"));
  while (!c.Consume('}')) {
    c.SkipTrivia();
    size_t at = c.pos();
    std::string_view key = c.ReadName();
    TPUSIM_RETURN_IF_ERROR(c.Expect('=', "'=' in the window"));
    c.SkipTrivia();
    std::string_view value = c.ReadName();
    if (value.empty()) return c.Error("expected a window field value");
    bool is_pad = key == "pad";
    std::vector<std::vector<int64_t>> dims;
    TPUSIM_RETURN_IF_ERROR(ReadWindowField(src, value, is_pad ? 2 : 1, &dims));
    if (static_cast<int64_t>(dims.size()) != rank) {
      return src.ErrorAt(at, "window field '" + std::string(key) + "' has " +
                                 std::to_string(dims.size()) + " dimensions, expected " +
                                 std::to_string(rank));
    }
    std::vector<int64_t>* field = key == "size"           ? &w.size
                                  : key == "stride"       ? &w.stride
                                  : key == "lhs_dilate"   ? &w.lhs_dilate
                                  : key == "rhs_dilate"   ? &w.rhs_dilate
                                  : key == "rhs_reversal" ? &w.reversal
                                                          : nullptr;
    if (!is_pad && field == nullptr) {
      return src.UnimplementedAt(at, "window field '" + std::string(key) + "' is not supported");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (is_pad) {
        w.pad_low[d] = dims[d][0];
        w.pad_high[d] = dims[d][1];
      } else {
        (*field)[d] = dims[d][0];
      }
    }
  }
  TPUSIM_RETURN_IF_ERROR(ExpectEnd(c, *a));
  return w;
}

StatusOr<ir::Attribute> AttrPrecisionConfig(const HloLowering& l, const HloInstruction& inst) {
  std::vector<ir::Attribute> config;
  const HloAttr* a = Find(inst, "operand_precision");
  if (a == nullptr) {
    config.assign(2, ir::Attribute::Enum("stablehlo.precision", "DEFAULT"));
    return ir::Attribute::Array(std::move(config));
  }
  HloCursor c = CursorOver(l.source(), a->value);
  TPUSIM_RETURN_IF_ERROR(c.Expect('{', "'{' opening operand_precision"));
  while (!c.Consume('}')) {
    if (!config.empty()) TPUSIM_RETURN_IF_ERROR(c.Expect(',', "',' or '}'"));
    c.SkipTrivia();
    size_t at = c.pos();
    std::string word(c.ReadName());
    for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (word != "DEFAULT" && word != "HIGH" && word != "HIGHEST") {
      return l.source().UnimplementedAt(at, "operand precision '" + word + "' is not supported");
    }
    config.push_back(ir::Attribute::Enum("stablehlo.precision", word));
  }
  TPUSIM_RETURN_IF_ERROR(ExpectEnd(c, *a));
  return ir::Attribute::Array(std::move(config));
}

StatusOr<ir::Attribute> AttrChannelHandle(const HloLowering& l, const HloInstruction& inst,
                                          int64_t type) {
  if (Find(inst, "channel_id") == nullptr) return ir::Attribute();
  TPUSIM_ASSIGN_OR_RETURN(int64_t id, AttrInt(l, inst, "channel_id"));
  return ir::Attribute::Struct("stablehlo.channel_handle", {{"handle", ir::Attribute::Int(id)},
                                                            {"type", ir::Attribute::Int(type)}});
}

ir::Attribute I64Array(const std::vector<int64_t>& v) {
  return ir::Attribute::DenseArray(ir::ElementType::kSI64, v);
}

ir::Attribute I64(int64_t v) { return ir::Attribute::Int(v, ir::ElementType::kSI64); }

ir::Attribute I64Matrix(int64_t rows, int64_t cols, const std::vector<int64_t>& flat) {
  std::vector<uint8_t> bytes(flat.size() * sizeof(int64_t));
  if (!flat.empty()) std::memcpy(bytes.data(), flat.data(), bytes.size());
  return ir::Attribute::DenseElements(ir::Type::Tensor(ir::ElementType::kSI64, {rows, cols}),
                                      std::move(bytes));
}

ir::Attribute I64Rows(const std::vector<std::vector<int64_t>>& rows) {
  size_t cols = 0;
  for (const auto& r : rows) cols = std::max(cols, r.size());
  std::vector<int64_t> flat;
  for (const auto& r : rows) {
    flat.insert(flat.end(), r.begin(), r.end());
    flat.insert(flat.end(), cols - r.size(), -1);
  }
  return I64Matrix(static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols), flat);
}

}  // namespace tpusim::frontend

#include "tpusim/ir/printer.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace tpusim::ir {
namespace {

// A dictionary key as MLIR accepts it: bare if it is an identifier.
std::string Key(const std::string& k) {
  bool bare = !k.empty() && (std::isalpha(static_cast<unsigned char>(k[0])) || k[0] == '_');
  for (char c : k) {
    bare = bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.');
  }
  return bare ? k : Attribute::String(k).ToString();
}

// Keys sorted by name, as MLIR's dictionaries are: attribute order carries
// no meaning, and sorting makes pretty and generic spellings print alike.
std::string Dict(std::vector<NamedAttribute> entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const NamedAttribute& a, const NamedAttribute& b) { return a.first < b.first; });
  std::string s = "{";
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i) s += ", ";
    s += Key(entries[i].first);
    if (entries[i].second.kind() != Attribute::Kind::kUnit) {
      s += " = " + entries[i].second.ToString();
    }
  }
  return s + "}";
}

class Printer {
 public:
  std::string PrintFunction(const Function& f, int indent) {
    names_.clear();
    next_ = 0;
    std::string s = Indent(indent) + "func.func ";
    if (!f.is_public()) s += "private ";
    s += Attribute::SymbolRef(f.name()).ToString() + "(";
    const Block* entry = f.body().empty() ? nullptr : &f.entry();
    for (size_t i = 0; i < f.type().inputs.size(); ++i) {
      if (i) s += ", ";
      // A body whose entry block disagrees with the signature still prints.
      if (entry != nullptr && static_cast<int>(i) < entry->num_arguments()) {
        s += Define(entry->argument(static_cast<int>(i)), true) + ": ";
      } else {
        s += "%missing" + std::to_string(i) + ": ";
      }
      s += f.type().inputs[i].ToString();
      if (i < f.arg_attrs().size() && !f.arg_attrs()[i].empty()) {
        s += " " + Dict(f.arg_attrs()[i].entries());
      }
    }
    s += ")";
    if (!f.type().results.empty()) {
      s += " -> (";
      for (size_t i = 0; i < f.type().results.size(); ++i) {
        if (i) s += ", ";
        s += f.type().results[i].ToString();
        if (i < f.result_attrs().size() && !f.result_attrs()[i].empty()) {
          s += " " + Dict(f.result_attrs()[i].entries());
        }
      }
      s += ")";
    }
    if (!f.attrs().empty()) s += " attributes " + Dict(f.attrs().entries());
    s += " {\n";
    // The entry block's arguments are the signature's; later blocks get labels.
    for (int b = 0; b < f.body().num_blocks(); ++b) {
      if (b == 0) {
        for (const auto& op : f.entry().ops()) PrintOp(*op, indent + 1, s);
      } else {
        PrintBlock(f.body().block(b), b, true, indent + 1, s);
      }
    }
    return s + Indent(indent) + "}\n";
  }

 private:
  static std::string Indent(int n) { return std::string(2 * n, ' '); }

  std::string Define(Value v, bool argument) {
    std::string name = (argument ? "%arg" : "%") + std::to_string(next_++);
    names_[v.impl()] = name;
    return name;
  }

  std::string Use(Value v) const {
    auto it = names_.find(v.impl());
    return it == names_.end() ? "%undefined" : it->second;
  }

  void PrintBlock(const Block& block, int index, bool force_label, int indent, std::string& s) {
    if (block.num_arguments() > 0 || force_label) {
      s += Indent(indent - 1) + "^bb" + std::to_string(index);
      if (block.num_arguments() > 0) {
        s += "(";
        for (int i = 0; i < block.num_arguments(); ++i) {
          if (i) s += ", ";
          s += Define(block.argument(i), true) + ": " + block.argument(i).type().ToString();
        }
        s += ")";
      }
      s += ":\n";
    }
    for (const auto& op : block.ops()) PrintOp(*op, indent, s);
  }

  void PrintOp(const Operation& op, int indent, std::string& s) {
    s += Indent(indent);
    std::string body = Attribute::String(op.name_str()).ToString() + "(";
    FunctionType type;
    for (int i = 0; i < op.num_operands(); ++i) {
      if (i) body += ", ";
      body += Use(op.operand(i));
      type.inputs.push_back(op.operand(i).type());
    }
    body += ")";
    std::string results;
    if (op.num_results() > 0) {
      std::string first = "%" + std::to_string(next_);
      results = first + (op.num_results() > 1 ? ":" + std::to_string(op.num_results()) : "") + " = ";
      for (int i = 0; i < op.num_results(); ++i) {
        ++next_;
        names_[op.result(i).impl()] = op.num_results() > 1 ? first + "#" + std::to_string(i) : first;
        type.results.push_back(op.result(i).type());
      }
    }
    if (op.num_regions() > 0) {
      body += " (";
      for (int r = 0; r < op.num_regions(); ++r) {
        if (r) body += ", ";
        body += "{\n";
        const Region& region = op.region(r);
        for (int b = 0; b < region.num_blocks(); ++b) {
          PrintBlock(region.block(b), b, b > 0, indent + 1, body);
        }
        body += Indent(indent) + "}";
      }
      body += ")";
    }
    if (!op.attrs().empty()) body += " " + Dict(op.attrs().entries());
    s += results + body + " : " + type.ToString() + "\n";
  }

  std::unordered_map<const ValueImpl*, std::string> names_;
  int next_ = 0;
};

// `sdy.mesh @name = <["x"=2, "y"=4]>` from a "sdy.mesh" struct.
std::string PrintMesh(const std::string& name, const Attribute& mesh) {
  constexpr std::string_view kPrefix = "#sdy.mesh";  // the attribute's; the op drops it
  return "  sdy.mesh " + Attribute::SymbolRef(name).ToString() + " = " +
         mesh.ToString().substr(kPrefix.size()) + "\n";
}

}  // namespace

std::string PrintFunction(const Function& function) {
  return Printer().PrintFunction(function, 0);
}

std::string PrintModule(const Module& module) {
  std::string s = "module";
  if (!module.name().empty()) s += " " + Attribute::SymbolRef(module.name()).ToString();
  std::vector<NamedAttribute> attrs;
  Attribute meshes;
  for (const auto& entry : module.attrs().entries()) {
    if (entry.first == "sdy.meshes" && entry.second.kind() == Attribute::Kind::kDict) {
      meshes = entry.second;
    } else {
      attrs.push_back(entry);
    }
  }
  if (!attrs.empty()) s += " attributes " + Dict(attrs);
  s += " {\n";
  if (meshes) {
    for (const auto& [name, mesh] : meshes.fields()) s += PrintMesh(name, mesh);
  }
  for (const auto& f : module.functions()) s += Printer().PrintFunction(*f, 1);
  return s + "}\n";
}

}  // namespace tpusim::ir

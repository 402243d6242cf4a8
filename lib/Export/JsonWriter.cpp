//===- JsonWriter.cpp - pretty-printing JSON graphs -----------------------===//

#include "JsonWriter.h"

#include "llvm/ADT/SmallVector.h"

using llvm::SmallVector;

using namespace shardc::jsonexport;

namespace {
class Writer {
public:
  Writer(llvm::raw_ostream &os, unsigned width) : os(os), width(width) {}

  /// Writes `v`, whose first character goes at column `column` of a line
  /// indented by `indent`.
  void write(const OrderedJson &v, unsigned indent, size_t column,
             unsigned depth) {
    if (!v.is_structured()) {
      os << scalar(v);
      return;
    }
    if (v.empty()) {
      os << (v.is_object() ? "{}" : "[]");
      return;
    }
    bool forceExpand = depth == 0 || (depth == 1 && v.is_array());
    std::string line;
    if (!forceExpand && column < width && compact(v, line, width - column)) {
      os << line;
      return;
    }
    if (!forceExpand && v.is_object() && fillObject(v, indent))
      return;
    unsigned inner = indent + 2;
    if (v.is_object()) {
      os << "{\n";
      size_t i = 0;
      for (const auto &[key, value] : v.items()) {
        std::string k = scalar(OrderedJson(key)) + ": ";
        os.indent(inner) << k;
        write(value, inner, inner + k.size(), depth + 1);
        os << (++i < v.size() ? ",\n" : "\n");
      }
      os.indent(indent) << "}";
      return;
    }
    os << "[\n";
    if (std::none_of(v.begin(), v.end(),
                     [](const OrderedJson &e) { return e.is_structured(); })) {
      fill(v, inner);
    } else {
      for (size_t i = 0, e = v.size(); i < e; ++i) {
        os.indent(inner);
        write(v[i], inner, inner, depth + 1);
        os << (i + 1 < e ? ",\n" : "\n");
      }
    }
    os.indent(indent) << "]";
  }

private:
  static std::string scalar(const OrderedJson &v) {
    // `replace` keeps dump() from throwing (which aborts in this build) on
    // a string that is not valid UTF-8.
    return v.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
  }

  /// Appends the one-line form of `v` to `out`; fails as soon as it is
  /// longer than `limit`, so that huge lists cost no more than the limit.
  bool compact(const OrderedJson &v, std::string &out, size_t limit) {
    if (!v.is_structured()) {
      out += scalar(v);
      return out.size() <= limit;
    }
    bool object = v.is_object();
    out += object ? "{" : "[";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first)
        out += ", ";
      first = false;
      if (object)
        out += scalar(OrderedJson(it.key())) + ": ";
      if (out.size() > limit || !compact(it.value(), out, limit))
        return false;
    }
    out += object ? "}" : "]";
    return out.size() <= limit;
  }

  /// An object too long for one line, with its members flowed over several
  /// lines aligned after the brace, as people write them by hand:
  ///
  ///   {"op": "dot_general", "inputs": ["q", "k"], "output": "s",
  ///    "lhs_batch_dims": [0], ...}
  ///
  /// An "output" member ends its line, so that an op's kind, inputs and
  /// output read together. Fails (writing nothing) if a member alone is too
  /// long, e.g. the values of a large constant.
  bool fillObject(const OrderedJson &v, unsigned indent) {
    unsigned inner = indent + 1;
    if (inner + 1 >= width)
      return false;
    SmallVector<std::string> members;
    for (const auto &[key, value] : v.items()) {
      std::string member = scalar(OrderedJson(key)) + ": ";
      // +1 for the ',' or '}' that follows.
      if (!compact(value, member, width - inner - 1))
        return false;
      members.push_back(std::move(member));
    }
    os << "{";
    size_t column = inner;
    bool breakNext = false;
    size_t i = 0;
    for (const auto &[key, value] : v.items()) {
      bool last = i + 1 == members.size();
      std::string piece = members[i++] + (last ? "}" : ",");
      if (column > inner && (breakNext || column + 1 + piece.size() > width)) {
        os << "\n";
        os.indent(inner);
        column = inner;
      } else if (column > inner) {
        os << " ";
        ++column;
      }
      os << piece;
      column += piece.size();
      breakNext = key == "output";
    }
    return true;
  }

  /// Lists of scalars too long for one line: as many per line as fit.
  void fill(const OrderedJson &v, unsigned indent) {
    size_t column = indent;
    os.indent(indent);
    for (size_t i = 0, e = v.size(); i < e; ++i) {
      std::string item = scalar(v[i]) + (i + 1 < e ? "," : "");
      if (column > indent && column + 1 + item.size() > width) {
        os << "\n";
        os.indent(indent);
        column = indent;
      } else if (column > indent) {
        os << " ";
        ++column;
      }
      os << item;
      column += item.size();
    }
    os << "\n";
  }

  llvm::raw_ostream &os;
  unsigned width;
};
} // namespace

void shardc::jsonexport::writeJson(const OrderedJson &value,
                                   llvm::raw_ostream &os, unsigned width) {
  Writer(os, width).write(value, 0, 0, 0);
  os << "\n";
}

//===- JsonWriter.h - pretty-printing JSON graphs ---------------*- C++ -*-===//
//
// nlohmann's dump() either puts everything on one line or every scalar on its
// own line; a graph reads (and diffs) best with one entry per line and short
// lists such as shapes and shardings kept inline.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_EXPORT_JSONWRITER_H
#define SHARDC_LIB_EXPORT_JSONWRITER_H

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace shardc::jsonexport {

/// Keeps fields in insertion order, so they come out in the order the
/// format documents them.
using OrderedJson = nlohmann::ordered_json;

/// Writes `value` indented by 2 spaces per level. The top-level object and
/// the lists directly in it are always expanded, one entry per line; any
/// other list or object stays on one line when it fits in `width` columns.
/// An object that does not fit has its members flowed over lines of that
/// width (an op's attributes on the lines after its output); long lists of
/// numbers (constant values) are wrapped to the width.
void writeJson(const OrderedJson &value, llvm::raw_ostream &os,
               unsigned width = 120);

} // namespace shardc::jsonexport

#endif // SHARDC_LIB_EXPORT_JSONWRITER_H

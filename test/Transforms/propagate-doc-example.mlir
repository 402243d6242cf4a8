// The example of docs/propagation.md ("Example") does what its CHECK lines say.
// RUN: awk '/<!-- propagation-example -->/ { getline; keep = 1; next } keep && /^```/ { exit } keep' %shardc_src_root/docs/propagation.md > %t.mlir
// RUN: shardc-opt --shardc-propagate %t.mlir | FileCheck %t.mlir
// RUN: grep -c CHECK %t.mlir | FileCheck --check-prefix=COUNT %s
// COUNT: 5

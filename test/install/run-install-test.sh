#!/usr/bin/env bash
# Installs the build to a fresh prefix and builds, against that prefix only,
# the consumer in this directory twice: with CMake (find_package(shardc),
# shardc::engine) and with pkg-config (shardc.pc), and runs both; then
# imports the installed Python module, which must use the installed tool.
#   run-install-test.sh <build dir> <c++ compiler> [extra compile/link flags]
set -euo pipefail
build=$1 cxx=$2 flags=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
for f in bin/shardc bin/shardc-opt lib/libShardcInterpreter.a \
         include/shardc/Engine/Setup.h include/shardc/Dialect/ShardcOps.h.inc \
         lib/cmake/shardc/shardcConfig.cmake lib/pkgconfig/shardc.pc; do
  [ -e "$tmp/prefix/$f" ] || { echo "install test: $f was not installed"; exit 1; }
done

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -G Ninja -S "$here" -B "$tmp/cmake-build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  "${launcher[@]}" > "$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
ninja -C "$tmp/cmake-build" > "$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
echo "== find_package(shardc) consumer"
"$tmp/cmake-build/consumer"

echo "== pkg-config consumer"
pc_flags=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs shardc)
# shellcheck disable=SC2086
"$cxx" -O1 $flags "$here/main.cpp" -o "$tmp/consumer-pc" $pc_flags
"$tmp/consumer-pc"

echo "== installed Python module"
# A sanitizer build's module needs the sanitizer runtime preloaded into the
# (uninstrumented) interpreter, and CPython's allocations at exit are no
# leaks of ours (python/tests/CMakeLists.txt does the same).
examples=$(cd "$here/../../examples" && pwd)
LD_PRELOAD=${SHARDC_PYTHON_PRELOAD:-} \
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
PYTHONPATH="$tmp/prefix/lib/python3/dist-packages" /usr/bin/python3 - <<PY
import os, shardc, shardc._tool
assert shardc.__file__.startswith("$tmp/prefix/"), shardc.__file__
assert shardc._tool.SHARDC_TOOL == "$tmp/prefix/bin/shardc", shardc._tool.SHARDC_TOOL
engine = shardc.compile("$examples/mlp_2d_mesh.json", parameters=["w0", "w1"],
                        training=False)
assert "reduce_scatter" in engine.explain()
print("python: OK")
PY

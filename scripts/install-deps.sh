#!/usr/bin/env bash
# Installs the Debian 12 packages shardc needs, but only the ones that are
# missing, so a warm machine pays nothing.
#
#   scripts/install-deps.sh build   what configuring and building the shardc
#                                   binary needs (`make demo`)
#   scripts/install-deps.sh all     that, plus what the whole test suite needs
#                                   (`make test`, `make test-sanitize`)
#
# The split keeps a first `make demo` quick: PyTorch, clang-22 and the
# sanitizer runtimes are most of the download and the demo runs none of them.
set -euo pipefail

which_set=${1:-all}

build_packages=(
  cmake ninja-build g++ make python3 pkgconf
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libeigen3-dev nlohmann-json3-dev libgtest-dev
  libopenblas-dev libopenmpi-dev openmpi-bin
  # Auto-sharding's integer programs (--auto-shard): COIN-OR CBC.
  coinor-libcbc-dev
  # .onnx models (lib/Import/Onnx*.cpp): ONNX's protobuf schema and the
  # protobuf runtime.
  libonnx-dev libprotobuf-dev protobuf-compiler
  # The Python module (python/) is configured with the rest: pybind11 and
  # the headers of Debian's python3.
  pybind11-dev python3-pybind11 python3-dev
)

test_packages=(
  # make test-sanitize: clang-22 with its sanitizer and libFuzzer runtimes
  # (GCC has no libFuzzer), linked by lld.
  clang-22 libclang-rt-22-dev lld-22
  # make format-check: clang-format-22 and its git-clang-format-22.
  clang-format-22
  python3-numpy python3-pytest
  # The oracle of the composites and of examples/gpt_tiny.json (their loss
  # and gradients are compared with torch.nn.functional's).
  python3-torch
  # The tests that export from torch and write the hostile .onnx files.
  python3-onnx
  # test/docs/json-schema.test validates graphs against the generated schema.
  python3-jsonschema
)

case "$which_set" in
  build) packages=("${build_packages[@]}") ;;
  all) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: $0 [build|all]" >&2; exit 1 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "shardc: installing missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

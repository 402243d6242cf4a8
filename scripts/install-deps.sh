#!/usr/bin/env bash
# Installs the Debian 12 packages shardc builds and tests with, but only the
# ones that are missing, so a warm machine pays nothing.
set -euo pipefail

packages=(
  cmake ninja-build g++ make python3 pkgconf
  # make test-sanitize: clang-22 with its sanitizer and libFuzzer runtimes
  # (GCC has no libFuzzer), linked by lld.
  clang-22 libclang-rt-22-dev lld-22
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libeigen3-dev nlohmann-json3-dev libgtest-dev
  libopenblas-dev libopenmpi-dev openmpi-bin
  python3-numpy
  # Auto-sharding's integer programs (--auto-shard): COIN-OR CBC.
  coinor-libcbc-dev
  # The Python module (python/) and its tests: pybind11, the headers of
  # Debian's python3, and pytest.
  pybind11-dev python3-pybind11 python3-dev python3-pytest
  # The oracle of the composites and of examples/gpt_tiny.json (their loss
  # and gradients are compared with torch.nn.functional's).
  python3-torch
  # .onnx models (lib/Import/Onnx*.cpp: ONNX's protobuf schema and the
  # protobuf runtime), and python3-onnx for the tests that export from torch
  # and write the hostile .onnx files.
  libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx
)

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

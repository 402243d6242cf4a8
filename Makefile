# The two entry points of the README. Each installs what is missing,
# configures and builds (incrementally), then does its job.
BUILD_DIR ?= build
JOBS ?= 2
SHARDC := $(BUILD_DIR)/bin/shardc

.PHONY: deps deps-build configure build build-demo demo test test-haswell test-sanitize format-check fuzz bench bench-train bench-transformer bench-mpi docs clean

# What building the shardc binary needs; `deps` adds the test suite's
# (PyTorch, clang-22 and its sanitizer runtimes, pytest, ONNX's Python half).
deps-build:
	@scripts/install-deps.sh build

deps:
	@scripts/install-deps.sh all

$(BUILD_DIR)/build.ninja: | deps-build
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	ninja -C $(BUILD_DIR) -j$(JOBS)

# Only what the demo runs: the shardc binary and the libraries under it.
build-demo: deps-build configure
	ninja -C $(BUILD_DIR) -j$(JOBS) shardc

# The main job on a shipped example: the 2D-mesh MLP of the tensor-parallelism
# tutorial, sharded automatically (the per-device program is printed), then
# run on a simulated 4x2 mesh and checked against the unsharded program.
demo: build-demo
	$(SHARDC) compile examples/mlp_2d_mesh.json --partition
	$(SHARDC) simulate examples/mlp_2d_mesh.json --seed 0 \
	  --report-json $(BUILD_DIR)/demo-report.json --trace $(BUILD_DIR)/demo-trace.json

test: build
	cd $(BUILD_DIR) && ctest -j$(JOBS) --output-on-failure

# The C++ lines changed since the merge base with main (on main: the last
# commit) formatted as clang-format-22 formats them (scripts/format-check.sh).
format-check: deps
	@scripts/format-check.sh

# The suite again on OpenBLAS's AVX2 kernels, whatever the CPU: what an
# AVX2-only machine (older Intel, AMD Zen 1-3) computes (docs/development.md).
test-haswell: build
	cd $(BUILD_DIR) && OPENBLAS_CORETYPE=Haswell ctest -j$(JOBS) --output-on-failure

# The suite again, built with clang-22 under AddressSanitizer and
# UndefinedBehaviorSanitizer, with the fuzzers (docs/development.md). -O1
# keeps the build and the run both bearable on two cores. It targets
# portable x86-64 (SSE2) where `build` targets x86-64-v3 when the machine
# runs it (cmake/CpuTarget.cmake), so CI runs the suite on both.
SAN_BUILD_DIR ?= build-san
SANITIZE ?= address,undefined
FUZZ_SECONDS ?= 60

$(SAN_BUILD_DIR)/build.ninja: | deps
	CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B $(SAN_BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
	  -DLLVM_USE_LINKER=lld -DSHARDC_SANITIZE=$(SANITIZE) -DSHARDC_CPU_TARGET=default \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  $(if $(shell command -v ccache),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

test-sanitize: deps $(SAN_BUILD_DIR)/build.ninja
	ninja -C $(SAN_BUILD_DIR) -j$(JOBS)
	cd $(SAN_BUILD_DIR) && ctest -j$(JOBS) --output-on-failure

# Runs each fuzzer for FUZZ_SECONDS on a corpus kept in $(SAN_BUILD_DIR)/fuzz.
fuzz: deps $(SAN_BUILD_DIR)/build.ninja
	ninja -C $(SAN_BUILD_DIR) -j$(JOBS) shardc-fuzzers
	fuzz/run-fuzzers.sh $(SAN_BUILD_DIR) $(FUZZ_SECONDS)

# Compile-time benchmark against upstream MLIR's shard dialect
# (bench/compile-time.md).
bench: build
	python3 bench/compile_bench.py --shardc $(SHARDC)

# Training-step benchmark: the threads backend against NumPy and PyTorch
# (bench/training-step.md).
bench-train: build
	python3 bench/train_bench.py

# Transformer training step (examples/gpt at GPT-2 width): the threads
# backend on 1 and 2 devices against PyTorch eager at 1 and 2 threads
# (bench/training-step.md).
bench-transformer: build
	/usr/bin/python3 bench/transformer_bench.py

# The same step on 2 devices: the mpi backend (under scripts/mpirun-local.sh)
# against the threads backend, data=2 and model=2, and PyTorch's
# data-parallel step over gloo (bench/README.md).
bench-mpi: build
	/usr/bin/python3 bench/mpi_bench.py

# Refresh the references generated from ODS (checked by a test).
docs: build
	cp $(BUILD_DIR)/docs/Dialects/ShardcDialect.md docs/Dialects/
	cp $(BUILD_DIR)/docs/ShardcPasses.md docs/Passes.md

clean:
	rm -rf $(BUILD_DIR)

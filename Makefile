# The two entry points of the README. Each installs what is missing,
# configures and builds (incrementally), then does its job.
BUILD_DIR ?= build
JOBS ?= 2
SHARDC := $(BUILD_DIR)/bin/shardc

.PHONY: deps configure build demo test bench docs clean

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	ninja -C $(BUILD_DIR) -j$(JOBS)

# The main job on a shipped example: the 2D-mesh MLP of the tensor-parallelism
# tutorial, imported, verified and printed as IR, then run on random inputs.
demo: build
	$(SHARDC) compile examples/mlp_2d_mesh.json --emit=mlir
	$(SHARDC) run examples/mlp_2d_mesh.json --seed 0 --out-dir $(BUILD_DIR)/demo-out

test: build
	cd $(BUILD_DIR) && ctest -j$(JOBS) --output-on-failure

# Refresh the references generated from ODS (checked by a test).
docs: build
	cp $(BUILD_DIR)/docs/Dialects/ShardcDialect.md docs/Dialects/
	cp $(BUILD_DIR)/docs/ShardcPasses.md docs/Passes.md

clean:
	rm -rf $(BUILD_DIR)

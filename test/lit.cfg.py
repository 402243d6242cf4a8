# -*- Python -*-
import os
import sys

import lit.formats
from lit.llvm import llvm_config

config.name = "SHARDC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.shardc_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shardc_src_root", config.shardc_src_root))
config.substitutions.append(("%shardc_tools_dir", config.shardc_tools_dir))
config.substitutions.append(("%shardc_obj_root", config.shardc_obj_root))
config.substitutions.append(("%python", sys.executable))
# Debian's python3-numpy lives with the system interpreter, which need not be
# the first python3 on PATH.
config.substitutions.append(("%numpy_python", "/usr/bin/python3"))
# `%mpirun -n 4 shardc ...`: mpirun with this machine's flags (docs/mpi.md).
config.substitutions.append(("%mpirun", config.shardc_mpirun))
config.substitutions.append(("%examples", os.path.join(config.shardc_src_root, "examples")))

# OpenBLAS's kernel choice reaches the tests, so `make test-haswell` runs
# them on its AVX2 kernels (docs/development.md); lit drops other variables.
llvm_config.with_system_environment(["HOME", "TMP", "TEMP",
                                     "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"])
# `lit --param snapshot_dir=DIR`: record every text piped into FileCheck under
# DIR (scripts/output-snapshot.py compares two builds' records). Placed before
# the default substitutions so the recorder wraps the real FileCheck.
snapshot_dir = lit_config.params.get("snapshot_dir")
if snapshot_dir:
    config.substitutions.append((
        r"(?<![\w/.-])FileCheck\b",
        " ".join([sys.executable,
                  os.path.join(config.shardc_src_root, "scripts", "snapshot_filecheck.py"),
                  snapshot_dir, config.shardc_src_root, config.shardc_obj_root,
                  os.path.join(config.llvm_tools_dir, "FileCheck")])))
llvm_config.use_default_substitutions()

tool_dirs = [config.shardc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["shardc", "shardc-opt", "shardc-difftest"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.shardc_tools_dir, append_path=True)

# Under ASan and UBSan a run is several times slower; the few tests that
# repeat one search over many inputs run a subset there (`REQUIRES:
# sanitizer` / `UNSUPPORTED: sanitizer`), the same code on fewer sizes.
if "ASAN_OPTIONS" in config.environment:
    config.available_features.add("sanitizer")

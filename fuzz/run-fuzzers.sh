#!/usr/bin/env bash
# Runs shardc's libFuzzer harnesses (fuzz/*Fuzzer.cpp) of a sanitizer build.
#
#   fuzz/run-fuzzers.sh BUILD_DIR SECONDS [json|mlir|npy|onnx ...]
#   fuzz/run-fuzzers.sh --ctest BUILD_DIR RUNS [json|mlir|npy|onnx ...]
#
# Each harness starts from a seed corpus copied afresh from the repository
# (examples, test inputs; .npy seeds written by NumPy) into
# BUILD_DIR/fuzz/seeds/<harness>, and grows its own corpus in
# BUILD_DIR/fuzz/corpus/<harness>, kept across runs. A crashing input lands in
# BUILD_DIR/fuzz/findings/<harness>/; copy it to fuzz/regressions/<harness>/
# once it is fixed. Without --ctest the run lasts SECONDS and goes on past a
# finding (fork mode, one worker) so that a long run reports them all. With
# --ctest the run tries RUNS inputs from a fixed random seed, so that a
# slow machine fuzzes as much as a fast one (only longer), and the first
# finding fails the run.
set -euo pipefail

ctest_mode=0
if [ "${1:-}" = "--ctest" ]; then
  ctest_mode=1
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [json|mlir|npy|onnx ...]" >&2
  echo "       $0 --ctest BUILD_DIR RUNS [json|mlir|npy|onnx ...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
budget=$2
shift 2
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(json mlir npy onnx)
fi
src=$(cd "$(dirname "$0")/.." && pwd)

# Outside ctest, the sanitizer build's runtime options (fuzz/CMakeLists.txt).
if [ -z "${ASAN_OPTIONS:-}" ] && [ -f "$build/fuzz/sanitizer-env.sh" ]; then
  # shellcheck disable=SC1091
  source "$build/fuzz/sanitizer-env.sh"
fi

# Lit test files hold several cases split by `// -----`: one seed each.
split_mlir() {
  local file=$1 out=$2
  awk -v out="$out" '
    BEGIN { n = 0; f = out "-" n ".mlir" }
    /^\/\/ -----/ { close(f); n++; f = out "-" n ".mlir"; next }
    { print > f }' "$file"
}

seed_json() {
  local dir=$1
  cp "$src"/examples/*.json "$src"/test/bad-inputs/*.json "$dir"/
  find "$src/test" -path '*/Inputs/*.json' -exec cp {} "$dir"/ \;
}

seed_mlir() {
  local dir=$1 f
  for f in "$src"/test/Dialect/*.mlir "$src"/test/Transforms/*.mlir \
           "$src"/test/bad-inputs/*.mlir; do
    split_mlir "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f" .mlir)"
  done
  find "$src/test" "$src/examples" -path '*/Inputs/*.mlir' -exec cp {} "$dir"/ \;
  find "$src/examples" -maxdepth 1 -name '*.mlir' -exec cp {} "$dir"/ \;
}

# The .npy shapes the reader accepts and a few it must refuse, as NumPy
# writes them.
seed_npy() {
  /usr/bin/python3 - "$1" <<'PY'
import sys, numpy as np, io
d = sys.argv[1]
def save(name, a, version=None):
    with open(f"{d}/{name}.npy", "wb") as f:
        if version:
            np.lib.format.write_array(f, a, version=version)
        else:
            np.save(f, a)
rng = np.random.default_rng(0)
save("f4-2d", rng.standard_normal((3, 4)).astype("<f4"))
save("f8-3d", rng.standard_normal((2, 3, 2)).astype("<f8"))
save("f4-scalar", np.array(1.5, dtype="<f4"))
save("f4-empty", np.zeros((0, 3), dtype="<f4"))
save("f4-fortran", np.asfortranarray(rng.standard_normal((3, 5)).astype("<f4")))
save("f4-v2", rng.standard_normal((4,)).astype("<f4"), version=(2, 0))
save("f4-v3", rng.standard_normal((2, 2)).astype("<f4"), version=(3, 0))
save("f4-big-endian", rng.standard_normal((2, 2)).astype(">f4"))
save("i4", np.arange(6, dtype="<i4").reshape(2, 3))
save("f2", np.ones((2,), dtype="<f2"))
PY
}

# Models torch exports (examples/pytorch/gpt.py and encoder.py, whose
# attention the importer rewrites, both ways) and the hostile files of
# test/bad-inputs.
seed_onnx() {
  local dir=$1
  cp "$src"/test/bad-inputs/*.onnx "$dir"/
  /usr/bin/python3 "$src/examples/pytorch/gpt.py" "$dir/gpt.onnx" 2>/dev/null
  /usr/bin/python3 "$src/examples/pytorch/gpt.py" "$dir/gpt-folded.onnx" --fold 2>/dev/null
  /usr/bin/python3 "$src/examples/pytorch/encoder.py" "$dir/encoder.onnx" --causal 2>/dev/null
  /usr/bin/python3 "$src/examples/pytorch/encoder.py" "$dir/encoder-folded.onnx" --fold 2>/dev/null
}

status=0
for h in "${harnesses[@]}"; do
  fuzzer=$build/bin/shardc-fuzz-$h
  if [ ! -x "$fuzzer" ]; then
    echo "run-fuzzers: $fuzzer is not built (ninja shardc-fuzzers)" >&2
    exit 2
  fi
  seeds=$build/fuzz/seeds/$h
  corpus=$build/fuzz/corpus/$h
  findings=$build/fuzz/findings/$h
  rm -rf "$seeds"
  # The ctest starts from the seeds alone, so that it does not depend on
  # earlier runs, and fails only for what it found itself.
  if [ $ctest_mode -eq 1 ]; then
    corpus=$build/fuzz/ctest-corpus/$h
    findings=$build/fuzz/ctest-findings/$h
    rm -rf "$corpus" "$findings"
  fi
  mkdir -p "$seeds" "$corpus" "$findings"
  "seed_$h" "$seeds"

  args=(-timeout=30 -rss_limit_mb=2048 -artifact_prefix="$findings/"
        -print_final_stats=1)
  if [ $ctest_mode -eq 1 ]; then
    args+=(-runs="$budget" -seed=1)
  else
    args+=(-max_total_time="$budget")
  fi
  case $h in
    # Deep nesting overflows MLIR's recursive parser's stack before any
    # shardc code runs (a depth cap is under way separately): short inputs
    # keep the fuzzer on shardc's code.
    mlir) args+=(-max_len=4096 -dict="$build/fuzz/mlir.dict") ;;
    json) args+=(-max_len=16384 -dict="$build/fuzz/json.dict") ;;
    npy) args+=(-max_len=4096) ;;
    onnx) args+=(-max_len=262144) ;;
  esac
  if [ $ctest_mode -eq 0 ]; then
    args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  fi
  if [ $ctest_mode -eq 1 ]; then
    length="$budget inputs"
  else
    length="${budget}s"
  fi
  echo "run-fuzzers: $h for $length ($(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) in the corpus)"
  if ! "$fuzzer" "${args[@]}" "$corpus" "$seeds"; then
    status=1
  fi
  if [ -n "$(ls -A "$findings")" ]; then
    echo "run-fuzzers: $h findings in $findings:" >&2
    ls "$findings" >&2
    # A ctest run starts by clearing its findings, and a CI log may be all
    # that is left of a failure: print each input (its first 64 KiB, in
    # base64) so that it can be rebuilt and rerun from the log.
    for f in "$findings"/*; do
      echo "run-fuzzers: $(basename "$f"), $(stat -c %s "$f") bytes, base64:" >&2
      head -c 65536 "$f" | base64 -w 0 >&2
      echo >&2
    done
    status=1
  fi
done
exit $status

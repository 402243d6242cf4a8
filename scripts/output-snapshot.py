#!/usr/bin/env python3
"""Records what a shardc build prints, so two builds can be compared byte
for byte (a refactoring must not change a single output or diagnostic).

usage: output-snapshot.py --build BUILD_DIR --out OUT_DIR [--src SRC_ROOT]
                          [--skip lit,examples,bad-inputs,bench] [-j N]
       output-snapshot.py --compare OLD_DIR NEW_DIR

A snapshot is a directory of text files:
  lit/         every text a lit RUN line pipes into FileCheck (the whole
               suite is run with `lit --param snapshot_dir=...`; the checks
               still run, so a failing test is also reported);
  examples/    `shardc compile`, `compile --partition`, `explain`,
               `simulate --seed 0` (and `train --steps 3` for *_train.json)
               on every examples/*.json: stdout, stderr and exit code;
  bad-inputs/  `shardc compile` on every test/bad-inputs file: the
               diagnostic and exit code;
  bench/       the compile benchmark's partitioned programs at N=1000 and
               5000, from the JSON graph and from the .mlir form
               (bench/compile_bench.py's generators).
Paths of the source and build trees are replaced by <src> and <build>.
`--compare` prints a unified diff of two snapshots and exits 1 if they differ.

Typical use, old tree vs. new tree:
  python3 scripts/output-snapshot.py --build /path/old/build --src /path/old --out /tmp/old
  python3 scripts/output-snapshot.py --build build --out /tmp/new
  python3 scripts/output-snapshot.py --compare /tmp/old /tmp/new
"""
import argparse
import difflib
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys


def normalize(text, roots):
    for root, mark in roots:
        text = text.replace(os.path.realpath(root), mark).replace(root, mark)
    return text


def record(out_path, cmd, roots, cwd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       cwd=cwd, timeout=900)
    text = ("$ shardc " + " ".join(cmd[1:]) + "\n"
            + "--- stdout ---\n" + p.stdout.decode("utf-8", "replace")
            + "--- stderr ---\n" + p.stderr.decode("utf-8", "replace")
            + f"--- exit {p.returncode} ---\n")
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        f.write(normalize(text, roots))


def lit_executable(build):
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("LLVM_EXTERNAL_LIT:"):
                return line.split("=", 1)[1].strip()
    return shutil.which("lit") or "lit"


def snapshot(a):
    src = os.path.abspath(a.src)
    build = os.path.abspath(a.build)
    out = os.path.abspath(a.out)
    shardc = os.path.join(build, "bin", "shardc")
    roots = [(build, "<build>"), (src, "<src>")]
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    skip = set(filter(None, a.skip.split(",")))

    if "lit" not in skip:
        with open(os.path.join(src, "test", "lit.cfg.py")) as f:
            if "snapshot_dir" not in f.read():
                sys.exit("output-snapshot: test/lit.cfg.py of --src has no snapshot_dir "
                         "parameter; merge main's commit that added this script")
        lit = subprocess.run(
            [sys.executable, lit_executable(build), "-q", f"-j{a.jobs}",
             # test/bad-inputs holds models, not lit tests (ctest runs them).
             "--filter-out", "bad-inputs/",
             "--param", f"snapshot_dir={os.path.join(out, 'lit')}",
             os.path.join(build, "test")],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if lit.returncode != 0:
            print(lit.stdout.decode("utf-8", "replace")[-4000:])
            print("output-snapshot: some lit tests failed (outputs recorded anyway)")

    if "examples" not in skip:
        for model in sorted(glob.glob(os.path.join(src, "examples", "*.json"))):
            name = os.path.basename(model)
            runs = {"compile": ["compile", model],
                    "partition": ["compile", model, "--partition"],
                    "explain": ["explain", model],
                    "simulate": ["simulate", model, "--seed", "0"]}
            if name.endswith("_train.json"):
                runs["train"] = ["train", model, "--backend", "sim",
                                 "--steps", "3", "--seed", "0"]
            for label, args in runs.items():
                record(os.path.join(out, "examples", f"{name}.{label}"),
                       [shardc] + args, roots, src)

    if "bad-inputs" not in skip:
        for model in sorted(glob.glob(os.path.join(src, "test", "bad-inputs", "*"))):
            if model.endswith((".json", ".mlir")):
                record(os.path.join(out, "bad-inputs", os.path.basename(model)),
                       [shardc, "compile", model, "-o", os.devnull], roots, src)

    if "bench" not in skip:
        spec = importlib.util.spec_from_file_location(
            "compile_bench", os.path.join(src, "bench", "compile_bench.py"))
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
        work = os.path.join(out, "bench-work")
        os.makedirs(work)
        for n in (1000, 5000):
            for form, text in (("json", json.dumps(bench.shardc_json(n))),
                               ("mlir", bench.shardc_mlir(n))):
                model = os.path.join(work, f"model_{n}.{form}")
                with open(model, "w") as f:
                    f.write(text)
                result = os.path.join(out, "bench", f"partitioned_{n}_from_{form}.mlir")
                os.makedirs(os.path.dirname(result), exist_ok=True)
                record(result + ".log",
                       [shardc, "compile", model, "--partition", "-o", result],
                       [(work, "<work>"), (out, "<out>")] + roots, src)
        shutil.rmtree(work)
    count = sum(len(files) for _, _, files in os.walk(out))
    print(f"output-snapshot: {count} files in {out}")


def compare(old, new):
    def files(root):
        found = set()
        for d, _, names in os.walk(root):
            for n in names:
                found.add(os.path.relpath(os.path.join(d, n), root))
        return found
    a, b = files(old), files(new)
    differ = 0
    for rel in sorted(a | b):
        if rel not in b or rel not in a:
            print(f"only in {'old' if rel in a else 'new'}: {rel}")
            differ += 1
            continue
        with open(os.path.join(old, rel), "rb") as f:
            x = f.read()
        with open(os.path.join(new, rel), "rb") as f:
            y = f.read()
        if x != y:
            differ += 1
            sys.stdout.writelines(difflib.unified_diff(
                x.decode("utf-8", "replace").splitlines(True),
                y.decode("utf-8", "replace").splitlines(True),
                "old/" + rel, "new/" + rel, n=2))
    print(f"output-snapshot: {len(a | b)} files, {differ} differ")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build")
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--out")
    ap.add_argument("--skip", default="")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    a = ap.parse_args()
    if a.compare:
        return compare(*a.compare)
    if not a.build or not a.out:
        ap.error("--build and --out are required (or --compare OLD NEW)")
    snapshot(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())

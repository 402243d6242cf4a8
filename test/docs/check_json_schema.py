#!/usr/bin/env python3
"""The JSON graph schema shardc-catalog writes from the ops says what the
importer says: every example graph is valid, and entries the importer
rejects for their op's inputs or fields are not.

Usage: check_json_schema.py SCHEMA SRC_ROOT
"""

import copy
import glob
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("check_json_schema.py needs python3-jsonschema (Debian)")


def main():
    schema_path, src = sys.argv[1:3]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    graphs = 0
    for path in sorted(glob.glob(os.path.join(src, "examples", "*.json"))):
        with open(path, encoding="utf-8") as f:
            graph = json.load(f)
        if not isinstance(graph, dict) or "ops" not in graph:
            continue  # a plan or a machine file, not a graph
        graphs += 1
        for error in validator.iter_errors(graph):
            problems.append(f"{os.path.relpath(path, src)}: "
                            f"{'/'.join(map(str, error.absolute_path))}: "
                            f"{error.message}")

    base = {"mesh": {"name": "mesh", "axes": [["x", 2]]},
            "inputs": [{"name": "a", "shape": [4, 8]}],
            "ops": [{"op": "reduce_sum", "inputs": ["a"], "output": "b",
                     "dims": [1]}],
            "outputs": [{"name": "b"}]}
    if not validator.is_valid(base):
        problems.append("a reduce_sum entry with its dims is rejected")
    rejected = {
        "an op that is not registered": {"op": "convolution"},
        "a field the op does not have": {"permutation": [1, 0]},
        "a missing required field": {"dims": None},
        "too many inputs": {"inputs": ["a", "a"]},
        "a field of the wrong type": {"dims": "1"},
    }
    for what, change in rejected.items():
        graph = copy.deepcopy(base)
        for key, value in change.items():
            if value is None:
                del graph["ops"][0][key]
            else:
                graph["ops"][0][key] = value
        if validator.is_valid(graph):
            problems.append(f"an entry with {what} is valid")

    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"json schema: {graphs} example graphs valid, "
          f"{len(rejected)} bad entries rejected")


if __name__ == "__main__":
    main()

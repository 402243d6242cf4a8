#!/usr/bin/env python3
"""Every list of ops outside the ops' own definitions names every registered op.

The registered ops are read from the dialect reference ODS generates into the
build tree (docs/Dialects/ShardcDialect.md there; generated-docs.test keeps
the committed copy equal to it). Checked against them:

- the op tables of the docs (the table whose header's first cell is `op`):
  docs/ir.md, docs/json-format.md, docs/autodiff.md, docs/propagation.md,
  for every op but the elementwise ones (the ops with the UnaryElementwise
  or BinaryElementwise trait), which the tables do not list: each one's
  entry in the generated reference, written from its ODS definition, must
  give its gradient, sharding rule and JSON spelling instead;
- the `op` enum of the JSON schema, and that every op of that enum has its
  fields defined by one of the schema's per-op `if` clauses (the schema is
  written from the registry by shardc-catalog into the build tree,
  docs/shardc-graph.schema.json there: this guards the writer);
- the fuzz dictionaries (`shardc-catalog --fuzz-dict=mlir`: `shardc.<op>`,
  `--fuzz-dict=json`: `"<op>"`, which the fuzz build appends to the format's
  other tokens in fuzz/*.dict); those hand-kept files must not name ops,
  which they would only duplicate;
- the difftest generator: `shardc-difftest --list-ops` generates cases and
  lists, from the op registry, the ops they hold and the ops it does not
  draw with the reason each declares (tools/shardc-difftest/OpCatalog.cpp);
  an op neither drawn nor excluded with a reason fails here.

`mesh` is the one op the JSON format spells as the graph's `mesh` field, not
as an op entry, so the JSON lists leave it out.

Usage: check_op_catalog.py SRC_ROOT OBJ_ROOT TOOLS_DIR
"""

import json
import os
import re
import subprocess
import sys

# Ops the JSON graph format does not spell as an entry of `ops`.
NOT_JSON_OPS = {"mesh"}

def registered_ops(obj_root):
    path = os.path.join(obj_root, "docs", "Dialects", "ShardcDialect.md")
    with open(path, encoding="utf-8") as f:
        ops = set(re.findall(r"^### `shardc\.([a-z_0-9]+)`", f.read(), re.M))
    if not ops:
        sys.exit(f"{path}: no ops found")
    return ops


ELEMENTWISE_TRAITS = ("`Shardc_UnaryElementwiseTrait`",
                      "`Shardc_BinaryElementwiseTrait`")
# What the elementwise family's ODS classes write into every op's entry.
ELEMENTWISE_ENTRY = (r"^Gradient \(`g` [^:]*\): (?!\.$)\S", r"^Sharding rule: `",
                     r"^In a JSON graph: ")


def elementwise_entries(obj_root):
    """The elementwise ops of the generated reference, with their entries."""
    path = os.path.join(obj_root, "docs", "Dialects", "ShardcDialect.md")
    with open(path, encoding="utf-8") as f:
        sections = re.split(r"^(?=### `shardc\.)", f.read(), flags=re.M)
    entries = {}
    for section in sections:
        name = re.match(r"### `shardc\.([a-z_0-9]+)`", section)
        traits = re.search(r"^Traits: (.*)$", section, re.M)
        if name and traits and any(t in traits.group(1)
                                   for t in ELEMENTWISE_TRAITS):
            entries[name.group(1)] = section
    return entries


def op_table_names(path):
    """Op names in the first cells of the table headed `| op | ...`."""
    names = set()
    in_table = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("|"):
                in_table = False
                continue
            first = line.split("|")[1].strip()
            if first in ("op", "`op`"):
                in_table = True
                continue
            if in_table:
                for span in re.findall(r"`([^`]*)`", first):
                    names.update(re.findall(r"[a-z_0-9]+", span))
    return names


def schema_ops(path):
    with open(path, encoding="utf-8") as f:
        schema = json.load(f)
    enum = set()
    clauses = set()

    def walk(node):
        if isinstance(node, dict):
            props = node.get("properties", {})
            op = props.get("op") if isinstance(props, dict) else None
            if isinstance(op, dict) and "enum" in op:
                if "if" in node or node.get("required"):
                    enum.update(op["enum"])
            cond = node.get("if")
            if isinstance(cond, dict):
                cop = cond.get("properties", {}).get("op", {})
                clauses.update(cop.get("enum", []))
                if "const" in cop:
                    clauses.add(cop["const"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return enum, clauses


def dict_tokens(path, pattern):
    with open(path, encoding="utf-8") as f:
        return set(re.findall(pattern, f.read()))


def main():
    src, obj, tools = sys.argv[1:4]
    ops = registered_ops(obj)
    json_ops = ops - NOT_JSON_OPS
    problems = []

    def expect(where, wanted, have):
        missing = sorted(wanted - have)
        if missing:
            problems.append(f"{where}: lacks {', '.join(missing)}")

    elementwise = elementwise_entries(obj)
    if not elementwise:
        problems.append("the generated reference shows no elementwise op")
    for op, entry in sorted(elementwise.items()):
        for pattern in ELEMENTWISE_ENTRY:
            if not re.search(pattern, entry, re.M):
                problems.append(f"the generated entry of shardc.{op} lacks "
                                f"{pattern!r} (its ODS definition, e.g. "
                                "gradientFormula, is incomplete)")
    tabled = ops - set(elementwise)
    for doc in ("ir.md", "autodiff.md", "propagation.md"):
        expect(f"docs/{doc} op table", tabled,
               op_table_names(os.path.join(src, "docs", doc)))
    expect("docs/json-format.md op table", tabled - NOT_JSON_OPS,
           op_table_names(os.path.join(src, "docs", "json-format.md")))

    enum, clauses = schema_ops(
        os.path.join(obj, "docs", "shardc-graph.schema.json"))
    expect("the JSON schema's op enum", json_ops, enum)
    expect("the JSON schema's per-op `if` clauses", enum, clauses)
    unknown = sorted(enum - ops)
    if unknown:
        problems.append("the JSON schema's op enum names ops that are not "
                        f"registered: {', '.join(unknown)}")

    mlir_pattern = r'(?m)^"shardc\.([a-z_0-9]+)"$'
    json_pattern = r'(?m)^"\\"([a-z_0-9]+)\\""$'
    for fmt, pattern, wanted in (("mlir", mlir_pattern, ops),
                                 ("json", json_pattern, json_ops)):
        generated = subprocess.run(
            [os.path.join(tools, "shardc-catalog"), f"--fuzz-dict={fmt}"],
            check=False, capture_output=True, text=True).stdout
        expect(f"shardc-catalog --fuzz-dict={fmt}", wanted,
               set(re.findall(pattern, generated)))
        by_hand = sorted(dict_tokens(os.path.join(src, "fuzz", f"{fmt}.dict"),
                                     pattern) & wanted)
        if by_hand:
            problems.append(f"fuzz/{fmt}.dict names ops, which the fuzz "
                            f"build adds from the registry: {', '.join(by_hand)}")

    listing = subprocess.run(
        [os.path.join(tools, "shardc-difftest"), "--list-ops", "--cases",
         "2000", "--seed", "1"],
        check=False, capture_output=True, text=True)
    out = listing.stdout
    drawn_line = re.search(r"^difftest: ops drawn:(.*)$", out, re.M)
    if drawn_line is None:
        problems.append("shardc-difftest --list-ops: no 'ops drawn' line")
    else:
        drawn = {n.split("=")[0].removeprefix("shardc.")
                 for n in drawn_line.group(1).split()}
        excused = set(re.findall(r"^difftest: not drawn: shardc\.([a-z_0-9]+): \S",
                                 out, re.M))
        expect("shardc-difftest (2000 cases of seed 1) draws or excludes with "
               "a reason", ops, drawn | excused)
        for line in out.splitlines():
            if (" is never drawn" in line or " is declared not drawn" in line):
                problems.append(f"shardc-difftest --list-ops: {line}")
    if listing.returncode != 0 and not any(
            p.startswith("shardc-difftest") for p in problems):
        problems.append("shardc-difftest --list-ops failed: "
                        + listing.stderr.strip())

    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"op catalog: {len(ops)} registered ops in every list, "
          f"{len(elementwise)} elementwise ones in their generated entries")


if __name__ == "__main__":
    main()

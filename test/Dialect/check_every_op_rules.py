#!/usr/bin/env python3
"""Every op instance of the op-completeness inputs
(unittests/Dialect/Inputs/every-op.mlir, which holds one of every registered
tensor op), printed with its sharding rule, has the rule its family gives:
an op with ShardingRuleOpInterface prints one, and an elementwise op's
(UnaryElementwise or BinaryElementwise trait, read from the generated
dialect reference) is the identity of its dims, shared by every operand.
So a new op of these families needs no lines in sharding-rules.mlir.

Usage: check_every_op_rules.py RULES_MLIR DIALECT_REFERENCE_MD
"""

import re
import sys


def families(reference):
    """Op name -> (traits, interfaces) from the generated reference."""
    with open(reference, encoding="utf-8") as f:
        sections = re.split(r"^(?=### `shardc\.)", f.read(), flags=re.M)
    out = {}
    for section in sections:
        name = re.match(r"### `shardc\.([a-z_0-9]+)`", section)
        if not name:
            continue
        traits = re.search(r"^Traits: (.*)$", section, re.M)
        interfaces = re.search(r"^Interfaces: (.*)$", section, re.M)
        out[name.group(1)] = (traits.group(1) if traits else "",
                              interfaces.group(1) if interfaces else "")
    return out


def main():
    rules_path, reference = sys.argv[1:3]
    ops = families(reference)
    with open(rules_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    problems = []
    seen = set()
    for line in lines:
        m = re.match(r"\s*(?:%\S+ = )?shardc\.([a-z_0-9]+)\b", line)
        if not m or m.group(1) not in ops:
            continue
        op = m.group(1)
        seen.add(op)
        traits, interfaces = ops[op]
        rule = re.search(r"sharding_rule = #shardc\.sharding_rule<(.*?)>[,}]",
                         line)
        if "Shardc_ShardingRuleOpInterface" in interfaces and not rule:
            problems.append(f"shardc.{op}: no sharding rule printed")
            continue
        if "Shardc_UnaryElementwiseTrait" in traits:
            want = r"\(\[f0, f1\]\) -> \(\[f0, f1\]\) \{f0=2, f1=3\}$"
        elif "Shardc_BinaryElementwiseTrait" in traits:
            want = (r"\(\[f0, f1\], \[f0, f1\]\) -> \(\[f0, f1\]\) "
                    r"\{f0=2, f1=3\}$")
        else:
            continue
        if not re.match(want, rule.group(1)):
            problems.append(f"shardc.{op}: rule {rule.group(1)} is not the "
                            "elementwise identity of a 2x3 instance")
    elementwise = {op for op, (traits, _) in ops.items()
                   if "ElementwiseTrait" in traits}
    missing = sorted(elementwise - seen)
    if missing:
        problems.append("no instance of " + ", ".join(missing))
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"every-op rules: {len(seen)} ops, {len(elementwise)} elementwise "
          "with the identity rule")


if __name__ == "__main__":
    main()

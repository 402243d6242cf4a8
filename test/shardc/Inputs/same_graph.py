"""usage: same_graph.py EXPORTED ORIGINAL

Exit 0 when the exported JSON graph is the original one. An original that
relies on broadcasting (docs/json-format.md) comes back with the
broadcast_in_dim entries the importer inserted (named <output>.lhs or
<output>.rhs) and its defaults written out; it is the same graph when
removing those entries, reading them through, and dropping the defaults
gives the original.
"""
import json
import sys

DEFAULTS = {"dtype": "f32", "lhs_batch_dims": [], "rhs_batch_dims": [],
            "lhs_contracting_dims": [], "rhs_contracting_dims": []}


def normalized(graph, undo_broadcasts):
    inserted = {}
    if undo_broadcasts:
        for op in graph["ops"]:
            if op["op"] == "broadcast_in_dim" and op["output"].endswith(
                    (".lhs", ".rhs")):
                inserted[op["output"]] = op["inputs"][0]
    ops = []
    for op in graph["ops"]:
        if op["output"] in inserted:
            continue
        op = {k: v for k, v in op.items() if DEFAULTS.get(k, None) != v}
        if "inputs" in op:
            op["inputs"] = [inserted.get(i, i) for i in op["inputs"]]
        ops.append(op)
    return dict(graph, ops=ops)


exported = json.load(open(sys.argv[1]))
original = json.load(open(sys.argv[2]))
if exported == original:
    sys.exit(0)
uses_broadcasting = any(op["output"].endswith((".lhs", ".rhs"))
                        for op in exported["ops"])
same = uses_broadcasting and (normalized(exported, True) ==
                              normalized(original, False))
if not same:
    print(f"{sys.argv[1]} is not the graph of {sys.argv[2]}")
sys.exit(0 if same else 1)

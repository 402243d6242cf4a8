"""Writes a model with another mesh, for pipelining a shipped example.

usage: pipeline_mesh.py MODEL.json AXES OUT.json
AXES is `pipe=2` or `pipe=2,data=2,model=2`. When the new mesh lacks an
axis the model's shardings name, its shardings are dropped (every stage
then replicated), so the example's own layout is used only where it fits.
"""
import json
import sys

model = json.load(open(sys.argv[1]))
axes = [[name, int(size)] for name, size in
        (a.split("=") for a in sys.argv[2].split(","))]
model["mesh"]["axes"] = axes
names = {a for a, _ in axes}


def fits(sharding):
    used = [x for dim in sharding if dim is not None
            for x in (dim if isinstance(dim, list) else [dim])]
    return all(x in names for x in used)


if not all(fits(v.get("sharding", [])) for v in model["inputs"] + model["outputs"]):
    for v in model["inputs"] + model["outputs"]:
        v.pop("sharding", None)
json.dump(model, open(sys.argv[3], "w"), indent=1)

"""Every plan under examples/plans/ has its row in docs/plans.md's table, and
every row names a plan that exists: the table is the catalog users read."""
import os
import re
import sys

root = sys.argv[1]
plans = {f for f in os.listdir(os.path.join(root, "examples", "plans"))
         if f.endswith(".json")}
with open(os.path.join(root, "docs", "plans.md")) as f:
    rows = set(re.findall(r"^\| `([\w.-]+\.json)` \|", f.read(), re.M))
for name in sorted(plans - rows):
    print(f"docs/plans.md: no row for examples/plans/{name}")
for name in sorted(rows - plans):
    print(f"docs/plans.md: a row for examples/plans/{name}, which does not exist")
print(f"{len(plans)} plans, {len(rows)} rows")
sys.exit(1 if plans != rows else 0)

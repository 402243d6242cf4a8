"""Reads `shardc explain`'s report: every collective of the reshard list is
named by one record of "why each reshard", none "(not recorded)". Prints
the count, or fails saying which collectives lack a record."""
import re
import sys

text = open(sys.argv[1]).read()
listed = text.split("\nreshards (bytes each device sends):\n")[1]
listed, why = listed.split("\nwhy each reshard", 1)
collectives = [line.split()[0] for line in listed.splitlines()
               if line.startswith("  ") and not line.startswith("  total:")]
explained = []
for line in why.splitlines():
    m = re.match(r"^  (\S[^:]*) \S+: for ", line)
    if m:
        explained += m.group(1).split(", ")
if "(not recorded)" in why or sorted(collectives) != sorted(explained):
    sys.exit(f"listed {collectives}\nexplained {explained}")
print(f"every one of {len(collectives)} collectives has its consumer")

"""Runs `shardc simulate MODEL ARGS...` once with each all_reduce of the
partitioned program removed (--test-drop-all-reduce=N, a testing hook) and
prints how many of those wrong plans were caught (exit 1): by the
numeric check against the unsharded program (a MISMATCH) or, first, by
the check that the devices holding one block agree ("replicas
disagree"); and which, if any, got through.

usage: drop_each_all_reduce.py SHARDC MODEL ARGS...
"""
import re
import subprocess
import sys

shardc, model, args = sys.argv[1], sys.argv[2], sys.argv[3:]
probe = subprocess.run([shardc, "simulate", model, *args,
                        "--test-drop-all-reduce=1000000"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
m = re.search(r"the program has (\d+) all_reduce ops", probe.stdout)
if not m:
    sys.exit("no all_reduce count in: " + probe.stdout)
count = int(m.group(1))
missed = []
numeric = replicas = 0
for i in range(count):
    run = subprocess.run([shardc, "simulate", model, *args,
                          f"--test-drop-all-reduce={i}"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if run.returncode == 1 and "MISMATCH" in run.stdout:
        numeric += 1
    elif run.returncode == 1 and "replicas disagree" in run.stdout:
        replicas += 1
    else:
        missed.append(str(i))
print(f"{count} all_reduce ops, each dropped in turn: "
      f"{count - len(missed)} caught, {len(missed)} missed"
      + (" (" + ", ".join(missed) + ")" if missed else ""))
print(f"caught by the numeric check: {numeric}, by the replica check: "
      f"{replicas}")

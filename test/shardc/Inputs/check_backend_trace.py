"""Checks the Chrome trace of `shardc train --trace` on a real backend
(docs/engine.md#traces): one process per device listed, each with a
compute and a communication track, and on every device a started
reduction (a gradient's all_reduce) whose span begins inside a compute
span: the device went on computing while it was in flight. A blocking
collective begins exactly where a compute span ends, so this is a fact of
the order of events, not of how long anything took.

usage: check_backend_trace.py TRACE DEVICE...
"""
import json
import sys

trace = json.load(open(sys.argv[1]))["traceEvents"]
devices = [int(d) for d in sys.argv[2:]]
processes = {e["pid"] for e in trace if e["name"] == "process_name"}
assert processes == set(devices), (processes, devices)
threads = {(e["pid"], e["tid"]): e["args"]["name"]
           for e in trace if e["name"] == "thread_name"}
spans = [e for e in trace if e["ph"] == "X"]
for e in spans:
    assert threads[(e["pid"], e["tid"])] == e["cat"], e
for d in devices:
    compute = [(e["ts"], e["ts"] + e["dur"]) for e in spans
               if e["pid"] == d and e["cat"] == "compute"]
    comm = [e for e in spans if e["pid"] == d and e["cat"] == "communication"]
    assert compute and comm, d
    overlapped = [e["name"] for e in comm
                  if any(s <= e["ts"] < t for s, t in compute)]
    assert overlapped, (d, comm)
print("trace ok: %d device(s), a reduction in flight during compute on each"
      % len(devices))

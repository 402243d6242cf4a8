"""Checks that a Chrome trace of the overlapped schedule shows what the
report says (docs/cost-model.md#overlap).

usage: check_overlap_trace.py TRACE REPORT [--overlapping NAME]

Per device, the trace has a "compute" and a "communication" track (two
threads of the device's process); the step time is the last span's end;
the compute track's spans sum to compute_s; the exposed communication is
the step time the compute track is idle; a span named NAME on the
communication track intersects a compute span of the same device. The
times are simulated, never wall-clock.
"""
import json
import sys

trace = json.load(open(sys.argv[1]))["traceEvents"]
report = json.load(open(sys.argv[2]))
want = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--overlapping" else None


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


threads = {(e["pid"], e["tid"]): e["args"]["name"]
           for e in trace if e["ph"] == "M" and e["name"] == "thread_name"}
processes = {e["pid"]: e["args"]["name"]
             for e in trace if e["ph"] == "M" and e["name"] == "process_name"}
assert len(processes) == report["devices"], processes
spans = [e for e in trace if e["ph"] == "X"]
for e in spans:
    assert threads[(e["pid"], e["tid"])] == e["cat"], e

us = 1e-6
for device in processes:
    mine = [e for e in spans if e["pid"] == device]
    compute = sorted((e["ts"], e["ts"] + e["dur"]) for e in mine
                     if e["cat"] == "compute")
    comm = [(e["ts"], e["ts"] + e["dur"], e["name"]) for e in mine
            if e["cat"] == "communication"]
    # Each track runs one thing at a time.
    for track in (compute, sorted(c[:2] for c in comm)):
        for (s0, e0), (s1, e1) in zip(track, track[1:]):
            assert s1 >= e0 - 1e-9, (device, (s0, e0), (s1, e1))
    end = max(e for _, e in compute + [c[:2] for c in comm])
    busy = sum(e - s for s, e in compute)
    assert close(end * us, report["step_time_s"]), (end, report["step_time_s"])
    assert close(busy * us, report["compute_s"]), (busy, report["compute_s"])
    assert close((end - busy) * us, report["exposed_communication_s"])
    total = sum(e - s for s, e, _ in comm)
    assert close(total * us, report["communication_s"])
    if want:
        hits = [c for c in comm if c[2] == want and
                any(s < c[1] and c[0] < e for s, e in compute)]
        assert hits, (device, want, comm)

assert close(report["est_time_s"],
             report["compute_s"] + report["communication_s"])
assert report["exposed_communication_s"] < report["communication_s"]
print("overlap ok: step %.6g s = compute %.6g s + exposed %.6g s of %.6g s"
      % (report["step_time_s"], report["compute_s"],
         report["exposed_communication_s"], report["communication_s"]))

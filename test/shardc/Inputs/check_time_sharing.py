"""Devices time-sharing the host's cores, as the estimate prices them.

usage: check_time_sharing.py SHARDC MODEL MACHINE WORK_DIR

Estimates MODEL (4 devices) on MACHINE with `host_cores` 2 (the devices
time-share the cores) and 4 (a core each), each with and without its
`op_overhead_s`, and checks, from the reports:
  - time-shared, every kernel's overhead stretches by devices / cores, as
    its work does: compute_s grows by kernels * op_overhead_s * 2;
  - time-shared, no communication hides behind compute: the exposed
    communication is all of it;
  - a core each, the gradient reductions overlap the backward pass: less
    is exposed than there is;
  - time-shared, each collective call adds `host_wait_s` (the cores idle
    while waiting devices sleep) to the exposed communication; a core
    each, nothing.
"""
import json
import os
import subprocess
import sys


def estimate(shardc, model, machine, work, name):
    path = os.path.join(work, f"{name}.json")
    with open(path, "w") as f:
        json.dump(machine, f)
    report = os.path.join(work, f"{name}-report.json")
    subprocess.run([shardc, "estimate", model, "--machine", path,
                    "--train-step=adam", "--report-json", report],
                   check=True, stdout=subprocess.DEVNULL)
    with open(report) as f:
        return json.load(f)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def main(shardc, model, machine_path, work):
    os.makedirs(work, exist_ok=True)
    with open(machine_path) as f:
        base = json.load(f)
    reports = {}
    for cores in (2, 4):
        for overhead in (True, False):
            machine = json.loads(json.dumps(base))
            machine["host_cores"] = cores
            if not overhead:
                del machine["device"]["op_overhead_s"]
            reports[cores, overhead] = estimate(
                shardc, model, machine, work, f"c{cores}-o{int(overhead)}")
    shared = reports[2, True]
    assert shared["devices"] == 4, shared["devices"]
    growth = shared["compute_s"] - reports[2, False]["compute_s"]
    stretched = shared["kernels_per_device"] * \
        base["device"]["op_overhead_s"] * 2
    print(f"time-shared: the overheads add {growth:.6g} s, kernels x "
          f"op_overhead_s x 2 = {stretched:.6g} s: "
          f"{'OK' if close(growth, stretched) else 'WRONG'}")
    comm = shared["communication_s"]
    total = comm["critical"] + comm["prefetched"] + \
        comm["gradient_reduction"] + comm["pipeline_sends"]
    print(f"time-shared: exposed {shared['exposed_communication_s']:.6g} s "
          f"of {total:.6g} s: "
          f"{'OK' if close(shared['exposed_communication_s'], total) else 'WRONG'}")
    own = reports[4, True]
    comm = own["communication_s"]
    total = comm["critical"] + comm["prefetched"] + \
        comm["gradient_reduction"] + comm["pipeline_sends"]
    hidden = own["exposed_communication_s"] < total - 1e-12
    print(f"a core each: exposed {own['exposed_communication_s']:.6g} s "
          f"of {total:.6g} s: {'OK' if hidden else 'WRONG'}")

    wait = 2e-5
    for cores in (2, 4):
        machine = json.loads(json.dumps(base))
        machine["host_cores"] = cores
        machine.pop("host_wait_s", None)
        without = estimate(shardc, model, machine, work, f"c{cores}-nowait")
        machine["host_wait_s"] = wait
        with_wait = estimate(shardc, model, machine, work, f"c{cores}-wait")
        growth = (with_wait["exposed_communication_s"] -
                  without["exposed_communication_s"])
        want = with_wait["collectives_per_device"] * wait if cores == 2 else 0
        name = "time-shared" if cores == 2 else "a core each"
        print(f"{name}: host_wait_s adds {growth:.6g} s, want {want:.6g} s: "
              f"{'OK' if abs(growth - want) <= 1e-9 * max(want, 1e-12) + 1e-15 else 'WRONG'}")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

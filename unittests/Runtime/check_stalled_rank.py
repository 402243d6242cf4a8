#!/usr/bin/env python3
"""Runs `shardc exec`/`train --backend mpi` jobs in which one rank stops
(SIGSTOP, as `kill -STOP` would) or dies (SIGKILL) before its first
collective, through the hidden --mpi-test-fault hook, and checks that the
job ends by itself, soon after the 2 s --mpi-timeout, with a non-zero exit
code and a message naming the rank (docs/mpi.md, "When a rank stops
answering").

usage: check_stalled_rank.py <mpirun wrapper> <shardc> <examples dir>
"""
import os
import subprocess
import sys
import time

# The timeout is 2 s and the grace for answers 1 s; start-up takes a few
# seconds on a loaded machine. Without the timeout the job would hang.
LIMIT_SECONDS = 60


def main():
    mpirun, shardc, examples = sys.argv[1:4]
    mlp = os.path.join(examples, "megatron_mlp.json")
    mesh2d = os.path.join(examples, "mlp_2d_mesh.json")
    train = os.path.join(examples, "mlp_train.json")
    timeout = ["--backend", "mpi", "--seed", "0", "--mpi-timeout", "2"]
    cases = [
        # ranks, command, what the output must contain
        (4, ["exec", mlp, "--mpi-test-fault=stop:2"] + timeout,
         ["rank 0 of 4: timed out after 2 s waiting in all_reduce (sum) over "
          "devices [0, 1, 2, 3]", "rank 2 does not answer",
          "ranks 1, 3 wait in all_reduce", "MPI_Abort"]),
        # Rank 0 stopped: the lowest rank still answering reports.
        (4, ["exec", mlp, "--mpi-test-fault=stop:0"] + timeout,
         ["rank 1 of 4: timed out", "rank 0 does not answer", "MPI_Abort"]),
        # Rank 5 blocks its groups, which block rank 0's: the report still
        # names rank 5, and where every other rank waits.
        (8, ["exec", mesh2d, "--mpi-test-fault=stop:5"] + timeout,
         ["rank 0 of 8: timed out", "rank 5 does not answer",
          "rank 4 waits in all_gather (dim 1) over devices [4, 5]"]),
        (4, ["train", train, "--steps", "3", "--mpi-test-fault=stop:3"] +
         timeout, ["rank 0 of 4: timed out", "rank 3 does not answer"]),
        # A rank that dies is mpirun's to report, and it does, at once.
        (4, ["exec", mlp, "--mpi-test-fault=kill:2"] + timeout,
         ["process rank 2", "exited on signal 9"]),
    ]
    ok = True
    for ranks, args, wants in cases:
        cmd = [mpirun, "-n", str(ranks), shardc] + args
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  timeout=LIMIT_SECONDS)
        except subprocess.TimeoutExpired as e:
            print(f"FAIL: {' '.join(cmd)} still running after "
                  f"{LIMIT_SECONDS} s: the ranks wait forever\n{e.output}")
            ok = False
            continue
        elapsed = time.monotonic() - start
        out = proc.stdout
        problems = []
        if proc.returncode == 0:
            problems.append("exit code 0")
        problems += [f"no '{w}' in the output" for w in wants if w not in out]
        if "OK" in out.split():
            problems.append("the job reports success")
        status = "FAIL" if problems else "ok"
        print(f"{status}: {' '.join(cmd)} -> exit {proc.returncode} in "
              f"{elapsed:.1f} s")
        if problems:
            ok = False
            print("  " + "\n  ".join(problems))
            print(out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs MpiBackendTest --fail-rank=R under mpirun and checks that the job
ends by itself (well before the ctest timeout), exits 1, and names the
failing rank: the abort policy of the mpi backend (docs/mpi.md).

usage: check_failing_rank.py <mpirun wrapper> <MpiBackendTest>
"""
import subprocess
import sys
import time

LIMIT_SECONDS = 120


def main():
    mpirun, test = sys.argv[1], sys.argv[2]
    ok = True
    for ranks, fail_rank in ((4, 2), (4, 0)):
        cmd = [mpirun, "-n", str(ranks), test, f"--fail-rank={fail_rank}"]
        start = time.monotonic()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  timeout=LIMIT_SECONDS)
        except subprocess.TimeoutExpired as e:
            print(f"FAIL: {' '.join(cmd)} still running after "
                  f"{LIMIT_SECONDS} s: a rank is left waiting\n{e.output}")
            return 1
        elapsed = time.monotonic() - start
        out = proc.stdout
        want = f"device {fail_rank} (MPI rank {fail_rank} of {ranks}) failed"
        problems = []
        if proc.returncode != 1:
            problems.append(f"exit code {proc.returncode}, expected 1")
        if want not in out:
            problems.append(f"no '{want}' in the output")
        if "MPI_Abort" not in out:
            problems.append("the output does not say the job was aborted")
        if "run() returned" in out:
            problems.append("a rank returned from run() instead of ending")
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

"""The mpi backend from Python: `mpirun -n 4 python3 mpi_program.py`, each
rank a device (scripts/mpirun-local.sh has this machine's mpirun flags)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

MPIRUN = (os.environ.get("SHARDC_MPIRUN")
          or os.path.join(ROOT, "scripts", "mpirun-local.sh"))
PROGRAM = os.path.join(os.path.dirname(__file__), "mpi_program.py")


def mpirun(*args):
    return subprocess.run([MPIRUN, "-n", "4", sys.executable, PROGRAM, *args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=300)


def test_launch_and_compile_on_mpi():
    p = mpirun()
    assert p.returncode == 0, p.stdout + p.stderr
    # mpirun forwards each rank's output as it comes: lines of different
    # ranks may interleave, so the test looks for each rank's report.
    assert sorted(re.findall(r"rank (\d+): OK", p.stdout)) == ["0", "1", "2", "3"], p.stdout


def test_a_failing_rank_ends_the_job_with_its_id():
    p = mpirun("raise")
    assert p.returncode != 0
    assert "device 2 failed: RuntimeError: injected failure" in p.stderr
    assert p.stderr.count("injected failure") >= 1
    assert "OK" not in p.stdout


def test_a_job_of_the_wrong_size_is_an_error():
    code = ("import shardc\n"
            "try:\n"
            "    shardc.launch(lambda: 0, num_devices=4, backend='mpi')\n"
            "except shardc.ShardcError as e:\n"
            "    print(e)\n")
    p = subprocess.run([MPIRUN, "-n", "2", sys.executable, "-c", code],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("needs 4 ranks but the job has 2") == 2

#!/usr/bin/env python3
"""FileCheck with a recorder in front (used by scripts/output-snapshot.py).

usage: snapshot_filecheck.py SNAPSHOT_DIR SRC_ROOT OBJ_ROOT FILECHECK ARGS...

Reads the text a lit RUN line pipes into FileCheck, stores it under
SNAPSHOT_DIR (named after the check file, the check prefixes and the order
of the call within the test, with the source and build paths replaced by
placeholders so two checkouts compare equal), then runs the real FileCheck
on it and exits with its status: the suite still checks what it checked.
"""
import os
import re
import subprocess
import sys


def main():
    snapshot_dir, src_root, obj_root, filecheck = sys.argv[1:5]
    args = sys.argv[5:]
    data = sys.stdin.buffer.read()

    def normalize(text):
        for root, mark in ((obj_root, b"<build>"), (src_root, b"<src>")):
            if root:
                text = text.replace(os.path.realpath(root).encode(), mark)
                text = text.replace(root.encode(), mark)
        return text

    check_file = next((a for a in args if not a.startswith("-")), "stdin")
    recorded = normalize(data)
    try:
        with open(check_file, encoding="utf-8", errors="replace") as f:
            # The ranks of an MPI job write to one pipe, in an order that
            # changes from run to run: such output cannot be compared.
            if "%mpirun" in f.read():
                recorded = b"<not recorded: output of several MPI ranks>\n"
    except OSError:
        pass
    check_file = normalize(os.path.abspath(check_file).encode()).decode()
    prefixes = [a.split("=", 1)[1] for a in args
                if a.startswith(("--check-prefix=", "--check-prefixes=",
                                 "-check-prefix=", "-check-prefixes="))]
    key = re.sub(r"[^A-Za-z0-9_.-]+", "_",
                 check_file.removeprefix("<src>/").removeprefix("<build>/") + "." + ",".join(prefixes))
    os.makedirs(snapshot_dir, exist_ok=True)
    # RUN lines of one test run in order, so the first free index is this
    # call's position among the test's calls with the same prefixes.
    for index in range(1000):
        path = os.path.join(snapshot_dir, f"{key}.{index}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(recorded)
        break
    return subprocess.run([filecheck] + args, input=data).returncode


if __name__ == "__main__":
    sys.exit(main())

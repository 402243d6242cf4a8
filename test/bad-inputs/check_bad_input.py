#!/usr/bin/env python3
"""One malformed model must be rejected cleanly.

usage: check_bad_input.py SHARDC MODEL [EXPECTED_SUBSTRING]

Runs `shardc compile MODEL` and requires: exit code 1 (not a crash or a
signal), within 60 s, with a diagnostic on stderr that says `error`, names
the model's file, and contains EXPECTED_SUBSTRING when one is given.
"""
import os
import subprocess
import sys


def main():
    shardc, model = sys.argv[1], sys.argv[2]
    expected = sys.argv[3] if len(sys.argv) > 3 else ""
    try:
        p = subprocess.run([shardc, "compile", model, "-o", os.devnull],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
    except subprocess.TimeoutExpired:
        print(f"FAIL: shardc hung on {model}")
        return 1
    err = p.stderr.decode("utf-8", "replace")
    problems = []
    if p.returncode != 1:
        problems.append(f"exit code {p.returncode}, expected 1")
    if "error" not in err:
        problems.append("no diagnostic with 'error' on stderr")
    if os.path.basename(model) not in err:
        problems.append("the diagnostic does not name the file")
    if expected and expected not in err:
        problems.append(f"the diagnostic does not contain {expected!r}")
    if "Stack dump" in err or "PLEASE submit" in err:
        problems.append("shardc crashed")
    if problems:
        print(f"FAIL {model}: " + "; ".join(problems) + "\n--- stderr ---\n" + err)
        return 1
    print(f"ok {os.path.basename(model)}: {err.strip().splitlines()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs the examples in docs/*.md so that the docs stay true.

Fenced blocks are checked by their language tag:
  mlir     a complete module: `shardc-opt` must accept it.
  json     a JSON graph (has "mesh"): `shardc compile` must accept it.
  console  `$ cmd` lines run from the repository root (build/bin first on
           PATH, and `python3` Debian's /usr/bin/python3, which has NumPy,
           torch and onnx); the lines after a command are its expected output, where a
           line `...` matches any number of lines and `...` inside a line
           any text (a measured figure, say). A printed line that calls a
           max_rel_err above 1e-3 OK (two units of roundoff for bf16 and
           f16 results) fails the example, elided or not.
Paths under /tmp/ in a command are the run's own scratch directory (and
print back as /tmp/), so suites running at once do not share files.
A block preceded by the line `<!-- doc-test: skip -->` is not run, and one
preceded by `<!-- doc-test: error -->` must be rejected (exit code 1).
A block preceded by `<!-- doc-test: file=PATH -->` must be the file PATH
(from the repository root) as it is, and one preceded by
`<!-- doc-test: excerpt=PATH -->` lines that follow one another in it: the
file is what a test runs, so the docs show tested code.
Plain ``` blocks (fragments, grammar) are not run.
"""
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i, mode = 0, None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            lang = m.group(1)
            prev = lines[i - 1].strip() if i > 0 else ""
            mode = {"<!-- doc-test: skip -->": "skip",
                    "<!-- doc-test: error -->": "error"}.get(prev, "ok")
            shown = re.fullmatch(r"<!-- doc-test: (file|excerpt)=(\S+) -->", prev)
            if shown:
                mode = shown.groups()
            start = i + 1
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            yield lang, mode, start + 1, "\n".join(lines[start:j]) + "\n"
            i = j + 1
        else:
            i += 1


def run(cmd, cwd, env):
    p = subprocess.run(cmd, shell=True, cwd=cwd, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=300)
    return p.returncode, p.stdout


def line_matches(expected, actual):
    """`...` inside an expected line matches any text."""
    parts = [re.escape(p) for p in expected.rstrip().split("...")]
    return re.fullmatch(".*".join(parts), actual.rstrip()) is not None


def matches(expected, actual):
    """`...` in expected matches any run of lines."""
    exp = expected
    act = actual
    def go(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return (j < len(act) and line_matches(exp[i], act[j])
                and go(i + 1, j + 1))
    return go(0, 0)


def check_console(text, where, root, build, env, scratch):
    failures = []
    cmds = []
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            cmds.append([line[2:], []])
        elif cmds:
            cmds[-1][1].append(line)
    for cmd, expected in cmds:
        # The files an example writes under /tmp go to this run's own
        # directory (and read back as /tmp), so two suites running at once
        # do not overwrite each other's. First, so that a build directory
        # under /tmp (a clone made by mktemp -d) is left as it is.
        cmd = re.sub(r"(?<![\w.-])/tmp/", scratch + "/", cmd)
        # The docs say build/ (the README's build directory); run the build
        # under test, which may be another (build-san, make test-sanitize).
        cmd = re.sub(r"(?<![\w./-])build/", build + "/", cmd)
        code, out = run(cmd, root, env)
        out = out.replace(scratch + "/", "/tmp/")
        actual = out.rstrip("\n").split("\n") if out.strip() else []
        if code != 0 and not (expected and expected[-1].startswith("# exit ")):
            failures.append(f"{where}: `{cmd}` exited {code}:\n{out}")
            continue
        if expected and expected[-1].startswith("# exit "):
            want = int(expected[-1].split()[-1])
            expected = expected[:-1]
            if code != want:
                failures.append(f"{where}: `{cmd}` exited {code}, docs say {want}:\n{out}")
                continue
        if expected and not matches(expected, actual):
            failures.append(f"{where}: `{cmd}` printed:\n{out}\nbut the docs show:\n" + "\n".join(expected))
        # A doc example never calls a large error OK, even where its
        # expected output elides the figure.
        # Half-precision results are judged by their type (docs/precision.md):
        # two units of its roundoff at most.
        limit = MAX_OK_ERROR
        if any(line.startswith("bf16 rounding:") for line in actual):
            limit = 2 * 2.0**-8
        elif any(line.startswith("f16 rounding:") for line in actual):
            limit = 2 * 2.0**-11
        for printed in actual:
            m = OK_ERROR.search(printed)
            if m and float(m.group(1)) > limit:
                failures.append(f"{where}: `{cmd}` calls max_rel_err="
                                f"{m.group(1)} OK (above {limit:g}):\n{printed}")
    return failures


# `max_rel_err=X ... OK` on one line: the verdict of a numeric check.
OK_ERROR = re.compile(r"max_rel_err=([0-9.eE+-]+)\b.*\bOK\s*$")
MAX_OK_ERROR = 1e-3


def check_shown_file(text, mode, where, root):
    """The block is the file (`file`) or consecutive lines of it
    (`excerpt`)."""
    kind, path = mode
    try:
        content = open(os.path.join(root, path), encoding="utf-8").read()
    except OSError as e:
        return [f"{where}: shows {path}, which cannot be read: {e}"]
    if kind == "file" and text != content:
        return [f"{where}: differs from {path}; copy the file into the docs"]
    if kind == "excerpt" and ("\n" + text) not in ("\n" + content):
        return [f"{where}: is not an excerpt of {path} (consecutive whole lines)"]
    return []


def main():
    root, bindir = sys.argv[1], sys.argv[2]
    env = dict(os.environ)
    docs = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(root, "docs"))
                  for f in fs if f.endswith(".md") and "Dialects" not in dp and "Passes" not in dp)
    docs.append(os.path.join(root, "README.md"))
    failures, count = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        # What a Debian user's `python3` is, whatever comes first on this
        # machine's PATH (a pyenv shim without torch, say).
        pybin = os.path.join(tmp, "python-bin")
        os.mkdir(pybin)
        os.symlink("/usr/bin/python3", os.path.join(pybin, "python3"))
        env["PATH"] = os.pathsep.join([bindir, pybin, env["PATH"]])
        scratch = os.path.join(tmp, "tmp")
        os.mkdir(scratch)
        for path in docs:
            rel = os.path.relpath(path, root)
            for lang, mode, line, text in blocks(path):
                where = f"{rel}:{line}"
                if isinstance(mode, tuple):
                    count += 1
                    failures += check_shown_file(text, mode, where, root)
                    continue
                if mode == "skip" or lang not in ("mlir", "json", "console"):
                    continue
                count += 1
                if lang == "console":
                    failures += check_console(text, where, root,
                                              os.path.dirname(bindir), env,
                                              scratch)
                    continue
                if lang == "json" and '"mesh"' not in text:
                    count -= 1
                    continue
                src = os.path.join(tmp, f"block{count}.{lang}")
                open(src, "w").write(text)
                tool = "shardc-opt" if lang == "mlir" else "shardc compile"
                code, out = run(f"{tool} {src} > /dev/null", root, env)
                if mode == "error" and code != 1:
                    failures.append(f"{where}: expected rejection (exit 1), got {code}:\n{out}")
                elif mode == "ok" and code != 0:
                    failures.append(f"{where}: {tool} rejected the example:\n{out}")
    for f in failures:
        print("FAIL " + f + "\n")
    print(f"checked {count} doc examples, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

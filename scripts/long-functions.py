#!/usr/bin/env python3
"""Lists the functions longer than a limit (80 lines by default) in the
front ends, tools/ and python/, longest first: the measure of how much
workflow and length is left to move into lib/Driver or split (docs/
development.md, "Layout"). A report, not a check: it exits 0 whatever it
finds, unless --fail is given.

    scripts/long-functions.py [--limit 80] [--fail] [paths...]

C++ functions are found by matching braces (comments, strings and
character literals skipped): a brace opened at namespace or class scope
after a header with a parameter list is a function body. A function's
length counts its lines from the header's first line to the closing
brace. Python functions come from the ast module. Option tables (cl::opt
declarations) are no functions and are not counted.
"""
import argparse
import ast
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEFAULT_PATHS = ["tools", "python"]
SCOPE_KEYWORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")
NAME = re.compile(r"([A-Za-z_~][\w:~<>]*(?:operator\S*)?)\s*\($")


def strip_code(text):
    """`text` with comments, string and character literals blanked (newlines
    kept, so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def cpp_functions(path):
    """(name, first line, line count) of every function body in a C++
    file."""
    code = strip_code(open(path, encoding="utf-8").read())
    found = []
    # A stack of the open braces: (kind, header start offset).
    stack = []
    header_start = 0
    for i, c in enumerate(code):
        if c in ";":
            header_start = i + 1
        elif c == "{":
            header = code[header_start:i]
            inside_function = any(k == "function" for k, _ in stack)
            kind = "block"
            if not inside_function:
                flat = " ".join(header.split())
                if SCOPE_KEYWORDS.search(flat) and "(" not in flat:
                    kind = "scope"
                elif flat.startswith("extern"):
                    kind = "scope"
                elif ")" in flat and "=" not in flat.split("(")[0]:
                    kind = "function"
                elif not flat or flat.endswith(":") or "(" not in flat:
                    kind = "scope" if SCOPE_KEYWORDS.search(flat) else "block"
            stack.append((kind, header_start))
            header_start = i + 1
        elif c == "}":
            if not stack:
                continue
            kind, start = stack.pop()
            if kind == "function":
                header = code[start:code.index("{", start)]
                name = function_name(header)
                # The header's first non-blank line.
                first = start + len(header) - len(header.lstrip())
                first_line = code.count("\n", 0, first) + 1
                last_line = code.count("\n", 0, i) + 1
                found.append((name, first_line, last_line - first_line + 1))
            header_start = i + 1
    return found


def function_name(header):
    flat = " ".join(header.split())
    # The name stands before the parameter list's opening parenthesis: the
    # first one at template depth 0.
    depth = 0
    for j, c in enumerate(flat):
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif c == "(" and depth == 0:
            m = NAME.search(flat[: j + 1])
            return m.group(1) if m else flat[:j].split()[-1]
    return flat[:60]


def python_functions(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] +
                        [d.lineno for d in node.decorator_list])
            found.append((node.name, first, node.end_lineno - first + 1))
    return found


def source_files(paths):
    for p in paths:
        p = os.path.join(ROOT, p)
        if os.path.isfile(p):
            yield p
            continue
        for dp, _, files in os.walk(p):
            for f in sorted(files):
                if f.endswith((".cpp", ".h", ".py")):
                    yield os.path.join(dp, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--fail", action="store_true",
                        help="exit 1 when any function is over the limit")
    parser.add_argument("paths", nargs="*", default=DEFAULT_PATHS)
    args = parser.parse_args()
    long = []
    for path in source_files(args.paths):
        scan = python_functions if path.endswith(".py") else cpp_functions
        for name, line, length in scan(path):
            if length > args.limit:
                long.append((length, os.path.relpath(path, ROOT), line, name))
    for length, path, line, name in sorted(long, reverse=True):
        print(f"{length:5d}  {path}:{line}  {name}")
    print(f"{len(long)} functions over {args.limit} lines in "
          f"{', '.join(args.paths)}")
    return 1 if args.fail and long else 0


if __name__ == "__main__":
    sys.exit(main())

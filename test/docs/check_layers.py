#!/usr/bin/env python3
"""Checks that every lib/ and tools/ directory includes only downward.

The layers, their order and what each may include are read from the layer
table of docs/development.md (the rows between the markers
`<!-- layer-table -->` and `<!-- /layer-table -->`), so the table is the one
place that states them and this test keeps it true:

  | layer | directories | what | includes |

Rows go from the bottom layer up. `directories` lists backquoted paths
(`lib/Dialect`); a `lib/X` directory also owns `include/shardc/X`.
`includes` names the layers (by their first column) whose headers the
directories may include, besides their own; each must be a row above it in
the table, i.e. lower. Every directory under lib/ and tools/ must be in the
table, and every `#include "shardc/Y/..."` of its files must name its own
layer or one it may include.

Usage: check_layers.py SOURCE_ROOT. Prints each violation; exit code 1 if
there is one.
"""
import os
import re
import sys

SOURCE_SUFFIXES = (".h", ".cpp", ".inc", ".td", ".def")
INCLUDE = re.compile(r'^\s*#\s*include\s+"shardc/([^/"]+)/')


def read_table(root, errors):
    path = os.path.join(root, "docs", "development.md")
    text = open(path, encoding="utf-8").read()
    m = re.search(r"<!-- layer-table -->\n(.*?)<!-- /layer-table -->", text,
                  re.S)
    if not m:
        errors.append("docs/development.md: no layer table between "
                      "<!-- layer-table --> and <!-- /layer-table -->")
        return []
    layers = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("layer", "") or \
                set(cells[0]) <= set("-: "):
            continue
        layers.append({"name": cells[0],
                       "dirs": re.findall(r"`([^`]+)`", cells[1]),
                       "includes": cells[3]})
    names = [l["name"] for l in layers]
    for i, layer in enumerate(layers):
        allowed = set()
        # A parenthesis is a remark ("LLVM Support only"), not a layer.
        named = re.sub(r"\([^)]*\)", "", layer["includes"])
        for word in re.findall(r"[A-Za-z/]+", named):
            if word in names:
                if names.index(word) >= i:
                    errors.append("docs/development.md: layer %s may include "
                                  "%s, which is not below it" %
                                  (layer["name"], word))
                allowed.add(word)
        if "every layer" in layer["includes"]:
            allowed.update(names[:i])
        layer["allowed"] = allowed
    return layers


def main():
    root = sys.argv[1]
    errors = []
    layers = read_table(root, errors)
    owner = {}  # directory -> layer
    for layer in layers:
        for d in layer["dirs"]:
            owner[d] = layer
            if d.startswith("lib/"):
                owner["include/shardc/" + d[len("lib/"):]] = layer
    # The layer of `#include "shardc/Y/..."` is the owner of lib/Y.
    header_layer = {d[len("include/shardc/"):]: l["name"]
                    for d, l in owner.items()
                    if d.startswith("include/shardc/")}

    for top in ("lib", "tools"):
        for entry in sorted(os.listdir(os.path.join(root, top))):
            d = top + "/" + entry
            if os.path.isdir(os.path.join(root, d)) and d not in owner:
                errors.append("%s is not in the layer table of "
                              "docs/development.md" % d)

    for d, layer in sorted(owner.items()):
        full = os.path.join(root, d)
        if not os.path.isdir(full):
            if not d.startswith("include/"):
                errors.append("docs/development.md names %s, which does not "
                              "exist" % d)
            continue
        for dirpath, _, files in os.walk(full):
            for f in sorted(files):
                if not f.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                for n, line in enumerate(open(path, encoding="utf-8",
                                              errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = header_layer.get(m.group(1))
                    if target is None:
                        errors.append("%s:%d: includes shardc/%s/, which no "
                                      "layer owns" % (rel, n, m.group(1)))
                    elif target != layer["name"] and \
                            target not in layer["allowed"]:
                        errors.append("%s:%d: layer %s includes shardc/%s/ "
                                      "(layer %s), which it may not" %
                                      (rel, n, layer["name"], m.group(1),
                                       target))
    for e in errors:
        print(e)
    if not errors:
        print("layering: %d layers, every include goes downward" % len(layers))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

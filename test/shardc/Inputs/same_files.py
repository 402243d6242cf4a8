"""Checks that every .npy file of the first directory is byte-identical in
each of the others (runs that must compute the same bits)."""
import os
import sys


def main(dirs):
    names = sorted(n for n in os.listdir(dirs[0]) if n.endswith(".npy"))
    differ = []
    for name in names:
        first = open(os.path.join(dirs[0], name), "rb").read()
        for d in dirs[1:]:
            if open(os.path.join(d, name), "rb").read() != first:
                differ.append(f"{name} in {d}")
    if differ:
        print("DIFFERENT: " + ", ".join(differ))
        return 1
    print(f"{len(names)} files identical in {len(dirs)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

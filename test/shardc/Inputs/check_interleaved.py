"""Checks `shardc estimate` reports of one pipelined model under 1F1B and
under the interleaved schedule with v chunks per device against the
schedule's formulas (docs/estimate.md, Time and Memory):

  pipeline sends  interleaved = v * 1F1B's (each chunk sends per micro-batch)
  bubble          1F1B:        (p - 1) (X + S1),  S1 = sends / M
                  interleaved: (p - 1) / v (X + v S1)
  activations     interleaved - 1F1B = (in flight - p) saved / p,
                  in flight = min(M v, v p + p - 1) / v

    check_interleaved.py ONE_F_ONE_B.json INTERLEAVED.json V
"""
import json
import sys


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def main(one_path, inter_path, v):
    one, inter = json.load(open(one_path)), json.load(open(inter_path))
    p, m = one["pipeline_stages"], one["microbatches"]
    s1 = one["communication_s"]["pipeline_sends"] / m
    if s1 <= 0:
        return "no pipeline sends priced"
    x = one["bubble_s"] / (p - 1) - s1
    checks = {
        "sends": (inter["communication_s"]["pipeline_sends"],
                  v * one["communication_s"]["pipeline_sends"]),
        "bubble": (inter["bubble_s"], (p - 1) / v * (x + v * s1)),
        "activations": (
            inter["memory"]["activations"] - one["memory"]["activations"],
            (min(m * v, v * p + p - 1) / v - p)
            * one["saved_activations_per_microbatch"] / p),
        "compute": (inter["compute_s"], one["compute_s"]),
    }
    bad = [f"{k}: {got} != {want}" for k, (got, want) in checks.items()
           if not close(got, want)]
    if bad:
        return "\n".join(bad)
    if not inter["bubble_s"] < one["bubble_s"]:
        return "the interleaved bubble is not smaller"
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))

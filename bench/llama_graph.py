#!/usr/bin/env python3
"""A Llama-like decoder as a shardc JSON graph, without annotations: the
auto-sharding benchmark's second transformer (bench/auto_shard_bench.py).

What makes it Llama rather than GPT-2: RMSNorm without biases, rotary
position embeddings (each head's halves rotated: x*cos + rotate_half(x)*sin,
the tables given as inputs), grouped-query attention (fewer key/value heads,
each broadcast to its group of query heads), and a SwiGLU MLP
(down(silu(gate(x)) * up(x)), silu(g) = g * sigmoid(g)); no learned
positions, an untied LM head.

  python3 bench/llama_graph.py --layers 4 > llama4.json
"""
import argparse
import json
import math
import sys


def graph(layers, vocab=256, d=64, heads=4, kv_heads=2, seq=16, batch=4,
          ffn=128, data=2, model=2):
    B, S, D, H, K = batch, seq, d, heads, kv_heads
    Dh, G = d // heads, heads // kv_heads
    ops = []

    def op(kind, inputs, output, **fields):
        entry = {"op": kind, "inputs": inputs, "output": output}
        entry.update(fields)
        ops.append(entry)
        return output

    def dense(x, w, out):  # [B,S,D] x [D,...] -> [B,S,...]
        return op("dot_general", [x, w], out,
                  lhs_contracting_dims=[2], rhs_contracting_dims=[0])

    def rope(x, heads_of, out):  # x: [B,S,heads_of,Dh]
        half = Dh // 2
        lo = op("slice", [x], out + "_lo", start=[0, 0, 0, 0],
                limit=[B, S, heads_of, half])
        hi = op("slice", [x], out + "_hi", start=[0, 0, 0, half],
                limit=[B, S, heads_of, Dh])
        nhi = op("neg", [hi], out + "_nhi")
        rot = op("concatenate", [nhi, lo], out + "_rot", dimension=3)
        cos = op("broadcast_in_dim", ["rope_cos"], out + "_cos",
                 dims=[1, 3], shape=[B, S, heads_of, Dh])
        sin = op("broadcast_in_dim", ["rope_sin"], out + "_sin",
                 dims=[1, 3], shape=[B, S, heads_of, Dh])
        a = op("mul", [x, cos], out + "_xc")
        b = op("mul", [rot, sin], out + "_rs")
        return op("add", [a, b], out)

    def expand_kv(x, out):  # [B,S,K,Dh] -> [B,S,H,Dh], each kv head G times
        e = op("broadcast_in_dim", [x], out + "_e", dims=[0, 1, 2, 4],
               shape=[B, S, K, G, Dh])
        return op("reshape", [e], out, shape=[B, S, H, Dh])

    x = op("gather", ["wte", "tokens"], "x0", axis=0)
    ops.append({"op": "iota", "output": "qpos", "shape": [S, S],
                "dtype": "i32", "dimension": 0})
    ops.append({"op": "iota", "output": "kpos", "shape": [S, S],
                "dtype": "i32", "dimension": 1})
    op("compare", ["kpos", "qpos"], "causal", direction="LE")
    op("broadcast_in_dim", ["causal"], "causal_b", dims=[2, 3],
       shape=[B, H, S, S])
    ops.append({"op": "constant", "output": "neg_big",
                "shape": [B, H, S, S], "value": -1e9})
    ops.append({"op": "constant", "output": "scale", "shape": [],
                "value": 1.0 / math.sqrt(Dh)})

    for l in range(layers):
        p = f"h{l}_"
        h = op("rms_norm", [x, p + "attn_norm"], p + "n1", axes=[2])
        q = rope(dense(h, p + "wq", p + "q"), H, p + "qr")
        k = rope(dense(h, p + "wk", p + "k"), K, p + "kr")
        v = dense(h, p + "wv", p + "v")
        k = expand_kv(k, p + "kx")
        v = expand_kv(v, p + "vx")
        s = op("dot_general", [q, k], p + "scores",  # [B,H,S,S]
               lhs_batch_dims=[0, 2], rhs_batch_dims=[0, 2],
               lhs_contracting_dims=[3], rhs_contracting_dims=[3])
        s = op("mul", [s, "scale"], p + "scaled")
        s = op("select", ["causal_b", s, "neg_big"], p + "masked")
        pr = op("softmax", [s], p + "probs", axis=3)
        o = op("dot_general", [pr, v], p + "attn",  # [B,H,S,Dh]
               lhs_batch_dims=[0, 1], rhs_batch_dims=[0, 2],
               lhs_contracting_dims=[3], rhs_contracting_dims=[1])
        y = op("dot_general", [o, p + "wo"], p + "attn_out",  # [B,S,D]
               lhs_contracting_dims=[1, 3], rhs_contracting_dims=[0, 1])
        x = op("add", [x, y], p + "res1")
        h = op("rms_norm", [x, p + "mlp_norm"], p + "n2", axes=[2])
        g = dense(h, p + "w_gate", p + "gate")
        sg = op("sigmoid", [g], p + "gate_sig")
        g = op("mul", [g, sg], p + "silu")
        u = dense(h, p + "w_up", p + "up")
        m = op("mul", [g, u], p + "glu")
        m = dense(m, p + "w_down", p + "down")
        x = op("add", [x, m], p + "res2")

    x = op("rms_norm", [x, "final_norm"], "nf", axes=[2])
    logits = dense(x, "w_head", "logits")
    op("cross_entropy", [logits, "targets"], "loss")

    inputs = [{"name": "tokens", "shape": [B, S], "dtype": "i32"},
              {"name": "targets", "shape": [B, S], "dtype": "i32"},
              {"name": "rope_cos", "shape": [S, Dh]},
              {"name": "rope_sin", "shape": [S, Dh]}]
    params = [("wte", [vocab, D])]
    for l in range(layers):
        p = f"h{l}_"
        params += [(p + "attn_norm", [D]), (p + "wq", [D, H, Dh]),
                   (p + "wk", [D, K, Dh]), (p + "wv", [D, K, Dh]),
                   (p + "wo", [H, Dh, D]), (p + "mlp_norm", [D]),
                   (p + "w_gate", [D, ffn]), (p + "w_up", [D, ffn]),
                   (p + "w_down", [ffn, D])]
    params += [("final_norm", [D]), ("w_head", [D, vocab])]
    inputs += [{"name": n, "shape": s, "param": True} for n, s in params]
    return {"mesh": {"name": "mesh",
                     "axes": [["data", data], ["model", model]]},
            "inputs": inputs, "ops": ops, "outputs": [{"name": "loss"}]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=4)
    args = ap.parse_args()
    json.dump(graph(args.layers), sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

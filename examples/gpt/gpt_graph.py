#!/usr/bin/env python3
"""A GPT-2-style decoder as a shardc JSON graph, and the same model in PyTorch.

One description serves the shipped example (examples/gpt_tiny.json, written
by `gpt_graph.py tiny`), the PyTorch oracle test and the transformer
benchmark, so the three cannot drift apart. The model: token embedding by
`gather` of integer tokens plus learned positions; pre-LN blocks of causal
multi-head attention (mask from iota/compare/select) and a GELU MLP; a final
LayerNorm; an LM head; mean cross-entropy against integer targets.

Annotations are the expert's, on parameters and tokens only (Megatron-LM
tensor parallelism over "model", data parallelism over "data"):
  - embedding table and LM head split over the vocabulary (vocab-parallel);
  - q/k/v projections by heads (column-parallel), the output projection by
    heads (row-parallel); the MLP up projection by columns, down by rows;
  - tokens and targets split over the batch.
Everything else is left to propagation.

The sequence-parallel variant (examples/gpt_tiny_sp.json, `gpt_graph.py
tiny-sp`) adds what Megatron-LM's sequence parallelism adds: the residual
stream between blocks (the embedding's sum, each block's two residual adds)
split over "model" along the sequence, so the LayerNorms run on each
device's own tokens and each tensor-parallel all-reduce becomes a
reduce_scatter into the sequence split and an all_gather out of it.

The uneven-vocabulary variant (examples/gpt_tiny_uneven.json, `gpt_graph.py
tiny-uneven`) has 250 words over model=4, which the axis does not divide:
the table and the LM head are padded to blocks of 63 (docs/sharding.md,
"Uneven dims") and the plan stays vocab-parallel.
"""
import argparse
import json
import math
import sys


class Config:
    def __init__(self, vocab, d_model, heads, seq, batch, layers,
                 data=2, model=2, ffn_mult=4, epsilon=1e-5):
        assert d_model % heads == 0
        self.vocab, self.d, self.heads, self.seq = vocab, d_model, heads, seq
        self.batch, self.layers, self.data, self.model = batch, layers, data, model
        self.dh = d_model // heads
        self.ffn = ffn_mult * d_model
        self.epsilon = epsilon


TINY = Config(vocab=256, d_model=64, heads=4, seq=16, batch=4, layers=2)
# Issue #12's vocabulary: 250, which the model axis of 4 does not divide
# (blocks of 63; device 3 holds 2 rows of padding of the embedding table
# and 2 columns of the LM head), on 4 devices. (At a batch of 4 the
# vocab-parallel lookup's all-reduce of [4, 16, 64] is cheaper than
# gathering the table; at 6 the partitioner gathers the table instead.)
TINY_UNEVEN = Config(vocab=250, d_model=64, heads=4, seq=16, batch=4,
                     layers=2, data=1, model=4)
# And issue #12's batch: 6 sequences over data=4 (blocks of 2; device
# coordinate 3 on "data" holds 2 rows of padding), with the vocabulary of
# 250 over model=4, on 16 devices (a test's model, not a shipped example).
TINY_UNEVEN_BATCH = Config(vocab=250, d_model=64, heads=4, seq=16, batch=6,
                           layers=2, data=4, model=4)
SIZES = {"tiny": TINY, "tiny-sp": TINY, "tiny-uneven": TINY_UNEVEN,
         "tiny-uneven-batch": TINY_UNEVEN_BATCH}
BENCH = Config(vocab=8192, d_model=768, heads=12, seq=256, batch=4, layers=2)


def parameter_specs(c):
    """(name, shape, PartitionSpec) of every parameter, in input order."""
    specs = [("wte", [c.vocab, c.d], ["model", None]),
             ("wpe", [c.seq, c.d], [None, None])]
    for l in range(c.layers):
        p = f"h{l}_"
        specs += [
            (p + "ln1_g", [c.d], [None]), (p + "ln1_b", [c.d], [None]),
            (p + "wq", [c.d, c.heads, c.dh], [None, "model", None]),
            (p + "wk", [c.d, c.heads, c.dh], [None, "model", None]),
            (p + "wv", [c.d, c.heads, c.dh], [None, "model", None]),
            (p + "wo", [c.heads, c.dh, c.d], ["model", None, None]),
            (p + "ln2_g", [c.d], [None]), (p + "ln2_b", [c.d], [None]),
            (p + "w1", [c.d, c.ffn], [None, "model"]),
            (p + "b1", [c.ffn], ["model"]),
            (p + "w2", [c.ffn, c.d], ["model", None]),
            (p + "b2", [c.d], [None]),
        ]
    specs += [("lnf_g", [c.d], [None]), ("lnf_b", [c.d], [None]),
              ("w_head", [c.d, c.vocab], [None, "model"])]
    return specs


def graph(c, sequence_parallel=False):
    """The model as a shardc JSON graph (docs/json-format.md)."""
    B, S, D, H, Dh = c.batch, c.seq, c.d, c.heads, c.dh
    ops = []

    def op(kind, inputs, output, **fields):
        entry = {"op": kind, "inputs": inputs, "output": output}
        entry.update(fields)
        ops.append(entry)
        return output

    def residual(x, y, out):
        # Sequence parallelism: the residual stream [B,S,D] is split over
        # the batch by "data" and over the sequence by "model".
        if sequence_parallel:
            return op("add", [x, y], out, sharding=["data", "model", None])
        return op("add", [x, y], out)

    def layer_norm(x, g, b, out):
        return op("layer_norm", [x, g, b], out, axes=[2], epsilon=c.epsilon)

    def dense(x, w, out):  # [B,S,K] x [K,N] -> [B,S,N]
        return op("dot_general", [x, w], out,
                  lhs_contracting_dims=[2], rhs_contracting_dims=[0])

    x = op("gather", ["wte", "tokens"], "tok_emb", axis=0)
    x = residual(x, "wpe", "x0")  # [B,S,D] + [S,D], broadcast

    # The causal mask: key position <= query position.
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

    for l in range(c.layers):
        p = f"h{l}_"
        h = layer_norm(x, p + "ln1_g", p + "ln1_b", p + "ln1")
        q = dense(h, p + "wq", p + "q")  # [B,S,H,Dh]
        k = dense(h, p + "wk", p + "k")
        v = dense(h, p + "wv", p + "v")
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
        x = residual(x, y, p + "res1")
        h = layer_norm(x, p + "ln2_g", p + "ln2_b", p + "ln2")
        m = dense(h, p + "w1", p + "up")
        m = op("add", [m, p + "b1"], p + "up_b")
        m = op("gelu", [m], p + "act")
        m = dense(m, p + "w2", p + "down")
        m = op("add", [m, p + "b2"], p + "down_b")
        x = residual(x, m, p + "res2")

    x = layer_norm(x, "lnf_g", "lnf_b", "lnf")
    logits = dense(x, "w_head", "logits")  # [B,S,V]
    op("cross_entropy", [logits, "targets"], "loss")

    inputs = [{"name": "tokens", "shape": [B, S], "dtype": "i32",
               "sharding": ["data", None]},
              {"name": "targets", "shape": [B, S], "dtype": "i32",
               "sharding": ["data", None]}]
    inputs += [{"name": n, "shape": s, "dtype": "f32", "sharding": spec,
                "param": True}
               for n, s, spec in parameter_specs(c)]
    return {"mesh": {"name": "mesh",
                     "axes": [["data", c.data], ["model", c.model]]},
            "inputs": inputs, "ops": ops,
            "outputs": [{"name": "loss"}]}


def scaled_graph(c, pipe=1, sequence_parallel=False):
    """graph(c) on the mesh [pipe, data, model] (pipe most major, so the
    tensor-parallel "model" axis is the minor one and falls inside a node
    when device ids fill nodes in order, as Megatron-LM places it). The
    pipeline axis splits no tensor: `shardc estimate --pipeline-axis pipe`
    gives each of its coordinates an equal share of the layers."""
    g = graph(c, sequence_parallel)
    axes = [["data", c.data], ["model", c.model]]
    if pipe > 1:
        axes.insert(0, ["pipe", pipe])
    g["mesh"] = {"name": "mesh", "axes": axes}
    return g


def plan(c, pipe=1):
    """The sharding plan (docs/plans.md) of graph(c): its mesh and the
    Megatron-LM layout of the parameters and tokens, by name."""
    axes = [["data", c.data], ["model", c.model]]
    if pipe > 1:
        axes.insert(0, ["pipe", pipe])
    rules = [["tokens", ["data", None]], ["targets", ["data", None]]]
    seen = set()
    for name, _, spec in parameter_specs(c):
        pattern = name.split("_", 1)[1] if name[0] == "h" and "_" in name \
            and name.split("_", 1)[0][1:].isdigit() else name
        pattern = "h*_" + pattern if pattern != name else name
        if pattern not in seen:
            seen.add(pattern)
            rules.append([pattern, spec])
    return {"description": f"Megatron-LM's layout of a {c.layers}-layer GPT "
            f"(hidden {c.d}, {c.heads} heads) on t={c.model}, p={pipe}, "
            f"d={c.data} (examples/gpt/gpt_graph.py scale)",
            "mesh": {"name": "mesh", "axes": axes}, "rules": rules}


def parameter_count(c):
    """Parameters of graph(c), by the same specs."""
    return sum(math.prod(shape) for _, shape, _ in parameter_specs(c))


def torch_loss(c, params, tokens, targets):
    """The same model in PyTorch eager: params maps names to tensors."""
    import torch
    import torch.nn.functional as F
    S = tokens.shape[1]
    x = F.embedding(tokens.long(), params["wte"]) + params["wpe"]
    mask = torch.ones(S, S, dtype=torch.bool).tril()
    for l in range(c.layers):
        p = f"h{l}_"
        h = F.layer_norm(x, (c.d,), params[p + "ln1_g"], params[p + "ln1_b"],
                         c.epsilon)
        q = torch.einsum("bsd,dhe->bshe", h, params[p + "wq"])
        k = torch.einsum("bsd,dhe->bshe", h, params[p + "wk"])
        v = torch.einsum("bsd,dhe->bshe", h, params[p + "wv"])
        s = torch.einsum("bqhe,bkhe->bhqk", q, k) / math.sqrt(c.dh)
        s = torch.where(mask, s, torch.tensor(-1e9))
        o = torch.einsum("bhqk,bkhe->bhqe", torch.softmax(s, dim=3), v)
        x = x + torch.einsum("bhse,hed->bsd", o, params[p + "wo"])
        h = F.layer_norm(x, (c.d,), params[p + "ln2_g"], params[p + "ln2_b"],
                         c.epsilon)
        m = F.gelu(h @ params[p + "w1"] + params[p + "b1"], approximate="tanh")
        x = x + m @ params[p + "w2"] + params[p + "b2"]
    x = F.layer_norm(x, (c.d,), params["lnf_g"], params["lnf_b"], c.epsilon)
    logits = x @ params["w_head"]
    return F.cross_entropy(logits.reshape(-1, c.vocab), targets.long().reshape(-1))


def to_text(g):
    """The graph in the examples' layout: one input, op or output a line."""
    def one(v):
        return json.dumps(v, separators=(", ", ": "))
    def block(key):
        return (f'  "{key}": [\n    ' + ",\n    ".join(one(e) for e in g[key])
                + "\n  ]")
    return ("{\n" + f'  "mesh": {one(g["mesh"])},\n' + ",\n".join(
        block(k) for k in ("inputs", "ops", "outputs")) + "\n}\n")


def initial_values(c, seed):
    """NumPy values of the tokens, targets and parameters (GPT-2-like scales;
    the LayerNorm gains and biases are perturbed so their gradients are
    checked at a generic point)."""
    import numpy as np
    r = np.random.default_rng(seed)
    values = {"tokens": r.integers(0, c.vocab, (c.batch, c.seq)),
              "targets": r.integers(0, c.vocab, (c.batch, c.seq))}
    values = {k: v.astype(np.int32) for k, v in values.items()}
    for name, shape, _ in parameter_specs(c):
        noise = r.standard_normal(shape)
        if name.endswith("_g"):
            v = 1 + 0.1 * noise
        elif name.endswith("_b") or name[-2:] in ("b1", "b2"):
            v = 0.1 * noise
        else:
            v = 0.1 * noise
        values[name] = v.astype(np.float32)
    return values


def oracle(shardc, model, work, c=TINY, sharded=False):
    """Step 0 of examples/gpt_tiny.json (or the model of config `c`):
    shardc's loss and gradients (the unsharded program, `shardc run
    --autodiff`; with `sharded`, the partitioned one on the simulated mesh,
    reassembled: `shardc simulate --autodiff --out-dir`) against
    PyTorch's."""
    import os
    import subprocess
    import numpy as np
    import torch
    values = initial_values(c, seed=5)
    os.makedirs(work, exist_ok=True)
    args = []
    for name, v in values.items():
        np.save(f"{work}/{name}.npy", v)
        args.append(f"{name}={work}/{name}.npy")
    np.save(f"{work}/loss.grad.npy", np.array(1.0, dtype=np.float32))
    args.append(f"loss.grad={work}/loss.grad.npy")
    subprocess.run([shardc, "simulate" if sharded else "run", model,
                    "--autodiff", "--out-dir",
                    f"{work}/out", "--inputs", *args], check=True,
                   stdout=subprocess.DEVNULL)
    params = {n: torch.from_numpy(v).requires_grad_()
              for n, v in values.items() if v.dtype == np.float32}
    loss = torch_loss(c, params, torch.from_numpy(values["tokens"]),
                      torch.from_numpy(values["targets"]))
    loss.backward()
    want = {"loss": loss.detach().numpy()}
    want.update({n + ".grad": t.grad.numpy() for n, t in params.items()})
    worst, worst_name = 0.0, ""
    for name, ref in want.items():
        got = np.load(f"{work}/out/{name}.npy")
        if got.shape != ref.shape:
            sys.exit(f"{name}: shardc gave shape {got.shape}, torch {ref.shape}")
        # Judged on the tensor's scale, as shardc's own check does.
        err = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))
        if err > worst:
            worst, worst_name = err, name
    status = "OK" if worst < 1e-4 else "MISMATCH"
    print(f"torch step 0: {len(want)} tensors, loss {float(loss):.6f}, "
          f"max_rel_err {worst:.1e} ({worst_name}) {status}")
    return 0 if status == "OK" else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for size in ("tiny", "tiny-sp", "tiny-uneven", "tiny-uneven-batch",
                 "bench"):
        p = sub.add_parser(size, help=f"write the {size} model's JSON graph")
        p.add_argument("-o", "--output", default="-")
    p = sub.add_parser("scale", help="write a GPT of any size (one "
                       "micro-batch on every data-parallel rank) and its plan")
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--vocab", type=int, default=51200)
    p.add_argument("--micro-batch", type=int, default=1,
                   help="sequences per data-parallel rank (b)")
    p.add_argument("-t", type=int, default=1, help="tensor-parallel size")
    p.add_argument("-p", type=int, default=1, help="pipeline stages")
    p.add_argument("-d", type=int, default=1, help="data-parallel size")
    p.add_argument("--sequence-parallel", action="store_true")
    p.add_argument("-o", "--output", default="-")
    p.add_argument("--plan-output", help="also write the sharding plan here")
    p = sub.add_parser("oracle", help="compare step 0 with PyTorch")
    p.add_argument("shardc")
    p.add_argument("model")
    p.add_argument("work_dir")
    p.add_argument("--size", choices=sorted(SIZES), default="tiny",
                   help="the model's configuration (default tiny)")
    p.add_argument("--sharded", action="store_true",
                   help="take shardc's values from the sharded program")
    args = ap.parse_args()
    if args.command == "oracle":
        return oracle(args.shardc, args.model, args.work_dir,
                      SIZES[args.size], args.sharded)
    if args.command == "scale":
        config = Config(vocab=args.vocab, d_model=args.hidden,
                        heads=args.heads, seq=args.seq,
                        batch=args.micro_batch * args.d, layers=args.layers,
                        data=args.d, model=args.t)
        text = to_text(scaled_graph(config, args.p, args.sequence_parallel))
        if args.plan_output:
            pl = plan(config, args.p)
            one = lambda v: json.dumps(v, separators=(", ", ": "))
            with open(args.plan_output, "w") as f:
                f.write("{" + f'"description": {one(pl["description"])},\n'
                        f' "mesh": {one(pl["mesh"])},\n "rules": [\n  '
                        + ",\n  ".join(one(r) for r in pl["rules"])
                        + "]}\n")
    else:
        config = BENCH if args.command == "bench" else SIZES[args.command]
        text = to_text(graph(config, args.command == "tiny-sp"))
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

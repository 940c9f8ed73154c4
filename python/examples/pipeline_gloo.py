#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A small model trained as a GPipe pipeline over P processes on this
machine, the stage boundaries compressed by tahq.torch.PipeBoundary over
torch.distributed (gloo).

    python3 python/examples/pipeline_gloo.py --procs 2          # or 4
    python3 python/examples/pipeline_gloo.py --procs 4 --backward tahq

Four stages (Linear + tanh on [micro-batch, seq, C] activations) and a
linear head with a mean-squared-error loss; the stages are split evenly over
the processes, rank r running its share and the last rank the head. Each
step runs every micro-batch forward (recv, stages, send), then the backward
of each micro-batch in reverse order (GPipe), then SGD. Forward messages
are TAH-Quant format 1 (the paper's operating point at tile 64); gradients
go back as 6-bit fixpoint (default) or TAH-Quant.

simulate() computes the same training in one process, a tahq.torch.Boundary
at each process boundary; the losses of the two are equal bit for bit
(tahq's codec is deterministic and both go through the same bytes), which
python/test_distributed.py checks, with the bytes each boundary moved.
"""

import argparse
import json
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # a source checkout; an installed tahq also works
import tahq.torch as tt  # noqa: E402

CHANNELS, SEQ, MICRO_BATCH, MICRO_BATCHES = 64, 8, 2, 4
STAGES, LEARNING_RATE = 4, 0.05
ACTIVATION_SHAPE = (MICRO_BATCH, SEQ, CHANNELS)


def build_model(seed=0):
    """The stages and the head, the same in every process (same seed)."""
    torch.manual_seed(seed)
    stages = [torch.nn.Sequential(torch.nn.Linear(CHANNELS, CHANNELS), torch.nn.Tanh())
              for _ in range(STAGES)]
    return stages, torch.nn.Linear(CHANNELS, 1)


def micro_batches(step):
    """(inputs, targets) of each micro-batch of one step."""
    g = torch.Generator().manual_seed(1000 + step)
    out = []
    for _ in range(MICRO_BATCHES):
        x = torch.randn(ACTIVATION_SHAPE, generator=g)
        out.append((x, torch.tanh(x.sum(-1, keepdim=True) / 8)))
    return out


def stage_groups(stages, procs):
    if STAGES % procs:
        raise ValueError("--procs must divide the %d stages, got %d" % (STAGES, procs))
    per = STAGES // procs
    return [torch.nn.Sequential(*stages[i * per:(i + 1) * per]) for i in range(procs)]


def boundary_options(backward):
    return {"backward": backward, "tile": 64}


def sgd(params):
    with torch.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-LEARNING_RATE)
            p.grad = None


def simulate(procs, steps, backward="fixpoint", compress=True):
    """The same training in one process: returns (losses[step][micro-batch],
    bytes[boundary] = {"forward": n, "backward": n}). compress=False leaves
    the boundaries out (the uncompressed model, a control)."""
    torch.set_num_threads(1)
    stages, head = build_model()
    groups = stage_groups(stages, procs)
    bounds = [tt.Boundary(**boundary_options(backward)) for _ in range(procs - 1)]
    moved = [{"forward": 0, "backward": 0} for _ in bounds]
    params = [p for g in groups for p in g.parameters()] + list(head.parameters())
    losses = []
    for step in range(steps):
        outs = []
        for x, target in micro_batches(step):
            h = groups[0](x)
            for b, g, n in zip(bounds, groups[1:], moved):
                if compress:
                    h = b(h)
                    n["forward"] += b.last_forward_bytes
                h = g(h)
            outs.append(torch.nn.functional.mse_loss(head(h), target) / MICRO_BATCHES)
        for loss in reversed(outs):
            loss.backward()
            for b, n in zip(bounds, moved):
                n["backward"] += b.last_backward_bytes if compress else 0
        sgd(params)
        losses.append([float(v) for v in outs])
    return losses, moved


def worker(rank, procs, steps, backward, store, results):
    """One process of the pipeline; writes its losses (last rank) and byte
    counts to results/rank<r>.json."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank,
                            world_size=procs)
    torch.set_num_threads(1)
    stages, head = build_model()
    mine = stage_groups(stages, procs)[rank]
    last = rank == procs - 1
    prev = tt.PipeBoundary(**boundary_options(backward)) if rank > 0 else None
    nxt = tt.PipeBoundary(**boundary_options(backward)) if not last else None
    params = list(mine.parameters()) + (list(head.parameters()) if last else [])
    losses = []
    for step in range(steps):
        outs = []
        for m, (x, target) in enumerate(micro_batches(step)):
            h = x if prev is None else prev.recv(rank - 1, ACTIVATION_SHAPE, tag=m)
            h = mine(h)
            if last:
                outs.append(torch.nn.functional.mse_loss(head(h), target) / MICRO_BATCHES)
            else:
                outs.append(nxt.send(h, rank + 1, tag=m))
        for out in reversed(outs):  # GPipe: backward of each micro-batch, last first
            out.backward()
        sgd(params)
        if last:
            losses.append([float(v) for v in outs])
    report = {"rank": rank, "losses": losses}
    for name, b in (("prev", prev), ("next", nxt)):
        if b is not None:
            report[name] = {"sent": b.bytes_sent, "received": b.bytes_received,
                            "messages": b.messages_sent}
    with open(os.path.join(results, "rank%d.json" % rank), "w") as f:
        json.dump(report, f)
    dist.barrier()
    dist.destroy_process_group()


def run(procs, steps, backward="fixpoint"):
    """Spawn the pipeline; returns the reports of the ranks, by rank."""
    with tempfile.TemporaryDirectory(prefix="tahq-pipeline-") as tmp:
        store = os.path.join(tmp, "store")
        mp.spawn(worker, args=(procs, steps, backward, store, tmp), nprocs=procs, join=True)
        reports = []
        for r in range(procs):
            with open(os.path.join(tmp, "rank%d.json" % r)) as f:
                reports.append(json.load(f))
    return reports


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--procs", type=int, default=2, choices=(1, 2, 4))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--backward", default="fixpoint", choices=("fixpoint", "tahq"))
    args = ap.parse_args()
    reports = run(args.procs, args.steps, args.backward)
    sim, moved = simulate(args.procs, args.steps, args.backward)
    for step, (got, want) in enumerate(zip(reports[-1]["losses"], sim)):
        print("step %d: loss %.9g over %d processes, %.9g in one (%s)"
              % (step, sum(got), args.procs, sum(want), "equal" if got == want else "DIFFERENT"))
    for r in range(args.procs - 1):
        s = reports[r]["next"]["sent"]
        print("boundary %d->%d: forward %d bytes, backward %d bytes (float32 would be %d each)"
              % (r, r + 1, s["forward"], reports[r + 1]["prev"]["sent"]["backward"],
                 4 * args.steps * MICRO_BATCHES * MICRO_BATCH * SEQ * CHANNELS))
    return 0 if reports[-1]["losses"] == sim else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""tahq.torch.PipeBoundary across processes (torch.distributed, gloo on
localhost), by running python/examples/pipeline_gloo.py:

  1. a 4-stage model split over 2 and over 4 processes, GPipe micro-batches,
     fixpoint-6 backward: the losses of every step and micro-batch equal the
     single-process simulation's (tahq.torch.Boundary at the same places)
     bit for bit; control: the model without boundaries gives other losses;
  2. bytes: at each boundary the sender's and the receiver's counts of the
     bytes handed to torch.distributed agree, equal the sum of the message
     lengths and the simulation's counts; every backward message is exactly
     fixpoint_wire_bytes (6-bit codes packed), less than a byte per code;
  3. the TAH-Quant backward over 2 processes: losses equal the simulation's
     too (control: other losses than the fixpoint backward's);
  4. the framing, through an in-memory stand-in for torch.distributed: a
     message goes as its 72-byte header and the rest; a peer whose header
     announces more than the encoder's bound for the shape, or that does
     not start with TAHQ, is refused before anything more is received.

Exit status: 0 passed, 1 failed, 77 skipped (no torch, or a torch without
torch.distributed / gloo: the reason is printed).
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

torch = fx.require("test_distributed.py", "torch", "install python3-torch")
dist = fx.require("test_distributed.py", "torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    fx.skip("test_distributed.py", "this torch (%s) has no torch.distributed with gloo"
            % torch.__version__)

fx.use_tree("python", "python/examples")
import tahq  # noqa: E402
import tahq.torch as tt  # noqa: E402
import pipeline_gloo as pipe  # noqa: E402
from tahq_fixtures import check, verdict  # noqa: E402

STEPS = 3


def check_pipeline(procs, backward):
    reports = pipe.run(procs, STEPS, backward)
    sim, moved = pipe.simulate(procs, STEPS, backward)
    got = reports[-1]["losses"]
    check(len(got) == STEPS and got == sim, "%d processes, %s backward: losses %s differ from "
          "the simulation's %s" % (procs, backward, got, sim))
    per_message = STEPS * pipe.MICRO_BATCHES
    rows = pipe.MICRO_BATCH * pipe.SEQ
    fix = tahq.fixpoint_wire_bytes(rows, pipe.CHANNELS, 6)
    for r in range(procs - 1):
        out, inn = reports[r]["next"], reports[r + 1]["prev"]
        for d in ("forward", "backward"):
            sender, receiver = (out, inn) if d == "forward" else (inn, out)
            lengths = [n for k, n in sender["messages"] if k == d]
            check(len(lengths) == per_message, "boundary %d %s: %d messages, not %d"
                  % (r, d, len(lengths), per_message))
            check(sender["sent"][d] == receiver["received"][d] == sum(lengths) == moved[r][d],
                  "boundary %d %s: sent %d, received %d, messages %d, simulation %d bytes"
                  % (r, d, sender["sent"][d], receiver["received"][d], sum(lengths),
                     moved[r][d]))
            check(sender["sent"][d] < 4 * rows * pipe.CHANNELS * per_message,
                  "boundary %d %s: not smaller than float32" % (r, d))
        if backward == "fixpoint":
            back = [n for k, n in inn["messages"] if k == "backward"]
            check(set(back) == {fix} and fix < rows * pipe.CHANNELS,
                  "boundary %d: fixpoint messages %s, fixpoint_wire_bytes %d"
                  % (r, sorted(set(back)), fix))
        check(out["sent"]["backward"] == 0 and inn["sent"]["forward"] == 0,
              "boundary %d: bytes in the wrong direction" % r)
    print("%d processes, %s backward: losses equal the simulation's over %d steps; per "
          "boundary %d forward and %d backward bytes" % (procs, backward, STEPS,
                                                         moved[0]["forward"],
                                                         moved[0]["backward"]))
    return got


class LoopbackDist:
    """torch.distributed's send / recv between two ends of one process: the
    tensors sent are queued and handed to recv in order."""

    def __init__(self):
        self.queue = []

    def send(self, t, dst, group=None, tag=0):
        self.queue.append(t.clone())

    def recv(self, t, src, group=None, tag=0):
        if not self.queue:
            raise AssertionError("recv with nothing sent")
        got = self.queue.pop(0)
        if got.numel() != t.numel():
            raise AssertionError("recv of %d bytes, %d were sent" % (t.numel(), got.numel()))
        t.copy_(got)


def check_framing():
    shape = pipe.ACTIVATION_SHAPE
    x = torch.randn(shape)
    a, b = tt.PipeBoundary(tile=64), tt.PipeBoundary(tile=64)
    wire = LoopbackDist()
    a._dist = b._dist = wire
    a.send(x, dst=1)
    sizes = [t.numel() for t in wire.queue]
    msg = tt.encode(x, tile=64)
    check(sizes == [tahq.HEADER_BYTES, len(msg) - tahq.HEADER_BYTES],
          "framing: pieces %s for a message of %d bytes" % (sizes, len(msg)))
    y = b.recv(src=0, shape=shape, requires_grad=False)
    check(torch.equal(y, tt.decode(msg).reshape(shape)), "framing: recv is not decode(msg)")
    # hostile headers: refused after the header, the rest never read
    big = bytearray(msg)
    big[56:64] = (1 << 40).to_bytes(8, "little")
    for bad, name in ((bytes(big), "err_truncated"), (b"XAHQ" + msg[4:], "err_magic")):
        wire.queue = [torch.frombuffer(bytearray(bad[:tahq.HEADER_BYTES]), dtype=torch.uint8),
                      torch.frombuffer(bytearray(bad[tahq.HEADER_BYTES:]), dtype=torch.uint8)]
        try:
            b.recv(src=0, shape=shape, requires_grad=False)
            check(False, "framing: a %s header accepted" % name)
        except tahq.TahqError as e:
            check(e.name == name and len(wire.queue) == 1,
                  "framing: %s instead of %s, %d pieces left" % (e.name, name,
                                                                 len(wire.queue)))
    print("framing: header then rest; oversized and foreign headers refused")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libtahq shared library")
    args = ap.parse_args()
    os.environ["TAHQ_LIB"] = os.path.abspath(args.lib)  # for the spawned processes
    try:
        tt.PipeBoundary(profile="paper-v1")
        check(False, "PipeBoundary with profile paper-v1 accepted")
    except ValueError as e:
        check("canonical" in str(e), "paper-v1 refusal: %s" % e)
    check_framing()
    fixpoint = {}
    for procs in (2, 4):
        fixpoint[procs] = check_pipeline(procs, "fixpoint")
        plain, _ = pipe.simulate(procs, STEPS, compress=False)
        check(plain != fixpoint[procs], "control: %d processes: the model without "
              "boundaries has the same losses" % procs)
    tahq_losses = check_pipeline(2, "tahq")
    check(tahq_losses != fixpoint[2], "control: TAH-Quant and fixpoint backward give the "
          "same losses")
    return verdict("test_distributed.py")


if __name__ == "__main__":
    sys.exit(main())

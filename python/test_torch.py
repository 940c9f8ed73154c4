#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check tahq.torch (python/tahq/torch.py) against the tahq program.

  1. encode/decode of CPU float32 tensors: message bytes and decoded values
     equal `tahq encode` / `tahq decode` for the same tensor (format 1 and
     paper-v1); wrong dtype or device is refused;
  2. the autograd boundary: forward equals decode(encode(x)); backward
     straight-through is the identity (bit for bit), fixpoint is within the
     SPEC 7.2 bound (control: it is not the identity and reaches a quarter
     of the bound), tahq equals decode(encode(grad)); a NaN gradient raises;
  3. the drop-in TAHQuantCompressor: the authors' call sequence (build_buffer,
     compress, pack_data, unpack_data from a receive buffer, decompress,
     compress_send / recv_decompress) round-trips in both profiles, its
     paper-v1 bytes equal `tahq encode --profile paper-v1`, and its
     parameter errors name the parameter.

Exit status: 0 passed, 1 failed, 77 numpy or torch missing (CTest skip).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

np = fx.require("test_torch.py", "numpy", "install python3-numpy")
torch = fx.require("test_torch.py", "torch", "install python3-torch")

fx.use_tree("python")
import tahq  # noqa: E402
from tahq_fixtures import check, verdict  # noqa: E402
import tahq.torch as tt  # noqa: E402



def bits_equal(a, b):
    a = a.detach().contiguous().numpy() if isinstance(a, torch.Tensor) else a
    b = b.detach().contiguous().numpy() if isinstance(b, torch.Tensor) else b
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                r.stderr.decode(errors="replace")))


def activation(shape=(2, 16, 256), seed=5):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 0.7
    x[0, 2, 40] = 30.0     # an outlier: a flagged tile
    x[1, 7, 64:128] = 0.0  # an all-zero tile
    return x


def test_codec(cli, work):
    x = activation()
    inp = os.path.join(work, "x.npy")
    np.save(inp, x.numpy())
    # format 1
    msg = tt.encode(x, tile=32, alloc="tile", meta="bf16")
    run([cli, "encode", inp, os.path.join(work, "x.tahq"), "--tile", "32", "--alloc", "tile",
         "--meta", "bf16"])
    with open(os.path.join(work, "x.tahq"), "rb") as f:
        check(f.read() == msg, "format 1: tahq.torch bytes differ from tahq encode")
    y = tt.decode(msg)
    run([cli, "decode", os.path.join(work, "x.tahq"), os.path.join(work, "y.npy")])
    check(isinstance(y, torch.Tensor) and y.dtype == torch.float32 and
          bits_equal(y, np.load(os.path.join(work, "y.npy"))),
          "format 1: tahq.torch decode differs from tahq decode")
    check(bits_equal(tt.decode(torch.frombuffer(bytearray(msg), dtype=torch.uint8)), y),
          "decode of a uint8 tensor")
    out = torch.empty(x.shape)
    check(tt.decode(msg, out=out) is out and bits_equal(out, y), "decode(out=)")
    b = tt.error_bound(msg)
    check(b.dtype == torch.float64 and bool(((x.double() - y.double()).abs() <= b).all()),
          "error bound")
    # a tensor that requires grad and a non-contiguous one encode the same
    check(tt.encode(x.clone().requires_grad_(True), tile=32, alloc="tile", meta="bf16") == msg,
          "requires_grad tensor")
    xt = x.transpose(0, 1).contiguous().transpose(0, 1)
    check(not xt.is_contiguous() and
          tt.encode(xt, tile=32, alloc="tile", meta="bf16") == msg, "non-contiguous tensor")
    # paper-v1
    p = tt.encode_paper_v1(x, hi_permille=750)
    run([cli, "encode", "--profile", "paper-v1", "--ratio", "750", inp,
         os.path.join(work, "x.pv1")])
    with open(os.path.join(work, "x.pv1"), "rb") as f:
        check(f.read() == p, "paper-v1: tahq.torch bytes differ from tahq encode")
    yp = tt.decode_paper_v1(p, x.shape, hi_permille=750)
    run([cli, "decode", "--profile", "paper-v1", "--shape", "2x16x256", "--ratio", "750",
         os.path.join(work, "x.pv1"), os.path.join(work, "yp.npy")])
    check(bits_equal(yp, np.load(os.path.join(work, "yp.npy"))),
          "paper-v1: tahq.torch decode differs from tahq decode")
    # refusals
    for bad, exc, what in ((x.double(), TypeError, "float64"), (x.int(), TypeError, "int32"),
                           (x.numpy(), TypeError, "numpy array")):
        try:
            tt.encode(bad)
            check(False, "%s accepted" % what)
        except exc as e:
            check(what == "numpy array" or "convert explicitly" in str(e),
                  "%s: the refusal says nothing of converting: %s" % (what, e))
    # float16 and bfloat16 are widened to float32 (exact): the message is the
    # one of the widened tensor, and (control) not the float32 original's
    for dt in (torch.float16, torch.bfloat16):
        low = x.to(dt)
        m = tt.encode(low, threads=2)
        check(m == tt.encode(low.float()), "%s: not the message of the widened tensor" % dt)
        check(m != tt.encode(x), "%s: control: same message as the float32 tensor" % dt)
    # another device: refused, and the message says to pass .cpu(); the meta
    # device stands in where no GPU is present
    devs = ["meta"] + (["cuda"] if torch.cuda.is_available() else [])
    for dev in devs:
        try:
            tt.encode(torch.empty(2, 4, 64, device=dev))
            check(False, "%s tensor accepted" % dev)
        except ValueError as e:
            check(".cpu()" in str(e), "%s refusal does not say .cpu(): %s" % (dev, e))
    # a 2^41-element view: the shape is refused before any copy (a copy
    # would raise MemoryError or take 4 TiB)
    for dt in (torch.float32, torch.bfloat16):
        huge = torch.zeros((), dtype=dt).expand(2 ** 21, 2 ** 10, 2 ** 10)
        try:
            tt.encode(huge)
            check(False, "2^41-element %s view accepted" % dt)
        except tahq.ShapeError as e:
            check("2^40" in str(e), "2^41 elements: %s" % e)
        except MemoryError:
            check(False, "2^41-element %s view: MemoryError, not ShapeError" % dt)
    # threads: same bytes, decode to the caller's shape
    check(tt.encode(x, threads=3, tile=32, alloc="tile", meta="bf16") == msg, "threads=3 bytes")
    v = x[0, 0].contiguous()
    vm = tt.encode(v)
    check(tuple(tt.decode(vm, shape=v.shape).shape) == (256,) and
          tuple(tt.decode(vm).shape) == (1, 1, 256), "decode(shape=) of a [C] tensor")
    try:
        tt.encode(x, seed=2 ** 64)
        check(False, "seed 2^64 accepted")
    except tahq.ConfigError as e:
        check(e.field == "seed", "seed error field %r" % e.field)
    print("codec: tensors encode and decode as the tahq program does (%d, %d bytes)"
          % (len(msg), len(p)))


def test_boundary():
    x = activation((2, 16, 128), seed=9)
    w = torch.randn(x.shape, generator=torch.Generator().manual_seed(1))
    lib = tahq.library()

    # straight-through: forward = codec, backward = identity
    st = tt.Boundary(backward="straight-through")
    xr = x.clone().requires_grad_(True)
    y = st(xr)
    want = torch.from_numpy(lib.decode(lib.encode(x.numpy())))
    check(bits_equal(y.detach(), want), "forward != decode(encode(x))")
    check(not bits_equal(y.detach(), x), "control: forward is lossless")
    (y * w).sum().backward()
    check(bits_equal(xr.grad, w), "straight-through backward is not the identity")
    check(st.last_forward_bytes == len(lib.encode(x.numpy())), "forward byte count")

    # fixpoint: within the SPEC 7.2 bound, per channel
    for bits in (4, 6, 8):
        fx = tt.Boundary(backward="fixpoint", backward_bits=bits)
        xr = x.clone().requires_grad_(True)
        (fx(xr) * w).sum().backward()
        g = xr.grad
        codes, steps = lib.fixpoint_encode(w.numpy().reshape(-1, 128), bits)
        bound = torch.from_numpy(tahq.fixpoint_bound(steps, bits))
        err = (g.double() - w.double()).abs()
        check(bool((err <= bound).all()), "fixpoint %d: backward outside its bound" % bits)
        check(bool((err > bound / 4).any()), "fixpoint %d: control: bound/4 never reached"
              % bits)
        check(not bits_equal(g, w), "fixpoint %d: control: backward is the identity" % bits)
        want = lib.fixpoint_decode(codes, steps, bits).reshape(w.shape)
        check(bits_equal(g, want), "fixpoint %d: backward != fixpoint_decode(encode)" % bits)
        check(fx.last_backward_bytes == tahq.fixpoint_wire_bytes(32, 128, bits),
              "fixpoint byte count")

    # TAH-Quant on the gradient
    tq = tt.Boundary(backward="tahq", backward_config={"hi_bits": 6, "lo_bits": 5})
    xr = x.clone().requires_grad_(True)
    (tq(xr) * w).sum().backward()
    want = lib.decode(lib.encode(w.numpy(), hi_bits=6, lo_bits=5))
    check(bits_equal(xr.grad, want), "tahq backward != decode(encode(grad))")

    # paper-v1 forward; [rows, C] input keeps its shape
    pv = tt.Boundary(profile="paper-v1", hi_permille=750)
    x2 = x.reshape(-1, 128).clone().requires_grad_(True)
    y2 = pv(x2)
    want = lib.decode_paper_v1(lib.encode_paper_v1(x2.detach().numpy(), hi_permille=750),
                               x2.shape, hi_permille=750)
    check(y2.shape == x2.shape and bits_equal(y2.detach(), want.reshape(x2.shape)),
          "paper-v1 forward")
    (y2 * 2).sum().backward()
    check(bool((x2.grad == 2).all()), "paper-v1 straight-through backward")

    # inside a module chain
    lin = torch.nn.Linear(128, 128)
    net = torch.nn.Sequential(lin, tt.Boundary(backward="fixpoint"), torch.nn.Linear(128, 1))
    net(x).sum().backward()
    check(lin.weight.grad is not None and bool(torch.isfinite(lin.weight.grad).all()),
          "gradient reaches the layer before the boundary")

    # a NaN gradient is refused, never passed on
    fx = tt.Boundary(backward="fixpoint")
    xr = x.clone().requires_grad_(True)
    bad = w.clone()
    bad[0, 0, 0] = float("nan")
    try:
        (fx(xr) * bad).sum().backward()
        check(False, "NaN gradient passed through the fixpoint backward")
    except tahq.TahqError as e:
        check(e.name == "err_nonfinite", "NaN gradient: %s" % e.name)
    # bad construction arguments name the field
    for kw, field in (({"backward": "exact"}, None), ({"backward_bits": 9}, "bits"),
                      ({"tile": 48}, "tile"), ({"profile": "v2"}, None),
                      ({"backward_config": {"seed": -1}}, "seed")):
        try:
            tt.Boundary(**kw)
            check(False, "Boundary(%r) accepted" % (kw,))
        except ValueError as e:
            check(field is None or getattr(e, "field", None) == field,
                  "Boundary(%r): %s" % (kw, e))
    print("boundary: straight-through identity, fixpoint within bound, tahq backward")


class FakeComm:
    """Delivers what send() got into recv()'s buffer (a longer one)."""

    def __init__(self):
        self.sent = []

    def send(self, t, dst=None, stream=None):
        self.sent.append((t.clone(), dst))

    def recv(self, buf, src=None, stream=None):
        t, _ = self.sent.pop(0)
        buf.zero_()
        buf[:t.numel()] = t


class StreamlessComm(FakeComm):
    """send / recv with torch.distributed's parameters (no stream)."""

    def send(self, t, dst, group=None, tag=0):
        super().send(t, dst)

    def recv(self, buf, src, group=None, tag=0):
        super().recv(buf, src)


def test_compressor(cli, work):
    B, S, C = 2, 20, 128
    x = activation((B, S, C), seed=13)
    inp = os.path.join(work, "c.npy")
    np.save(inp, x.numpy())
    for profile in ("paper-v1", "canonical"):
        c = tt.TAHQuantCompressor(high_precision_bits=4, low_precision_bits=3, tile_size=64,
                                  high_precision_allocation_ratio=0.8, profile=profile)
        c.build_buffer(batch_size=4, micro_batch_size=B, seq_length=S, embedding_dim=C,
                       device="cpu")
        check(len(c.buffers) == 2, "%s: two receive buffers" % profile)
        data = c.compress(x)
        packed = c.pack_data(*data)
        check(packed.dtype == torch.uint8 and packed.dim() == 1, "%s: packed" % profile)
        out = os.path.join(work, "c.%s" % profile)
        if profile == "paper-v1":
            run([cli, "encode", "--profile", "paper-v1", inp, out])
        else:
            run([cli, "encode", inp, out, "--tile", "64", "--bits", "4/3", "--ratio", "800"])
        with open(out, "rb") as f:
            check(f.read() == packed.numpy().tobytes(),
                  "%s: pack_data bytes differ from tahq encode" % profile)
        # receive into the larger buffer, as their pipeline does
        buf = c.buffers[0]
        check(buf.numel() > packed.numel(), "%s: receive buffer larger" % profile)
        buf.zero_()
        buf[:packed.numel()] = packed
        y = c.decompress(*c.unpack_data(buf))
        if profile == "paper-v1":
            want = tahq.decode_paper_v1(packed.numpy(), (B, S, C))
        else:
            want = tahq.decode(packed.numpy())
        check(bits_equal(y, want), "%s: unpack_data + decompress" % profile)
        rel = float(((y - x) ** 2).sum() / (x ** 2).sum())
        check(rel < 0.05, "%s: relative MSE %g" % (profile, rel))
        comm = FakeComm()
        c.compress_send(x, 1, comm, dst=3)
        y2 = c.recv_decompress(1, comm, src=0)
        check(bits_equal(y2, y), "%s: compress_send / recv_decompress" % profile)
        comm = StreamlessComm()
        c.compress_send(x, 1, comm, dst=3)
        check(bits_equal(c.recv_decompress(1, comm, src=0), y),
              "%s: compress_send / recv_decompress with a comm that takes no stream "
              "(torch.distributed's send / recv)" % profile)
        check(bool((c.buffers[1] == 0).all()), "%s: receive buffer flushed" % profile)
        # control: a corrupted receive buffer is refused, not decoded
        buf.zero_()
        buf[:packed.numel()] = packed
        buf[packed.numel() - 1] ^= 0x01 if profile == "canonical" else 0
        if profile == "canonical":
            try:
                c.decompress(*c.unpack_data(buf))
                check(False, "canonical: corrupted message decoded")
            except tahq.TahqError as e:
                check(e.name == "err_crc", "corrupted: %s" % e.name)
        # a wrong shape is refused
        try:
            c.compress(x[:, :10])
            check(False, "%s: wrong shape accepted" % profile)
        except ValueError:
            pass
    # parameter errors name the authors' parameter
    for kw, field in (({"tile_size": 48}, "tile_size"), ({"high_precision_bits": 9},
                      "high_precision_bits"), ({"low_precision_bits": 0}, "low_precision_bits"),
                      ({"high_precision_allocation_ratio": 0.8004},
                       "high_precision_allocation_ratio"),
                      ({"high_precision_allocation_ratio": 1.5},
                       "high_precision_allocation_ratio"),
                      ({"scale_method": "mean"}, "scale_method"),
                      ({"profile": "canonical", "seed": 2 ** 64}, "seed"),
                      ({"seed": 1}, "seed")):
        try:
            tt.TAHQuantCompressor(**kw)
            check(False, "TAHQuantCompressor(%r) accepted" % (kw,))
        except ValueError as e:
            check(getattr(e, "field", None) == field and field in str(e),
                  "TAHQuantCompressor(%r): %s" % (kw, e))
    # paper-v1 allows lo_bits > hi_bits; canonical does not
    tt.TAHQuantCompressor(high_precision_bits=3, low_precision_bits=4)
    try:
        tt.TAHQuantCompressor(high_precision_bits=3, low_precision_bits=4, profile="canonical")
        check(False, "canonical: lo_bits > hi_bits accepted")
    except tahq.ConfigError as e:
        check(e.field == "low_precision_bits", "canonical lo > hi: %s" % e)
    # canonical messages carry their shape: a receiver needs no build_buffer
    sender = tt.TAHQuantCompressor(profile="canonical")
    receiver = tt.TAHQuantCompressor(profile="canonical")
    m = sender.pack_data(*sender.compress(x))
    padded = torch.cat([m, torch.zeros(100, dtype=torch.uint8)])
    check(bits_equal(receiver.decompress(*receiver.unpack_data(padded)),
                     tahq.decode(m.numpy())), "canonical receiver without build_buffer")
    # paper-v1 without a shape cannot decode, and says so
    try:
        tt.TAHQuantCompressor().unpack_data(m)
        check(False, "paper-v1 unpack_data without a shape accepted")
    except ValueError:
        pass
    print("compressor: the authors' call sequence round-trips in both profiles")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libtahq shared library")
    ap.add_argument("--cli", required=True, help="the tahq program")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.environ["TAHQ_LIB"] = os.path.abspath(args.lib)  # the shared Library loads this one
    os.makedirs(args.workdir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.workdir)
    print("torch %s, libtahq %s" % (torch.__version__, tahq.library().path))
    try:
        test_codec(args.cli, work)
        test_boundary()
        test_compressor(args.cli, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return verdict("test_torch.py")


if __name__ == "__main__":
    sys.exit(main())

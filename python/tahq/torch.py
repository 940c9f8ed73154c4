# SPDX-License-Identifier: MIT
"""tahq.torch: libtahq for PyTorch CPU tensors.

    import torch, tahq.torch as tt
    msg = tt.encode(x, threads=2)               # CPU [B, S, C] -> bytes (format 1)
    y = tt.decode(msg, shape=x.shape)           # -> float32 tensor of x's shape
    b = tt.Boundary(backward="fixpoint")        # a pipeline boundary as a module
    y = b(x)                                    # forward: encode -> bytes -> decode
    p = tt.PipeBoundary(backward="fixpoint")    # the same boundary between processes
    tok = p.send(h, dst=1)                      # (torch.distributed; tok.backward()
    h = p.recv(src=0, shape=(2, 16, 256))       #  receives the gradient)
    c = tt.TAHQuantCompressor(high_precision_bits=4, low_precision_bits=3, tile_size=64,
                              high_precision_allocation_ratio=0.8)   # the authors' API

Tensors are shared with numpy (Tensor.numpy(), torch.from_numpy): no copies
beyond the codec's own buffers, except where the codec cannot read a tensor
in place: a non-contiguous tensor is copied, and float16 / bfloat16 tensors
are widened to float32 (exact). Other dtypes raise TypeError; tensors on
another device raise ValueError saying to pass x.cpu() (nothing is moved
between devices silently). Argument errors are tahq.ConfigError /
tahq.ShapeError (ValueErrors naming the field), library errors
tahq.TahqError.
"""

import math

import numpy as np

try:
    import torch
except ImportError as e:  # say what to install, not only "no module named torch"
    raise ImportError("tahq.torch needs PyTorch: pip install torch (or tahq[torch]), or "
                      "Debian's python3-torch (%s)" % e) from e

import tahq as _tahq
from tahq import ConfigError, ShapeError, TahqError  # noqa: F401 - re-exported

__all__ = ["encode", "decode", "encode_paper_v1", "decode_paper_v1", "error_bound",
           "fixpoint_encode", "fixpoint_decode", "Boundary", "BoundaryFunction", "boundary",
           "TAHQuantCompressor", "BACKWARD_MODES", "PROFILES", "PipeBoundary"]

BACKWARD_MODES = ("straight-through", "fixpoint", "tahq")
PROFILES = ("canonical", "paper-v1")


def _lib(lib):
    return lib if lib is not None else _tahq.library()


def _cpu_f32(t, field):
    """A numpy view of a CPU float32, float16 or bfloat16 tensor (detached;
    strided views stay views, so the binding checks the shape before it
    copies). bfloat16, which numpy lacks, is widened here, after a check
    that the shape is one the codec can take at all."""
    if not isinstance(t, torch.Tensor):
        raise TypeError("%s: need a torch.Tensor, got %s" % (field, type(t).__name__))
    if t.device.type != "cpu":
        raise ValueError("%s is on %s; the codec runs on the CPU: pass %s.cpu() (and move "
                         "the result back with .to(device))" % (field, t.device, field))
    if t.dtype in (torch.float32, torch.float16):
        return t.detach().numpy()
    if t.dtype == torch.bfloat16:
        _tahq._shape3(t.shape, field)
        if t.numel() > _tahq.MAX_ELEMENTS:
            raise ShapeError(field, "%d elements exceed 2^40" % t.numel())
        return t.detach().float().numpy()
    raise TypeError("%s must be torch.float32 (got %s); float16 and bfloat16 are widened "
                    "to float32 exactly, other dtypes are not converted silently: convert "
                    "explicitly, e.g. %s.float()" % (field, t.dtype, field))


def _u8_view(msg, field="msg"):
    """A uint8 numpy view of msg: bytes-like, or a CPU uint8 tensor."""
    if isinstance(msg, torch.Tensor):
        if msg.dtype != torch.uint8 or msg.device.type != "cpu":
            raise TypeError("%s: need a CPU torch.uint8 tensor, got %s on %s"
                            % (field, msg.dtype, msg.device))
        return msg.detach().contiguous().reshape(-1).numpy()
    return msg


# ---------------------------------------------------------------------------
# Codec functions
# ---------------------------------------------------------------------------
def encode(x, lib=None, *, threads=1, **fields):
    """Encode a CPU tensor ([B, S, C], [rows, C] or [C]; float32, or
    float16 / bfloat16 widened exactly) into a format-1 message (bytes) on
    `threads` threads. Keyword fields as tahq.encode."""
    return _lib(lib).encode(_cpu_f32(x, "x"), threads=threads, **fields)


def decode(msg, lib=None, out=None, *, shape=None, threads=1):
    """Decode a format-1 message (bytes-like or uint8 tensor) into a float32
    tensor [B, S, C], or of `shape` (e.g. the encoded tensor's), or into out
    (a CPU float32 tensor of B*S*C elements)."""
    o = None if out is None else _out_numpy(out)
    y = _lib(lib).decode(_u8_view(msg), out=o, shape=None if shape is None else tuple(shape),
                         threads=threads)
    return out if out is not None else torch.from_numpy(y)


def _out_numpy(out):
    if not isinstance(out, torch.Tensor) or out.dtype != torch.float32 or \
            out.device.type != "cpu" or not out.is_contiguous():
        raise TypeError("out: need a contiguous CPU float32 tensor")
    return out.detach().numpy()


def encode_paper_v1(x, lib=None, **fields):
    """Encode in the authors' headerless layout (tile, hi_bits, lo_bits,
    hi_permille)."""
    return _lib(lib).encode_paper_v1(_cpu_f32(x, "x"), **fields)


def decode_paper_v1(msg, shape, lib=None, out=None, **fields):
    """Decode a paper-v1 message; shape and fields must be the encoder's."""
    o = None if out is None else _out_numpy(out)
    y = _lib(lib).decode_paper_v1(_u8_view(msg), tuple(shape), out=o, **fields)
    return out if out is not None else torch.from_numpy(y)


def error_bound(msg, lib=None):
    """Per-element error bound (float64 tensor [B, S, C]) of a message."""
    return torch.from_numpy(_lib(lib).error_bound(_u8_view(msg)))


def fixpoint_encode(g, bits=6, meta="fp16", lib=None):
    """SPEC 7.2 per-channel quantizer of a CPU float32 tensor [..., C]:
    (codes uint8 tensor of g's shape, steps float32 tensor [C])."""
    codes, steps = _lib(lib).fixpoint_encode(_cpu_f32(g, "g"), bits, meta)
    return torch.from_numpy(codes), torch.from_numpy(steps)


def fixpoint_decode(codes, steps, bits=6, lib=None):
    if not isinstance(codes, torch.Tensor) or codes.dtype != torch.uint8:
        raise TypeError("codes: need a uint8 tensor")
    y = _lib(lib).fixpoint_decode(codes.contiguous().numpy(), _cpu_f32(steps, "steps"), bits)
    return torch.from_numpy(y)


# ---------------------------------------------------------------------------
# A pipeline boundary for autograd
# ---------------------------------------------------------------------------
class Boundary(torch.nn.Module):
    """One pipeline-stage boundary, simulated in one process.

    forward(x): x is encoded (profile "canonical": format 1 with the given
    fields; "paper-v1": the authors' layout with tile, hi_bits, lo_bits,
    hi_permille), the message is decoded, and the decoded tensor is
    returned (same shape as x).

    backward(g), selected by backward=:
      "straight-through"  the gradient passes unchanged;
      "fixpoint"          SPEC 7.2 per-channel quantizer with backward_bits
                          (2..8, default 6, the authors' runs) and
                          backward_meta;
      "tahq"              TAH-Quant format 1 on the gradient with
                          backward_config (a dict of encode fields; default
                          the paper operating point).

    After each pass, last_forward_bytes / last_backward_bytes hold the
    number of bytes that would cross the wire (backward: 0 for
    straight-through, which sends the float32 gradient uncompressed: see
    last_backward_raw_bytes).
    """

    def __init__(self, profile="canonical", backward="straight-through", backward_bits=6,
                 backward_meta="fp16", backward_config=None, lib=None, threads=1, **fields):
        super().__init__()
        self.lib = _lib(lib)
        if profile not in PROFILES:
            raise ValueError("profile: must be one of %s, got %r"
                             % (", ".join(repr(p) for p in PROFILES), profile))
        if backward not in BACKWARD_MODES:
            raise ValueError("backward: must be one of %s, got %r"
                             % (", ".join(repr(m) for m in BACKWARD_MODES), backward))
        self.profile = profile
        self.backward_mode = backward
        # validated now, so a bad field fails at construction
        if profile == "canonical":
            self._cfg = self.lib.config(**fields)
        else:
            self._cfg = self.lib.paper_v1_config(**fields)
        self.backward_bits = self.lib._fix_bits(backward_bits)
        _tahq._name("meta", backward_meta)
        self.backward_meta = backward_meta
        self._bcfg = self.lib.config(**(backward_config or {}))
        self.threads = _tahq._threads(threads)
        self.last_forward_bytes = 0
        self.last_backward_bytes = 0
        self.last_backward_raw_bytes = 0

    def extra_repr(self):
        return "profile=%r, backward=%r" % (self.profile, self.backward_mode)

    # What crosses the wire, one method per direction and end. Boundary
    # (one process) and PipeBoundary (two) both go through these, so the
    # simulation sees exactly the bytes the processes exchange.
    def _activation_message(self, x):
        xn = _cpu_f32(x, "x")
        if self.profile == "canonical":
            return self.lib.encode(xn, self._cfg, threads=self.threads)
        return self.lib.encode_paper_v1(xn, self._cfg, threads=self.threads)

    def _activation_from(self, msg, shape):
        if self.profile == "canonical":
            y = self.lib.decode(msg, threads=self.threads)
        else:
            y = self.lib.decode_paper_v1(msg, tuple(shape), self._cfg, threads=self.threads)
        return torch.from_numpy(y).reshape(shape)

    def _gradient_message(self, g):
        """The gradient's wire form: the fixpoint codes packed at
        backward_bits bits plus the steps (tahq.fixpoint_pack), a format-1
        message, or (straight-through) the float32 values."""
        gn = _cpu_f32(g, "grad")
        if self.backward_mode == "fixpoint":
            codes, steps = self.lib.fixpoint_encode(gn, self.backward_bits, self.backward_meta)
            return _tahq.fixpoint_pack(codes, steps, self.backward_bits, self.backward_meta)
        if self.backward_mode == "tahq":
            return self.lib.encode(gn, self._bcfg, threads=self.threads)
        return np.ascontiguousarray(gn, dtype="<f4").tobytes()

    def _gradient_from(self, wire, shape):
        if self.backward_mode == "fixpoint":
            codes, steps = _tahq.fixpoint_unpack(wire, tuple(shape), self.backward_bits,
                                                 self.backward_meta)
            g = self.lib.fixpoint_decode(codes, steps, self.backward_bits)
        elif self.backward_mode == "tahq":
            g = self.lib.decode(wire, threads=self.threads)
        else:
            g = np.frombuffer(wire, dtype="<f4").astype(np.float32)
        return torch.from_numpy(g).reshape(shape)

    def send_forward(self, x):
        """x (CPU float32 tensor) -> (message bytes, decoded tensor)."""
        msg = self._activation_message(x)
        self.last_forward_bytes = len(msg)
        return msg, self._activation_from(msg, x.shape)

    def send_backward(self, g):
        """The gradient as the previous stage receives it."""
        self.last_backward_raw_bytes = g.numel() * 4
        if self.backward_mode == "straight-through":
            self.last_backward_bytes = 0
            return g
        wire = self._gradient_message(g)
        self.last_backward_bytes = len(wire)
        return self._gradient_from(wire, g.shape)

    def forward(self, x):
        return BoundaryFunction.apply(x, self)


class BoundaryFunction(torch.autograd.Function):
    """apply(x, boundary): the forward and backward of a Boundary."""

    @staticmethod
    def forward(ctx, x, boundary):
        ctx.boundary = boundary
        _, y = boundary.send_forward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        return ctx.boundary.send_backward(grad), None


def boundary(x, **kwargs):
    """Functional form: Boundary(**kwargs)(x)."""
    return Boundary(**kwargs)(x)


# ---------------------------------------------------------------------------
# A boundary between processes (torch.distributed)
# ---------------------------------------------------------------------------
class PipeBoundary(Boundary):
    """One pipeline-stage boundary between two processes of a
    torch.distributed group (gloo on the CPU; any backend that sends uint8
    tensors, with device= naming where the wire tensors live, e.g. "cuda"
    for NCCL; the codec itself runs on the CPU).

    The sending stage calls tok = send(x, dst, tag): the TAH-Quant message
    of x goes to dst, and tok is a scalar whose backward (tok.backward())
    receives the gradient of x from dst and passes it into x's graph. The
    receiving stage calls h = recv(src, shape, tag): the decoded activation,
    whose backward sends the gradient back to src in the backward= form
    ("fixpoint": the codes packed at backward_bits bits plus fp16 steps,
    fixpoint_wire_bytes long; "tahq": a format-1 message with
    backward_config; "straight-through": the float32 values). The argument
    names follow torch.distributed.send / recv (dst, src, group, tag).

    Each message is sent as it is: a format-1 message as its 72-byte header
    and then the rest (whose length the header gives; checked against the
    encoder's bound for the shape), a fixpoint gradient in one piece of the
    size the shape fixes. So the bytes handed to torch.distributed are
    exactly the message bytes; bytes_sent and bytes_received count them per
    direction ("forward", "backward"), messages_sent lists each message's
    length. Both ends must make the same calls in the same order (as GPipe
    schedules do: every micro-batch forward, then tok.backward() of each in
    reverse order); tag (e.g. the micro-batch index) is passed to
    torch.distributed. Profile "canonical" only: a paper-v1 message has no
    header that gives its length.
    """

    def __init__(self, profile="canonical", backward="fixpoint", backward_bits=6,
                 backward_meta="fp16", backward_config=None, lib=None, threads=1, group=None,
                 device="cpu", **fields):
        if profile != "canonical":
            raise ValueError("profile: PipeBoundary sends format-1 messages (profile "
                             "'canonical'), whose header gives the length; got %r" % (profile,))
        super().__init__(profile, backward, backward_bits, backward_meta, backward_config,
                         lib, threads, **fields)
        import torch.distributed as dist
        if not dist.is_available():
            raise RuntimeError("PipeBoundary needs torch.distributed, which this PyTorch "
                               "build lacks")
        self._dist = dist
        self.group = group
        self.device = torch.device(device)
        self.bytes_sent = {"forward": 0, "backward": 0}
        self.bytes_received = {"forward": 0, "backward": 0}
        self.messages_sent = []

    def extra_repr(self):
        return "backward=%r, device=%s" % (self.backward_mode, self.device)

    # -- the wire --------------------------------------------------------------
    def _post(self, data, dst, tag, direction):
        """Send data (bytes) to dst as one tensor, or as header + rest for a
        format-1 message."""
        pieces = [data]
        if self._is_tahq_message(direction):
            pieces = [data[:_tahq.HEADER_BYTES], data[_tahq.HEADER_BYTES:]]
        for piece in pieces:
            if piece:
                t = torch.frombuffer(bytearray(piece), dtype=torch.uint8).to(self.device)
                self._dist.send(t, dst, group=self.group, tag=tag)
                self.bytes_sent[direction] += t.numel()
        self.messages_sent.append((direction, len(data)))

    def _take(self, n, src, tag, direction):
        t = torch.empty(n, dtype=torch.uint8, device=self.device)
        self._dist.recv(t, src, group=self.group, tag=tag)
        self.bytes_received[direction] += n
        return t.cpu().numpy().tobytes()

    def _is_tahq_message(self, direction):
        return direction == "forward" or self.backward_mode == "tahq"

    def _collect(self, src, tag, direction, shape):
        """Receive one message of the given direction for a tensor of shape."""
        if not self._is_tahq_message(direction):
            rows_c = shape[-1]
            n = int(np.prod(shape))
            size = (_tahq.fixpoint_wire_bytes(n // rows_c, rows_c, self.backward_bits,
                                              self.backward_meta)
                    if self.backward_mode == "fixpoint" else 4 * n)
            return self._take(size, src, tag, direction)
        head = self._take(_tahq.HEADER_BYTES, src, tag, direction)
        if head[:4] != b"TAHQ":
            raise TahqError(8, "err_magic", "the message from rank %d does not start with TAHQ"
                            % src, "PipeBoundary.recv")
        rest = int.from_bytes(head[56:64], "little")
        cfg = self._cfg if direction == "forward" else self._bcfg
        bound = self.lib.encode_bound(tuple(shape), cfg)
        if _tahq.HEADER_BYTES + rest > bound:
            raise TahqError(7, "err_truncated", "rank %d announces %d payload bytes; a %s "
                            "message of shape %s has at most %d" % (
                                src, rest, direction, tuple(shape),
                                bound - _tahq.HEADER_BYTES), "PipeBoundary.recv")
        return head + (self._take(rest, src, tag, direction) if rest else b"")

    # -- the two ends ------------------------------------------------------------
    def send(self, x, dst, tag=0):
        """Send x's message to dst; returns the scalar whose backward receives
        x's gradient from dst."""
        return _PipeSend.apply(x, self, int(dst), int(tag))

    def recv(self, src, shape, tag=0, requires_grad=True):
        """The activation src sent (float32 tensor of shape); with
        requires_grad its backward sends the gradient to src."""
        shape = tuple(int(d) for d in shape)
        anchor = torch.empty(0, requires_grad=bool(requires_grad))
        return _PipeRecv.apply(anchor, self, int(src), int(tag), shape)


class _PipeSend(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, pipe, dst, tag):
        ctx.pipe, ctx.dst, ctx.tag, ctx.shape = pipe, dst, tag, tuple(x.shape)
        msg = pipe._activation_message(x)
        pipe._post(msg, dst, tag, "forward")
        pipe.last_forward_bytes = len(msg)
        return torch.zeros(())

    @staticmethod
    def backward(ctx, _):
        p = ctx.pipe
        wire = p._collect(ctx.dst, ctx.tag, "backward", ctx.shape)
        p.last_backward_bytes = len(wire)
        return p._gradient_from(wire, ctx.shape), None, None, None


class _PipeRecv(torch.autograd.Function):
    @staticmethod
    def forward(ctx, anchor, pipe, src, tag, shape):
        ctx.pipe, ctx.src, ctx.tag = pipe, src, tag
        msg = pipe._collect(src, tag, "forward", shape)
        pipe.last_forward_bytes = len(msg)
        return pipe._activation_from(msg, shape)

    @staticmethod
    def backward(ctx, grad):
        p = ctx.pipe
        wire = p._gradient_message(grad)
        p._post(wire, ctx.src, ctx.tag, "backward")
        p.last_backward_bytes = len(wire)
        return None, None, None, None, None


# ---------------------------------------------------------------------------
# Drop-in for the authors' compressor class
# ---------------------------------------------------------------------------
def _stream_arg(stream):
    return {} if stream is None else {"stream": stream}


def _ratio_permille(r):
    field = "high_precision_allocation_ratio"
    if isinstance(r, bool) or not isinstance(r, (int, float, np.floating, np.integer)):
        raise ConfigError(field, "must be a number 0..1, got %r" % (r,))
    r = float(r)
    if not 0.0 <= r <= 1.0:
        raise ConfigError(field, "must be a number 0..1, got %r" % (r,))
    p = round(r * 1000.0)
    if abs(r * 1000.0 - p) > 1e-9 or p / 1000.0 != r:
        raise ConfigError(field, "must be a multiple of 0.001 (tahq carries it in permille), "
                                 "got %r" % (r,))
    return int(p)


class TAHQuantCompressor:
    """The authors' compressor interface over libtahq.

    Constructed like theirs (high_precision_bits, low_precision_bits,
    scale_method='max', tile_size, high_precision_allocation_ratio); their
    pipeline code calls build_buffer, then compress + pack_data on the
    sending stage and unpack_data + decompress on the receiving one, or
    compress_send / recv_decompress. profile="paper-v1" (default) produces
    their wire layout (ref/SPEC.md Appendix A, tahq's deterministic
    numerics); profile="canonical" produces a format-1 message (header,
    CRC; alloc, tau, rounding, seed and meta may then be given too).

    compress(x) returns a 1-tuple (message,) with the message as a uint8
    tensor; pack_data(message) returns it; unpack_data(buffer) accepts a
    receive buffer at least as long as the message (as build_buffer's
    are) and returns (message,) trimmed to its length; decompress(message)
    returns the float32 tensor [B, S, C]. The codec runs on the CPU:
    tensors on another device are moved to the CPU for it and results are
    returned on self.device.
    """

    def __init__(self, high_precision_bits=4, low_precision_bits=3, scale_method="max",
                 tile_size=64, high_precision_allocation_ratio=0.8, *args, profile="paper-v1",
                 lib=None, **fields):
        if args:
            raise TypeError("TAHQuantCompressor: unexpected positional arguments %r" % (args,))
        if profile not in PROFILES:
            raise ValueError("profile: must be one of %s, got %r"
                             % (", ".join(repr(p) for p in PROFILES), profile))
        if scale_method != "max":
            raise ConfigError("scale_method", "only 'max' exists, got %r" % (scale_method,))
        names = {"tile": "tile_size", "hi_bits": "high_precision_bits",
                 "lo_bits": "low_precision_bits"}
        self.lib = _lib(lib)
        self.high_precision_bits = high_precision_bits
        self.low_precision_bits = low_precision_bits
        self.scale_method = scale_method
        self.tile_size = tile_size
        self.high_precision_allocation_ratio = high_precision_allocation_ratio
        self.profile = profile
        permille = _ratio_permille(high_precision_allocation_ratio)
        try:
            if profile == "paper-v1":
                if fields:
                    raise ConfigError(sorted(fields)[0], "profile 'paper-v1' fixes alloc, "
                                      "tau, rounding, seed and meta (use profile='canonical')")
                self._cfg = self.lib.paper_v1_config(tile=tile_size,
                                                     hi_bits=high_precision_bits,
                                                     lo_bits=low_precision_bits,
                                                     hi_permille=permille)
            else:
                self._cfg = self.lib.config(tile=tile_size, hi_bits=high_precision_bits,
                                            lo_bits=low_precision_bits, hi_permille=permille,
                                            **fields)
        except ConfigError as e:
            if e.field in names:  # report the caller's parameter name
                raise ConfigError(names[e.field], e.message.split(": ", 1)[1]) from None
            raise
        self.activ_shape = None
        self.device = torch.device("cpu")
        self.dtype = torch.float32
        self.buffers = []

    def build_buffer(self, batch_size, micro_batch_size, seq_length, embedding_dim,
                     device="cpu", dtype=None):
        """Fix the activation shape [micro_batch_size, seq_length,
        embedding_dim] and allocate one receive buffer per micro-batch (the
        largest message, every tile flagged)."""
        if dtype not in (None, torch.float32):
            raise TypeError("dtype: tahq encodes float32 activations, got %s" % (dtype,))
        for field, v in (("batch_size", batch_size), ("micro_batch_size", micro_batch_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError("%s: must be an integer >= 1, got %r" % (field, v))
        if batch_size % micro_batch_size:
            raise ValueError("batch_size %d is not a multiple of micro_batch_size %d"
                             % (batch_size, micro_batch_size))
        shape = (micro_batch_size, seq_length, embedding_dim)
        if self.profile == "paper-v1":
            cap = self.lib.paper_v1_encode_bound(shape, self._cfg)
        else:
            cap = self.lib.encode_bound(shape, self._cfg)
        self.activ_shape = shape
        self.micro_batch_size = micro_batch_size
        self.device = torch.device(device)
        self.dtype = torch.float32
        self.buffers = [torch.zeros(cap, dtype=torch.uint8, device=self.device)
                        for _ in range(batch_size // micro_batch_size)]

    def _shape_of(self, x):
        if x.dim() != 3:
            raise ShapeError("x", "must be [B, S, C], got %s" % (tuple(x.shape),))
        if self.activ_shape is not None and tuple(x.shape) != self.activ_shape:
            raise ShapeError("x", "has shape %s, build_buffer fixed %s"
                             % (tuple(x.shape), self.activ_shape))
        return tuple(x.shape)

    def compress(self, x):
        shape = self._shape_of(x)
        xc = x.detach()
        if xc.device.type != "cpu":
            xc = xc.to("cpu")
        xn = _cpu_f32(xc, "x")
        if self.profile == "paper-v1":
            msg = self.lib.encode_paper_v1(xn, self._cfg)
        else:
            msg = self.lib.encode(xn, self._cfg)
        if self.activ_shape is None:
            self.activ_shape = shape
        t = torch.frombuffer(bytearray(msg), dtype=torch.uint8)
        return (t.to(x.device) if x.device.type != "cpu" else t,)

    def pack_data(self, *data):
        if len(data) != 1 or not isinstance(data[0], torch.Tensor):
            raise TypeError("pack_data: takes the tuple compress() returned")
        return data[0]

    def unpack_data(self, y):
        if self.activ_shape is None and self.profile == "paper-v1":
            raise ValueError("unpack_data: the shape is unknown; call build_buffer first")
        yc = y.detach()
        if yc.device.type != "cpu":
            yc = yc.to("cpu")
        a = _u8_view(yc, "y")
        if self.profile == "paper-v1":
            n = self.lib.paper_v1_message_length(a, self.activ_shape, self._cfg)
        else:
            n = self.lib.message_length(a)
        return (yc.reshape(-1)[:n],)

    def decompress(self, *data):
        if len(data) != 1 or not isinstance(data[0], torch.Tensor):
            raise TypeError("decompress: takes the tuple unpack_data() returned")
        m = data[0].detach()
        if m.device.type != "cpu":
            m = m.to("cpu")
        a = _u8_view(m, "message")
        if self.profile == "paper-v1":
            if self.activ_shape is None:
                raise ValueError("decompress: the shape is unknown; call build_buffer first")
            y = self.lib.decode_paper_v1(a, self.activ_shape, self._cfg)
        else:
            y = self.lib.decode(a)
        t = torch.from_numpy(y)
        return t.to(self.device) if self.device.type != "cpu" else t

    def compress_send(self, x, i_micro_batch, comm, dst, stream=None):
        """compress + pack_data, then comm.send(message, dst=dst), with
        stream=stream when one is given (the authors' communicator takes it;
        torch.distributed, passed as comm, does not)."""
        comm.send(self.pack_data(*self.compress(x)), dst=dst, **_stream_arg(stream))

    def recv_decompress(self, i_micro_batch, comm, src, stream=None):
        """comm.recv into buffers[i_micro_batch], then unpack_data + decompress."""
        buf = self.buffers[i_micro_batch]
        comm.recv(buf, src=src, **_stream_arg(stream))
        x = self.decompress(*self.unpack_data(buf))
        buf.zero_()
        return x

"""tahq.torch: libtahq for PyTorch CPU float32 tensors.

    import torch, tahq.torch as tt
    msg = tt.encode(x)                          # CPU float32 [B, S, C] -> bytes (format 1)
    y = tt.decode(msg)                          # -> float32 tensor [B, S, C]
    b = tt.Boundary(backward="fixpoint")        # a pipeline boundary as a module
    y = b(x)                                    # forward: encode -> bytes -> decode
    c = tt.TAHQuantCompressor(high_precision_bits=4, low_precision_bits=3, tile_size=64,
                              high_precision_allocation_ratio=0.8)   # the authors' API

Tensors are shared with numpy (Tensor.numpy(), torch.from_numpy): no copies
beyond the codec's own buffers. Inputs must be float32 on the CPU (other
dtypes raise TypeError, other devices ValueError; nothing is converted
silently). Argument errors are tahq.ConfigError / tahq.ShapeError
(ValueErrors naming the field), library errors tahq.TahqError.
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
           "TAHQuantCompressor", "BACKWARD_MODES", "PROFILES"]

BACKWARD_MODES = ("straight-through", "fixpoint", "tahq")
PROFILES = ("canonical", "paper-v1")


def _lib(lib):
    return lib if lib is not None else _tahq.library()


def _cpu_f32(t, field):
    """The numpy view of a CPU float32 tensor (contiguous; detached)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError("%s: need a torch.Tensor, got %s" % (field, type(t).__name__))
    if t.dtype != torch.float32:
        raise TypeError("%s must be torch.float32 (got %s); convert explicitly"
                        % (field, t.dtype))
    if t.device.type != "cpu":
        raise ValueError("%s is on %s; the codec runs on the CPU: pass %s.cpu()"
                         % (field, t.device, field))
    return t.detach().contiguous().numpy()


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
def encode(x, lib=None, **fields):
    """Encode a CPU float32 tensor ([B, S, C], [rows, C] or [C]) into a
    format-1 message (bytes). Keyword fields as tahq.encode."""
    return _lib(lib).encode(_cpu_f32(x, "x"), **fields)


def decode(msg, lib=None, out=None):
    """Decode a format-1 message (bytes-like or uint8 tensor) into a float32
    tensor [B, S, C] (or into out, a CPU float32 tensor of B*S*C elements)."""
    o = None if out is None else _out_numpy(out)
    y = _lib(lib).decode(_u8_view(msg), out=o)
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
                 backward_meta="fp16", backward_config=None, lib=None, **fields):
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
        self.last_forward_bytes = 0
        self.last_backward_bytes = 0
        self.last_backward_raw_bytes = 0

    def extra_repr(self):
        return "profile=%r, backward=%r" % (self.profile, self.backward_mode)

    def send_forward(self, x):
        """x (CPU float32 tensor) -> (message bytes, decoded tensor)."""
        xn = _cpu_f32(x, "x")
        if self.profile == "canonical":
            msg = self.lib.encode(xn, self._cfg)
            y = self.lib.decode(msg)
        else:
            msg = self.lib.encode_paper_v1(xn, self._cfg)
            y = self.lib.decode_paper_v1(msg, xn.shape, self._cfg)
        self.last_forward_bytes = len(msg)
        return msg, torch.from_numpy(y).reshape(x.shape)

    def send_backward(self, g):
        """The gradient as the previous stage receives it."""
        self.last_backward_raw_bytes = g.numel() * 4
        if self.backward_mode == "straight-through":
            self.last_backward_bytes = 0
            return g
        gn = _cpu_f32(g, "grad")
        if self.backward_mode == "fixpoint":
            codes, steps = self.lib.fixpoint_encode(gn, self.backward_bits, self.backward_meta)
            out = self.lib.fixpoint_decode(codes, steps, self.backward_bits)
            C = gn.shape[-1]
            self.last_backward_bytes = _tahq.fixpoint_wire_bytes(gn.size // C, C,
                                                                 self.backward_bits,
                                                                 self.backward_meta)
        else:
            msg = self.lib.encode(gn, self._bcfg)
            out = self.lib.decode(msg)
            self.last_backward_bytes = len(msg)
        return torch.from_numpy(out).reshape(g.shape)

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
# Drop-in for the authors' compressor class
# ---------------------------------------------------------------------------
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
        """compress + pack_data, then comm.send(message, dst=dst, stream=stream)."""
        comm.send(self.pack_data(*self.compress(x)), dst=dst, stream=stream)

    def recv_decompress(self, i_micro_batch, comm, src, stream=None):
        """comm.recv into buffers[i_micro_batch], then unpack_data + decompress."""
        buf = self.buffers[i_micro_batch]
        comm.recv(buf, src=src, stream=stream)
        x = self.decompress(*self.unpack_data(buf))
        buf.zero_()
        return x

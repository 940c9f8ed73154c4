"""ctypes binding of libtahq (the shared library built as target tahq_shared).

    import numpy as np, tahq
    lib = tahq.Library("build/ref/libtahq.so")     # or $TAHQ_LIB
    msg = lib.encode(x)                                  # float32 [B, S, C] -> bytes (format 1)
    y = lib.decode(msg)                                  # bytes -> float32 [B, S, C]
    p = lib.encode_paper_v1(x)                           # the authors' headerless format
    y = lib.decode_paper_v1(p, x.shape)                  # needs shape and options

Every numeric step runs in libtahq; this module only moves buffers. A
library error raises TahqError, whose .status is the tahq_status code,
.name the status name ("err_crc", ...) and str() the library's message.
"""

import ctypes
import os

import numpy as np

__all__ = ["Library", "TahqError", "ALLOC", "ROUNDING", "META"]

ALLOC = {"none": 0, "token": 1, "tile": 2}
ROUNDING = {"nearest": 0, "stochastic": 1}
META = {"fp16": 0, "bf16": 1, "fp32": 2}


class TahqError(Exception):
    """A libtahq status other than TAHQ_OK."""

    def __init__(self, status, name, message, where=""):
        self.status = status
        self.name = name
        self.message = message
        text = "%s (%s)" % (message, name)
        super().__init__("%s: %s" % (where, text) if where else text)


class _Config(ctypes.Structure):
    _fields_ = [("tile", ctypes.c_uint32), ("hi_bits", ctypes.c_uint32),
                ("lo_bits", ctypes.c_uint32), ("hi_permille", ctypes.c_uint32),
                ("alloc", ctypes.c_int), ("tau", ctypes.c_float),
                ("rounding", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("meta", ctypes.c_int)]


class _Shape(ctypes.Structure):
    _fields_ = [("batch", ctypes.c_uint32), ("seq_len", ctypes.c_uint32),
                ("channels", ctypes.c_uint32)]


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint16), ("config", _Config), ("shape", _Shape),
                ("n_low", ctypes.c_uint64), ("n_flagged", ctypes.c_uint64),
                ("payload_bytes", ctypes.c_uint64), ("crc", ctypes.c_uint32)]


class _PaperConfig(ctypes.Structure):
    _fields_ = [("tile", ctypes.c_uint32), ("hi_bits", ctypes.c_uint32),
                ("lo_bits", ctypes.c_uint32), ("hi_permille", ctypes.c_uint32)]


_P = ctypes.POINTER
_u8p = _P(ctypes.c_uint8)
_f32p = _P(ctypes.c_float)
_size_p = _P(ctypes.c_size_t)


def _default_path():
    env = os.environ.get("TAHQ_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "libtahq.so"),
                 os.path.join(here, "..", "build", "ref", "libtahq.so")):
        if os.path.exists(cand):
            return cand
    return "libtahq.so"


def _shape3(shape):
    shape = tuple(int(d) for d in shape)
    if len(shape) == 2:
        shape = (1,) + shape
    elif len(shape) == 1:
        shape = (1, 1) + shape
    if len(shape) != 3:
        raise ValueError("shape must be [B, S, C], [rows, C] or [C]")
    return shape


def _as_f32(x):
    x = np.ascontiguousarray(x)
    if x.dtype != np.float32:
        raise TypeError("x must be float32 (got %s); convert explicitly" % x.dtype)
    return x


class Library:
    """libtahq loaded from path (default: $TAHQ_LIB, then next to this file)."""

    def __init__(self, path=None):
        self.path = path or _default_path()
        lib = ctypes.CDLL(self.path)
        self._lib = lib
        sig = {
            "tahq_strerror": (ctypes.c_char_p, [ctypes.c_int]),
            "tahq_status_name": (ctypes.c_char_p, [ctypes.c_int]),
            "tahq_config_default": (None, [_P(_Config)]),
            "tahq_encode_bound": (ctypes.c_int, [_P(_Config), _P(_Shape), _size_p]),
            "tahq_encode_workspace_size": (ctypes.c_int, [_P(_Config), _P(_Shape), _size_p]),
            "tahq_encode": (ctypes.c_int, [_P(_Config), _P(_Shape), _f32p, ctypes.c_void_p,
                                           ctypes.c_size_t, _u8p, ctypes.c_size_t, _size_p]),
            "tahq_parse_header": (ctypes.c_int, [_u8p, ctypes.c_size_t, _P(_Header)]),
            "tahq_decode": (ctypes.c_int, [_u8p, ctypes.c_size_t, _f32p, ctypes.c_size_t]),
            "tahq_paper_v1_config_default": (None, [_P(_PaperConfig)]),
            "tahq_paper_v1_encode_bound": (ctypes.c_int,
                                           [_P(_PaperConfig), _P(_Shape), _size_p]),
            "tahq_paper_v1_workspace_size": (ctypes.c_int,
                                             [_P(_PaperConfig), _P(_Shape), _size_p]),
            "tahq_paper_v1_encode": (ctypes.c_int,
                                     [_P(_PaperConfig), _P(_Shape), _f32p, ctypes.c_void_p,
                                      ctypes.c_size_t, _u8p, ctypes.c_size_t, _size_p]),
            "tahq_paper_v1_decode": (ctypes.c_int,
                                     [_u8p, ctypes.c_size_t, _P(_PaperConfig), _P(_Shape),
                                      _f32p, ctypes.c_size_t]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args

    # -- errors -------------------------------------------------------------
    def status_name(self, status):
        return self._lib.tahq_status_name(int(status)).decode()

    def strerror(self, status):
        return self._lib.tahq_strerror(int(status)).decode()

    def _check(self, status, where):
        if status != 0:
            raise TahqError(status, self.status_name(status), self.strerror(status), where)

    # -- format 1 -----------------------------------------------------------
    def config(self, tile=None, hi_bits=None, lo_bits=None, hi_permille=None, alloc=None,
               tau=None, rounding=None, seed=None, meta=None):
        """A tahq_config: tahq_config_default with the given fields replaced.
        alloc, rounding and meta take names ("token", "nearest", "fp16") or codes."""
        c = _Config()
        self._lib.tahq_config_default(ctypes.byref(c))
        for field, value, names in (("tile", tile, None), ("hi_bits", hi_bits, None),
                                    ("lo_bits", lo_bits, None),
                                    ("hi_permille", hi_permille, None),
                                    ("alloc", alloc, ALLOC), ("rounding", rounding, ROUNDING),
                                    ("seed", seed, None), ("meta", meta, META)):
            if value is not None:
                setattr(c, field, names[value] if names and isinstance(value, str) else value)
        if tau is not None:
            c.tau = float(tau)
        return c

    def encode(self, x, config=None, **fields):
        """Encode float32 x ([B, S, C], [rows, C] or [C]) into a format-1 message."""
        x = _as_f32(x)
        cfg = config if config is not None else self.config(**fields)
        B, S, C = _shape3(x.shape)
        shape = _Shape(B, S, C)
        cap, ws = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self._lib.tahq_encode_bound(ctypes.byref(cfg), ctypes.byref(shape),
                                                ctypes.byref(cap)), "encode")
        self._check(self._lib.tahq_encode_workspace_size(ctypes.byref(cfg), ctypes.byref(shape),
                                                         ctypes.byref(ws)), "encode")
        out = (ctypes.c_uint8 * max(cap.value, 1))()
        work = (ctypes.c_uint8 * max(ws.value, 1))()
        n = ctypes.c_size_t()
        st = self._lib.tahq_encode(ctypes.byref(cfg), ctypes.byref(shape),
                                   x.ctypes.data_as(_f32p), work, ws.value, out, cap.value,
                                   ctypes.byref(n))
        self._check(st, "encode")
        return bytes(out[:n.value])

    def parse_header(self, msg):
        """The validated header of a format-1 message as a dict."""
        buf = (ctypes.c_uint8 * max(len(msg), 1)).from_buffer_copy(msg or b"\0")
        h = _Header()
        self._check(self._lib.tahq_parse_header(buf, len(msg), ctypes.byref(h)), "parse_header")
        return {"version": h.version,
                "shape": (h.shape.batch, h.shape.seq_len, h.shape.channels),
                "tile": h.config.tile, "hi_bits": h.config.hi_bits,
                "lo_bits": h.config.lo_bits, "hi_permille": h.config.hi_permille,
                "alloc": h.config.alloc, "tau": h.config.tau, "rounding": h.config.rounding,
                "seed": h.config.seed, "meta": h.config.meta, "n_low": h.n_low,
                "n_flagged": h.n_flagged, "payload_bytes": h.payload_bytes, "crc": h.crc}

    def decode(self, msg):
        """Decode a format-1 message into a float32 array [B, S, C]."""
        msg = bytes(msg)
        shape = self.parse_header(msg)["shape"]
        y = np.empty(shape, dtype=np.float32)
        buf = (ctypes.c_uint8 * len(msg)).from_buffer_copy(msg)
        self._check(self._lib.tahq_decode(buf, len(msg), y.ctypes.data_as(_f32p), y.size),
                    "decode")
        return y

    # -- paper-v1 profile (ref/SPEC.md Appendix A) ---------------------------
    def paper_v1_config(self, tile=None, hi_bits=None, lo_bits=None, hi_permille=None):
        c = _PaperConfig()
        self._lib.tahq_paper_v1_config_default(ctypes.byref(c))
        for field, value in (("tile", tile), ("hi_bits", hi_bits), ("lo_bits", lo_bits),
                             ("hi_permille", hi_permille)):
            if value is not None:
                setattr(c, field, value)
        return c

    def encode_paper_v1(self, x, config=None, **fields):
        x = _as_f32(x)
        cfg = config if config is not None else self.paper_v1_config(**fields)
        B, S, C = _shape3(x.shape)
        shape = _Shape(B, S, C)
        cap, ws = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self._lib.tahq_paper_v1_encode_bound(ctypes.byref(cfg), ctypes.byref(shape),
                                                         ctypes.byref(cap)), "encode_paper_v1")
        self._check(self._lib.tahq_paper_v1_workspace_size(ctypes.byref(cfg),
                                                           ctypes.byref(shape),
                                                           ctypes.byref(ws)), "encode_paper_v1")
        out = (ctypes.c_uint8 * max(cap.value, 1))()
        work = (ctypes.c_uint8 * max(ws.value, 1))()
        n = ctypes.c_size_t()
        st = self._lib.tahq_paper_v1_encode(ctypes.byref(cfg), ctypes.byref(shape),
                                            x.ctypes.data_as(_f32p), work, ws.value, out,
                                            cap.value, ctypes.byref(n))
        self._check(st, "encode_paper_v1")
        return bytes(out[:n.value])

    def decode_paper_v1(self, msg, shape, config=None, **fields):
        """Decode a paper-v1 message; shape [B, S, C] and the configuration
        must be the encoder's (the format has no header)."""
        msg = bytes(msg)
        cfg = config if config is not None else self.paper_v1_config(**fields)
        B, S, C = _shape3(shape)
        sh = _Shape(B, S, C)
        y = np.empty((B, S, C), dtype=np.float32)
        buf = (ctypes.c_uint8 * max(len(msg), 1)).from_buffer_copy(msg or b"\0")
        st = self._lib.tahq_paper_v1_decode(buf, len(msg), ctypes.byref(cfg), ctypes.byref(sh),
                                            y.ctypes.data_as(_f32p), y.size)
        self._check(st, "decode_paper_v1")
        return y

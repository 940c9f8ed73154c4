"""tahq: Python binding of libtahq, the bit-exact TAH-Quant activation codec.

    import numpy as np, tahq
    msg = tahq.encode(x)                           # float32 [B, S, C] -> bytes (format 1)
    y = tahq.decode(msg)                           # bytes -> float32 [B, S, C]
    h = tahq.parse_header(msg)                     # h["config"] is what encode takes
    b = tahq.error_bound(msg)                      # float64 [B, S, C], |x - y| <= b
    p = tahq.encode_paper_v1(x)                    # the authors' headerless format
    y = tahq.decode_paper_v1(p, x.shape)           # needs shape and options

The module-level functions use one shared Library, loaded on first use from
$TAHQ_LIB, else the libtahq.so inside this package (an installed wheel), else
../build/ref/libtahq.so of a source checkout. tahq.Library(path) loads a
given file. tahq.torch has the same codec for CPU torch tensors, an autograd
boundary and a drop-in for the authors' compressor.

Every numeric step runs in libtahq; this module checks arguments and passes
buffers (numpy arrays in and out, no copies in Python). An argument the
tahq program would refuse raises ConfigError or ShapeError, which are
ValueErrors naming the field; a library error raises TahqError, whose
.status is the tahq_status code, .name the status name ("err_crc", ...)
and str() the library's message.
"""

import ctypes
import math
import numbers
import os
import sys
import threading

import numpy as np

__all__ = [
    "Library", "library", "find_library", "TahqError", "ConfigError", "ShapeError",
    "LibraryNotFoundError", "ALLOC", "ROUNDING", "META", "CONFIG_FIELDS",
    "TILE_INFO_DTYPE", "encode", "encode_into", "decode", "parse_header", "message_length",
    "error_bound", "tile_infos", "encode_paper_v1", "decode_paper_v1",
    "paper_v1_message_length", "fixpoint_encode", "fixpoint_decode", "fixpoint_bound",
    "fixpoint_wire_bytes",
]

try:  # the installed distribution's version; a source checkout has none
    from importlib.metadata import version as _dist_version
    __version__ = _dist_version("tahq")
except Exception:  # noqa: BLE001 - any failure means "not installed"
    __version__ = "0+source"

# Names of the enumerations, as the tahq program spells them (--alloc etc.).
ALLOC = {"none": 0, "token": 1, "tile": 2, "gain": 3}
ROUNDING = {"nearest": 0, "stochastic": 1}
META = {"fp16": 0, "bf16": 1, "fp32": 2}
_NAMES = {"alloc": ALLOC, "rounding": ROUNDING, "meta": META}
_CODES = {f: {v: k for k, v in d.items()} for f, d in _NAMES.items()}
META_BYTES = {"fp16": 2, "bf16": 2, "fp32": 4}

# The keyword arguments of encode (format 1), in header order.
CONFIG_FIELDS = ("tile", "hi_bits", "lo_bits", "hi_permille", "alloc", "tau", "rounding",
                 "seed", "meta")
PAPER_V1_FIELDS = ("tile", "hi_bits", "lo_bits", "hi_permille")

HEADER_BYTES = 72
TILE_MIN, TILE_MAX, BITS_MAX = 8, 256, 8
MAX_ELEMENTS = 1 << 40
_U32_MAX = (1 << 32) - 1
_U64_MAX = (1 << 64) - 1
_STATUS_CONFIG, _STATUS_SHAPE = 2, 3

# tahq_tile_info (include/tahq.h): bits, flagged, pivot (uint32), zero, scale (float).
TILE_INFO_DTYPE = np.dtype([("bits", "<u4"), ("flagged", "<u4"), ("pivot", "<u4"),
                            ("zero", "<f4"), ("scale", "<f4")])


class TahqError(Exception):
    """A libtahq status other than TAHQ_OK."""

    def __init__(self, status, name, message, where=""):
        self.status = status
        self.name = name
        self.message = message
        text = "%s (%s)" % (message, name)
        super().__init__("%s: %s" % (where, text) if where else text)


class ConfigError(TahqError, ValueError):
    """An argument outside the range the tahq program accepts (status
    err_config). .field names the argument."""

    def __init__(self, field, text, where=""):
        self.field = field
        super().__init__(_STATUS_CONFIG, "err_config", "%s: %s" % (field, text), where)


class ShapeError(TahqError, ValueError):
    """A tensor or shape the codec cannot take (status err_shape). .field
    names the argument."""

    def __init__(self, field, text, where=""):
        self.field = field
        super().__init__(_STATUS_SHAPE, "err_shape", "%s: %s" % (field, text), where)


class LibraryNotFoundError(OSError):
    """libtahq could not be loaded; the message lists what was tried."""


# ---------------------------------------------------------------------------
# C structures (include/tahq.h)
# ---------------------------------------------------------------------------
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


class _TileInfo(ctypes.Structure):
    _fields_ = [("bits", ctypes.c_uint32), ("flagged", ctypes.c_uint32),
                ("pivot", ctypes.c_uint32), ("zero", ctypes.c_float),
                ("scale", ctypes.c_float)]


assert ctypes.sizeof(_TileInfo) == TILE_INFO_DTYPE.itemsize

_P = ctypes.POINTER
_vp = ctypes.c_void_p
_sz = ctypes.c_size_t
_size_p = _P(ctypes.c_size_t)
_u64 = ctypes.c_uint64
_u32 = ctypes.c_uint32

_SIGNATURES = {
    "tahq_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "tahq_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "tahq_config_default": (None, [_P(_Config)]),
    "tahq_check_config": (ctypes.c_int, [_P(_Config)]),
    "tahq_check_shape": (ctypes.c_int, [_P(_Config), _P(_Shape)]),
    "tahq_encode_bound": (ctypes.c_int, [_P(_Config), _P(_Shape), _size_p]),
    "tahq_encode_workspace_size": (ctypes.c_int, [_P(_Config), _P(_Shape), _size_p]),
    "tahq_encode": (ctypes.c_int, [_P(_Config), _P(_Shape), _vp, _vp, _sz, _vp, _sz, _size_p]),
    "tahq_parse_header": (ctypes.c_int, [_vp, _sz, _P(_Header)]),
    "tahq_decode": (ctypes.c_int, [_vp, _sz, _vp, _sz]),
    "tahq_error_bound": (ctypes.c_int, [_vp, _sz, _vp, _sz]),
    "tahq_tile_infos": (ctypes.c_int, [_vp, _sz, _vp, _sz]),
    "tahq_fixpoint_encode": (ctypes.c_int, [_vp, _u64, _u32, _u32, ctypes.c_int, _vp, _vp]),
    "tahq_fixpoint_decode": (ctypes.c_int, [_vp, _vp, _u64, _u32, _u32, _vp]),
    "tahq_paper_v1_config_default": (None, [_P(_PaperConfig)]),
    "tahq_paper_v1_check": (ctypes.c_int, [_P(_PaperConfig), _P(_Shape)]),
    "tahq_paper_v1_low_count": (ctypes.c_uint64, [_u32, _u32]),
    "tahq_paper_v1_encode_bound": (ctypes.c_int, [_P(_PaperConfig), _P(_Shape), _size_p]),
    "tahq_paper_v1_message_size": (ctypes.c_int,
                                   [_P(_PaperConfig), _P(_Shape), _u64, _size_p]),
    "tahq_paper_v1_workspace_size": (ctypes.c_int, [_P(_PaperConfig), _P(_Shape), _size_p]),
    "tahq_paper_v1_encode": (ctypes.c_int, [_P(_PaperConfig), _P(_Shape), _vp, _vp, _sz, _vp,
                                            _sz, _size_p]),
    "tahq_paper_v1_decode": (ctypes.c_int, [_vp, _sz, _P(_PaperConfig), _P(_Shape), _vp, _sz]),
}

# ---------------------------------------------------------------------------
# Finding the library
# ---------------------------------------------------------------------------
_HERE = os.path.dirname(os.path.abspath(__file__))
_LIB_NAMES = ("libtahq.dylib", "libtahq.so") if sys.platform == "darwin" else ("libtahq.so",)


def _candidates():
    """(where, path) pairs in lookup order."""
    env = os.environ.get("TAHQ_LIB")
    if env:
        return [("$TAHQ_LIB", env)]
    out = [("package", os.path.join(_HERE, n)) for n in _LIB_NAMES]
    checkout = os.path.normpath(os.path.join(_HERE, "..", "..", "build", "ref"))
    out += [("source checkout", os.path.join(checkout, n)) for n in _LIB_NAMES]
    return out


def _load(path):
    lib = ctypes.CDLL(path)
    missing = [n for n in _SIGNATURES if not hasattr(lib, n)]
    if missing:
        raise OSError("not a compatible libtahq (missing %s)" % ", ".join(missing[:4]))
    for name, (res, args) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib


def find_library():
    """Load libtahq by the lookup order; returns (path, CDLL).
    Raises LibraryNotFoundError listing every path tried and why it failed."""
    tried = []
    cands = _candidates()
    for where, path in cands:
        if not os.path.exists(path):
            tried.append("  %s: %s (no such file)" % (where, path))
            continue
        try:
            return path, _load(path)
        except OSError as e:
            tried.append("  %s: %s (%s)" % (where, path, e))
    if cands[0][0] == "$TAHQ_LIB":
        fix = ("TAHQ_LIB names the file to load; point it at a libtahq.so built by "
               "'cmake --build build --target tahq_shared' (build/ref/libtahq.so), "
               "or unset it to use the one inside the package")
    else:
        fix = ("install the package with 'pip install <tahq source>' (it builds and carries "
               "libtahq.so), or build the library in the checkout with 'cmake -S . -B build && "
               "cmake --build build --target tahq_shared', or set TAHQ_LIB to a libtahq.so")
    raise LibraryNotFoundError("libtahq could not be loaded; tried:\n%s\nFix: %s"
                               % ("\n".join(tried), fix))


# ---------------------------------------------------------------------------
# Argument checks (the tahq program's rules, cli/codec_ops.c and
# tahq_check_config)
# ---------------------------------------------------------------------------
def _integer(field, v, lo, hi, rule, err=ConfigError):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise err(field, "must be %s, got %r (%s)" % (rule, v, type(v).__name__))
    v = int(v)
    if not lo <= v <= hi:
        raise err(field, "must be %s, got %d" % (rule, v))
    return v


def _tile(field, v):
    rule = "a power of two %d..%d" % (TILE_MIN, TILE_MAX)
    v = _integer(field, v, TILE_MIN, TILE_MAX, rule)
    if v & (v - 1):
        raise ConfigError(field, "must be %s, got %d" % (rule, v))
    return v


def _name(field, v):
    names = _NAMES[field]
    listed = ", ".join(repr(n) for n in names)
    if isinstance(v, str):
        if v not in names:
            raise ConfigError(field, "must be one of %s, got %r" % (listed, v))
        return names[v]
    if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) \
            and int(v) in _CODES[field]:
        return int(v)
    raise ConfigError(field, "must be one of %s (or its code 0..%d), got %r"
                      % (listed, len(names) - 1, v))


def _tau(v):
    field = "tau"
    if isinstance(v, str):
        if v in ("inf", "+inf", "infinity"):
            return math.inf
        raise ConfigError(field, "must be a number >= 0 or 'inf', got %r" % (v,))
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise ConfigError(field, "must be a number >= 0 or inf, got %r (%s)"
                          % (v, type(v).__name__))
    f = float(v)
    if not f >= 0.0:  # negative or NaN
        raise ConfigError(field, "must be a number >= 0 or inf, got %r" % (f,))
    if math.isfinite(f):
        with np.errstate(over="ignore"):
            f32 = np.float32(f)
        if not np.isfinite(f32):
            raise ConfigError(field, "%r exceeds the binary32 range (use inf for never)" % (f,))
    return f


def _check_config_fields(tile, hi_bits, lo_bits, hi_permille, alloc, tau, rounding, seed,
                         meta, c):
    """Validate the given fields (None = keep c's value) into c."""
    if tile is not None:
        c.tile = _tile("tile", tile)
    if hi_bits is not None:
        c.hi_bits = _integer("hi_bits", hi_bits, 1, BITS_MAX, "an integer 1..%d" % BITS_MAX)
    if lo_bits is not None:
        c.lo_bits = _integer("lo_bits", lo_bits, 1, BITS_MAX, "an integer 1..%d" % BITS_MAX)
    if c.lo_bits > c.hi_bits:
        raise ConfigError("lo_bits", "must be at most hi_bits (%d), got %d"
                          % (c.hi_bits, c.lo_bits))
    if hi_permille is not None:
        c.hi_permille = _integer("hi_permille", hi_permille, 0, 1000,
                                 "permille, an integer 0..1000")
    if alloc is not None:
        c.alloc = _name("alloc", alloc)
    if tau is not None:
        c.tau = _tau(tau)
    if rounding is not None:
        c.rounding = _name("rounding", rounding)
    if seed is not None:
        c.seed = _integer("seed", seed, 0, _U64_MAX, "an integer 0..2^64-1")
    if meta is not None:
        c.meta = _name("meta", meta)
    return c


def _shape3(shape, field):
    """[B, S, C] from a shape of 1..3 dimensions (C last; 2-D is [rows, C])."""
    try:
        dims = tuple(shape)
    except TypeError:
        raise ShapeError(field, "must be a sequence of 1 to 3 dimensions, got %r" % (shape,))
    if not 1 <= len(dims) <= 3:
        raise ShapeError(field, "must have 1 to 3 dimensions ([B, S, C], [rows, C] or [C]), "
                                "got %d" % len(dims))
    dims = tuple(_integer(field, d, 1, _U32_MAX, "dimensions 1..2^32-1", ShapeError)
                 for d in dims)
    return (1,) * (3 - len(dims)) + dims


def _f32_array(x, field):
    if not isinstance(x, np.ndarray):
        raise TypeError("%s: need a numpy float32 array, got %s" % (field, type(x).__name__))
    if x.dtype != np.float32:
        raise TypeError("%s must be float32 (got %s); convert explicitly" % (field, x.dtype))
    return np.ascontiguousarray(x)  # no copy when already contiguous


_EMPTY = np.zeros(1, dtype=np.uint8)


def _in_bytes(msg, field="msg"):
    """A uint8 view of a bytes-like message (no copy) and its address."""
    if isinstance(msg, np.ndarray):
        if msg.dtype != np.uint8 or msg.ndim != 1:
            raise TypeError("%s: need a 1-D uint8 array or a bytes-like object, got %s %s"
                            % (field, msg.dtype, msg.shape))
        a = np.ascontiguousarray(msg)
    else:
        try:
            mv = memoryview(msg)
        except TypeError:
            raise TypeError("%s: need a bytes-like object (bytes, bytearray, memoryview, "
                            "uint8 array), got %s" % (field, type(msg).__name__))
        if not mv.contiguous:
            raise TypeError("%s: the buffer is not contiguous" % field)
        a = np.frombuffer(mv, dtype=np.uint8) if mv.nbytes else _EMPTY[:0]
    ptr = a.ctypes.data if a.size else _EMPTY.ctypes.data
    return a, ptr


def _out_array(out, shape, dtype, field="out"):
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray) or out.dtype != dtype:
        raise TypeError("%s: need a numpy %s array" % (field, np.dtype(dtype).name))
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("%s: must be C-contiguous and writeable" % field)
    if out.size != int(np.prod(shape)):
        raise ShapeError(field, "has %d elements, the message has %d"
                         % (out.size, int(np.prod(shape))))
    return out


def _out_bytes(out, need, field="out"):
    try:
        mv = memoryview(out)
    except TypeError:
        raise TypeError("%s: need a writeable bytes-like object" % field)
    if mv.readonly or not mv.contiguous:
        raise ValueError("%s: must be writeable and contiguous" % field)
    if mv.nbytes < need:
        raise ValueError("%s: holds %d bytes, the encoder needs %d (its bound)"
                         % (field, mv.nbytes, need))
    a = np.frombuffer(mv, dtype=np.uint8)
    return a


# ---------------------------------------------------------------------------
# The library
# ---------------------------------------------------------------------------
class Library:
    """libtahq loaded from path (default: find_library()'s lookup order)."""

    def __init__(self, path=None):
        if path is None:
            self.path, self._lib = find_library()
        else:
            if not os.path.exists(path):
                raise LibraryNotFoundError(
                    "libtahq: %s: no such file (build it with 'cmake --build build --target "
                    "tahq_shared', or omit the path to use the package's own)" % path)
            try:
                self._lib = _load(path)
            except OSError as e:
                raise LibraryNotFoundError("libtahq: %s could not be loaded: %s" % (path, e))
            self.path = path

    def __repr__(self):
        return "tahq.Library(%r)" % self.path

    # -- errors -------------------------------------------------------------
    def status_name(self, status):
        return self._lib.tahq_status_name(int(status)).decode()

    def strerror(self, status):
        return self._lib.tahq_strerror(int(status)).decode()

    def _check(self, status, where):
        if status != 0:
            raise TahqError(status, self.status_name(status), self.strerror(status), where)

    # -- configuration -------------------------------------------------------
    def config(self, tile=None, hi_bits=None, lo_bits=None, hi_permille=None, alloc=None,
               tau=None, rounding=None, seed=None, meta=None):
        """A tahq_config: tahq_config_default with the given fields replaced.
        alloc, rounding and meta take names ("token", "nearest", "fp16"; their
        integer codes work too). Raises ConfigError naming a bad field."""
        c = _Config()
        self._lib.tahq_config_default(ctypes.byref(c))
        _check_config_fields(tile, hi_bits, lo_bits, hi_permille, alloc, tau, rounding, seed,
                             meta, c)
        self._check(self._lib.tahq_check_config(ctypes.byref(c)), "config")
        return c

    @staticmethod
    def config_dict(c):
        """The fields of a tahq_config as encode's keyword arguments (names)."""
        return {"tile": c.tile, "hi_bits": c.hi_bits, "lo_bits": c.lo_bits,
                "hi_permille": c.hi_permille, "alloc": _CODES["alloc"].get(c.alloc, c.alloc),
                "tau": float(c.tau), "rounding": _CODES["rounding"].get(c.rounding, c.rounding),
                "seed": int(c.seed), "meta": _CODES["meta"].get(c.meta, c.meta)}

    def _resolve(self, config, fields):
        if config is None:
            return self.config(**fields)
        if fields:
            raise ValueError("give either config or keyword fields (%s), not both"
                             % ", ".join(sorted(fields)))
        if isinstance(config, dict):
            return self.config(**config)
        if not isinstance(config, _Config):
            raise TypeError("config: need the result of config() or a dict of its fields")
        self._check(self._lib.tahq_check_config(ctypes.byref(config)), "config")
        return config

    def _shape_for(self, cfg, dims, field="x"):
        B, S, C = _shape3(dims, field)
        if C % cfg.tile:
            raise ShapeError(field, "channels C=%d must be a multiple of tile %d"
                             % (C, cfg.tile))
        if B * S * C > MAX_ELEMENTS:
            raise ShapeError(field, "B*S*C = %d exceeds 2^40 elements" % (B * S * C))
        return _Shape(B, S, C)

    # -- format 1 -----------------------------------------------------------
    def encode_bound(self, shape, config=None, **fields):
        """Largest message encode can produce for this shape and configuration."""
        cfg = self._resolve(config, fields)
        sh = self._shape_for(cfg, shape, "shape")
        cap = ctypes.c_size_t()
        self._check(self._lib.tahq_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                ctypes.byref(cap)), "encode_bound")
        return cap.value

    def _encode_raw(self, x, cfg, out_arr):
        """Encode into out_arr (uint8, >= bound); returns the length."""
        sh = self._shape_for(cfg, x.shape)
        cap, ws = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self._lib.tahq_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                ctypes.byref(cap)), "encode")
        self._check(self._lib.tahq_encode_workspace_size(ctypes.byref(cfg), ctypes.byref(sh),
                                                         ctypes.byref(ws)), "encode")
        if out_arr is None:
            out_arr = np.empty(max(cap.value, 1), dtype=np.uint8)
        elif out_arr.size < cap.value:
            raise ValueError("out: holds %d bytes, the encoder needs %d (its bound)"
                             % (out_arr.size, cap.value))
        work = np.empty(max(ws.value, 1), dtype=np.uint8)
        n = ctypes.c_size_t()
        st = self._lib.tahq_encode(ctypes.byref(cfg), ctypes.byref(sh), x.ctypes.data,
                                   work.ctypes.data, ws.value, out_arr.ctypes.data,
                                   out_arr.size, ctypes.byref(n))
        self._check(st, "encode")
        return out_arr, n.value

    def encode(self, x, config=None, **fields):
        """Encode float32 x ([B, S, C], [rows, C] or [C]) into a format-1
        message (bytes). Keyword fields: CONFIG_FIELDS."""
        x = _f32_array(x, "x")
        cfg = self._resolve(config, fields)
        buf, n = self._encode_raw(x, cfg, None)
        return ctypes.string_at(buf.ctypes.data, n)

    def encode_into(self, x, out, config=None, **fields):
        """Encode into the writeable buffer out (at least encode_bound bytes);
        returns the message length. Nothing is written when an argument is bad."""
        x = _f32_array(x, "x")
        cfg = self._resolve(config, fields)
        a = _out_bytes(out, 0)
        _, n = self._encode_raw(x, cfg, a)
        return n

    def parse_header(self, msg):
        """The validated header of a format-1 message as a dict. h["config"]
        holds encode's keyword arguments (names for alloc, rounding, meta);
        the same fields are also at the top level."""
        a, ptr = _in_bytes(msg)
        h = _Header()
        self._check(self._lib.tahq_parse_header(ptr, a.size, ctypes.byref(h)), "parse_header")
        cfg = self.config_dict(h.config)
        d = {"version": h.version,
             "shape": (h.shape.batch, h.shape.seq_len, h.shape.channels),
             "config": cfg}
        d.update(cfg)
        d.update({"n_low": h.n_low, "n_flagged": h.n_flagged, "payload_bytes": h.payload_bytes,
                  "crc": h.crc, "bytes": HEADER_BYTES + h.payload_bytes})
        return d

    @staticmethod
    def message_length(buf):
        """Length of the format-1 message at the start of buf (a receive buffer
        may be longer), from its header's payload_bytes. Not validated; decode
        validates."""
        a, _ = _in_bytes(buf, "buf")
        if a.size < HEADER_BYTES:
            raise TahqError(7, "err_truncated", "buf: %d bytes, shorter than a header"
                            % a.size, "message_length")
        if a[:4].tobytes() != b"TAHQ":
            raise TahqError(8, "err_magic", "buf: first four bytes are not TAHQ",
                            "message_length")
        n = HEADER_BYTES + int(a[56:64].view("<u8")[0])
        if n > a.size:
            raise TahqError(7, "err_truncated", "buf: %d bytes, the header declares %d"
                            % (a.size, n), "message_length")
        return n

    def _header_shape(self, a, ptr, where):
        h = _Header()
        self._check(self._lib.tahq_parse_header(ptr, a.size, ctypes.byref(h)), where)
        return h, (h.shape.batch, h.shape.seq_len, h.shape.channels)

    def decode(self, msg, out=None):
        """Decode a format-1 message into a float32 array [B, S, C] (or into
        out, a float32 array with B*S*C elements, which is returned)."""
        a, ptr = _in_bytes(msg)
        _, shape = self._header_shape(a, ptr, "decode")
        y = _out_array(out, shape, np.float32)
        self._check(self._lib.tahq_decode(ptr, a.size, y.ctypes.data, y.size), "decode")
        return y

    def error_bound(self, msg, out=None):
        """Per-element error bound (SPEC section 6) of a message: float64
        [B, S, C] with |x - decode(msg)| <= bound for the x that made it."""
        a, ptr = _in_bytes(msg)
        _, shape = self._header_shape(a, ptr, "error_bound")
        b = _out_array(out, shape, np.float64)
        self._check(self._lib.tahq_error_bound(ptr, a.size, b.ctypes.data, b.size),
                    "error_bound")
        return b

    def tile_infos(self, msg):
        """Per-tile information: a structured array [B, S, C/G] of
        TILE_INFO_DTYPE (bits, flagged, pivot, zero, scale)."""
        a, ptr = _in_bytes(msg)
        h, (B, S, C) = self._header_shape(a, ptr, "tile_infos")
        info = np.empty((B, S, C // h.config.tile), dtype=TILE_INFO_DTYPE)
        self._check(self._lib.tahq_tile_infos(ptr, a.size, info.ctypes.data, info.size),
                    "tile_infos")
        return info

    # -- paper-v1 profile (ref/SPEC.md Appendix A) ---------------------------
    def paper_v1_config(self, tile=None, hi_bits=None, lo_bits=None, hi_permille=None):
        """A tahq_paper_v1_config (defaults G=64, 4/3 bits, r=800); lo_bits
        may exceed hi_bits in this profile."""
        c = _PaperConfig()
        self._lib.tahq_paper_v1_config_default(ctypes.byref(c))
        if tile is not None:
            c.tile = _tile("tile", tile)
        for field, value in (("hi_bits", hi_bits), ("lo_bits", lo_bits)):
            if value is not None:
                setattr(c, field, _integer(field, value, 1, BITS_MAX,
                                           "an integer 1..%d" % BITS_MAX))
        if hi_permille is not None:
            c.hi_permille = _integer("hi_permille", hi_permille, 0, 1000,
                                     "permille, an integer 0..1000")
        return c

    def _resolve_pv1(self, config, fields):
        if config is None:
            return self.paper_v1_config(**fields)
        if fields:
            raise ValueError("give either config or keyword fields (%s), not both"
                             % ", ".join(sorted(fields)))
        if isinstance(config, dict):
            return self.paper_v1_config(**config)
        if not isinstance(config, _PaperConfig):
            raise TypeError("config: need the result of paper_v1_config() or a dict")
        return config

    def _pv1_shape(self, cfg, dims, field):
        B, S, C = _shape3(dims, field)
        if C % cfg.tile:
            raise ShapeError(field, "channels C=%d must be a multiple of tile %d"
                             % (C, cfg.tile))
        if B * S * C > MAX_ELEMENTS:
            raise ShapeError(field, "B*S*C = %d exceeds 2^40 elements" % (B * S * C))
        sh = _Shape(B, S, C)
        self._check(self._lib.tahq_paper_v1_check(ctypes.byref(cfg), ctypes.byref(sh)),
                    "paper_v1")
        return sh

    def paper_v1_encode_bound(self, shape, config=None, **fields):
        cfg = self._resolve_pv1(config, fields)
        sh = self._pv1_shape(cfg, shape, "shape")
        cap = ctypes.c_size_t()
        self._check(self._lib.tahq_paper_v1_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                         ctypes.byref(cap)), "paper_v1")
        return cap.value

    def encode_paper_v1(self, x, config=None, **fields):
        """Encode float32 x in the authors' headerless layout (bytes)."""
        x = _f32_array(x, "x")
        cfg = self._resolve_pv1(config, fields)
        sh = self._pv1_shape(cfg, x.shape, "x")
        cap, ws = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self._lib.tahq_paper_v1_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                         ctypes.byref(cap)), "encode_paper_v1")
        self._check(self._lib.tahq_paper_v1_workspace_size(ctypes.byref(cfg),
                                                           ctypes.byref(sh),
                                                           ctypes.byref(ws)), "encode_paper_v1")
        out = np.empty(max(cap.value, 1), dtype=np.uint8)
        work = np.empty(max(ws.value, 1), dtype=np.uint8)
        n = ctypes.c_size_t()
        st = self._lib.tahq_paper_v1_encode(ctypes.byref(cfg), ctypes.byref(sh), x.ctypes.data,
                                            work.ctypes.data, ws.value, out.ctypes.data,
                                            out.size, ctypes.byref(n))
        self._check(st, "encode_paper_v1")
        return ctypes.string_at(out.ctypes.data, n.value)

    def decode_paper_v1(self, msg, shape, config=None, out=None, **fields):
        """Decode a paper-v1 message; shape [B, S, C] and the configuration
        must be the encoder's (the format has no header)."""
        a, ptr = _in_bytes(msg)
        cfg = self._resolve_pv1(config, fields)
        sh = self._pv1_shape(cfg, shape, "shape")
        y = _out_array(out, (sh.batch, sh.seq_len, sh.channels), np.float32)
        st = self._lib.tahq_paper_v1_decode(ptr, a.size, ctypes.byref(cfg), ctypes.byref(sh),
                                            y.ctypes.data, y.size)
        self._check(st, "decode_paper_v1")
        return y

    def paper_v1_message_length(self, buf, shape, config=None, **fields):
        """Length of the paper-v1 message at the start of buf (for a receive
        buffer larger than the message): the fixed fields' size plus the
        pivots of the flagged tiles counted in the tile-flag field (A.3)."""
        a, _ = _in_bytes(buf, "buf")
        cfg = self._resolve_pv1(config, fields)
        sh = self._pv1_shape(cfg, shape, "shape")
        B, S, C = sh.batch, sh.seq_len, sh.channels
        n_low = self._lib.tahq_paper_v1_low_count(S, cfg.hi_permille)
        N = B * S * (C // cfg.tile)
        flags_at = B * C * (n_low * cfg.lo_bits + (S - n_low) * cfg.hi_bits) + 32 * N + B * S
        end = flags_at + N
        if a.size * 8 < end:
            raise TahqError(7, "err_truncated", "buf: %d bytes, the fixed fields need %d"
                            % (a.size, (end + 7) // 8), "paper_v1_message_length")
        bits = np.unpackbits(a[flags_at // 8:(end + 7) // 8])
        n_f = int(bits[flags_at % 8:flags_at % 8 + N].sum())
        size = ctypes.c_size_t()
        self._check(self._lib.tahq_paper_v1_message_size(ctypes.byref(cfg), ctypes.byref(sh),
                                                         n_f, ctypes.byref(size)),
                    "paper_v1_message_length")
        if size.value > a.size:
            raise TahqError(7, "err_truncated", "buf: %d bytes, the message needs %d"
                            % (a.size, size.value), "paper_v1_message_length")
        return size.value

    # -- fixpoint quantizer (SPEC section 7.2) -------------------------------
    @staticmethod
    def _fix_bits(bits):
        return _integer("bits", bits, 2, 8, "an integer 2..8")

    def fixpoint_encode(self, g, bits=6, meta="fp16"):
        """Per-channel symmetric quantizer of float32 g [..., C] (channels
        last, rows = everything before): returns (codes, steps), codes uint8
        of g's shape holding q + 2^(bits-1), steps float32 [C]."""
        g = _f32_array(g, "g")
        bits = self._fix_bits(bits)
        m = _name("meta", meta)
        if g.ndim < 1 or g.size == 0:
            raise ShapeError("g", "must have at least one row and one channel, got %s"
                             % (g.shape,))
        C = g.shape[-1]
        rows = g.size // C
        if C > _U32_MAX:
            raise ShapeError("g", "C=%d exceeds 2^32-1" % C)
        codes = np.empty(g.shape, dtype=np.uint8)
        steps = np.empty(C, dtype=np.float32)
        st = self._lib.tahq_fixpoint_encode(g.ctypes.data, rows, C, bits, m, codes.ctypes.data,
                                            steps.ctypes.data)
        self._check(st, "fixpoint_encode")
        return codes, steps

    def fixpoint_decode(self, codes, steps, bits=6, out=None):
        """Inverse of fixpoint_encode: float32 of codes' shape."""
        bits = self._fix_bits(bits)
        if not isinstance(codes, np.ndarray) or codes.dtype != np.uint8 or codes.ndim < 1:
            raise TypeError("codes: need a uint8 array [..., C]")
        steps = _f32_array(steps, "steps")
        codes = np.ascontiguousarray(codes)
        C = codes.shape[-1]
        if steps.shape != (C,):
            raise ShapeError("steps", "must have shape (%d,), got %s" % (C, steps.shape))
        if codes.size == 0:
            raise ShapeError("codes", "must have at least one row and one channel")
        y = _out_array(out, codes.shape, np.float32)
        st = self._lib.tahq_fixpoint_decode(codes.ctypes.data, steps.ctypes.data,
                                            codes.size // C, C, bits, y.ctypes.data)
        self._check(st, "fixpoint_decode")
        return y


def fixpoint_bound(steps, bits):
    """SPEC section 7.2 per-channel bound on |g - decoded|, float64 [C]:
    h * (1/2 + 2 (L + 1) u) + 2^-149 with L = 2^(bits-1) - 1, u = 2^-24."""
    bits = _integer("bits", bits, 2, 8, "an integer 2..8")
    L = (1 << (bits - 1)) - 1
    h = np.asarray(steps, dtype=np.float64)
    return h * (0.5 + 2.0 * (L + 1) * 2.0 ** -24) + 2.0 ** -149


def fixpoint_wire_bytes(rows, channels, bits, meta="fp16"):
    """Bytes the fixpoint quantizer puts on a wire: rows*C*bits bits packed,
    plus C metadata values."""
    m = _CODES["meta"][_name("meta", meta)]
    return (rows * channels * bits + 7) // 8 + channels * META_BYTES[m]


# ---------------------------------------------------------------------------
# Module-level functions on one shared Library
# ---------------------------------------------------------------------------
_default = None
_default_lock = threading.Lock()


def library():
    """The shared Library (loaded on first use; LibraryNotFoundError says
    what was tried)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Library()
    return _default


def _delegate(name):
    def fn(*args, **kwargs):
        return getattr(library(), name)(*args, **kwargs)
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = getattr(Library, name).__doc__
    return fn


encode = _delegate("encode")
encode_into = _delegate("encode_into")
encode_bound = _delegate("encode_bound")
decode = _delegate("decode")
parse_header = _delegate("parse_header")
message_length = Library.message_length
error_bound = _delegate("error_bound")
tile_infos = _delegate("tile_infos")
config = _delegate("config")
paper_v1_config = _delegate("paper_v1_config")
encode_paper_v1 = _delegate("encode_paper_v1")
decode_paper_v1 = _delegate("decode_paper_v1")
paper_v1_encode_bound = _delegate("paper_v1_encode_bound")
paper_v1_message_length = _delegate("paper_v1_message_length")
fixpoint_encode = _delegate("fixpoint_encode")
fixpoint_decode = _delegate("fixpoint_decode")

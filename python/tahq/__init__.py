# SPDX-License-Identifier: MIT
"""tahq: Python binding of libtahq, the bit-exact TAH-Quant activation codec.

    import numpy as np, tahq
    msg = tahq.encode(x, threads=2)                # float32 [B, S, C] -> bytes (format 1)
    y = tahq.decode(msg, shape=x.shape)            # bytes -> float32 of x's shape
    h = tahq.parse_header(msg)                     # h["config"] is what encode takes
    b = tahq.error_bound(msg)                      # float64 [B, S, C], |x - y| <= b
    p = tahq.encode_paper_v1(x)                    # the authors' headerless format
    y = tahq.decode_paper_v1(p, x.shape)           # needs shape and options

The module-level functions use one shared Library, loaded on first use from
$TAHQ_LIB, else the libtahq.so inside this package (an installed wheel), else
../build/ref/libtahq.so of a source checkout. tahq.Library(path) loads a
given file. tahq.torch has the same codec for CPU torch tensors, an autograd
boundary and a drop-in for the authors' compressor.

Encode and decode run libtahq's parallel codec (tahq_encode_parallel,
tahq_decode_parallel) on threads= threads (default 1): the same bytes and
floats as the reference tahq_encode / tahq_decode for every thread count.

Every numeric step runs in libtahq; this module checks arguments and passes
buffers (numpy arrays in and out). Inputs are copied in Python only when
the library cannot read them in place: a non-contiguous array is copied to a
contiguous one, and float16 (or ml_dtypes bfloat16) input is converted to
float32, which is exact; every other dtype raises TypeError. Shapes and
arguments are checked before any copy. An argument the
tahq program would refuse raises ConfigError or ShapeError, which are
ValueErrors naming the field; a library error raises TahqError, whose
.status is the tahq_status code, .name the status name ("err_crc", ...)
and str() the library's message.
"""

from __future__ import annotations

import ctypes
import difflib
import functools
import inspect
import math
import numbers
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

__all__ = [
    "Library", "library", "find_library", "TahqError", "ConfigError", "ShapeError",
    "LibraryNotFoundError", "ALLOC", "ROUNDING", "META", "CONFIG_FIELDS",
    "TILE_INFO_DTYPE", "encode", "encode_into", "decode", "parse_header", "message_length",
    "error_bound", "tile_infos", "encode_paper_v1", "decode_paper_v1",
    "paper_v1_message_length", "fixpoint_encode", "fixpoint_decode", "fixpoint_bound",
    "fixpoint_wire_bytes", "fixpoint_pack", "fixpoint_unpack", "THREADS_MAX",
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
THREADS_MAX = 256  # TAHQ_JOBS_MAX of include/tahq_parallel.h

# tahq_tile_info (include/tahq.h): bits, flagged, pivot (uint32), zero, scale (float).
TILE_INFO_DTYPE = np.dtype([("bits", "<u4"), ("flagged", "<u4"), ("pivot", "<u4"),
                            ("zero", "<f4"), ("scale", "<f4")])

# Argument types in the signatures: a message is any contiguous bytes-like
# object or a 1-D uint8 array; a configuration is config()'s result or a
# dict of its keyword fields.
BytesLike = Union[bytes, bytearray, memoryview, np.ndarray]
ConfigArg = Union["_Config", Dict[str, Any], None]
PaperConfigArg = Union["_PaperConfig", Dict[str, Any], None]


def _given(args):
    """The configuration fields among a function's arguments (locals()) that
    were given (not None)."""
    return {f: args[f] for f in CONFIG_FIELDS if args.get(f) is not None}


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


class _Parallel(ctypes.Structure):
    """tahq_parallel (include/tahq_parallel.h); run NULL: the library's own
    POSIX threads, one per job."""
    _fields_ = [("jobs", ctypes.c_uint32), ("run", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]

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
    "tahq_encode_parallel_workspace_size": (ctypes.c_int, [_P(_Config), _P(_Shape), _u32,
                                                           _size_p]),
    "tahq_encode_parallel": (ctypes.c_int, [_P(_Config), _P(_Shape), _vp, _vp, _sz, _vp, _sz,
                                            _size_p, _P(_Parallel)]),
    "tahq_decode_parallel": (ctypes.c_int, [_vp, _sz, _vp, _sz, _P(_Parallel)]),
    "tahq_paper_v1_encode_parallel_workspace_size": (ctypes.c_int, [_P(_PaperConfig),
                                                                    _P(_Shape), _size_p]),
    "tahq_paper_v1_encode_parallel": (ctypes.c_int, [_P(_PaperConfig), _P(_Shape), _vp, _vp,
                                                     _sz, _vp, _sz, _size_p, _P(_Parallel)]),
    "tahq_paper_v1_decode_parallel": (ctypes.c_int, [_vp, _sz, _P(_PaperConfig), _P(_Shape),
                                                     _vp, _sz, _P(_Parallel)]),
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
# Argument checks (the tahq program's rules, support/codec_ops.c and
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


# dtypes whose every value is a float32 value: converted, never refused
_WIDENED_EXACTLY = ("float16", "bfloat16")


def _float_input(x, field):
    """x itself once its type is one the codec takes. Nothing is copied
    here: the caller checks the shape first, so that a shape the codec
    refuses never costs a copy (or a MemoryError)."""
    if not isinstance(x, np.ndarray):
        raise TypeError("%s: need a numpy float32 array, got %s" % (field, type(x).__name__))
    if x.dtype != np.float32 and x.dtype.name not in _WIDENED_EXACTLY:
        raise TypeError("%s must be float32 (got %s); float16 and bfloat16 are widened to "
                        "float32 exactly, other dtypes are not converted silently: convert "
                        "explicitly, e.g. x.astype(np.float32)" % (field, x.dtype))
    return x


def _contiguous_f32(x):
    """x as a C-contiguous float32 array: x itself when it is one, else a
    copy (a non-contiguous view is copied; float16 / bfloat16 are widened,
    which is exact)."""
    return np.ascontiguousarray(x, dtype=np.float32)


def _codec_shape(tile, dims, field):
    """[B, S, C] of dims checked against the codec's limits (C a multiple of
    the tile, at most 2^40 elements), from the dims alone: no array is
    touched, so this runs before any copy."""
    B, S, C = _shape3(dims, field)
    if C % tile:
        raise ShapeError(field, "channels C=%d must be a multiple of tile %d" % (C, tile))
    if B * S * C > MAX_ELEMENTS:
        raise ShapeError(field, "B*S*C = %d exceeds 2^40 elements" % (B * S * C))
    return B, S, C


def _f32_array(x, field):
    """A float32 argument that is no tensor to encode (steps): float32 only."""
    if not isinstance(x, np.ndarray) or x.dtype != np.float32:
        raise TypeError("%s: need a numpy float32 array, got %s" % (field, getattr(
            x, "dtype", type(x).__name__)))
    return np.ascontiguousarray(x)


def _threads(v):
    return _integer("threads", v, 1, THREADS_MAX, "an integer 1..%d" % THREADS_MAX)


def _parallel(threads):
    """A tahq_parallel of `threads` jobs on the library's own threads."""
    return _Parallel(jobs=_threads(threads), run=None, ctx=None)


def _refuse_aliasing(out, inputs, field="out"):
    """The codec's inputs and outputs must not overlap (tahq.h); an out that
    shares memory with an input would be overwritten while it is read."""
    for name, a in inputs:
        if a is not None and a.size and np.may_share_memory(out, a):
            raise ValueError("%s: shares memory with %s; pass a separate buffer (the library "
                             "reads %s while it writes %s)" % (field, name, name, field))


_Fn = TypeVar("_Fn", bound=Callable[..., Any])


def _keywords_listed(fn: _Fn) -> _Fn:
    """fn, raising TypeError that lists fn's keyword arguments (and the
    nearest name) for a keyword it does not take, instead of Python's bare
    "unexpected keyword argument". The signature stays fn's own."""
    params = inspect.signature(fn).parameters.values()
    valid = [p.name for p in params if p.name != "self" and
             p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        unknown = [k for k in kwargs if k not in valid]
        if unknown:
            near = difflib.get_close_matches(unknown[0], valid, n=1)
            raise TypeError("%s(): unknown keyword argument %s%s; valid keywords: %s"
                            % (fn.__name__, ", ".join(repr(k) for k in unknown),
                               " (did you mean %r?)" % near[0] if near else "",
                               ", ".join(valid)))
        return fn(*args, **kwargs)
    return checked  # type: ignore[return-value]  # same signature (functools.wraps)


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


def _plausible_shape(a):
    """[B, S, C] read from a format-1 header without the CRC pass over the
    message that tahq_parse_header makes (decode checks everything, the CRC
    included, before it writes): None unless magic, version, header size
    and length agree and B*S*C is at most 2^40 and at most one element per
    payload bit, so that a bad header can never make the caller allocate
    more than 32 bytes per message byte."""
    if a.size < HEADER_BYTES or a[:4].tobytes() != b"TAHQ":
        return None
    version, header_bytes = a[4:8].view("<u2")
    B, S, C = (int(v) for v in a[20:32].view("<u4"))
    payload = int(a[56:64].view("<u8")[0])
    n = B * S * C
    if version not in (1, 3) or header_bytes != HEADER_BYTES or \
            payload != a.size - HEADER_BYTES or not 0 < n <= min(MAX_ELEMENTS, 8 * payload):
        return None
    return B, S, C


def _out_array(out, shape, dtype, field="out", inputs=()):
    """A new array of shape, or out checked (type, layout, size, no overlap
    with the named inputs); returned in the shape given."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray) or out.dtype != dtype:
        raise TypeError("%s: need a numpy %s array" % (field, np.dtype(dtype).name))
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("%s: must be C-contiguous and writeable" % field)
    if out.size != int(np.prod(shape)):
        raise ShapeError(field, "has %d elements, the message has %d"
                         % (out.size, int(np.prod(shape))))
    _refuse_aliasing(out, inputs, field)
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
    @_keywords_listed
    def config(self, tile: Optional[int] = None, hi_bits: Optional[int] = None,
               lo_bits: Optional[int] = None, hi_permille: Optional[int] = None,
               alloc: Union[str, int, None] = None, tau: Union[float, str, None] = None,
               rounding: Union[str, int, None] = None, seed: Optional[int] = None,
               meta: Union[str, int, None] = None) -> _Config:
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

    @staticmethod
    def _shape_for(cfg, dims, field="x"):
        return _Shape(*_codec_shape(cfg.tile, dims, field))

    # -- format 1 -----------------------------------------------------------
    # encode, encode_into and encode_bound take the configuration either as
    # config (config()'s result or a dict) or as the keyword fields of
    # config(); the fields are spelled out so that signatures and type hints
    # show them.
    @_keywords_listed
    def encode_bound(self, shape: Sequence[int], config: ConfigArg = None, *,
                     tile: Optional[int] = None, hi_bits: Optional[int] = None,
                     lo_bits: Optional[int] = None, hi_permille: Optional[int] = None,
                     alloc: Union[str, int, None] = None, tau: Union[float, str, None] = None,
                     rounding: Union[str, int, None] = None, seed: Optional[int] = None,
                     meta: Union[str, int, None] = None) -> int:
        """Largest message encode can produce for this shape and configuration."""
        cfg = self._resolve(config, _given(locals()))
        sh = self._shape_for(cfg, shape, "shape")
        cap = ctypes.c_size_t()
        self._check(self._lib.tahq_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                ctypes.byref(cap)), "encode_bound")
        return cap.value

    def _encode_raw(self, x, cfg, out_arr, threads, where):
        """Encode x (type checked, not yet copied) into out_arr (uint8,
        >= bound; None: a new one) on `threads` threads; returns (buffer,
        length). Every check comes before the copy of x."""
        sh = self._shape_for(cfg, x.shape)
        par = _parallel(threads)
        cap, ws = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self._lib.tahq_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                ctypes.byref(cap)), where)
        self._check(self._lib.tahq_encode_parallel_workspace_size(
            ctypes.byref(cfg), ctypes.byref(sh), par.jobs, ctypes.byref(ws)), where)
        if out_arr is None:
            out_arr = np.empty(max(cap.value, 1), dtype=np.uint8)
        elif out_arr.size < cap.value:
            raise ValueError("out: holds %d bytes, the encoder needs %d (its bound)"
                             % (out_arr.size, cap.value))
        else:
            _refuse_aliasing(out_arr, (("x", x),))
        x = _contiguous_f32(x)
        work = np.empty(max(ws.value, 1), dtype=np.uint8)
        n = ctypes.c_size_t()
        st = self._lib.tahq_encode_parallel(ctypes.byref(cfg), ctypes.byref(sh), x.ctypes.data,
                                            work.ctypes.data, ws.value, out_arr.ctypes.data,
                                            out_arr.size, ctypes.byref(n), ctypes.byref(par))
        self._check(st, where)
        return out_arr, n.value

    @_keywords_listed
    def encode(self, x: np.ndarray, config: ConfigArg = None, *, threads: int = 1,
               tile: Optional[int] = None, hi_bits: Optional[int] = None,
               lo_bits: Optional[int] = None, hi_permille: Optional[int] = None,
               alloc: Union[str, int, None] = None, tau: Union[float, str, None] = None,
               rounding: Union[str, int, None] = None, seed: Optional[int] = None,
               meta: Union[str, int, None] = None) -> bytes:
        """Encode x ([B, S, C], [rows, C] or [C]; float32, or float16 /
        bfloat16 widened exactly) into a format-1 message (bytes) on
        `threads` threads (1..THREADS_MAX; the bytes do not depend on it).
        The configuration: config, or the keyword fields (CONFIG_FIELDS).
        A non-contiguous x is copied first; shape and configuration are
        checked before that copy."""
        x = _float_input(x, "x")
        cfg = self._resolve(config, _given(locals()))
        buf, n = self._encode_raw(x, cfg, None, threads, "encode")
        return ctypes.string_at(buf.ctypes.data, n)

    @_keywords_listed
    def encode_into(self, x: np.ndarray, out: Any, config: ConfigArg = None, *,
                    threads: int = 1, tile: Optional[int] = None,
                    hi_bits: Optional[int] = None, lo_bits: Optional[int] = None,
                    hi_permille: Optional[int] = None, alloc: Union[str, int, None] = None,
                    tau: Union[float, str, None] = None,
                    rounding: Union[str, int, None] = None, seed: Optional[int] = None,
                    meta: Union[str, int, None] = None) -> int:
        """Encode into the writeable buffer out (at least encode_bound bytes,
        not overlapping x); returns the message length. Nothing is written
        when an argument is bad."""
        x = _float_input(x, "x")
        cfg = self._resolve(config, _given(locals()))
        a = _out_bytes(out, 0)
        _, n = self._encode_raw(x, cfg, a, threads, "encode_into")
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

    @_keywords_listed
    def decode(self, msg: BytesLike, out: Optional[np.ndarray] = None, *,
               shape: Optional[Sequence[int]] = None, threads: int = 1) -> np.ndarray:
        """Decode a format-1 message into float32 [B, S, C] on `threads`
        threads (the floats do not depend on it). shape: the shape to return
        instead, e.g. the encoded array's ([C] or [rows, C]; it must name
        the message's [B, S, C] with leading 1s dropped). out: a C-contiguous
        float32 array of B*S*C elements, not overlapping msg, written and
        returned (in its own shape). Nothing is written for a bad message."""
        a, ptr = _in_bytes(msg)
        dims = _plausible_shape(a)
        if dims is None:  # the full check names what is wrong
            _, dims = self._header_shape(a, ptr, "decode")
        try:
            if shape is not None and _shape3(shape, "shape") != dims:
                raise ShapeError("shape", "%s is not the message's shape %s (leading "
                                          "dimensions of 1 may be left out)"
                                 % (tuple(shape), dims))
            par = _parallel(threads)
            y = _out_array(out, dims if shape is None else tuple(shape), np.float32,
                           inputs=(("msg", a),))
        except ValueError:
            # a message that is not valid is reported as such, before a
            # mismatch with the shape its header claims
            self._header_shape(a, ptr, "decode")
            raise
        self._check(self._lib.tahq_decode_parallel(ptr, a.size, y.ctypes.data, y.size,
                                                   ctypes.byref(par)), "decode")
        return y

    def error_bound(self, msg: BytesLike, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Per-element error bound (SPEC section 6) of a message: float64
        [B, S, C] with |x - decode(msg)| <= bound for the x that made it."""
        a, ptr = _in_bytes(msg)
        _, shape = self._header_shape(a, ptr, "error_bound")
        b = _out_array(out, shape, np.float64, inputs=(("msg", a),))
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
    @_keywords_listed
    def paper_v1_config(self, tile: Optional[int] = None, hi_bits: Optional[int] = None,
                        lo_bits: Optional[int] = None,
                        hi_permille: Optional[int] = None) -> _PaperConfig:
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

    def _resolve_pv1(self, config, args):
        fields = {f: args[f] for f in PAPER_V1_FIELDS if args.get(f) is not None}
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
        sh = _Shape(*_codec_shape(cfg.tile, dims, field))
        self._check(self._lib.tahq_paper_v1_check(ctypes.byref(cfg), ctypes.byref(sh)),
                    "paper_v1")
        return sh

    @_keywords_listed
    def paper_v1_encode_bound(self, shape: Sequence[int], config: PaperConfigArg = None, *,
                              tile: Optional[int] = None, hi_bits: Optional[int] = None,
                              lo_bits: Optional[int] = None,
                              hi_permille: Optional[int] = None) -> int:
        """Largest paper-v1 message for this shape (every tile flagged)."""
        cfg = self._resolve_pv1(config, locals())
        sh = self._pv1_shape(cfg, shape, "shape")
        cap = ctypes.c_size_t()
        self._check(self._lib.tahq_paper_v1_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                         ctypes.byref(cap)), "paper_v1")
        return cap.value

    @_keywords_listed
    def encode_paper_v1(self, x: np.ndarray, config: PaperConfigArg = None, *,
                        threads: int = 1, tile: Optional[int] = None,
                        hi_bits: Optional[int] = None, lo_bits: Optional[int] = None,
                        hi_permille: Optional[int] = None) -> bytes:
        """Encode x (as encode takes it) in the authors' headerless layout
        (bytes) on `threads` threads (the bytes do not depend on it)."""
        x = _float_input(x, "x")
        cfg = self._resolve_pv1(config, locals())
        sh = self._pv1_shape(cfg, x.shape, "x")
        par = _parallel(threads)
        cap, ws = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self._lib.tahq_paper_v1_encode_bound(ctypes.byref(cfg), ctypes.byref(sh),
                                                         ctypes.byref(cap)), "encode_paper_v1")
        self._check(self._lib.tahq_paper_v1_encode_parallel_workspace_size(
            ctypes.byref(cfg), ctypes.byref(sh), ctypes.byref(ws)), "encode_paper_v1")
        x = _contiguous_f32(x)
        out = np.empty(max(cap.value, 1), dtype=np.uint8)
        work = np.empty(max(ws.value, 1), dtype=np.uint8)
        n = ctypes.c_size_t()
        st = self._lib.tahq_paper_v1_encode_parallel(
            ctypes.byref(cfg), ctypes.byref(sh), x.ctypes.data, work.ctypes.data, ws.value,
            out.ctypes.data, out.size, ctypes.byref(n), ctypes.byref(par))
        self._check(st, "encode_paper_v1")
        return ctypes.string_at(out.ctypes.data, n.value)

    @_keywords_listed
    def decode_paper_v1(self, msg: BytesLike, shape: Sequence[int],
                        config: PaperConfigArg = None, out: Optional[np.ndarray] = None, *,
                        threads: int = 1, tile: Optional[int] = None,
                        hi_bits: Optional[int] = None, lo_bits: Optional[int] = None,
                        hi_permille: Optional[int] = None) -> np.ndarray:
        """Decode a paper-v1 message; shape and the configuration must be
        the encoder's (the format has no header). The result has the shape
        given; out as in decode."""
        a, ptr = _in_bytes(msg)
        cfg = self._resolve_pv1(config, locals())
        sh = self._pv1_shape(cfg, shape, "shape")
        par = _parallel(threads)
        y = _out_array(out, tuple(shape), np.float32, inputs=(("msg", a),))
        st = self._lib.tahq_paper_v1_decode_parallel(ptr, a.size, ctypes.byref(cfg),
                                                     ctypes.byref(sh), y.ctypes.data, y.size,
                                                     ctypes.byref(par))
        self._check(st, "decode_paper_v1")
        return y

    @_keywords_listed
    def paper_v1_message_length(self, buf: BytesLike, shape: Sequence[int],
                                config: PaperConfigArg = None, *, tile: Optional[int] = None,
                                hi_bits: Optional[int] = None, lo_bits: Optional[int] = None,
                                hi_permille: Optional[int] = None) -> int:
        """Length of the paper-v1 message at the start of buf (for a receive
        buffer larger than the message): the fixed fields' size plus the
        pivots of the flagged tiles counted in the tile-flag field (A.3)."""
        a, _ = _in_bytes(buf, "buf")
        cfg = self._resolve_pv1(config, locals())
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

    def fixpoint_encode(self, g: np.ndarray, bits: int = 6,
                        meta: Union[str, int] = "fp16") -> Tuple[np.ndarray, np.ndarray]:
        """Per-channel symmetric quantizer of g [..., C] (float32, or float16
        / bfloat16 widened exactly; channels last, rows = everything before):
        returns (codes, steps), codes uint8 of g's shape holding
        q + 2^(bits-1), steps float32 [C] (values of meta). fixpoint_pack
        makes the wire form."""
        g = _float_input(g, "g")
        bits = self._fix_bits(bits)
        m = _name("meta", meta)
        if g.ndim < 1 or g.size == 0:
            raise ShapeError("g", "must have at least one row and one channel, got %s"
                             % (g.shape,))
        C = g.shape[-1]
        rows = g.size // C
        if C > _U32_MAX:
            raise ShapeError("g", "C=%d exceeds 2^32-1" % C)
        g = _contiguous_f32(g)
        codes = np.empty(g.shape, dtype=np.uint8)
        steps = np.empty(C, dtype=np.float32)
        st = self._lib.tahq_fixpoint_encode(g.ctypes.data, rows, C, bits, m, codes.ctypes.data,
                                            steps.ctypes.data)
        self._check(st, "fixpoint_encode")
        return codes, steps

    def fixpoint_decode(self, codes: np.ndarray, steps: np.ndarray, bits: int = 6,
                        out: Optional[np.ndarray] = None) -> np.ndarray:
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
        y = _out_array(out, codes.shape, np.float32, inputs=(("codes", codes),
                                                             ("steps", steps)))
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


def fixpoint_wire_bytes(rows: int, channels: int, bits: int,
                        meta: Union[str, int] = "fp16") -> int:
    """Bytes the fixpoint quantizer puts on a wire: rows*C*bits bits packed,
    plus C metadata values (fixpoint_pack's length)."""
    m = _CODES["meta"][_name("meta", meta)]
    return (rows * channels * bits + 7) // 8 + channels * META_BYTES[m]


def _meta_values(steps, m):
    """steps (float32) as the little-endian bytes of meta m, refusing a step
    that meta cannot hold exactly (the wire would change it)."""
    if m == "fp32":
        return steps.astype("<f4").tobytes()
    if m == "fp16":
        wire = steps.astype("<f2")
        back = wire.astype(np.float32)
    else:  # bf16: the upper half of the binary32 pattern
        wire = (steps.view(np.uint32) >> 16).astype("<u2")
        back = (wire.astype(np.uint32) << 16).view(np.float32)
    if back.view(np.uint32).tobytes() != steps.view(np.uint32).tobytes():
        raise ValueError("steps: not all values of meta %s (fixpoint_encode's steps with "
                         "the same meta are)" % m)
    return wire.tobytes()


def fixpoint_pack(codes: np.ndarray, steps: np.ndarray, bits: int = 6,
                  meta: Union[str, int] = "fp16") -> bytes:
    """The wire form of fixpoint_encode's result, fixpoint_wire_bytes long:
    the codes as one LSB-first bit stream of `bits` bits each (SPEC 8.3's
    bit order; element order row-major, unused bits of the last byte zero),
    then the C steps as little-endian meta values (fp16, bf16: 2 bytes,
    fp32: 4)."""
    bits = _integer("bits", bits, 2, 8, "an integer 2..8")
    m = _CODES["meta"][_name("meta", meta)]
    if not isinstance(codes, np.ndarray) or codes.dtype != np.uint8 or codes.ndim < 1 \
            or codes.size == 0:
        raise TypeError("codes: need a non-empty uint8 array [..., C]")
    steps = _f32_array(steps, "steps")
    C = codes.shape[-1]
    if steps.shape != (C,):
        raise ShapeError("steps", "must have shape (%d,), got %s" % (C, steps.shape))
    if int(codes.max()) >> bits:
        raise ValueError("codes: a code exceeds %d bits" % bits)
    flat = np.ascontiguousarray(codes).reshape(-1, 1)
    stream = np.unpackbits(flat, axis=1, bitorder="little")[:, :bits]
    return np.packbits(stream.reshape(-1), bitorder="little").tobytes() + \
        _meta_values(steps, m)


def fixpoint_unpack(wire: BytesLike, shape: Sequence[int], bits: int = 6,
                    meta: Union[str, int] = "fp16") -> Tuple[np.ndarray, np.ndarray]:
    """Inverse of fixpoint_pack: (codes uint8 of shape, steps float32 [C])
    from exactly fixpoint_wire_bytes bytes; fixpoint_decode checks the
    values."""
    bits = _integer("bits", bits, 2, 8, "an integer 2..8")
    m = _CODES["meta"][_name("meta", meta)]
    dims = tuple(_integer("shape", d, 1, _U64_MAX, "dimensions >= 1", ShapeError)
                 for d in shape)
    if not dims:
        raise ShapeError("shape", "must have at least one dimension (C last)")
    C = dims[-1]
    n = int(np.prod(dims, dtype=object))
    a, _ = _in_bytes(wire, "wire")
    need = fixpoint_wire_bytes(n // C, C, bits, m)
    if a.size != need:
        raise ShapeError("wire", "%d bytes; shape %s at %d bits with meta %s takes %d"
                         % (a.size, dims, bits, m, need))
    code_bytes = (n * bits + 7) // 8
    stream = np.unpackbits(a[:code_bytes], bitorder="little")
    if stream[n * bits:].any():
        raise ValueError("wire: the unused bits after the codes are not zero")
    codes = np.packbits(stream[:n * bits].reshape(n, bits), axis=1, bitorder="little")
    tail = a[code_bytes:]
    if m == "fp32":
        steps = tail.view("<f4").astype(np.float32)
    elif m == "fp16":
        steps = tail.view("<f2").astype(np.float32)
    else:
        steps = (tail.view("<u2").astype(np.uint32) << 16).view(np.float32)
    return codes.reshape(dims), steps


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


if TYPE_CHECKING:
    from typing import Concatenate, ParamSpec
    _Params = ParamSpec("_Params")
    _R = TypeVar("_R")

    def _on_shared_library(method: Callable[Concatenate[Library, _Params], _R]
                           ) -> Callable[_Params, _R]: ...
else:
    def _on_shared_library(method):
        """method of the shared Library as a module function, with method's
        signature (less self), type hints and documentation."""
        @functools.wraps(method)
        def call(*args, **kwargs):
            return method(library(), *args, **kwargs)
        sig = inspect.signature(method)
        call.__signature__ = sig.replace(parameters=list(sig.parameters.values())[1:])
        return call


encode = _on_shared_library(Library.encode)
encode_into = _on_shared_library(Library.encode_into)
encode_bound = _on_shared_library(Library.encode_bound)
decode = _on_shared_library(Library.decode)
parse_header = _on_shared_library(Library.parse_header)
message_length = Library.message_length
error_bound = _on_shared_library(Library.error_bound)
tile_infos = _on_shared_library(Library.tile_infos)
config = _on_shared_library(Library.config)
paper_v1_config = _on_shared_library(Library.paper_v1_config)
encode_paper_v1 = _on_shared_library(Library.encode_paper_v1)
decode_paper_v1 = _on_shared_library(Library.decode_paper_v1)
paper_v1_encode_bound = _on_shared_library(Library.paper_v1_encode_bound)
paper_v1_message_length = _on_shared_library(Library.paper_v1_message_length)
fixpoint_encode = _on_shared_library(Library.fixpoint_encode)
fixpoint_decode = _on_shared_library(Library.fixpoint_decode)

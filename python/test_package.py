#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check the tahq package (python/tahq) against the tahq program.

  1. argument validation: every field out of the tahq program's range raises
     a ValueError (tahq.ConfigError / ShapeError) naming it, nothing is
     written; the boundary values are accepted (control);
  2. names in both directions: parse_header()["config"] is what encode
     takes, and encoding with it gives the same bytes (control: another
     configuration gives other bytes);
  3. error_bound and tile_infos equal `tahq inspect --tiles --json` and
     `tahq roundtrip --json` for the same message and tensor;
  4. buffers: bytes, bytearray, memoryview and uint8 arrays decode alike;
     encode_into and decode(out=) write into the caller's buffers;
  5. fixpoint quantizer: decoded within the SPEC 7.2 bound (control: the
     bound is not loose by more than 4x);
  6. library lookup: a failed load names every path tried and the fix;
  7. the parallel codec behind encode / decode: the same bytes as the
     reference tahq_encode (called directly) on several configurations,
     gain allocation and stochastic rounding included, for 1..4 threads,
     the same floats as tahq_decode (controls: another seed gives other
     bytes; the reference is really called);
  8. signatures, keywords, dtypes, shapes: inspect.signature lists the
     fields, an unknown keyword names the valid ones, float16 is widened,
     a [C] array decodes to [C] with shape=, a 2^41-element view is a
     ShapeError before any copy, decode(out=) aliasing the message and
     encode_into(out=) aliasing x are refused with nothing written;
  9. fixpoint_pack: fixpoint_wire_bytes long (less than a byte per code),
     round trip exact, hostile lengths and padding refused.

Exit status: 0 passed, 1 failed, 77 numpy missing (CTest skip).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean under CTest
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import tahq_fixtures as fx  # noqa: E402

np = fx.require("test_package.py", "numpy", "install python3-numpy")

HERE = os.path.dirname(os.path.abspath(__file__))
fx.use_tree("python")
import tahq  # noqa: E402
from tahq_fixtures import check, verdict  # noqa: E402



def same_f32(a, b):
    return a.shape == b.shape and np.ascontiguousarray(a).view(np.uint32).tobytes() == \
        np.ascontiguousarray(b).view(np.uint32).tobytes()


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                r.stderr.decode(errors="replace")))
    return r.stdout.decode()


def tensor(shape=(2, 16, 128), seed=7):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 0.5).astype(np.float32)
    x[0, -1, 17] = 40.0    # a flagged tile
    x[-1, 1, :64] = 0.0    # an all-zero tile
    return x


# ---------------------------------------------------------------------------
def expect_value_error(fn, field, what, cls=tahq.ConfigError):
    try:
        fn()
    except ValueError as e:
        check(isinstance(e, cls), "%s: %s is not a %s" % (what, type(e).__name__,
                                                           cls.__name__))
        check(getattr(e, "field", None) == field and str(e).find(field) >= 0,
              "%s: error does not name %s: %s" % (what, field, e))
        return str(e)
    except Exception as e:  # noqa: BLE001
        check(False, "%s: %s instead of ValueError: %s" % (what, type(e).__name__, e))
        return ""
    check(False, "%s: accepted" % what)
    return ""


def test_validation(lib):
    x = tensor((1, 4, 64))
    bad = [
        ("tile", 48), ("tile", 4), ("tile", 512), ("tile", 64.0), ("tile", True),
        ("tile", 2 ** 32 + 64), ("tile", "64"),
        ("hi_bits", 0), ("hi_bits", 9), ("hi_bits", 2 ** 32 + 4), ("hi_bits", -1),
        ("hi_bits", 4.0),
        ("lo_bits", 0), ("lo_bits", 9), ("lo_bits", 2 ** 32 + 3),
        ("hi_permille", 1001), ("hi_permille", -1), ("hi_permille", 2 ** 32 + 800),
        ("hi_permille", 0.8),
        ("alloc", "bogus"), ("alloc", 4), ("alloc", -1), ("alloc", 1.0),
        ("tau", -1.0), ("tau", float("nan")), ("tau", 1e39), ("tau", "2"), ("tau", True),
        ("tau", -float("inf")),
        ("rounding", "round"), ("rounding", 2),
        ("seed", 2 ** 64), ("seed", -1), ("seed", 1.5), ("seed", "0"),
        ("meta", "fp8"), ("meta", 3),
    ]
    for field, value in bad:
        expect_value_error(lambda: lib.encode(x, **{field: value}), field,
                           "encode(%s=%r)" % (field, value))
    # the message lists the valid names
    msg = expect_value_error(lambda: lib.encode(x, alloc="bogus"), "alloc", "alloc names")
    check(all(n in msg for n in ("'none'", "'token'", "'tile'", "'gain'")),
          "alloc error does not list the names: %s" % msg)
    msg = expect_value_error(lambda: lib.encode(x, meta="x"), "meta", "meta names")
    check(all(n in msg for n in ("'fp16'", "'bf16'", "'fp32'")), "meta names: %s" % msg)
    # lo_bits > hi_bits names lo_bits
    expect_value_error(lambda: lib.encode(x, hi_bits=3, lo_bits=4), "lo_bits", "lo > hi")
    # the seed does not wrap: 2^64 and -1 refused, 2^64-1 kept exactly
    m = lib.encode(x, seed=2 ** 64 - 1, rounding="stochastic")
    check(lib.parse_header(m)["seed"] == 2 ** 64 - 1, "seed 2^64-1 not kept")
    # control: the boundary values are accepted
    for kw in ({"tile": 8}, {"tile": 64}, {"hi_bits": 8, "lo_bits": 8}, {"hi_bits": 1,
               "lo_bits": 1}, {"hi_permille": 0}, {"hi_permille": 1000},
               {"tau": 0}, {"tau": float("inf")}, {"tau": "inf"}, {"tau": np.float32(1.5)},
               {"seed": 0}, {"seed": np.uint64(2 ** 64 - 1)}, {"alloc": "tile"},
               {"alloc": 0}, {"alloc": "gain"}, {"alloc": 3}, {"meta": "bf16"}, {"rounding": "stochastic"},
               {"tile": np.int64(32)}):
        try:
            lib.encode(x, **kw)
        except Exception as e:  # noqa: BLE001
            check(False, "control: encode(%r) refused: %s" % (kw, e))
    # shapes: ShapeError naming x / shape
    expect_value_error(lambda: lib.encode(np.zeros((1, 2, 48), np.float32)), "x", "C=48",
                       tahq.ShapeError)
    expect_value_error(lambda: lib.encode(np.zeros((1, 1, 1, 64), np.float32)), "x", "4-D",
                       tahq.ShapeError)
    expect_value_error(lambda: lib.encode(np.zeros((0, 64), np.float32)), "x", "empty",
                       tahq.ShapeError)
    p = lib.encode_paper_v1(x)
    expect_value_error(lambda: lib.decode_paper_v1(p, (1, 4, 48)), "shape", "pv1 C=48",
                       tahq.ShapeError)
    expect_value_error(lambda: lib.decode_paper_v1(p, (1, -4, 64)), "shape", "pv1 S<0",
                       tahq.ShapeError)
    # paper-v1 fields
    for field, value in (("tile", 96), ("hi_bits", 9), ("lo_bits", 0),
                         ("hi_permille", 1001), ("hi_bits", 2 ** 32 + 4)):
        expect_value_error(lambda: lib.encode_paper_v1(x, **{field: value}), field,
                           "encode_paper_v1(%s=%r)" % (field, value))
    # fixpoint bits
    for b in (1, 9, 2 ** 32 + 6, 6.0):
        expect_value_error(lambda: lib.fixpoint_encode(x[0], bits=b), "bits",
                           "fixpoint bits=%r" % (b,))
    expect_value_error(lambda: lib.fixpoint_encode(x[0], meta="bogus"), "meta", "fixpoint meta")
    # float64 input: TypeError, nothing converted
    try:
        lib.encode(x.astype(np.float64))
        check(False, "float64 input accepted")
    except TypeError:
        pass
    # nothing written on a bad argument
    out = bytearray(b"\xa5" * lib.encode_bound(x.shape))
    try:
        lib.encode_into(x, out, seed=-1)
    except ValueError:
        pass
    check(out == bytearray(b"\xa5" * len(out)), "encode_into wrote on a bad seed")
    yout = np.full(x.shape, 7.0, np.float32)
    try:
        lib.decode(b"TAHQ" + bytes(100), out=yout)
    except tahq.TahqError:
        pass
    check(bool((yout == 7.0).all()), "decode wrote into out on a bad message")
    # errors are still TahqErrors with the status name (the old API)
    try:
        lib.encode(x, tile=48)
    except tahq.TahqError as e:
        check(e.name == "err_config", "tile 48: status %s" % e.name)
    print("validation: %d bad arguments refused with the field named" % len(bad))


def test_names(lib):
    x = tensor()
    seen = set()
    for alloc in tahq.ALLOC:
        for rounding in tahq.ROUNDING:
            for meta in tahq.META:
                kw = dict(tile=32, hi_bits=5, lo_bits=2, hi_permille=700, alloc=alloc,
                          tau=1.5, rounding=rounding, seed=12345678901234567890, meta=meta)
                msg = lib.encode(x, **kw)
                h = lib.parse_header(msg)
                check(h["config"] == kw, "names: header config %r != %r" % (h["config"], kw))
                check(set(h["config"]) == set(tahq.CONFIG_FIELDS), "config keys")
                check(all(h[k] == kw[k] for k in kw), "flat header fields")
                check(lib.encode(x, **h["config"]) == msg, "re-encode with header config")
                check(h["bytes"] == len(msg) == lib.message_length(msg + bytes(9)),
                      "message length")
                seen.add(msg)
    # control: every configuration gives a different message
    n = len(tahq.ALLOC) * len(tahq.ROUNDING) * len(tahq.META)
    check(n == 24, "names: %d alloc x rounding x meta configurations, not 24" % n)
    check(len(seen) == n, "names control: %d distinct messages of %d" % (len(seen), n))
    check(lib.parse_header(lib.encode(x, tau="inf"))["tau"] == float("inf"), "tau inf")
    print("names: %d configurations round-trip through parse_header" % len(seen))


def test_against_cli(lib, cli, work):
    x = tensor((2, 32, 512), seed=11)
    inp = os.path.join(work, "x.npy")
    np.save(inp, x)
    opts = dict(tile=64, hi_bits=4, lo_bits=3, hi_permille=800, alloc="tile", tau=2.0,
                meta="bf16")
    cli_opts = ["--tile", "64", "--bits", "4/3", "--ratio", "800", "--alloc", "tile",
                "--tau", "2", "--meta", "bf16"]
    msg = lib.encode(x, **opts)
    mpath = os.path.join(work, "x.tahq")
    run([cli, "encode", inp, mpath] + cli_opts)
    with open(mpath, "rb") as f:
        check(f.read() == msg, "binding bytes differ from tahq encode")
    info = lib.tile_infos(msg)
    bound = lib.error_bound(msg)
    B, S, C = x.shape
    T = C // 64
    check(info.shape == (B, S, T) and bound.shape == x.shape, "info/bound shapes")
    j = json.loads(run([cli, "inspect", "--tiles", "--json", mpath]))
    tiles = j["tile_info"]
    check(len(tiles) == info.size, "tile count %d vs %d" % (len(tiles), info.size))
    flat = info.reshape(-1)
    bmax = bound.reshape(-1, 64).max(axis=1)
    bad = 0
    for t, d in enumerate(tiles):
        r = flat[t]
        ok = (d["tile"] == t and d["row"] == t // T and d["col"] == t % T and
              d["bits"] == r["bits"] and d["flagged"] == r["flagged"] and
              d["pivot"] == r["pivot"] and np.float32(d["zero"]) == r["zero"] and
              np.float32(d["scale"]) == r["scale"] and d["bound"] == bmax[t])
        bad += 0 if ok else 1
    check(bad == 0, "%d tiles differ from tahq inspect --tiles" % bad)
    check(int(flat["flagged"].sum()) == j["n_flagged"] and j["n_flagged"] > 0,
          "flagged count %d vs %d" % (int(flat["flagged"].sum()), j["n_flagged"]))
    check(int((flat["bits"] == 3).sum()) == j["low_tiles"] and j["low_tiles"] > 0,
          "low tiles")
    # roundtrip: the same error statistics from the binding's decode + bound
    rt = json.loads(run([cli, "roundtrip", inp, "--json"] + cli_opts))
    y = lib.decode(msg)
    e = np.abs(x.astype(np.float64) - y.astype(np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(e == 0, 0.0, np.where(bound > 0, e / bound, np.inf))
    check(float(e.max()) == rt["max_abs_err"], "max |err| %r vs %r"
          % (float(e.max()), rt["max_abs_err"]))
    check(float(ratio.max()) == rt["max_err_over_bound"], "max err/bound %r vs %r"
          % (float(ratio.max()), rt["max_err_over_bound"]))
    check(bool((e <= bound).all()) and rt["ok"] and rt["n_over_bound"] == 0, "bound holds")
    # control: the bound is tight enough to matter (a quarter of it is exceeded)
    check(bool((e > bound / 4).any()), "control: error never reaches bound/4")
    print("cli: tile_infos and error_bound equal tahq inspect/roundtrip "
          "(%d tiles, max err/bound %.3f)" % (len(tiles), float(ratio.max())))


def test_buffers(lib):
    x = tensor()
    msg = lib.encode(x)
    ref = lib.decode(msg)
    for kind, m in (("bytearray", bytearray(msg)), ("memoryview", memoryview(msg)),
                    ("uint8 array", np.frombuffer(msg, np.uint8).copy())):
        check(same_f32(lib.decode(m), ref), "decode(%s)" % kind)
    out = np.empty(lib.encode_bound(x.shape), np.uint8)
    n = lib.encode_into(x, out)
    check(out[:n].tobytes() == msg, "encode_into bytes")
    y = np.empty(x.size, np.float32)
    r = lib.decode(msg, out=y)
    check(r is y and same_f32(y.reshape(ref.shape), ref), "decode(out=)")
    try:
        lib.decode(msg, out=np.empty(x.size - 1, np.float32))
        check(False, "decode(out=) of the wrong size accepted")
    except tahq.ShapeError:
        pass
    for bad in ("text", 42, np.zeros(4, np.float32)):
        try:
            lib.decode(bad)
            check(False, "decode(%r) accepted" % (bad,))
        except TypeError:
            pass
    # non-contiguous input is accepted (a contiguous copy is encoded)
    xt = np.ascontiguousarray(x.transpose(1, 0, 2)).transpose(1, 0, 2)
    check(not xt.flags.c_contiguous and lib.encode(xt) == msg, "non-contiguous input")
    # paper-v1 in a longer receive buffer
    p = lib.encode_paper_v1(x)
    buf = np.zeros(lib.paper_v1_encode_bound(x.shape), np.uint8)
    buf[:len(p)] = np.frombuffer(p, np.uint8)
    n = lib.paper_v1_message_length(buf, x.shape)
    check(n == len(p), "paper_v1_message_length %d vs %d" % (n, len(p)))
    check(same_f32(lib.decode_paper_v1(buf[:n], x.shape), lib.decode_paper_v1(p, x.shape)),
          "paper-v1 from a receive buffer")
    print("buffers: bytes-like inputs, encode_into, decode(out=), receive buffers")


def test_fixpoint(lib):
    rng = np.random.default_rng(3)
    g = (rng.standard_normal((64, 96)) * np.linspace(1e-3, 10, 96)).astype(np.float32)
    g[:, 5] = 0.0
    for bits in (2, 6, 8):
        codes, steps = lib.fixpoint_encode(g, bits=bits)
        gh = lib.fixpoint_decode(codes, steps, bits=bits)
        b = tahq.fixpoint_bound(steps, bits)
        e = np.abs(g.astype(np.float64) - gh)
        check(bool((e <= b).all()), "fixpoint %d bits: bound violated" % bits)
        check(bool((e > b / 4).any()), "fixpoint %d bits: control: bound/4 never reached"
              % bits)
        check(bool((gh[:, 5] == 0).all()) and codes.min() >= 1 and
              codes.max() <= 2 ** bits - 1, "fixpoint %d bits: codes" % bits)
    bad = g.copy()
    bad[3, 3] = np.nan
    try:
        lib.fixpoint_encode(bad)
        check(False, "fixpoint: NaN accepted")
    except tahq.TahqError as e:
        check(e.name == "err_nonfinite", "fixpoint NaN: %s" % e.name)
    check(tahq.fixpoint_wire_bytes(64, 96, 6) == 64 * 96 * 6 // 8 + 96 * 2, "wire bytes")
    print("fixpoint: 2, 6, 8 bits within the SPEC 7.2 bound")


def test_lookup(work):
    """A copy of the package without a library, and $TAHQ_LIB pointing
    nowhere: the error lists the paths and the fix."""
    pkg = os.path.join(work, "lookup", "tahq")
    shutil.rmtree(os.path.dirname(pkg), ignore_errors=True)
    shutil.copytree(os.path.join(HERE, "tahq"), pkg,
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    code = ("import tahq\n"
            "try:\n    tahq.library()\nexcept tahq.LibraryNotFoundError as e:\n"
            "    print(e)\n    raise SystemExit(3)\n")
    env = dict(os.environ)
    env.pop("TAHQ_LIB", None)
    env["PYTHONPATH"] = os.path.dirname(pkg)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode()
    check(r.returncode == 3, "lookup: no LibraryNotFoundError (exit %d): %s"
          % (r.returncode, out))
    check(os.path.join(pkg, "libtahq.so") in out and "source checkout" in out and
          "pip install" in out and "TAHQ_LIB" in out, "lookup message: %s" % out)
    env["TAHQ_LIB"] = os.path.join(work, "nowhere", "libtahq.so")
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=work,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode()
    check(r.returncode == 3 and "$TAHQ_LIB" in out and env["TAHQ_LIB"] in out and
          "no such file" in out, "lookup with TAHQ_LIB: %s" % out)
    # control: the same copy loads when TAHQ_LIB names a real library
    env["TAHQ_LIB"] = os.environ["TAHQ_TEST_LIB"]
    r = subprocess.run([sys.executable, "-c", code + "print(tahq.library().path)"], env=env,
                       cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    check(r.returncode == 0, "lookup control: %s" % r.stdout.decode())
    print("lookup: failures name the paths tried and the fix")


def reference_encode(lib, x, cfg):
    """tahq_encode itself (the one-thread reference) through ctypes."""
    sh = tahq._Shape(*x.shape)
    cap, ws = tahq.ctypes.c_size_t(), tahq.ctypes.c_size_t()
    lib._check(lib._lib.tahq_encode_bound(tahq.ctypes.byref(cfg), tahq.ctypes.byref(sh),
                                          tahq.ctypes.byref(cap)), "bound")
    lib._check(lib._lib.tahq_encode_workspace_size(tahq.ctypes.byref(cfg),
                                                   tahq.ctypes.byref(sh),
                                                   tahq.ctypes.byref(ws)), "ws")
    out = np.zeros(cap.value, np.uint8)
    work = np.zeros(max(ws.value, 1), np.uint8)
    n = tahq.ctypes.c_size_t()
    lib._check(lib._lib.tahq_encode(tahq.ctypes.byref(cfg), tahq.ctypes.byref(sh),
                                    x.ctypes.data, work.ctypes.data, ws.value, out.ctypes.data,
                                    cap.value, tahq.ctypes.byref(n)), "tahq_encode")
    return out[:n.value].tobytes()


def reference_decode(lib, msg, count):
    y = np.empty(count, np.float32)
    a = np.frombuffer(msg, np.uint8)
    lib._check(lib._lib.tahq_decode(a.ctypes.data, a.size, y.ctypes.data, count), "decode")
    return y


def test_fast_path(lib):
    configs = [{}, {"alloc": "tile", "tile": 32, "meta": "bf16"},
               {"alloc": "gain", "hi_permille": 500},
               {"rounding": "stochastic", "seed": 12345},
               {"alloc": "gain", "rounding": "stochastic", "seed": 7, "meta": "fp32"},
               {"alloc": "none", "hi_bits": 8, "lo_bits": 2, "tau": "inf"}]
    x = tensor((3, 24, 256), seed=11)
    for fields in configs:
        ref = reference_encode(lib, x, lib.config(**fields))
        ref_y = reference_decode(lib, ref, x.size)
        for threads in (1, 2, 3, 4):
            msg = lib.encode(x, threads=threads, **fields)
            check(msg == ref, "%s threads=%d: bytes differ from tahq_encode" % (fields, threads))
            y = lib.decode(ref, threads=threads)
            check(same_f32(y.reshape(-1), ref_y), "%s threads=%d: floats differ from "
                  "tahq_decode" % (fields, threads))
    # controls: the comparison sees a difference where there is one
    a = lib.encode(x, rounding="stochastic", seed=1, threads=2)
    b = reference_encode(lib, x, lib.config(rounding="stochastic", seed=2))
    check(a != b, "control: seeds 1 and 2 give the same message")
    check(reference_encode(lib, x, lib.config()) != reference_encode(lib, x, lib.config(
        alloc="gain")), "control: token and gain allocation give the same message")
    for bad in (0, THREADS_BAD, 1.5, True):
        expect_value_error(lambda: lib.encode(x, threads=bad), "threads", "threads=%r" % (bad,))
    print("fast path: encode / decode on 1..4 threads equal tahq_encode / tahq_decode "
          "(%d configurations)" % len(configs))


THREADS_BAD = tahq.THREADS_MAX + 1


def test_interface(lib):
    import inspect
    sig = inspect.signature(tahq.encode)
    for name in ("x", "config", "threads") + tahq.CONFIG_FIELDS:
        check(name in sig.parameters, "signature of tahq.encode lacks %s: %s" % (name, sig))
    check(not any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in sig.parameters.values()),
          "tahq.encode has a catch-all parameter: %s" % sig)
    check(sig.return_annotation in (bytes, "bytes"), "encode has no return type: %s" % sig)
    for fn in (tahq.decode, tahq.encode_paper_v1, tahq.decode_paper_v1, tahq.config):
        s = inspect.signature(fn)
        check("self" not in s.parameters and not any(
            p.kind == p.VAR_KEYWORD for p in s.parameters.values()),
            "signature of %s: %s" % (fn.__name__, s))
    try:
        lib.encode(tensor(), tile_size=64)
        check(False, "unknown keyword accepted")
    except TypeError as e:
        check(all(f in str(e) for f in tahq.CONFIG_FIELDS) and "'tile'" in str(e),
              "unknown keyword: the valid names are not listed: %s" % e)
    # float16 is widened exactly; float64 is refused (not rounded silently)
    x = tensor()
    h = x.astype(np.float16)
    check(lib.encode(h) == lib.encode(h.astype(np.float32)) and lib.encode(h) != lib.encode(x),
          "float16 input is not the message of its float32 widening")
    try:
        lib.encode(x.astype(np.float64))
        check(False, "float64 accepted")
    except TypeError as e:
        check("convert explicitly" in str(e), "float64 refusal: %s" % e)
    # the caller's shape back
    v = x[0, 0].copy()
    m = lib.encode(v)
    check(lib.decode(m, shape=v.shape).shape == v.shape and lib.decode(m).shape == (1, 1, 128),
          "decode(shape=) of a [C] array")
    r = x[0]
    check(lib.decode(lib.encode(r), shape=r.shape).shape == r.shape, "decode(shape=) [rows, C]")
    expect_value_error(lambda: lib.decode(m, shape=(2, 64)), "shape", "decode(shape=) of "
                       "another shape", tahq.ShapeError)
    # shapes are checked before any copy: a 2^41-element view (non-contiguous,
    # float16: both would need a copy) is a ShapeError, not a MemoryError
    for dt in (np.float32, np.float16):
        huge = np.broadcast_to(np.zeros((), dt), (2 ** 21, 2 ** 10, 2 ** 10))
        for what, fn in (("encode", lambda: lib.encode(huge)),
                         ("encode_paper_v1", lambda: lib.encode_paper_v1(huge))):
            try:
                fn()
                check(False, "%s of a 2^41-element view accepted" % what)
            except tahq.ShapeError:
                pass
            except (MemoryError, Exception) as e:  # noqa: BLE001
                check(False, "%s of a 2^41-element %s view: %s, not ShapeError"
                      % (what, np.dtype(dt).name, type(e).__name__))
    # out aliasing the message: refused, message and out unchanged
    for kind in ("decode", "error_bound"):
        buf = np.zeros(len(lib.encode(x)) + x.size * 8, np.uint8)
        n = lib.encode_into(x, buf)
        before = buf.copy()
        dt = np.float32 if kind == "decode" else np.float64
        alias = buf[:x.size * np.dtype(dt).itemsize].view(dt)
        try:
            getattr(lib, kind)(buf[:n], out=alias)
            check(False, "%s(out=) aliasing the message accepted" % kind)
        except ValueError as e:
            check("shares memory" in str(e), "%s aliasing: %s" % (kind, e))
        check(np.array_equal(buf, before), "%s aliasing: buffer changed" % kind)
        # control: the same out size in a separate buffer is taken
        check(getattr(lib, kind)(buf[:n], out=np.empty(x.size, dt)) is not None,
              "%s: control: a separate out refused" % kind)
    raw = np.zeros(x.nbytes + lib.encode_bound(x.shape), np.uint8)
    xs = raw[:x.nbytes].view(np.float32).reshape(x.shape)
    xs[...] = x
    try:
        lib.encode_into(xs, raw)
        check(False, "encode_into(out=) aliasing x accepted")
    except ValueError as e:
        check("shares memory" in str(e) and np.array_equal(xs, x), "encode_into aliasing: %s"
              % e)
    # decode reads the shape before the CRC pass: a header claiming 2^40
    # elements for a small payload, or a corrupted message with a shape= or
    # out= that does not fit, still gives the library's error first
    good = lib.encode(x)
    for offset, value, what in ((20, 1 << 20, "B = 2^20"), (100, None, "a payload bit")):
        bad = bytearray(good)
        if value is None:
            bad[offset] ^= 1
        else:
            bad[offset:offset + 4] = value.to_bytes(4, "little")
        for kw in ({}, {"shape": (3, 3)}, {"out": np.empty(5, np.float32)}):
            try:
                lib.decode(bytes(bad), **kw)
                check(False, "decode of a message with %s changed accepted" % what)
            except tahq.TahqError as e:
                check(e.name in ("err_crc", "err_header", "err_length"),
                      "%s changed, %s: %s instead of the message's error"
                      % (what, sorted(kw), e.name))
            except MemoryError:
                check(False, "%s changed: MemoryError" % what)
    print("interface: signatures, keyword list, float16, shape=, shape before copy, "
          "aliasing refused")


def test_fixpoint_wire(lib):
    rng = np.random.default_rng(5)
    rows, C = 40, 96
    g = (rng.standard_normal((rows, C)) * np.linspace(1e-3, 10, C)).astype(np.float32)
    for bits in (2, 5, 6, 8):
        for meta in ("fp16", "bf16", "fp32"):
            codes, steps = lib.fixpoint_encode(g, bits, meta)
            wire = tahq.fixpoint_pack(codes, steps, bits, meta)
            check(len(wire) == tahq.fixpoint_wire_bytes(rows, C, bits, meta),
                  "fixpoint_pack %d %s: %d bytes" % (bits, meta, len(wire)))
            c2, s2 = tahq.fixpoint_unpack(wire, g.shape, bits, meta)
            check(np.array_equal(c2, codes) and same_f32(s2, steps),
                  "fixpoint_unpack %d %s: not the packed codes and steps" % (bits, meta))
    # the paper's backward: 6 bits packed, against one byte per code in memory
    codes, steps = lib.fixpoint_encode(g, 6)
    wire = tahq.fixpoint_pack(codes, steps, 6)
    check(len(wire) < codes.nbytes + steps.size * 2, "6-bit wire not smaller than bytes")
    # control: a changed bit in the stream changes a code
    w = bytearray(wire)
    w[3] ^= 0x10
    c3, _ = tahq.fixpoint_unpack(bytes(w), g.shape, 6)
    check(not np.array_equal(c3, codes), "control: a flipped bit left the codes unchanged")
    for bad, what in ((wire[:-1], "one byte short"), (wire + b"\0", "one byte long")):
        try:
            tahq.fixpoint_unpack(bad, g.shape, 6)
            check(False, "fixpoint_unpack: %s accepted" % what)
        except tahq.ShapeError:
            pass
    odd = lib.fixpoint_encode(g[:1, :7].copy(), 6)
    ow = bytearray(tahq.fixpoint_pack(*odd, 6))
    ow[(7 * 6) // 8] |= 0x80  # a padding bit after the 42 code bits
    try:
        tahq.fixpoint_unpack(bytes(ow), (1, 7), 6)
        check(False, "fixpoint_unpack: nonzero padding accepted")
    except ValueError:
        pass
    try:
        tahq.fixpoint_pack(codes, steps + np.float32(1e-4), 6)
        check(False, "fixpoint_pack: steps that fp16 cannot hold accepted")
    except ValueError:
        pass
    print("fixpoint wire: packed to fixpoint_wire_bytes, exact round trip, bad input refused")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libtahq shared library")
    ap.add_argument("--cli", required=True, help="the tahq program")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    work = tempfile.mkdtemp(dir=args.workdir)
    os.environ["TAHQ_TEST_LIB"] = os.path.abspath(args.lib)
    lib = tahq.Library(args.lib)
    try:
        test_validation(lib)
        test_names(lib)
        test_against_cli(lib, args.cli, work)
        test_buffers(lib)
        test_fixpoint(lib)
        test_lookup(work)
        test_fast_path(lib)
        test_interface(lib)
        test_fixpoint_wire(lib)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return verdict("test_package.py")


if __name__ == "__main__":
    sys.exit(main())

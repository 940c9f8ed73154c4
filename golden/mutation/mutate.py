#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""mutate.py - mutation adequacy of the golden vectors (issue 23).

Each mutant of catalogue.txt is one textual patch of one ref/ source: an
exact original snippet and its replacement. For each mutant this script

  1. copies ref/ of the source tree into WORK/mutants/ID/ref (ref/ itself is
     never touched) and applies the patch; the snippet must occur exactly
     once in the file, otherwise the catalogue is stale and the script fails;
  2. builds a mutant `tahq` program from the copy: the mutated source is
     compiled (all of ref/ when the patch is in a header) and linked with
     the unchanged objects of ref/ and the program objects (cli/, golden/kit/,
     support/), compiled once per run from the same tree with the project's
     strict floating-point flags
     (-ffp-contract=off -fno-fast-math -fexcess-precision=standard), -O1 and
     -DTAHQ_SCALAR_ONLY (one code path: the scalar forms, which the test
     suite checks give the same bytes as the vector ones);
  3. runs the mutant against golden cases through golden/tahq_adapter.sh
     (the --run protocol of `tahq conform`) and judges each case EXACTLY:
       encode     the message byte for byte, and the decoded values of the
                  expected message bit for bit;
       paper_v1   the same (exact, stricter than conform's field tolerance);
       *_error    the first err_* word the mutant reports.
     A mutant is killed when at least one case fails.

An unmutated build ("control") must pass every case it is run on first, so a
broken judge cannot kill everything.

Modes:
  (default, --check)  the CTest: every mutant on its recorded killing cases
        (kills.json); fails if a recorded case no longer kills, if a mutant
        is not in kills.json, if a mutant marked equivalent has a recorded
        kill, or if the catalogue does not apply or build.
  --record  search every case in manifest order, stopping after --first N
        kills per mutant (default 3); writes kills.json and RESULTS.md.
  --full    every mutant on every case (no early stop); with --record the
        full kill lists are kept too.

Exit status: 0 all good, 1 a check failed, 2 a catalogue or build error.
"""
import argparse
import concurrent.futures as cf
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_DEFAULT = os.path.abspath(os.path.join(HERE, "..", ".."))

STRICT = ["-ffp-contract=off", "-fno-fast-math", "-fexcess-precision=standard"]
CFLAGS = ["-std=c11", "-O1", "-DNDEBUG", "-DTAHQ_SCALAR_ONLY=1", "-w"] + STRICT


class CatalogueError(Exception):
    pass


# ---------------------------------------------------------------------------
# catalogue
# ---------------------------------------------------------------------------

def parse_catalogue(path):
    """Blocks:
        === ID
        rule: SPEC section
        file: ref/FILE
        what: one line
        equivalent: argument (optional; the mutant is then not counted)
        --- find
        exact lines of the original
        +++ replace
        replacement lines
    A block may hold several find/replace pairs (all in the same file)."""
    mutants = []
    cur = None
    mode = None
    buf = []

    def flush_text():
        nonlocal buf
        text = "\n".join(buf)
        buf = []
        return text

    def close_pair():
        if mode == "replace":
            cur["hunks"][-1][1] = flush_text()

    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for ln, line in enumerate(lines, 1):
        if line.startswith("=== "):
            if cur is not None:
                close_pair()
                mutants.append(cur)
            cur = {"id": line[4:].strip(), "hunks": [], "line": ln, "meta": {}}
            mode = "meta"
            continue
        if cur is None or line.startswith("# ") or line == "#":
            continue  # preamble, comments
        if line == "--- find":
            close_pair()
            mode = "find"
            buf = []
            continue
        if line == "+++ replace":
            if mode != "find":
                raise CatalogueError(f"{path}:{ln}: '+++ replace' without '--- find'")
            cur["hunks"].append([flush_text(), None])
            mode = "replace"
            continue
        if mode == "meta":
            if not line.strip() or line.startswith("#"):
                continue
            m = re.match(r"^([a-z_]+):\s?(.*)$", line)
            if not m:
                raise CatalogueError(f"{path}:{ln}: bad header line {line!r}")
            k, v = m.group(1), m.group(2)
            if k in cur["meta"]:
                cur["meta"][k] += " " + v
            else:
                cur["meta"][k] = v
        else:
            buf.append(line)
    if cur is not None:
        close_pair()
        mutants.append(cur)
    # trailing blank lines before the next block belong to no snippet
    ids = set()
    for m in mutants:
        for h in m["hunks"]:
            h[0] = h[0].rstrip("\n")
            h[1] = h[1].rstrip("\n")
        for key in ("rule", "file", "what"):
            if key not in m["meta"]:
                raise CatalogueError(f"mutant {m['id']} (line {m['line']}): no '{key}:'")
        if not m["hunks"]:
            raise CatalogueError(f"mutant {m['id']}: no find/replace pair")
        if not re.match(r"^[a-z0-9][a-z0-9.-]*$", m["id"]):
            raise CatalogueError(f"mutant id {m['id']!r}: use [a-z0-9.-]")
        if m["id"] in ids:
            raise CatalogueError(f"mutant id {m['id']} twice")
        ids.add(m["id"])
        if not m["meta"]["file"].startswith("ref/"):
            raise CatalogueError(f"mutant {m['id']}: file must be under ref/")
        for find, repl in m["hunks"]:
            if not find.strip():
                raise CatalogueError(f"mutant {m['id']}: empty snippet")
            if find == repl:
                raise CatalogueError(f"mutant {m['id']}: replacement equals the original")
    return mutants


def apply_patch(m, text):
    for i, (find, repl) in enumerate(m["hunks"]):
        n = text.count(find)
        if n != 1:
            raise CatalogueError(
                f"mutant {m['id']}: snippet {i + 1} of {m['meta']['file']} found {n} times "
                f"(must be exactly once): {find.splitlines()[0].strip()!r}")
        text = text.replace(find, repl)
    return text


# ---------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------

def cmake_list(text, pattern):
    m = re.search(pattern, text, re.S)
    if not m:
        raise CatalogueError(f"source list not found: {pattern}")
    return m.group(1).split()


# The folders of the tahq program's sources (source_lists), in the order
# their headers are searched.
PROGRAM_DIRS = ("cli", "golden/kit", "golden/oracles", "support")


def obj_name(src):
    """The object file of a program source "folder/file.c": one flat folder,
    so the folder is part of the name."""
    return src[:-2].replace("/", "__") + ".o"


def source_lists(root):
    with open(os.path.join(root, "ref", "CMakeLists.txt")) as f:
        rtxt = f.read()
    ref = [os.path.basename(s) for s in
           cmake_list(rtxt, r"set\(TAHQ_REF_SOURCES(.*?)CACHE") if s.endswith(".c")]
    # libtahq's sources outside ref/ (cpu/: the parallel codec), built on
    # ref/internal.h: never mutated, recompiled against a mutated header
    with open(os.path.join(root, "cpu", "CMakeLists.txt")) as f:
        ctxt = f.read()
    cpu = [os.path.basename(s) for s in
           cmake_list(ctxt, r"set\(TAHQ_CPU_SOURCES(.*?)CACHE") if s.endswith(".c")]
    # the tahq program: the tools' library (support/), the conformance kit
    # (golden/kit/), the gain oracle it links (golden/oracles/) and the
    # program's own files (cli/), as folder/file.c
    cli = []
    for folder, pattern in (("support", r"add_library\(tahq_support STATIC([^)]*)\)"),
                            ("golden/kit", r"add_library\(tahq_golden STATIC([^)]*)\)"),
                            ("golden/oracles", r"add_library\(tahq_oracle_gain STATIC([^)]*)\)"),
                            ("cli", r"add_executable\(tahq_cli([^)]*)\)")):
        with open(os.path.join(root, folder, "CMakeLists.txt")) as f:
            ctxt = f.read()
        cli += [folder + "/" + s for s in cmake_list(ctxt, pattern) if s.endswith(".c")]
    return ref, cpu, cli


def project_version(root):
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        m = re.search(r"project\(tahq VERSION (\d+)\.(\d+)\.(\d+)", f.read())
    return m.groups()


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    return r.returncode, r.stdout


def compile_c(cc, src, obj, incs, extra=()):
    cmd = [cc] + CFLAGS + list(extra) + [f"-I{i}" for i in incs] + ["-c", src, "-o", obj]
    rc, out = run(cmd)
    if rc != 0:
        raise CatalogueError(f"compile failed: {' '.join(cmd)}\n{out[-3000:]}")



def jansson_libs():
    """The link flags of jansson, which the tahq program reads and writes JSON
    with (pkg-config, else -ljansson)."""
    try:
        out = subprocess.run(["pkg-config", "--libs", "jansson"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.split():
            return out.stdout.split()
    except OSError:
        pass
    return ["-ljansson"]

class Builder:
    def __init__(self, root, work, cc, jobs):
        self.root, self.work, self.cc, self.jobs = root, work, cc, jobs
        self.ref_src, self.cpu_src, self.cli_src = source_lists(root)
        self.gen = os.path.join(work, "gen")
        os.makedirs(self.gen, exist_ok=True)
        major, minor, patch = project_version(root)
        with open(os.path.join(root, "cmake", "tahq_version.h.in")) as f:
            v = f.read()
        v = (v.replace("@PROJECT_VERSION_MAJOR@", major).replace("@PROJECT_VERSION_MINOR@", minor)
             .replace("@PROJECT_VERSION_PATCH@", patch)
             .replace("@PROJECT_VERSION@", f"{major}.{minor}.{patch}"))
        self._write_if_changed(os.path.join(self.gen, "tahq_version.h"), v)

    @staticmethod
    def _write_if_changed(path, text):
        if os.path.exists(path):
            with open(path) as f:
                if f.read() == text:
                    return
        with open(path, "w") as f:
            f.write(text)

    def _incs(self, refdir):
        return [os.path.join(self.root, "include"), self.gen, refdir]

    def _digest(self, paths, extra=""):
        h = hashlib.sha256(extra.encode())
        for p in sorted(paths):
            h.update(p.encode())
            with open(p, "rb") as f:
                h.update(f.read())
        return h.hexdigest()[:16]

    def _parallel(self, jobs_list):
        with cf.ThreadPoolExecutor(max_workers=self.jobs) as ex:
            for fut in [ex.submit(compile_c, *j) for j in jobs_list]:
                fut.result()

    def base_objects(self):
        """cli objects and unmutated ref objects, cached by content."""
        inc = os.path.join(self.root, "include")
        headers = [os.path.join(inc, f) for f in os.listdir(inc) if f.endswith(".h")]
        ref_dir = os.path.join(self.root, "ref")
        ref_h = [os.path.join(ref_dir, f) for f in os.listdir(ref_dir) if f.endswith(".h")]
        # the program's folders: every .c, .h and .inc of them is in the cache key
        prog_dirs = [os.path.join(self.root, p) for p in PROGRAM_DIRS]
        cli_all = [os.path.join(pd, f) for pd in prog_dirs for f in os.listdir(pd)
                   if f.endswith((".c", ".h", ".inc"))]
        cpu_dir = os.path.join(self.root, "cpu")
        cpu_all = [os.path.join(cpu_dir, f) for f in os.listdir(cpu_dir) if f.endswith((".c", ".h"))]
        common_dir = os.path.join(self.root, "common")
        common_h = [os.path.join(common_dir, f) for f in os.listdir(common_dir) if f.endswith(".h")]
        key = self._digest(headers + ref_h + cli_all + cpu_all + common_h +
                           [os.path.join(ref_dir, s) for s in self.ref_src],
                           " ".join(CFLAGS) + self.cc)
        d = os.path.join(self.work, "base-" + key)
        stamp = os.path.join(d, "ok")
        self.base = d
        if os.path.exists(stamp):
            return
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, "cli"))
        os.makedirs(os.path.join(d, "ref"))
        os.makedirs(os.path.join(d, "cpu"))
        jobs = []
        # common/: tahq_datadir.h, where the program finds its plot scripts
        for s in self.cli_src:
            jobs.append((self.cc, os.path.join(self.root, s), os.path.join(d, "cli", obj_name(s)),
                         self._incs(ref_dir) + prog_dirs + [common_dir, cpu_dir],
                         ["-D_POSIX_C_SOURCE=200809L"]))
        for s in self.ref_src:
            jobs.append((self.cc, os.path.join(ref_dir, s), os.path.join(d, "ref", s[:-2] + ".o"),
                         self._incs(ref_dir)))
        for s in self.cpu_src:
            jobs.append((self.cc, os.path.join(cpu_dir, s), os.path.join(d, "cpu", s[:-2] + ".o"),
                         self._incs(ref_dir)))
        self._parallel(jobs)
        open(stamp, "w").close()

    def link(self, out, ref_objs, cpu_objs=None):
        cli_objs = [os.path.join(self.base, "cli", obj_name(s)) for s in self.cli_src]
        if cpu_objs is None:
            cpu_objs = [os.path.join(self.base, "cpu", s[:-2] + ".o") for s in self.cpu_src]
        cmd = ([self.cc, "-o", out] + cli_objs + ref_objs + cpu_objs + jansson_libs() +
               ["-lm", "-lpthread"])
        rc, o = run(cmd)
        if rc != 0:
            raise CatalogueError(f"link failed: {' '.join(cmd)}\n{o[-3000:]}")

    def control(self):
        out = os.path.join(self.base, "tahq-control")
        if not os.path.exists(out):
            self.link(out, [os.path.join(self.base, "ref", s[:-2] + ".o") for s in self.ref_src])
        return out

    def mutant(self, m):
        d = os.path.join(self.work, "mutants", m["id"])
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        refcopy = os.path.join(d, "ref")
        shutil.copytree(os.path.join(self.root, "ref"), refcopy)
        rel = m["meta"]["file"][len("ref/"):]
        target = os.path.join(refcopy, rel)
        if not os.path.isfile(target):
            raise CatalogueError(f"mutant {m['id']}: no file {m['meta']['file']}")
        with open(target, encoding="utf-8") as f:
            text = f.read()
        with open(target, "w", encoding="utf-8") as f:
            f.write(apply_patch(m, text))
        objs = []
        header = rel.endswith(".h")
        jobs = []
        for s in self.ref_src:
            if header or s == rel:
                o = os.path.join(d, s[:-2] + ".o")
                jobs.append((self.cc, os.path.join(refcopy, s), o, self._incs(refcopy)))
            else:
                o = os.path.join(self.base, "ref", s[:-2] + ".o")
            objs.append(o)
        if not header and rel not in self.ref_src:
            raise CatalogueError(f"mutant {m['id']}: {rel} is not a libtahq source")
        cpu_objs = None
        if header:  # cpu/ includes ref/internal.h: rebuilt against the mutated copy
            cpu_objs = []
            for s in self.cpu_src:
                o = os.path.join(d, "cpu_" + s[:-2] + ".o")
                jobs.append((self.cc, os.path.join(self.root, "cpu", s), o, self._incs(refcopy)))
                cpu_objs.append(o)
        try:
            self._parallel(jobs)
        except CatalogueError as e:
            raise CatalogueError(f"mutant {m['id']} does not compile (catalogue error): {e}")
        exe = os.path.join(d, "tahq")
        self.link(exe, objs, cpu_objs)
        return exe


# ---------------------------------------------------------------------------
# judging
# ---------------------------------------------------------------------------

def npy_data(path):
    with open(path, "rb") as f:
        b = f.read()
    if b[:6] != b"\x93NUMPY":
        return None
    if b[6] == 1:
        hl = b[8] | (b[9] << 8)
        off = 10 + hl
    else:
        hl = int.from_bytes(b[8:12], "little")
        off = 12 + hl
    header = b[off - hl:off].decode("latin1")
    if "'<f4'" not in header or "True" in header.split("fortran_order")[1][:8]:
        return None
    return b[off:]


def first_err(text):
    m = re.search(r"err_[a-z_]+", text)
    return m.group(0) if m else None


class Judge:
    def __init__(self, root, vectors, timeout):
        self.root = root
        self.vectors = vectors
        self.timeout = timeout
        with open(os.path.join(vectors, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.cases = self.manifest["cases"]
        self.by_id = {c["id"]: c for c in self.cases}
        self.adapter = os.path.join(root, "golden", "tahq_adapter.sh")
        self._expected = {}

    def expected(self, rel):
        if rel not in self._expected:
            p = os.path.join(self.vectors, rel)
            self._expected[rel] = npy_data(p) if rel.endswith(".npy") else open(p, "rb").read()
        return self._expected[rel]

    def _run(self, exe, args, tmp):
        try:
            r = subprocess.run(["sh", self.adapter, exe] + args, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               timeout=self.timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return None, "timeout"
        return r.returncode, r.stderr.decode("utf-8", "replace")

    def _decode_exact(self, exe, c, message_path, paper_v1, cfg, tmp):
        """None if the message of the set at message_path decodes to the
        case's expected values bit for bit, else a short reason."""
        msg = os.path.join(tmp, "msg.bin")
        shutil.copyfile(os.path.join(self.vectors, message_path), msg)
        dec = os.path.join(tmp, "dec.npy")
        args = ["decode", msg, dec]
        if paper_v1:  # the message carries no header: configuration and shape
            args += ["--config", cfg, "--shape", "x".join(str(v) for v in c["shape"])]
        rc, err = self._run(exe, args, tmp)
        if rc != 0 or not os.path.exists(dec):
            return f"decode failed ({first_err(err or '') or rc})"
        if npy_data(dec) != self.expected(c["decoded"]["path"]):
            return "decoded values differ"
        return None

    def case(self, exe, cid):
        """None if the case passes exactly, else a short reason."""
        c = self.by_id[cid]
        kind = c["kind"]
        cfg = json.dumps(c.get("config", {}), separators=(",", ":"))
        with tempfile.TemporaryDirectory(prefix="tahq-mut-") as tmp:
            if kind in ("encode", "paper_v1", "encode_error"):
                inp = os.path.join(tmp, "in.npy")
                shutil.copyfile(os.path.join(self.vectors, c["input"]["path"]), inp)
                out = os.path.join(tmp, "out.bin")
                rc, err = self._run(exe, ["encode", inp, out, "--config", cfg], tmp)
                if kind == "encode_error":
                    if rc is None:
                        return "encode timed out"
                    got = "ok" if rc == 0 else (first_err(err) or "no err_ word")
                    return None if got == c["expected_status"] else \
                        f"encode status {got}, expected {c['expected_status']}"
                if rc != 0 or not os.path.exists(out):
                    return f"encode failed ({first_err(err or '') or rc})"
                with open(out, "rb") as f:
                    if f.read() != self.expected(c["message"]["path"]):
                        return "message bytes differ"
                # the expected message decodes to the expected values
                return self._decode_exact(exe, c, c["message"]["path"], kind == "paper_v1",
                                          cfg, tmp)
            if kind in ("decode", "paper_v1_decode"):
                # a crafted valid message: its decoded values bit for bit
                return self._decode_exact(exe, c, c["input"]["path"], kind == "paper_v1_decode",
                                          cfg, tmp)
            if kind == "decode_error":
                inp = os.path.join(tmp, "in.bin")
                shutil.copyfile(os.path.join(self.vectors, c["input"]["path"]), inp)
                rc, err = self._run(exe, ["decode", inp, os.path.join(tmp, "out.npy")], tmp)
                if rc is None:
                    return "decode timed out"
                got = "ok" if rc == 0 else (first_err(err) or "no err_ word")
                return None if got == c["expected_status"] else \
                    f"decode status {got}, expected {c['expected_status']}"
            return f"unknown kind {kind}"

    def search(self, exe, ids, jobs, stop_after=None):
        """Kills among ids (in order): [(id, reason)]; stops early after
        stop_after kills (None: run all)."""
        kills = []
        it = iter(ids)
        with cf.ThreadPoolExecutor(max_workers=jobs) as ex:
            pending = {}
            order = []
            done = {}

            def submit_next():
                cid = next(it, None)
                if cid is not None:
                    order.append(cid)
                    pending[cid] = ex.submit(self.case, exe, cid)
                return cid

            for _ in range(jobs * 2):
                submit_next()
            while order:
                cid = order.pop(0)
                done[cid] = pending.pop(cid).result()
                if done[cid] is not None:
                    kills.append((cid, done[cid]))
                    if stop_after is not None and len(kills) >= stop_after:
                        for f in pending.values():
                            f.cancel()
                        break
                submit_next()
        return kills


# ---------------------------------------------------------------------------
# reports
# ---------------------------------------------------------------------------

def git_head(root):
    rc, out = run(["git", "-C", root, "rev-parse", "--short", "HEAD"])
    return out.strip() if rc == 0 else "unknown"


def write_results(path, mutants, kills, vectors_name, commit, mode, control_cases,
                  catalogue="catalogue.txt"):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    eq = [m for m in mutants if "equivalent" in m["meta"]]
    counted = [m for m in mutants if "equivalent" not in m["meta"]]
    killed = [m for m in counted if kills[m["id"]]["kills"]]
    surv = [m for m in counted if not kills[m["id"]]["kills"]]
    L = []
    L.append("# Mutation results (golden/mutation" +
             ("" if catalogue == "catalogue.txt" else f", {catalogue}") + ")")
    L.append("")
    if catalogue != "catalogue.txt":
        mode = f"--catalogue golden/mutation/{catalogue} --vectors {vectors_name} {mode}"
    L.append(f"Generated by `golden/mutation/mutate.py {mode}` on {now}, source tree at commit "
             f"`{commit}` (plus any uncommitted changes of the tree it was run on), vectors "
             f"`{vectors_name}` ({control_cases} cases; the unmutated control build passes "
             f"every one exactly).")
    L.append("")
    L.append(f"Catalogue: {len(mutants)} mutants; {len(eq)} shown equivalent (listed, not "
             f"counted); of the other {len(counted)}: **{len(killed)} killed**, "
             f"**{len(surv)} survived**.")
    L.append("")
    L.append("A mutant is killed when one case fails in exact mode: message bytes, decoded "
             "values bit for bit, or the error status (paper_v1 cases exact as well). "
             "\"killed by\" lists the first killing cases in manifest order"
             + (" (every killing case was searched)" if "full" in mode else
                " (the search stops at the third)") + ".")
    L.append("")
    L.append("| mutant | SPEC rule | what | killed by |")
    L.append("|---|---|---|---|")
    for m in mutants:
        k = kills[m["id"]]
        if "equivalent" in m["meta"]:
            res = "EQUIVALENT (see catalogue)"
        elif k["kills"]:
            ids = [x[0] for x in k["kills"][:3]]
            res = ", ".join(f"`{i}`" for i in ids)
            if k.get("n_killing") is not None:
                res += f" ({k['n_killing']} cases)"
            res += f" — {k['kills'][0][1]}"
        else:
            res = "**SURVIVED**"
        what = m["meta"]["what"].replace("|", "\\|")
        L.append(f"| `{m['id']}` | {m['meta']['rule']} | {what} | {res} |")
    L.append("")
    if eq:
        L.append("## Equivalent mutants")
        L.append("")
        for m in eq:
            L.append(f"- `{m['id']}` ({m['meta']['rule']}): {m['meta']['equivalent']}")
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L))


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=ROOT_DEFAULT, help="source tree (ref/, include/, cli/, golden/kit/, support/)")
    ap.add_argument("--vectors", default=None,
                    help="golden set (default ROOT/golden/v2 where it exists, else ROOT/golden/v1)")
    ap.add_argument("--case-prefix", action="append", default=[],
                    help="search only the cases whose id starts with this (--record)")
    ap.add_argument("--equiv", action="store_true",
                    help="build equiv_check.c and run its exhaustive checks (minutes of CPU)")
    ap.add_argument("--catalogue", action="append", default=[],
                    help="catalogue file (repeatable: the mutants of all; default catalogue.txt)")
    ap.add_argument("--min-kills", type=int, default=1,
                    help="check mode: every counted mutant needs this many recorded killing "
                         "cases, each of which must still kill it (golden/v4: 2)")
    ap.add_argument("--per-mutant", type=int, default=0,
                    help="check mode: run each mutant on its first N recorded cases only "
                         "(at least --min-kills); 0: on all of them")
    ap.add_argument("--kills", default=os.path.join(HERE, "kills.json"))
    ap.add_argument("--results", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--work", default=None, help="build folder (default ROOT/build-mut/mutation)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per adapter run")
    ap.add_argument("--record", action="store_true", help="search and write kills.json, RESULTS.md")
    ap.add_argument("--full", action="store_true", help="every mutant on every case")
    ap.add_argument("--first", type=int, default=3, help="kills to find per mutant (--record)")
    ap.add_argument("--only", action="append", default=[], help="mutant ids (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the catalogue and check it applies")
    ap.add_argument("--no-regen", action="store_true",
                    help="skip the check that golden/v2 (v3) is what golden-gen --set v2 (v3) "
                         "writes")
    a = ap.parse_args()

    root = os.path.abspath(a.root)
    if a.vectors:
        vectors = os.path.abspath(a.vectors)
    elif os.path.exists(os.path.join(root, "golden", "v2", "manifest.json")):
        vectors = os.path.join(root, "golden", "v2")
    else:
        vectors = os.path.join(root, "golden", "v1")
    work = os.path.abspath(a.work or os.path.join(root, "build-mut", "mutation"))
    os.makedirs(work, exist_ok=True)
    catalogues = a.catalogue or [os.path.join(HERE, "catalogue.txt")]
    a.catalogue = catalogues[0]
    try:
        mutants = [m for c in catalogues for m in parse_catalogue(c)]
        if len({m["id"] for m in mutants}) != len(mutants):
            raise CatalogueError("a mutant id occurs in two catalogues")
        # staleness first, for every mutant: each snippet exactly once
        for m in mutants:
            p = os.path.join(root, m["meta"]["file"])
            if not os.path.isfile(p):
                raise CatalogueError(f"mutant {m['id']}: no file {m['meta']['file']}")
            with open(p, encoding="utf-8") as f:
                apply_patch(m, f.read())
    except CatalogueError as e:
        print(f"mutate: CATALOGUE ERROR: {e}", file=sys.stderr)
        return 2
    if a.list:
        for m in mutants:
            eq = " (equivalent)" if "equivalent" in m["meta"] else ""
            print(f"{m['id']:44s} {m['meta']['rule']:10s} {m['meta']['file']}{eq}")
        print(f"mutate: {len(mutants)} mutants, every snippet found exactly once")
        return 0
    sel = mutants
    if a.only:
        unknown = set(a.only) - {m["id"] for m in mutants}
        if unknown:
            print(f"mutate: unknown mutant ids {sorted(unknown)}", file=sys.stderr)
            return 2
        sel = [m for m in mutants if m["id"] in a.only]

    judge = Judge(root, vectors, a.timeout)
    all_ids = [c["id"] for c in judge.cases]
    search_ids = [i for i in all_ids
                  if not a.case_prefix or any(i.startswith(p) for p in a.case_prefix)]
    recorded = {}
    if not a.record:
        if not os.path.exists(a.kills):
            print(f"mutate: no {a.kills}: run --record first", file=sys.stderr)
            return 2
        with open(a.kills) as f:
            recorded = json.load(f)["mutants"]

    try:
        b = Builder(root, work, a.cc, a.jobs)
        b.base_objects()
        control = b.control()
    except CatalogueError as e:
        print(f"mutate: BUILD ERROR: {e}", file=sys.stderr)
        return 2

    if a.equiv:
        exe = os.path.join(b.base, "equiv_check")
        objs = [os.path.join(b.base, "ref", s[:-2] + ".o") for s in b.ref_src]
        rc, out = run([a.cc, "-std=c11", "-O2"] + STRICT + [f"-I{os.path.join(root, 'include')}",
                      f"-I{os.path.join(root, 'ref')}",
                      os.path.join(HERE, "equiv_check.c")] + objs + ["-lm", "-o", exe])
        if rc != 0:
            print(f"mutate: equiv_check does not build:\n{out}", file=sys.stderr)
            return 2
        bad = 0
        for mode in (["clamp"], ["bf16-trunc"], ["scale-minus-one"], ["scale-down"],
                     ["scale-steps"]):
            r = subprocess.run([exe] + mode)
            bad |= r.returncode != 0
        return 1 if bad else 0

    # the control: the unmutated build passes every case the run will use
    if a.record or a.full:
        ctrl_ids = search_ids
    else:
        def run_ids(mid):
            ks = recorded.get(mid, {}).get("killed_by", [])
            return ks[:max(a.per_mutant, a.min_kills)] if a.per_mutant else ks
        ctrl_ids = sorted({c for m in sel for c in run_ids(m["id"])}, key=all_ids.index)
    bad = judge.search(control, ctrl_ids, a.jobs)
    if bad:
        for cid, why in bad[:10]:
            print(f"mutate: CONTROL FAILS {cid}: {why}", file=sys.stderr)
        print(f"mutate: the unmutated build fails {len(bad)} of {len(ctrl_ids)} cases: "
              "the judge or the build is wrong", file=sys.stderr)
        return 2
    print(f"mutate: control passes {len(ctrl_ids)} cases", flush=True)

    # golden/v2 and golden/v3 are written by `tahq golden-gen --set v2|v3`
    # from this tree: the control build must write the set again byte for
    # byte (so the set, the cases added for the mutants and their kill lists
    # match the sources)
    set_name = judge.manifest.get("set")
    if not a.record and set_name in ("v2", "v3", "v4") and not a.no_regen:
        regen = os.path.join(work, f"{set_name}-regen")
        shutil.rmtree(regen, ignore_errors=True)
        rc, out = run([control, "golden-gen", regen, "--set", set_name])
        if rc != 0:
            print(f"mutate: FAIL golden-gen --set {set_name}: {out.strip()}", file=sys.stderr)
            return 1
        diff = []
        for dp, _, fs in os.walk(vectors):
            for fn in fs:
                p_ = os.path.join(dp, fn)
                q_ = os.path.join(regen, os.path.relpath(p_, vectors))
                if not os.path.exists(q_) or open(p_, "rb").read() != open(q_, "rb").read():
                    diff.append(os.path.relpath(p_, vectors))
        n_regen = sum(len(fs) for _, _, fs in os.walk(regen))
        n_set = sum(len(fs) for _, _, fs in os.walk(vectors))
        if diff or n_regen != n_set:
            print(f"mutate: FAIL {vectors} differs from golden-gen --set {set_name}: "
                  f"{len(diff)} files differ ({', '.join(diff[:5])}), {n_set} vs {n_regen} files",
                  file=sys.stderr)
            return 1
        shutil.rmtree(regen, ignore_errors=True)
        print(f"mutate: {os.path.basename(vectors)} regenerated byte for byte ({n_set} files)", flush=True)

    failures = []
    results = {}
    for m in sel:
        mid = m["id"]
        equivalent = "equivalent" in m["meta"]
        try:
            exe = b.mutant(m)
        except CatalogueError as e:
            print(f"mutate: CATALOGUE ERROR: {e}", file=sys.stderr)
            return 2
        if a.record or a.full:
            kills = judge.search(exe, search_ids, a.jobs, None if a.full else a.first)
            entry = {"rule": m["meta"]["rule"], "equivalent": equivalent,
                     "killed_by": [k[0] for k in kills[:a.first]],
                     "kills": kills}
            if a.full:
                entry["n_killing"] = len(kills)
                entry["all_killing"] = [k[0] for k in kills]
            results[mid] = entry
            if equivalent and kills:
                failures.append(f"{mid}: marked equivalent but killed by {kills[0][0]}")
                state = f"KILLED (marked equivalent!) by {kills[0][0]}"
            elif equivalent:
                state = "equivalent, not killed"
            elif kills:
                state = f"killed by {', '.join(k[0] for k in kills[:3])}: {kills[0][1]}"
            else:
                state = "SURVIVED"
                failures.append(f"{mid}: survived every case")
            print(f"{mid}: {state}", flush=True)
        else:
            rec = recorded.get(mid)
            if rec is None:
                failures.append(f"{mid}: not in {os.path.basename(a.kills)} (run --record)")
                print(f"{mid}: NOT RECORDED", flush=True)
                continue
            if rec.get("equivalent") != equivalent:
                failures.append(f"{mid}: equivalence mark differs from the record")
            if equivalent:
                print(f"{mid}: equivalent (argument in the catalogue); not run", flush=True)
                continue
            want = rec.get("killed_by", [])
            if not want:
                failures.append(f"{mid}: recorded as a survivor")
                print(f"{mid}: SURVIVOR on record", flush=True)
                continue
            if len(want) < a.min_kills:
                failures.append(f"{mid}: {len(want)} recorded killing cases, fewer than "
                                f"--min-kills {a.min_kills}")
            want = run_ids(mid)
            got = judge.search(exe, want, a.jobs)
            got_ids = [k[0] for k in got]
            if got_ids != want:
                lost = [c for c in want if c not in got_ids]
                failures.append(f"{mid}: kill list changed: {', '.join(lost)} no longer kill")
                print(f"{mid}: KILL LIST CHANGED ({', '.join(lost)} pass)", flush=True)
            else:
                print(f"{mid}: killed by {', '.join(want)}", flush=True)
        shutil.rmtree(os.path.join(work, "mutants", mid), ignore_errors=True)

    if a.only is None or not a.only:
        in_cat = {m["id"] for m in mutants}
        for mid in recorded:
            if mid not in in_cat:
                failures.append(f"{mid}: recorded in kills.json but not in the catalogue")

    if a.record:
        if a.only and os.path.exists(a.kills):
            with open(a.kills) as f:
                old = json.load(f)["mutants"]
            old.update(results)
            results = {m["id"]: old[m["id"]] for m in mutants if m["id"] in old}
        doc = {"schema": "tahq-mutation-kills/1", "vectors": os.path.relpath(vectors, root),
               "commit": git_head(root), "mode": "full" if a.full else f"first {a.first}",
               "mutants": results}
        with open(a.kills, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        if all(m["id"] in results for m in mutants):
            write_results(a.results, mutants, results, os.path.relpath(vectors, root),
                          git_head(root), "--record" + (" --full" if a.full else ""), len(all_ids),
                          os.path.basename(a.catalogue))

    n_eq = sum(1 for m in sel if "equivalent" in m["meta"])
    print(f"mutate: {len(sel)} mutants ({n_eq} equivalent), {len(failures)} problems")
    for f_ in failures:
        print(f"mutate: FAIL {f_}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

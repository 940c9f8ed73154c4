#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_layout.py - the include rules of ARCHITECTURE.md, the rule that
no source file declares a tahq_* prototype by hand (each comes from a
header), and the proof boundary: ref/ holds the scalar code the proofs read,
so no intrinsics, vector extensions or CPU dispatch (those live in cpu/).

Usage: check_layout.py ROOT          check the tree at ROOT (exit 0 or 1)
       check_layout.py --self-test   build small trees that break each rule
                                     and check that every one is reported

An include is resolved as the compiler would for the project's include
paths: next to the including file first, then in the folders the build puts
on the path (include/, ref/, cpu/, common/, support/, golden/kit/,
golden/oracles/, cli/, kernels/ and the other source folders). Names found nowhere in the tree (system headers, Frama-C's
__fc_integer.h, the generated tahq_version.h) are not checked.
"""
import os
import re
import sys
import tempfile

# Folder (first path component) -> the folders its files may include.
# A folder always may include itself. ref/ is the proof boundary: Frama-C
# reads ref/ and include/ and nothing else. kernels/ is C++ and CUDA: of
# ref/ it may use only the C/C++/CUDA-clean headers (KERNELS_FROM_REF).
ALLOWED = {
    "include": {"include"},
    "common": set(),
    "ref": {"include"},
    "proofs": {"include", "ref"},
    "cpu": {"include", "ref", "common"},
    "kernels": {"include", "ref", "common"},
    "support": {"include", "common"},
    "cli": {"include", "common", "support", "golden", "cpu"},
    "sgd_sim": {"include", "ref", "common"},
    "fuzz": {"include", "ref", "common", "support", "golden"},
    "tests": {"include", "ref", "cpu", "support", "common", "golden"},
    "golden": {"include", "ref", "support"},
    "python": {"include"},
}
KERNELS_FROM_REF = {"tahq_core.h", "tahq_logic.h", "tahq_ref_api.h"}
# Headers of ref/ that tests/ and golden/ (the mutation harness's
# equivalence checks) may include: the internal API and the core, not
# internal.h with its ACSL and build switches.
TESTS_FROM_REF = {"tahq_core.h", "tahq_logic.h", "tahq_ref_api.h"}
# Of ref/, the research programs (sgd_sim/) and the fuzzers may include only
# the scalar core, for the little-endian fields and bit views of their own
# wires and inputs.
CORE_FROM_REF = {"tahq_core.h"}
# Of cpu/, cli/ may include only the path selector: `tahq bench` runs each
# CPU path side by side (the static libtahq has its functions).
CLI_FROM_CPU = {"cpu_path.h"}
# Of golden/, only the conformance kit's library may be included from
# outside (its public header and the pieces the fuzzers read); the unit
# tests include only the oracles (spec_ref.h).
GOLDEN_LIBRARY = "golden/kit"
ORACLES = "golden/oracles"
# The oracles are independent transcriptions of the SPEC: they may include
# include/ and each other, never the code they check (ref/, cpu/, common/,
# kernels/) nor the kit; their Python may not import the tahq package.
ORACLES_MAY_INCLUDE = ("include", ORACLES)
ORACLE_PY_IMPORT_RE = re.compile(r"^\s*(?:import\s+tahq\b(?!_)|from\s+tahq\b(?!_)|import\s+ctypes\b|from\s+ctypes\b)", re.M)
SOURCE_EXT = (".c", ".h", ".cpp", ".cu", ".cuh", ".inc")
# Hand-written prototypes that stay until their folder is reorganized; each
# is printed, none fails the check. None is left.
PROTOTYPE_EXCEPTIONS = {}
SEARCH_ORDER = ["include", "ref", "cpu", "common", "support", "golden/kit", "golden/oracles", "cli",
                "kernels", "sgd_sim", "sgd_sim/transformer", "fuzz", "tests", "golden", "proofs"]

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)

# What ref/ may not contain (outside comments): Frama-C reads ref/, and code
# it cannot read belongs in cpu/ (cpu/ref_accel.c, declared to ref/ in
# ref/internal.h). The load-time clones of TAHQ_HOT (target_clones) compile
# the same scalar text twice and are allowed.
REF_FORBIDDEN = [
    ("a GCC/Clang vector extension", re.compile(r"vector_size|ext_vector_type|__builtin_shuffle"
                                                r"|__builtin_shufflevector|__builtin_convertvector")),
    ("an x86 builtin", re.compile(r"\b__builtin_ia32_\w+")),
    ("an intrinsic", re.compile(r"\b_mm(?:256|512)?_\w+\s*\(|\b__m(?:64|128|256|512)[dhi]?\b"
                                r"|\bv(?:ld|st)\d\w*_[fsu]\d+\s*\(")),
    ("an intrinsics header", re.compile(r"^\s*#\s*include\s*<\w*(?:intrin|neon|sve)\w*\.h>", re.M)),
    ("run-time CPU dispatch", re.compile(r"\b__builtin_cpu_(?:supports|is|init)\b")),
    ("a target attribute or pragma", re.compile(r"\btarget\s*\(\s*\"|#\s*pragma\s+(?:GCC|clang)\s+target\b")),
]


def source_files(root):
    for top in sorted(ALLOWED):
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in ("results", "build", "wp-cache"))
            for name in sorted(filenames):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                if name.endswith(SOURCE_EXT) or (name.endswith(".py") and rel.startswith(ORACLES + os.sep)):
                    yield rel


def resolve(root, includer, name):
    """Path (relative to root) of the file an #include "name" in includer
    reads, or None when it is not in the tree."""
    here = os.path.dirname(includer)
    cand = os.path.normpath(os.path.join(here, name))
    if os.path.isfile(os.path.join(root, cand)):
        return cand
    for d in SEARCH_ORDER:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def strip_comments(text):
    """The text without comments, string literals and character literals
    (a brace inside a string must not count)."""
    token = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)

    def repl(m):
        t = m.group(0)
        if t.startswith(("/*", "//")):
            return "\n" * t.count("\n")
        return '""' if t.startswith('"') else "0"
    return token.sub(repl, text)


def hand_prototypes(text):
    """Declarations of tahq_* functions at file scope of a source file:
    statements at brace depth 0 that end in ';', name a tahq_ function
    followed by a parameter list, and are not static, typedef or an
    initialized variable."""
    text = strip_comments(text)
    text = re.sub(r'^\s*#.*$', "", text, flags=re.M)
    text = re.sub(r'extern\s+""\s*\{', "", text)  # extern "C" { (literal blanked)
    out, depth, stmt = [], 0, []
    for ch in text:
        if ch == "{":
            depth += 1
            stmt = []
        elif ch == "}":
            depth = max(depth - 1, 0)
            stmt = []
        elif depth == 0:
            if ch == ";":
                s = " ".join("".join(stmt).split())
                stmt = []
                m = re.search(r"\b(tahq_[a-z0-9_]+)\s*\(", s)
                if m and "=" not in s and not re.match(r"(static|typedef)\b", s):
                    out.append(m.group(1))
            else:
                stmt.append(ch)
    return out


def check(root):
    problems, notes = [], []
    for path in source_files(root):
        top = path.split(os.sep)[0]
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if path.endswith(".py"):  # an oracle in Python
            if ORACLE_PY_IMPORT_RE.search(text):
                problems.append("%s imports the tahq package or ctypes: an oracle is independent "
                                "of libtahq" % path)
            continue
        for name in INCLUDE_RE.findall(text):
            target = resolve(root, path, name)
            if target is None:
                continue
            ttop = target.split(os.sep)[0]
            if path.startswith(ORACLES + os.sep):
                if not target.startswith(tuple(d + os.sep for d in ORACLES_MAY_INCLUDE)):
                    problems.append("%s includes %s: %s/ may include only include/ (an oracle "
                                    "is independent of what it checks)" % (path, target, ORACLES))
                continue
            if top == "tests" and ttop == "golden":
                if not target.startswith(ORACLES + os.sep):
                    problems.append("%s includes %s: of golden/, tests/ may include only %s/"
                                    % (path, target, ORACLES))
                continue
            if ttop == top:
                continue
            if ttop not in ALLOWED.get(top, set()):
                problems.append("%s includes %s: %s/ may not include %s/" % (path, target, top, ttop))
            elif ttop == "ref" and top == "kernels" and os.path.basename(target) not in KERNELS_FROM_REF:
                problems.append("%s includes %s: kernels/ may include only %s of ref/"
                                % (path, target, ", ".join(sorted(KERNELS_FROM_REF))))
            elif ttop == "ref" and top in ("tests", "golden") and os.path.basename(target) not in TESTS_FROM_REF:
                problems.append("%s includes %s: %s/ may include only %s of ref/"
                                % (path, target, top, ", ".join(sorted(TESTS_FROM_REF))))
            elif ttop == "ref" and top in ("sgd_sim", "fuzz") and os.path.basename(target) not in CORE_FROM_REF:
                problems.append("%s includes %s: %s/ may include only %s of ref/"
                                % (path, target, top, ", ".join(sorted(CORE_FROM_REF))))
            elif ttop == "cpu" and top == "cli" and os.path.basename(target) not in CLI_FROM_CPU:
                problems.append("%s includes %s: cli/ may include only %s of cpu/"
                                % (path, target, ", ".join(sorted(CLI_FROM_CPU))))
            elif ttop == "golden" and not target.startswith(GOLDEN_LIBRARY + os.sep):
                problems.append("%s includes %s: of golden/ only %s/ is a library"
                                % (path, target, GOLDEN_LIBRARY))

        if top == "ref":
            code = strip_comments(text)
            for what, pattern in REF_FORBIDDEN:
                m = pattern.search(code)
                if m:
                    line = code.count("\n", 0, m.start()) + 1
                    problems.append("%s:%d uses %s (%s): ref/ holds the scalar code the proofs read; "
                                    "fast forms go to cpu/" % (path, line, what, m.group(0).strip()))

        if not path.endswith((".h", ".cuh", ".inc")):
            for fn in hand_prototypes(text):
                if path in PROTOTYPE_EXCEPTIONS:
                    notes.append("%s declares %s by hand (%s; allowed for now)"
                                 % (path, fn, PROTOTYPE_EXCEPTIONS[path]))
                else:
                    problems.append("%s declares %s by hand: include the header that declares it" % (path, fn))
    return problems, notes


def self_test():
    """Each broken tree must give exactly the expected kind of report."""
    cases = [
        ("ref/a.c", '#include "../cpu/b.h"\n', "cpu/b.h", "ref/ may not include cpu/"),
        ("kernels/a.cu", '#include "../ref/internal.h"\n', "ref/internal.h", "kernels/ may include only"),
        ("cli/a.c", '#include "../ref/tahq_core.h"\n', "ref/tahq_core.h", "cli/ may not include ref/"),
        ("common/a.h", '#include "tahq.h"\n', "include/tahq.h", "common/ may not include include/"),
        ("support/a.c", '#include "../golden/kit/k.h"\n', "golden/kit/k.h", "support/ may not include golden/"),
        ("golden/kit/a.c", '#include "../../cli/c.h"\n', "cli/c.h", "golden/ may not include cli/"),
        ("golden/mutation/a.c", '#include "../../ref/internal.h"\n', "ref/internal.h", "golden/ may include only"),
        ("cli/a.c", '#include "../golden/mutation/m.h"\n', "golden/mutation/m.h", "only golden/kit/ is a library"),
        ("cli/a.c", '#include "../cpu/fast_encode.h"\n', "cpu/fast_encode.h", "cli/ may include only cpu_path.h"),
        ("sgd_sim/a.c", '#include "../ref/internal.h"\n', "ref/internal.h", "sgd_sim/ may include only tahq_core.h"),
        ("fuzz/a.c", '#include "../ref/tahq_ref_api.h"\n', "ref/tahq_ref_api.h", "fuzz/ may include only tahq_core.h"),
        ("cpu/a.c", "int tahq_thing(int x);\nint main(void) { return 0; }\n", None, "declares tahq_thing by hand"),
        ("tests/a.c", 'extern "C" int tahq_other(void);\n', None, "declares tahq_other by hand"),
        ("golden/oracles/a.h", '#include "../../ref/tahq_core.h"\n', "ref/tahq_core.h", "golden/oracles/ may include only include/"),
        ("golden/oracles/a.c", '#include "../kit/k.h"\n', "golden/kit/k.h", "golden/oracles/ may include only include/"),
        ("golden/oracles/a.py", "import numpy\nimport tahq\n", None, "imports the tahq package"),
        ("tests/a.c", '#include "../golden/kit/k.h"\n', "golden/kit/k.h", "tests/ may include only golden/oracles/"),
        ("ref/a.h", "typedef float v8 __attribute__((vector_size(32)));\n", None, "uses a GCC/Clang vector extension"),
        ("ref/a.c", "int f(int *v) { return __builtin_shuffle(v[0], v[1]); }\n", None,
         "uses a GCC/Clang vector extension"),
        ("ref/a.c", "unsigned f(unsigned c, unsigned char b) { return __builtin_ia32_crc32qi(c, b); }\n", None,
         "uses an x86 builtin"),
        ("ref/a.c", "#include <immintrin.h>\n", None, "uses an intrinsics header"),
        ("ref/a.c", "int f(const float *p) { return _mm256_movemask_ps(_mm256_loadu_ps(p)); }\n", None,
         "uses an intrinsic"),
        ("ref/a.c", "int f(void) { return __builtin_cpu_supports(\"sse4.2\"); }\n", None,
         "uses run-time CPU dispatch"),
        ("ref/a.c", '__attribute__((target("sse4.2"))) static int f(void) { return 0; }\n', None,
         "uses a target attribute or pragma"),
        ("ref/a.c", "#pragma GCC target(\"avx2\")\n", None, "uses a target attribute or pragma"),
    ]
    failures = 0
    for src, body, other, expect in cases:
        with tempfile.TemporaryDirectory() as root:
            for p, b in ((src, body), (other, "/* x */\n") if other else (None, None)):
                if p:
                    os.makedirs(os.path.join(root, os.path.dirname(p)), exist_ok=True)
                    with open(os.path.join(root, p), "w", encoding="utf-8") as f:
                        f.write(b)
            problems, _ = check(root)
            ok = len(problems) == 1 and expect in problems[0]
            print("self-test %-40s %s" % (src + ": " + expect, "reported" if ok else "NOT REPORTED %r" % problems))
            failures += not ok
    # and a clean tree gives nothing: a static function, a definition, a call
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "cpu"))
        with open(os.path.join(root, "cpu", "ok.c"), "w", encoding="utf-8") as f:
            f.write('#include "ok.h"\nstatic int tahq_s(int x);\nint tahq_d(int x) { return tahq_s(x); }\n'
                    "int v = tahq_d(1);\n")
        with open(os.path.join(root, "cpu", "ok.h"), "w", encoding="utf-8") as f:
            f.write("int tahq_d(int x);\n")
        os.makedirs(os.path.join(root, "golden", "oracles"))
        os.makedirs(os.path.join(root, "tests"))
        with open(os.path.join(root, "golden", "oracles", "o.py"), "w", encoding="utf-8") as f:
            f.write("import numpy as np\nimport tahq_spec\n")
        with open(os.path.join(root, "golden", "oracles", "o.h"), "w", encoding="utf-8") as f:
            f.write('#include "o2.h"\n')
        with open(os.path.join(root, "golden", "oracles", "o2.h"), "w", encoding="utf-8") as f:
            f.write("/* x */\n")
        with open(os.path.join(root, "tests", "t.c"), "w", encoding="utf-8") as f:
            f.write('#include "../golden/oracles/o.h"\n')
        # ref/: the load-time clones of the scalar text, intrinsics named in
        # comments; cpu/: vector extensions and intrinsics
        os.makedirs(os.path.join(root, "ref"))
        with open(os.path.join(root, "ref", "r.c"), "w", encoding="utf-8") as f:
            f.write('/* the 8-lane form (__builtin_shuffle, vector_size) is in cpu/ */\n'
                    '__attribute__((target_clones("avx2", "default"))) int r(int x) { return x; }\n'
                    "// _mm256_add_ps(a, b), __builtin_cpu_supports(\"sse4.2\")\n")
        with open(os.path.join(root, "cpu", "v.c"), "w", encoding="utf-8") as f:
            f.write("#include <immintrin.h>\ntypedef float v8 __attribute__((vector_size(32)));\n"
                    '__attribute__((target("sse4.2"))) static int f(void) { return __builtin_cpu_supports("avx2"); }\n')
        problems, _ = check(root)
        print("self-test clean tree: %s" % ("no report" if not problems else "REPORTED %r" % problems))
        failures += bool(problems)
    return 1 if failures else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    problems, notes = check(sys.argv[1])
    for n in notes:
        print("note: " + n)
    for p in problems:
        print("FAIL: " + p)
    print("check_layout: %d file(s), %d problem(s)" % (sum(1 for _ in source_files(sys.argv[1])), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

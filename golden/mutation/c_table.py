# SPDX-License-Identifier: MIT
"""c_table.py - what v2_table.py and v4_table.py both write into the
golden generator's case tables (golden/kit/mutation_cases_v*.inc): C
literals, a struct case_kills table, and the text between a set's BEGIN and
END markers."""
import re
import struct
import sys


def tau_bits(s):
    """The binary32 bits of a gate threshold ("inf" or a decimal) as a C literal."""
    v = float("inf") if s == "inf" else float(s)
    return "0x%08xu" % struct.unpack("<I", struct.pack("<f", v))[0]


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def kills_table(name, by_case, ids):
    """static const struct case_kills NAME[]: the mutants each case kills
    (a NULL row when there is none, so that the array is never empty)."""
    lines = ["static const struct case_kills %s[] = {" % name]
    for cid in ids:
        lines.append(f"    {{{c_str(cid)}, {c_str(','.join(sorted(by_case[cid])))}}},")
    if not ids:
        lines.append("    {NULL, NULL},")
    lines.append("};")
    return lines


def write_between_markers(path, tag, text, prog):
    """Replace /* BEGIN TAG cases ... END TAG cases */ in PATH by TEXT; 0, or
    1 with a message when the markers are missing."""
    with open(path) as f:
        src = f.read()
    pat = re.compile(r"/\* BEGIN %s cases.*?/\* END %s cases \*/\n" % (tag, tag), re.S)
    if not pat.search(src):
        print("%s: markers not found" % prog, file=sys.stderr)
        return 1
    with open(path, "w") as f:
        f.write(pat.sub(lambda m: text, src))
    return 0

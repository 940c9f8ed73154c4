#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench_table.py - the before/after tables of results/cpu/README.md from `tahq bench --json` runs.

usage: bench_table.py BEFORE.json... -- AFTER.json...
       bench_table.py RUN.json...

Each file is the JSON of one `tahq bench --json` run (for example made by
cpu/measure.sh). For every row (profile, rounding, codec, CPU path, threads;
the path "-" where the row has none) the table
gives min / median / max over the runs of encode and decode GB/s and of their
ratio to the memcpy timed in the same run and row, and for the parallel
codec the speedup of T threads over 1 thread (the bench's "scaling" entries),
beside the bench's controls (integer, vector, stream) where the runs have them.
Prints Markdown on stdout.
"""
import json
import statistics
import sys


def load(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs.append(json.load(f))
    return runs


def key(r):
    return (r["profile"], r["rounding"], r.get("codec", "reference"), r.get("cpu_path") or "-",
            r["threads"])


def spread(values):
    if not values:
        return "-"
    v = sorted(values)
    return "%.3f / %.3f / %.3f" % (v[0], statistics.median(v), v[-1])


def rows_of(runs):
    table = {}
    order = []
    for d in runs:
        for r in d["results"]:
            k = key(r)
            if k not in table:
                table[k] = {"enc": [], "dec": [], "encx": [], "decx": [], "cpy": []}
                order.append(k)
            t = table[k]
            t["enc"].append(r["encode_gbps"])
            t["dec"].append(r["decode_gbps"])
            t["encx"].append(r["encode_over_memcpy"])
            t["decx"].append(r["decode_over_memcpy"])
            t["cpy"].append(r["memcpy_gbps"])
    return order, table


def print_table(title, runs):
    print("### %s (%d runs)" % (title, len(runs)))
    print()
    for d in runs:
        print("- %s, %s, %s; load before %s, after %s; shape %s" % (
            d.get("date", "?"), d.get("machine", {}).get("cpu_model", "?"),
            d.get("machine", {}).get("release", "?"), d.get("load_before"),
            d.get("load_after"), d.get("shape")))
    print()
    print("| profile | rounding | codec | path | threads | memcpy GB/s | encode GB/s "
          "| encode x memcpy | decode GB/s | decode x memcpy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    order, table = rows_of(runs)
    for k in order:
        t = table[k]
        print("| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s |" % (
            k[0], k[1], k[2], k[3], k[4], spread(t["cpy"]), spread(t["enc"]), spread(t["encx"]),
            spread(t["dec"]), spread(t["decx"])))
    scal = {}
    for d in runs:
        for s in d.get("scaling", []):
            if s["threads"] == 1:
                continue
            k = (s["profile"], s["rounding"], s.get("cpu_path") or "-", s["threads"])
            scal.setdefault(k, {"enc": [], "dec": []})
            scal[k]["enc"].append(s["encode_speedup"])
            scal[k]["dec"].append(s["decode_speedup"])
    ctls = [d["thread_scaling_control"] for d in runs if "thread_scaling_control" in d]
    if scal:
        print()
        if ctls:
            parts = []
            for name, what in (("encode_length", "as long as the encode"),
                               ("decode_length", "as long as the decode"), ("long", "0.5 s")):
                v = [c[name]["speedup"] for c in ctls if name in c]
                if v:
                    parts.append("%s %s" % (what, spread(v)))
            if not parts:
                parts = ["%s" % spread([c["speedup"] for c in ctls])]
            print("Control (the same integer work on 1 and on %d threads at once, in the same "
                  "runs), speedup: %s." % (ctls[-1]["threads"], "; ".join(parts)))
            roofs = roof_lines(ctls)
            if roofs:
                print()
                print(" ".join(roofs))
            print()
        print("| profile | rounding | path | threads | encode speedup over 1 thread "
              "| decode speedup over 1 thread |")
        print("|---|---|---|---|---|---|")
        for k, v in scal.items():
            print("| %s | %s | %s | %d | %s | %s |" % (k[0], k[1], k[2], k[3], spread(v["enc"]),
                                                       spread(v["dec"])))
    mem = [d["roundtrip_memory"] for d in runs if "roundtrip_memory" in d]
    if mem:
        m = mem[-1]
        print()
        print("Round trip (%s %s, %d thread(s)): peak RSS %.1f MiB, input + message + output "
              "%.1f MiB, ratio %s (min / median / max over the runs)." % (
                  m["profile"], m["rounding"], m["threads"], m["peak_rss_bytes"] / 2**20,
                  m["input_message_output_bytes"] / 2**20,
                  spread([x["peak_over_input_message_output"] for x in mem])))
    print()


def roof_lines(ctls):
    """The vector and stream controls and the encode they are read against, where the runs
    have them."""
    out = []
    vec = [c["vector"] for c in ctls if "vector" in c]
    ran = [v["speedup"] for v in vec if not v.get("skipped")]
    if ran:
        out.append("Vector control (AVX2 multiply and add chains on registers, as long as the "
                   "encode), speedup: %s." % spread(ran))
    if len(ran) < len(vec):
        out.append("Vector control skipped in %d run(s): %s." % (
            len(vec) - len(ran), sorted({v["skipped"] for v in vec if v.get("skipped")})[0]))
    st = [c["stream"] for c in ctls if "stream" in c]
    if st:
        out.append("Stream control (the input read, %g bytes per element written, split among the "
                   "threads), GB/s on 1 thread %s, on %d threads %s, speedup %s; over memcpy on 1 "
                   "thread %s, on %d threads %s." % (
                       st[-1]["bytes_written_per_element"],
                       spread([s["one_thread_gbps"] for s in st]), ctls[-1]["threads"],
                       spread([s["all_threads_gbps"] for s in st]),
                       spread([s["speedup"] for s in st]),
                       spread([s["one_thread_over_memcpy"] for s in st]), ctls[-1]["threads"],
                       spread([s["all_threads_over_memcpy"] for s in st])))
    enc = [c["encode"] for c in ctls if c.get("encode")]
    if enc:
        e = enc[-1]
        out.append("Encode read against them (%s %s, parallel codec, %s path), speedup %s; its "
                   "%d-thread GB/s over the stream control's %s." % (
                       e["profile"], e["rounding"], e["cpu_path"],
                       spread([x["speedup"] for x in enc]), ctls[-1]["threads"],
                       spread([x["all_threads_over_stream"] for x in enc])))
    return out


def main(argv):
    if "--" not in argv:
        if len(argv) < 2:
            sys.stderr.write(__doc__)
            return 2
        print_table("Runs", load(argv[1:]))
        return 0
    cut = argv.index("--")
    before, after = argv[1:cut], argv[cut + 1:]
    if not before or not after:
        sys.stderr.write(__doc__)
        return 2
    print_table("Before", load(before))
    print_table("After", load(after))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Helpers of scripts/slow_links.sh (measured wall-clock over shaped links).

usage: plots/links.py rtt
       plots/links.py keys RUNS_CSV
       plots/links.py row --csv RUNS_CSV --timing T.csv --tc TC.txt --link MBIT --method M
                          --repeat R --load L --rtt-us U --wall S --windows N
       plots/links.py check RUNS_CSV [--control]
       plots/links.py summary RUNS_CSV [--out DIR]
       plots/links.py calib RUNS_CSV OUT_CSV
       plots/links.py monitor ROOT_PID OUT_CSV
       plots/links.py quiet ROOT_PID [--max CORES] [--timeout S]

rtt      median TCP round trip of 1-byte ping-pongs over 127.0.0.1, microseconds
keys     the (link, method, repeat) keys present in RUNS_CSV, one per line
row      append one run's row to RUNS_CSV (header when new), from its
         tahq-train --timing CSV and its `tc -s class show dev lo` output
check    the program's byte counts against the qdisc's counters, per run and
         direction (derivation in check_row); exit 1 when any fails.
         --control: the same check with program counts that leave out the
         tied-embedding exchange (256 x C x 4 bytes per step and direction), as
         a program counting only the boundary messages would; every comparison
         must then fail (exit 0 only if all fail: the check can see a miscount)
summary  per (link, method): min/median/max over repeats of the steady step
         time and tokens/s, speed-ups of each method over fp32 and of TAH
         over AQ-SGD (steady and first epoch); summary.csv and a table on stdout
monitor  every 2 s until ROOT_PID ends: the CPU (in cores) of ROOT_PID's process
         tree and of every other process at nice <= 0 ("foreign": they compete
         with the measurement; processes at nice > 0 yield to it), with the
         busiest foreign command
quiet    wait until the foreign CPU (as monitor) over 2 s is below --max cores
         (0.3), at most --timeout seconds (600); prints what it waited for
calib    the input of `tahq-sim throughput --calibrate`: per (link, method,
         phase) the medians over the repeats of the step time and of each
         stage's compute, codec and update times per micro-batch, message
         bytes per micro-batch, the tied-embedding exchange's bytes, the
         one-way latency (half the measured loopback round trip) and the wire
         bytes per payload byte; phase "first" (AQ-SGD's first epoch) next to
         "steady"
"""

import argparse
import csv
import math
import os
import re
import socket
import statistics
import sys
import threading
import time

def directions(K):
    """the shaped directions of a K-stage chain: "01", "10", "12", "21", ..."""
    out = []
    for k in range(K - 1):
        out += ["%d%d" % (k, k + 1), "%d%d" % (k + 1, k)]
    return out


def columns(K=2):
    """runs.csv's columns for K stages (K = 2: the columns of the first sweep
    plus K, wait, tied, load1_end, own_cores, niced_cores)"""
    c = ["link_mbps", "method", "repeat", "utc", "K", "wait", "tied", "mtu", "load1", "load1_end", "foreign_cores",
         "own_cores", "niced_cores", "rtt_us", "wall_s", "steps", "tokens_per_step",
         "steps_per_epoch", "first_steps", "first_step_s", "first_fwd_bytes", "first_bwd_bytes",
         "steady_steps", "step_s", "step_s_min", "step_s_max", "tokens_per_s", "fwd_bytes", "bwd_bytes"]
    for k in range(K):
        c += ["s%d_%s" % (k, n) for n in ("compute_fwd_s", "compute_bwd_s", "encode_s", "decode_s", "update_s")]
    for k in range(K):
        if k < K - 1:
            c.append("first_s%d_encode_s" % k)
        if k > 0:
            c.append("first_s%d_decode_s" % k)
    c += ["aq_cache_bytes", "micro", "batch", "T", "C"]
    for d in directions(K):
        c += ["prog_bytes_" + d, "msgs_" + d]
    for d in directions(K):
        c += ["qdisc_bytes_" + d, "qdisc_pkts_" + d]
    c += ["qdisc_drops", "tcp_retrans_segs"]
    return c


COLUMNS = columns(2)

# Bytes on lo per TCP segment that are not TCP payload: Ethernet header 14
# (loopback frames carry one), IPv4 20, TCP 20 + 12 (timestamp option, on by
# default in Linux). tc counts a GSO packet as its segments (bytes and
# packets), so payload = bytes - 66 * packets.
HDR = 14 + 20 + 20 + 12


def rtt():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    n = 2000

    def echo():
        c, _ = srv.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(n):
            c.sendall(c.recv(1))
        c.close()

    th = threading.Thread(target=echo)
    th.start()
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ts = []
    for _ in range(n):
        a = time.perf_counter()
        s.sendall(b"x")
        s.recv(1)
        ts.append(time.perf_counter() - a)
    th.join()
    s.close()
    srv.close()
    print("%.1f" % (statistics.median(ts) * 1e6))


def proc_snapshot():
    """{pid: (ppid, nice, cpu jiffies, name)}"""
    d = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                s = f.read()
        except OSError:
            continue
        name = s.split("(", 1)[1].rsplit(")", 1)[0]
        r = s.rsplit(")", 1)[1].split()
        d[int(p)] = (int(r[1]), int(r[16]), int(r[11]) + int(r[12]), name)
    return d


def in_tree(pid, root, d):
    for _ in range(64):
        if pid == root:
            return True
        if pid not in d:
            return False
        pid = d[pid][0]
    return False


def cpu_split(root, dt=2.0, niced=None):
    """(own cores, foreign cores at nice <= 0, busiest foreign name) over dt s;
    niced (a list): the cores of the other processes at nice > 0 appended"""
    hz = os.sysconf("SC_CLK_TCK")
    a = proc_snapshot()
    t0 = time.monotonic()
    time.sleep(dt)
    b = proc_snapshot()
    el = time.monotonic() - t0
    own = foreign = nic = 0.0
    top = {}
    for pid, (pp, ni, cpu, name) in b.items():
        if pid not in a:
            continue
        c = (cpu - a[pid][2]) / hz / el
        if in_tree(pid, root, b):
            own += c
        elif ni <= 0:
            foreign += c
            top[name] = top.get(name, 0) + c
        else:
            nic += c
    if niced is not None:
        niced.append(nic)
    return own, foreign, (max(top, key=top.get) if top and max(top.values()) > 0.05 else "")


def monitor(root, out):
    new = not os.path.exists(out) or os.path.getsize(out) == 0
    with open(out, "a", buffering=1) as f:
        if new:
            f.write("utc,epoch,own_cores,foreign_cores,foreign_top,niced_cores\n")
        while os.path.exists("/proc/%d" % root):
            nic = []
            own, fo, top = cpu_split(root, niced=nic)
            f.write("%s,%.1f,%.3f,%.3f,%s,%.3f\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                   time.time(), own, fo, top, nic[0]))


def quiet(root, mx, timeout):
    t0 = time.monotonic()
    waited = False
    while True:
        own, fo, top = cpu_split(root)
        if fo < mx:
            if waited:
                print("slow_links: the machine is quiet again (foreign CPU %.2f cores)" % fo)
            return 0
        if time.monotonic() - t0 > timeout:
            print("slow_links: still %.2f foreign cores (%s) after %.0f s; measuring anyway "
                  "(recorded in foreign_cores)" % (fo, top, timeout))
            return 0
        if not waited:
            print("slow_links: waiting: %.2f cores used by other processes at nice <= 0 (%s)" % (fo, top))
            waited = True


def foreign_during(monfile, t0, t1, col="foreign_cores"):
    """mean of a column (foreign_cores, own_cores, niced_cores) over the
    monitor's samples within [t0, t1]"""
    try:
        rows = read_rows(monfile)
    except OSError:
        return ""
    v = [float(r[col]) for r in rows if t0 <= float(r["epoch"]) <= t1 + 1 and r.get(col) not in (None, "")]
    return "%.3f" % statistics.mean(v) if v else ""


def pmixfwd(netns, port, conns=16):
    """K = 4: each rank runs in a network namespace of its own, but Open
    MPI's PMIx server (in mpirun) listens on 127.0.0.1 of mpirun's
    namespace, which the rank's loopback cannot reach. A socket keeps the
    namespace it was made in: make `conns` sockets here, enter the rank's
    namespace, listen on 127.0.0.1:port there, and join each accepted
    connection to one of the sockets made here, connected to the server.
    Prints "ready" once listening; ends when the connections have closed
    and the parent (the rank's launcher) is gone."""
    import ctypes
    outer = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(conns)]
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(netns, os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        sys.exit("links.py pmixfwd: setns %s failed (errno %d)" % (netns, ctypes.get_errno()))
    os.close(fd)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(conns)
    print("ready", flush=True)

    def pump(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    parent = os.getppid()
    srv.settimeout(1.0)
    while outer:
        try:
            c, _ = srv.accept()
        except socket.timeout:
            if os.getppid() != parent:
                return 0
            continue
        o = outer.pop(0)
        o.connect(("127.0.0.1", port))
        for a, b in ((c, o), (o, c)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()
    return 0


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def keys(path):
    for r in read_rows(path):
        print("%s,%s,%s" % (r["link_mbps"], r["method"], r["repeat"]))


def parse_tc(path):
    """{classid: (bytes, packets, dropped)} from `tc -s class show`; a file of
    sections headed "== DIR" (K > 2: one veth per direction) gives
    {"DIR/classid": ...}"""
    out = {}
    cur = None
    sec = ""
    with open(path) as f:
        for line in f:
            m = re.match(r"== (\S+)", line)
            if m:
                sec = m.group(1) + "/"
                continue
            m = re.match(r"class htb (\S+) ", line)
            if m:
                cur = sec + m.group(1)
                continue
            m = re.match(r"\s*Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", line)
            if m and cur:
                out[cur] = tuple(int(x) for x in m.groups())
                cur = None
    return out


def med(v):
    return statistics.median(v) if v else float("nan")


def row(a):
    t = read_rows(a.timing)
    if not t:
        sys.exit("links.py: %s is empty" % a.timing)
    by = {}
    for r in t:
        by.setdefault(int(r["step"]), {})[int(r["stage"])] = r
    steps = max(by)
    r0 = by[1][0]
    K = int(r0["K"])
    micro, batch = int(r0["micro"]), int(r0["batch"])
    spe = max(1, a.windows // (micro * batch))  # steps per epoch
    first = [s for s in range(2, spe + 1) if s in by]  # step 1: connections, first touches
    steady = [s for s in range(spe + 1, steps + 1) if s in by]
    if not steady:
        sys.exit("links.py: no steady steps (steps %d, %d per epoch)" % (steps, spe))

    def col(ss, stage, name):
        return med([float(by[s][stage][name]) for s in ss])

    step_s = [float(by[s][0]["step_s"]) for s in steady]
    tok = int(r0["tokens"])
    last = by[steps]
    tc = parse_tc(a.tc)
    z = (0, 0, 0)
    dirs = directions(K)
    if K == 2:  # one qdisc on lo: class 1:10 carries 0 -> 1, 1:20 carries 1 -> 0
        q = {"01": tc.get("1:10", z), "10": tc.get("1:20", z)}
    else:  # one veth end per direction, its shaped class 1:10
        q = {d: tc.get(d + "/1:10", z) for d in dirs}
    drops = sum(v[2] for v in tc.values())
    tied = a.tied != "none"
    # program bytes per direction: what the sending rank handed to MPI for
    # that neighbour; a non-neighbour exchange (the tied embedding between
    # rank 0 and rank K-1 when K > 2) is routed over every link of the chain
    # in its direction, so it is added to each of them
    def sent(rank, col_):
        v = last[rank].get(col_)
        return int(float(v)) if v not in (None, "") else 0

    prog, msgs = {}, {}
    other0 = sent(0, "sent_bytes_cum") - sent(0, "sent_next_cum") - sent(0, "sent_prev_cum")
    otherL = sent(K - 1, "sent_bytes_cum") - sent(K - 1, "sent_next_cum") - sent(K - 1, "sent_prev_cum")
    for d in dirs:
        i, j = int(d[0]), int(d[1])
        fwd = j == i + 1
        p = sent(i, "sent_next_cum" if fwd else "sent_prev_cum")
        p += other0 if fwd else otherL
        prog[d] = p
        # M boundary messages per step, one tied-embedding exchange per step
        # (tied), and the evaluation's forward messages (one per B windows;
        # 2 windows here)
        msgs[d] = steps * (micro + (1 if tied else 0)) + (math.ceil(2 / batch) if fwd else 0)
    out = {
        "link_mbps": a.link, "method": a.method, "repeat": a.repeat,
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "K": K, "wait": a.wait,
        "tied": a.tied, "mtu": a.mtu, "load1": a.load, "load1_end": a.load_end,
        "foreign_cores": foreign_during(a.monitor, a.t0, a.t1) if a.monitor else "",
        "own_cores": foreign_during(a.monitor, a.t0, a.t1, "own_cores") if a.monitor else "",
        "niced_cores": foreign_during(a.monitor, a.t0, a.t1, "niced_cores") if a.monitor else "",
        "rtt_us": a.rtt_us, "wall_s": a.wall, "steps": steps, "tokens_per_step": tok,
        "steps_per_epoch": spe, "first_steps": len(first),
        "first_step_s": "%.6f" % col(first, 0, "step_s") if first else "",
        "first_fwd_bytes": "%.0f" % col(first, 0, "fwd_bytes") if first else "",
        "first_bwd_bytes": "%.0f" % col(first, 0, "bwd_bytes") if first else "",
        "steady_steps": len(steady), "step_s": "%.6f" % med(step_s),
        "step_s_min": "%.6f" % min(step_s), "step_s_max": "%.6f" % max(step_s),
        "tokens_per_s": "%.1f" % (tok / med(step_s)),
        "fwd_bytes": "%.0f" % col(steady, 0, "fwd_bytes"),
        "bwd_bytes": "%.0f" % col(steady, 0, "bwd_bytes"),
        "aq_cache_bytes": r0["aq_cache_bytes"], "micro": micro, "batch": batch,
        "T": r0["T"], "C": r0["C"],
        "qdisc_drops": drops,
        "tcp_retrans_segs": a.retrans if a.retrans is not None else "",
    }
    for d in dirs:
        out["prog_bytes_" + d], out["msgs_" + d] = prog[d], msgs[d]
        out["qdisc_bytes_" + d], out["qdisc_pkts_" + d] = q[d][0], q[d][1]
    for k in range(K):
        for name in ("compute_fwd_s", "compute_bwd_s", "encode_s", "decode_s", "update_s"):
            out["s%d_%s" % (k, name)] = "%.6f" % col(steady, k, name)
        if k < K - 1:
            out["first_s%d_encode_s" % k] = "%.6f" % col(first, k, "encode_s") if first else ""
        if k > 0:
            out["first_s%d_decode_s" % k] = "%.6f" % col(first, k, "decode_s") if first else ""
    cols = columns(K)
    new = not os.path.exists(a.csv) or os.path.getsize(a.csv) == 0
    if not new:
        with open(a.csv) as f:
            have = f.readline().strip().split(",")
        if have != cols:
            sys.exit("links.py: %s has other columns (another K or an older sweep); use another --out" % a.csv)
    with open(a.csv, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        if new:
            w.writeheader()
        w.writerow(out)


def check_row(r, direction, control=False):
    """The TCP payload the qdisc carried in one direction against the bytes
    the program handed to MPI in that direction.

    payload = qdisc bytes - HDR * qdisc packets (HDR: see above; SYN segments
    carry 8 more option bytes, which only adds to the payload estimate).
    It must be at least the program's bytes (everything the program sends
    crosses that class), and at most the program's bytes plus Open MPI's own
    traffic: per message at most 3 headers (ob1 match or rendezvous header,
    the receiver's acknowledgement, the TCP BTL's fragment header), each
    under 128 bytes, plus one 128-byte header per 64 KiB fragment; the
    collectives (loss broadcast, byte sums, timing gather: under 1 KiB per
    step); the connection handshake and start-up exchange (under 4 KiB).
    The acknowledgements of the other direction are pure ACK segments (no
    payload) and cancel in the subtraction. Segments TCP sent again
    (tcp_retrans_segs: the namespace's RetransSegs counter over the run, both
    directions) cross the qdisc twice: each adds at most one full segment of
    payload (8948 bytes at MTU 9000) to the bound. Returns (ok, payload,
    excess, bound)."""
    qb, qp = int(r["qdisc_bytes_" + direction]), int(r["qdisc_pkts_" + direction])
    prog = int(r["prog_bytes_" + direction])
    if control:  # a count without the tied-embedding exchange
        prog -= int(r["steps"]) * 256 * int(r["C"]) * 4
    msgs = int(r["msgs_" + direction])
    steps = int(r["steps"])
    payload = qb - HDR * qp
    excess = payload - prog
    retrans = int(r["tcp_retrans_segs"]) if r.get("tcp_retrans_segs") not in (None, "") else 0
    bound = 128 * (3 * msgs + math.ceil(prog / 65536)) + 1024 * steps + 4096 + (mtu_of(r) - 52) * retrans
    ok = 0 <= excess <= bound and int(r["qdisc_drops"]) == 0
    return ok, payload, excess, bound


def check(a):
    rows = read_rows(a.csv)
    bad = 0
    for r in rows:
        for d in directions(int(r.get("K") or 2)):
            ok, payload, excess, bound = check_row(r, d, a.control)
            if not ok:
                bad += 1
            print("%s %5s Mbit/s %-9s r%s  %s: program %9s B, qdisc payload %9d B, excess %6d B "
                  "(bound %d)%s" % ("ok  " if ok else "FAIL", r["link_mbps"], r["method"], r["repeat"],
                                    d[0] + "->" + d[1], r["prog_bytes_" + d], payload,
                                    excess, bound, " (control: count without the tied-embedding exchange)"
                                    if a.control else ""))
    n = sum(len(directions(int(r.get("K") or 2))) for r in rows)
    if a.control:
        print("check --control: %d of %d comparisons failed, as they must%s" %
              (bad, n, "" if bad == n else " -- NOT all: the check missed a miscount"))
        return 0 if n and bad == n else 1
    print("check: %d of %d comparisons within the bound%s" % (n - bad, n, "" if not bad else " -- FAILED"))
    return 0 if n and not bad else 1


# A run during which other processes at nice <= 0 used more than this many
# cores on average (foreign_cores) is contended: summary and calib leave it
# out, unless every run of its (link, method) is, then they keep the least
# contended one and say so.
MAX_FOREIGN = 0.1


def uncontended(rows, mx=MAX_FOREIGN):
    """rows without the contended runs, per (link, method); (kept, dropped keys, forced keys)"""
    g = {}
    for r in rows:
        g.setdefault((r["link_mbps"], r["method"]), []).append(r)
    kept, dropped, forced = [], [], []
    fc = lambda r: float(r["foreign_cores"]) if r.get("foreign_cores") not in (None, "") else 0.0
    for k, rs in g.items():
        ok = [r for r in rs if fc(r) <= mx]
        if not ok:
            ok = [min(rs, key=fc)]
            forced.append("%s,%s,%s" % (ok[0]["link_mbps"], ok[0]["method"], ok[0]["repeat"]))
        dropped += ["%s,%s,%s" % (r["link_mbps"], r["method"], r["repeat"]) for r in rs if r not in ok]
        kept += ok
    return kept, dropped, forced


def mmm(v):
    v = sorted(v)
    return v[0], statistics.median(v), v[-1]


def summary(a):
    rows, dropped, forced = uncontended(read_rows(a.csv))
    print("summary: %d runs; left out as contended (other processes at nice <= 0 used > %.1f cores): %s; "
          "kept although contended (no other run of their link and method): %s" %
          (len(rows), MAX_FOREIGN, " ".join(dropped) or "none", " ".join(forced) or "none"))
    g = {}
    for r in rows:
        g.setdefault((int(r["link_mbps"]), r["method"]), []).append(r)
    links = sorted({k[0] for k in g}, reverse=True)
    methods = []
    for r in rows:
        if r["method"] not in methods:
            methods.append(r["method"])
    out = []
    for l in links:
        base = g.get((l, "fp32"))
        aq = g.get((l, "aqsgd"))
        for m in methods:
            rs = g.get((l, m))
            if not rs:
                continue
            st = [float(r["step_s"]) for r in rs]
            fs = [float(r["first_step_s"]) for r in rs if r["first_step_s"]]
            d = {"link_mbps": l, "method": m, "repeats": len(rs)}
            d["step_s_min"], d["step_s_med"], d["step_s_max"] = mmm(st)
            d["tokens_per_s_med"] = int(rs[0]["tokens_per_step"]) / d["step_s_med"]
            d["first_step_s_med"] = statistics.median(fs) if fs else float("nan")
            d["wire_bytes_per_step"] = statistics.median(
                [int(r["fwd_bytes"]) + int(r["bwd_bytes"]) for r in rs])
            # what the qdisc carried in both directions per step of the run (all
            # its steps, the tied-embedding exchange, the evaluation, headers)
            d["qdisc_bytes_per_step"] = statistics.median(
                [(int(r["qdisc_bytes_01"]) + int(r["qdisc_bytes_10"])) / int(r["steps"]) for r in rs])
            d["first_wire_bytes_per_step"] = statistics.median(
                [int(r["first_fwd_bytes"]) + int(r["first_bwd_bytes"]) for r in rs if r["first_fwd_bytes"]])
            for k in (0, 1):
                d["s%d_codec_s" % k] = statistics.median(
                    [float(r["s%d_encode_s" % k]) + float(r["s%d_decode_s" % k]) for r in rs])
                d["s%d_compute_s" % k] = statistics.median(
                    [float(r["s%d_compute_fwd_s" % k]) + float(r["s%d_compute_bwd_s" % k]) for r in rs])
            d["aq_cache_bytes"] = int(rs[0]["aq_cache_bytes"])
            d["load1_max"] = max(float(r["load1"]) for r in rs)
            fc = [float(r["foreign_cores"]) for r in rs if r.get("foreign_cores")]
            d["foreign_cores_max"] = max(fc) if fc else float("nan")
            # speed-ups: ratios of medians, and the range of the ratio over the
            # repeats paired by repeat number (same time slot of the sweep)
            if base:
                b = statistics.median([float(r["step_s"]) for r in base])
                d["speedup_vs_fp32"] = b / d["step_s_med"]
            if aq:
                qa = statistics.median([float(r["step_s"]) for r in aq])
                qf = statistics.median([float(r["first_step_s"]) for r in aq])
                d["speedup_vs_aqsgd_steady"] = qa / d["step_s_med"]
                d["speedup_vs_aqsgd_first"] = qf / d["step_s_med"]
            out.append(d)
    cols = ["link_mbps", "method", "repeats", "step_s_min", "step_s_med", "step_s_max", "tokens_per_s_med",
            "first_step_s_med", "wire_bytes_per_step", "first_wire_bytes_per_step", "qdisc_bytes_per_step",
            "s0_compute_s",
            "s1_compute_s", "s0_codec_s", "s1_codec_s", "aq_cache_bytes", "speedup_vs_fp32",
            "speedup_vs_aqsgd_steady", "speedup_vs_aqsgd_first", "load1_max", "foreign_cores_max"]
    if a.out:
        with open(os.path.join(a.out, "summary.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
            w.writeheader()
            for d in out:
                w.writerow({k: ("%.6g" % d[k] if isinstance(d.get(k), float) else d.get(k, "")) for k in cols})
    print("%6s %-9s %3s %24s %9s %10s %9s %8s %8s %7s %7s" % (
        "Mbit/s", "method", "n", "step s min/med/max", "tok/s", "bytes/step", "codec ms", "x fp32",
        "x aq-st", "x aq-1st", "load"))
    for d in out:
        print("%6d %-9s %3d %7.3f/%7.3f/%7.3f %9.0f %10.0f %9.1f %8s %8s %7s %7.2f" % (
            d["link_mbps"], d["method"], d["repeats"], d["step_s_min"], d["step_s_med"], d["step_s_max"],
            d["tokens_per_s_med"], d["wire_bytes_per_step"], 1e3 * (d["s0_codec_s"] + d["s1_codec_s"]),
            "%.2f" % d["speedup_vs_fp32"] if "speedup_vs_fp32" in d else "",
            "%.2f" % d["speedup_vs_aqsgd_steady"] if "speedup_vs_aqsgd_steady" in d else "",
            "%.2f" % d["speedup_vs_aqsgd_first"] if "speedup_vs_aqsgd_first" in d else "",
            d["load1_max"]))
    return 0


# MTU 9000 on lo: a full TCP segment carries 9000 - 20 - 32 = 8948 payload
# bytes in 8948 + HDR bytes
WIRE = (8948 + HDR) / 8948


def mtu_of(r):
    return int(r.get("mtu") or 9000)


def wire_of(mtu):
    """wire bytes per payload byte at MTU mtu (IPv4 20, TCP 20 + 12)"""
    return (mtu - 52 + HDR) / (mtu - 52)


def calib(a):
    rows, _, _ = uncontended(read_rows(a.csv))
    g = {}
    for r in rows:
        g.setdefault((int(r["link_mbps"]), r["method"]), []).append(r)
    K = int(rows[0].get("K") or 2) if rows else 2
    cols = ["link_mbps", "method", "phase", "n", "step_s", "step_s_min", "step_s_max", "M", "tokens_per_step",
            "lat_s", "wire", "bf", "bb", "tail_bytes", "cf0", "cf1", "cb0", "cb1", "ef0", "db0", "df1", "eb1",
            "upd0", "upd1"]
    if K > 2:
        cols.append("K")
        for k in range(2, K):
            cols += ["cf%d" % k, "cb%d" % k, "upd%d" % k]
        for k in range(1, K - 1):
            cols += ["ef%d" % k, "db%d" % k]
        for k in range(2, K):
            cols += ["df%d" % k, "eb%d" % k]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for (l, m), rs in sorted(g.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
            M = int(rs[0]["micro"])
            tied = (rs[0].get("tied") or "fp32") != "none"

            def md(name, div=1.0):
                return statistics.median(float(r[name]) for r in rs) / div

            for phase in (("steady", "first") if m.startswith("aqsgd") else ("steady",)):
                first = phase == "first"
                st = [float(r["first_step_s" if first else "step_s"]) for r in rs]
                # the timing's message bytes are summed over the K - 1 boundaries
                d = {
                    "link_mbps": l, "method": m, "phase": phase, "n": len(rs),
                    "step_s": "%.6f" % statistics.median(st), "step_s_min": "%.6f" % min(st),
                    "step_s_max": "%.6f" % max(st), "M": M, "tokens_per_step": rs[0]["tokens_per_step"],
                    "lat_s": "%.3e" % (md("rtt_us") * 0.5e-6), "wire": "%.6f" % wire_of(mtu_of(rs[0])),
                    "bf": "%.1f" % md("first_fwd_bytes" if first else "fwd_bytes", M * (K - 1)),
                    "bb": "%.1f" % md("first_bwd_bytes" if first else "bwd_bytes", M * (K - 1)),
                    "tail_bytes": 256 * int(rs[0]["C"]) * 4 if tied else 0,
                }
                for k in range(K):
                    d["cf%d" % k] = "%.6e" % md("s%d_compute_fwd_s" % k, M)
                    d["cb%d" % k] = "%.6e" % md("s%d_compute_bwd_s" % k, M)
                    d["upd%d" % k] = "%.6e" % md("s%d_update_s" % k)
                    # the codec columns hold a stage's encode and decode of both
                    # directions; with K > 2 a middle stage's are split evenly
                    # between its forward and backward message (AQ-SGD's
                    # forward codec is the larger; the split is an estimate)
                    enc = md("s%d_encode_s" % k, M)
                    dec = md("s%d_decode_s" % k, M)
                    if first and k < K - 1:
                        enc = md("first_s%d_encode_s" % k, M)
                    if first and k > 0:
                        dec = md("first_s%d_decode_s" % k, M)
                    mid = 0 < k < K - 1
                    if k < K - 1:
                        d["ef%d" % k] = "%.6e" % (enc / 2 if mid else enc)
                        d["db%d" % k] = "%.6e" % (dec / 2 if mid else dec)
                    if k > 0:
                        d["df%d" % k] = "%.6e" % (dec / 2 if mid else dec)
                        d["eb%d" % k] = "%.6e" % (enc / 2 if mid else enc)
                if K > 2:
                    d["K"] = K
                w.writerow({c: d.get(c, "") for c in cols})
    return 0


# ---- the network-bound sweeps (scripts/slow_links.sh with --tied, --stages)
#
# Equivalent link rate in the paper's setting. A pipeline's regime is set by
# the ratio of the time a micro-batch's messages spend on the link to the
# time a stage computes on it:
#   rho(R) = wire * (b_fwd + b_bwd) * 8 / R / (c_fwd + c_bwd)
# (per micro-batch: the fp32 forward and backward messages of one boundary,
# the per-stage compute forward + backward; both links of a boundary are
# full duplex, but GPipe runs the forward and backward phases one after the
# other, so their times add). The paper's setting (the projection in
# sgd_sim/links_model.c) has b = 6,553,600 bytes each way ([1, 1024, 1600]
# binary32), wire = 1514 / 1448 (Ethernet, MTU 1500) and c = 9.6 + 19.2 ms
# (GPT2-XL / 8 stages at an ASSUMED 40 TFLOP/s); this machine has
# b = 327,680 bytes each way (2 x 128 x 320 binary32), wire = the run's
# (1514 / 1448 at MTU 1500) and c = the fp32 runs' measured compute per micro-batch (the
# slower stage, median over the repeats at that link rate). Equal rho gives
#   R_paper = R * [wire_p * 2 b_p / (wire_m * 2 b_m)] * [c_m / c_p]
# The mapping matches fp32's ratio only: the paper's pipeline (K = 8,
# M = 32) has a smaller fill-and-drain share than K = 2, M = 4 or K = 4,
# M = 4, and its TAH / fp32 byte ratio is its own (both printed beside).
PAPER_B = 6553600.0
PAPER_WIRE = 1514.0 / 1448.0
PAPER_C = 2.0 * 1.5e9 / 8 * 1024 / 40e12 * 3  # forward + backward = 3 x forward


def verdicts(rows):
    """The two headline claims against the measured points, each with the
    control that flips it (printed; plots/report.py shows these lines)."""
    def pick(cfg, m, ph="steady"):
        return sorted((d for d in rows if d["config"] == cfg and d["method"] == m and d["phase"] == ph),
                      key=lambda d: d["link_mbps"])

    # K = 4 puts 4 ranks on 2 cores: a stage's compute (wall time of its
    # compute sections) against the same block's at K = 2, per link rate
    k2 = {(d["link_mbps"], d["method"]): d for d in rows if d["config"] == "k2-untied" and d["phase"] == "steady"}
    share = []
    for d in rows:
        if d["config"] == "k4-untied" and d["phase"] == "steady" and (d["link_mbps"], d["method"]) in k2:
            share.append("%s@%g: %.2f" % (d["method"], d["link_mbps"],
                                          d["compute_per_micro_s"] / k2[(d["link_mbps"], d["method"])][
                                              "compute_per_micro_s"]))
    if share:
        print("compute sharing, K=4 / K=2 compute per micro-batch (slower stage): " + ", ".join(share))
    for cfg in sorted({d["config"] for d in rows}):
        tah = [d for d in pick(cfg, "tah") if "speedup_vs_fp32" in d]
        if not tah:
            continue
        bound = [d for d in tah if d["rho_fp32"] > 1]  # fp32's transfer exceeds its compute
        top = max(tah, key=lambda d: d["speedup_vs_fp32"])
        print("verdict 4.3x [%s]: TAH / fp32 largest %.2fx (repeats %.2f..%.2f) at %g Mbit/s here = %.0f Mbit/s "
              "paper-equivalent; at least 4.3x (median) at: %s" % (
                  cfg, top["speedup_vs_fp32"], top.get("speedup_vs_fp32_min", float("nan")),
                  top.get("speedup_vs_fp32_max", float("nan")), top["link_mbps"], top["paper_equiv_mbps"],
                  ", ".join("%g (%.0f)" % (d["link_mbps"], d["paper_equiv_mbps"])
                            for d in tah if d["speedup_vs_fp32"] >= 4.3) or "none"))
        ctl = [d for d in tah if d["rho_fp32"] < 0.5]
        if ctl:
            c = max(ctl, key=lambda d: d["link_mbps"])
            print("  control [%s]: the same runs on a %g Mbit/s link (fp32 transfer/compute %.2f): TAH / fp32 "
                  "%.2fx" % (cfg, c["link_mbps"], c["rho_fp32"], c["speedup_vs_fp32"]))
        print("  network-bound points (fp32 transfer/compute > 1): %s" % (
            ", ".join("%g Mbit/s: %.2fx" % (d["link_mbps"], d["speedup_vs_fp32"]) for d in bound) or "none"))
        print("  the paper's setting projected at the same paper-equivalent rates (overlapped / blocking sends): %s" % (
            ", ".join("%.0f Mbit/s: %.2fx / %.2fx" % (d["paper_equiv_mbps"], d.get("paper_overlap_vs_fp32", float("nan")),
                                                      d.get("paper_blocking_vs_fp32", float("nan"))) for d in tah)))
        aq = [d for d in tah if "speedup_vs_aqsgd_steady" in d]
        if aq:
            print("verdict 1.33x [%s]: TAH over AQ-SGD steady %s; over AQ-SGD's first epoch %s" % (
                cfg, ", ".join("%.2f" % d["speedup_vs_aqsgd_steady"] for d in aq),
                ", ".join("%.2f" % d["speedup_vs_aqsgd_first"] for d in aq)))
            for d in aq:
                t = d["step_s_med"]
                qa = d["speedup_vs_aqsgd_steady"] * t
                qf = d["speedup_vs_aqsgd_first"] * t
                # (qf + (E - 1) qa) / (E t) = 1.33  <=>  E = (qf - qa) / (1.33 t - qa)
                if qf < 1.33 * t:
                    at = "never (the first epoch alone: %.2fx)" % (qf / t)
                elif qa >= 1.33 * t:
                    at = "every E (steady state alone: %.2fx)" % (qa / t)
                else:
                    at = "up to E = %.1f" % ((qf - qa) / (1.33 * t - qa))
                print("  %g Mbit/s (%.0f paper-equivalent): AQ-SGD's mean step over E epochs / TAH's = %.2f (E=2), "
                      "%.2f (E=5), %.2f (E=10); at least 1.33x %s" % (
                          d["link_mbps"], d["paper_equiv_mbps"], d["speedup_vs_aqsgd_E2"],
                          d["speedup_vs_aqsgd_E5"], d["speedup_vs_aqsgd_E10"], at))


def netbound(a):
    out_rows = []
    for folder in a.folders:
        name = os.path.basename(os.path.normpath(folder))
        runs, dropped, _ = uncontended(read_rows(os.path.join(folder, "runs.csv")))
        if not runs:
            continue
        if dropped:
            print("%s: left out as contended (other processes at nice <= 0 used > %.1f cores): %s" % (
                os.path.basename(os.path.normpath(folder)), MAX_FOREIGN, " ".join(dropped)))
        K = int(runs[0].get("K") or 2)
        model = {}
        mp = os.path.join(folder, "links_model_points.csv")
        best = None
        if os.path.exists(mp):
            pts = read_rows(mp)
            rms = {}
            for mode in ("overlap", "blocking", "protocol"):
                v = [float(p["resid_" + mode]) for p in pts]
                rms[mode] = math.sqrt(sum(x * x for x in v) / len(v)) if v else float("inf")
            best = min(rms, key=rms.get)
            for p in pts:
                model[(int(p["link_mbps"]), p["method"], p["phase"])] = p
        g = {}
        for r in runs:
            g.setdefault((int(r["link_mbps"]), r["method"]), []).append(r)

        def comp(r):  # compute per micro-batch, forward + backward, the slower stage
            M = int(r["micro"])
            return max(float(r["s%d_compute_fwd_s" % k]) + float(r["s%d_compute_bwd_s" % k])
                       for k in range(K)) / M

        for (l, m), rs in sorted(g.items()):
            base = g.get((l, "fp32"))
            aq = g.get((l, "aqsgd"))
            M = int(rs[0]["micro"])
            c32 = statistics.median(comp(r) for r in base) if base else float("nan")
            b32 = 2.0 * 2 * 128 * int(rs[0]["C"]) * 4 / 2  # fp32 bytes per micro-batch and direction
            b32 = float(base[0]["fwd_bytes"]) / M / (K - 1) if base else b32
            wire = wire_of(mtu_of(rs[0]))
            F = (PAPER_WIRE * 2 * PAPER_B) / (wire * 2 * b32) * (c32 / PAPER_C)
            rho32 = wire * 2 * b32 * 8 / (l * 1e6) / c32
            for phase in (("steady", "first") if m == "aqsgd" else ("steady",)):
                first = phase == "first"
                key = "first_step_s" if first else "step_s"
                st = [float(r[key]) for r in rs]
                bf = statistics.median(float(r["first_fwd_bytes" if first else "fwd_bytes"]) for r in rs) / M / (K - 1)
                bb = statistics.median(float(r["first_bwd_bytes" if first else "bwd_bytes"]) for r in rs) / M / (K - 1)
                cm = statistics.median(comp(r) for r in rs)
                d = {"config": name, "K": K, "tied": rs[0].get("tied", ""), "wait": rs[0].get("wait", ""),
                     "link_mbps": l, "method": m, "phase": phase, "n": len(rs),
                     "step_s_med": statistics.median(st), "step_s_min": min(st), "step_s_max": max(st),
                     "bytes_per_micro": bf + bb, "compute_per_micro_s": cm,
                     "rho": wire * (bf + bb) * 8 / (l * 1e6) / cm, "rho_fp32": rho32,
                     "paper_equiv_mbps": l * F,
                     "load1_max": max(float(r["load1"]) for r in rs),
                     "niced_cores_max": max(float(r["niced_cores"] or 0) for r in rs),
                     "foreign_cores_max": max(float(r["foreign_cores"] or 0) for r in rs)}
                d["contended"] = int(d["foreign_cores_max"] > MAX_FOREIGN)
                if base:
                    b = statistics.median(float(r["step_s"]) for r in base)
                    d["speedup_vs_fp32"] = b / d["step_s_med"]
                    # range over the repeats paired by repeat number
                    pr = {r["repeat"]: float(r["step_s"]) for r in base}
                    v = [pr[r["repeat"]] / float(r[key]) for r in rs if r["repeat"] in pr]
                    if v:
                        d["speedup_vs_fp32_min"], d["speedup_vs_fp32_max"] = min(v), max(v)
                if aq and not first:
                    qa = statistics.median(float(r["step_s"]) for r in aq)
                    qf = statistics.median(float(r["first_step_s"]) for r in aq)
                    d["speedup_vs_aqsgd_steady"] = qa / d["step_s_med"]
                    d["speedup_vs_aqsgd_first"] = qf / d["step_s_med"]
                    for E in (2, 5, 10):  # AQ-SGD's mean step over E epochs, the first at full precision
                        d["speedup_vs_aqsgd_E%d" % E] = (qf + (E - 1) * qa) / E / d["step_s_med"]
                mo = model.get((l, m, phase))
                if mo:
                    for mode in ("overlap", "blocking", "protocol"):
                        d["resid_" + mode] = float(mo["resid_" + mode])
                    d["model_best"] = best
                    d["model_best_s"] = float(mo["model_%s_s" % best])
                d["F"] = F
                out_rows.append(d)
    # model curves mapped onto the paper's link rates (each config's F: the
    # median over its links) and the paper's own projection
    curves = []
    Fs = {}
    for d in out_rows:
        if d["method"] == "fp32":
            Fs.setdefault(d["config"], []).append(d["F"])
    proj = None
    for folder in a.folders:
        name = os.path.basename(os.path.normpath(folder))
        cp = os.path.join(folder, "links_model_curve.csv")
        mp = os.path.join(folder, "links_model_points.csv")
        if os.path.exists(os.path.join(folder, "links_projection_modes.csv")):
            proj = os.path.join(folder, "links_projection_modes.csv")
        if name not in Fs or not os.path.exists(cp) or not os.path.exists(mp):
            continue
        F = statistics.median(Fs[name])
        best = next((d["model_best"] for d in out_rows if d["config"] == name and "model_best" in d), "blocking")
        by = {}
        for r in read_rows(cp):
            by[(r["bw_mbps"], r["method"], r["phase"])] = float(r["model_%s_s" % best])
        for (bw, m, ph), t in sorted(by.items(), key=lambda kv: float(kv[0][0])):
            if ph != "steady" or m == "fp32":
                continue
            row = {"config": name, "send": best, "bw_mbps": float(bw), "paper_equiv_mbps": float(bw) * F,
                   "method": m}
            if (bw, "fp32", "steady") in by:
                row["speedup_vs_fp32"] = by[(bw, "fp32", "steady")] / t
            if (bw, "aqsgd", "steady") in by and m != "aqsgd":
                row["speedup_vs_aqsgd_steady"] = by[(bw, "aqsgd", "steady")] / t
                row["speedup_vs_aqsgd_first"] = by[(bw, "aqsgd", "first")] / t
            curves.append(row)
    if proj:
        pb = {}
        for r in read_rows(proj):
            pb[(r["send"], r["bw_mbps"], r["method"], r["phase"])] = float(r["step_s"])
        for (send, bw, m, ph), t in sorted(pb.items(), key=lambda kv: float(kv[0][1])):
            if ph != "steady" or m not in ("tah",):
                continue
            curves.append({"config": "paper-projection", "send": send, "bw_mbps": float(bw),
                           "paper_equiv_mbps": float(bw), "method": m,
                           "speedup_vs_fp32": pb[(send, bw, "fp32", "steady")] / t,
                           "speedup_vs_aqsgd_steady": pb[(send, bw, "aqsgd", "steady")] / t,
                           "speedup_vs_aqsgd_first": pb[(send, bw, "aqsgd", "first")] / t})
    # the paper's projection at each point's paper-equivalent rate (log-linear
    # interpolation on the 20-per-decade grid of links_projection_modes.csv)
    if proj:
        grid = {}
        for r in read_rows(proj):
            if r["phase"] == "steady":
                grid.setdefault((r["send"], r["method"]), []).append((float(r["bw_mbps"]), float(r["step_s"])))

        def at(send, m, x):
            g = sorted(grid.get((send, m), []))
            for (x0, y0), (x1, y1) in zip(g, g[1:]):
                if x0 <= x <= x1:
                    w = math.log(x / x0) / math.log(x1 / x0)
                    return y0 + w * (y1 - y0)
            return float("nan")

        for d in out_rows:
            if d["phase"] != "steady" or (("overlap", d["method"]) not in grid):
                continue
            for send in ("overlap", "blocking"):
                d["paper_%s_vs_fp32" % send] = at(send, "fp32", d["paper_equiv_mbps"]) / at(
                    send, d["method"], d["paper_equiv_mbps"])
                if ("overlap", "aqsgd") in grid:
                    d["paper_%s_vs_aqsgd_steady" % send] = at(send, "aqsgd", d["paper_equiv_mbps"]) / at(
                        send, d["method"], d["paper_equiv_mbps"])
    if a.curves:
        cc = ["config", "send", "method", "bw_mbps", "paper_equiv_mbps", "speedup_vs_fp32",
              "speedup_vs_aqsgd_steady", "speedup_vs_aqsgd_first"]
        with open(a.curves, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cc, lineterminator="\n")
            w.writeheader()
            for d in curves:
                w.writerow({k: ("%.6g" % d[k] if isinstance(d.get(k), float) else d.get(k, "")) for k in cc})
    cols = ["config", "K", "tied", "wait", "link_mbps", "paper_equiv_mbps", "F", "method", "phase", "n",
            "step_s_med", "step_s_min", "step_s_max", "speedup_vs_fp32", "speedup_vs_fp32_min",
            "speedup_vs_fp32_max", "speedup_vs_aqsgd_steady", "speedup_vs_aqsgd_first", "speedup_vs_aqsgd_E2",
            "speedup_vs_aqsgd_E5", "speedup_vs_aqsgd_E10", "bytes_per_micro", "compute_per_micro_s", "rho",
            "rho_fp32", "model_best", "model_best_s", "resid_overlap", "resid_blocking", "resid_protocol",
            "paper_overlap_vs_fp32", "paper_blocking_vs_fp32", "paper_overlap_vs_aqsgd_steady",
            "paper_blocking_vs_aqsgd_steady",
            "load1_max", "niced_cores_max", "foreign_cores_max", "contended"]
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for d in out_rows:
            w.writerow({k: ("%.6g" % d[k] if isinstance(d.get(k), float) else d.get(k, "")) for k in cols})
    verdicts(out_rows)
    print("%-10s %5s %8s %-8s %-6s %7s %7s %7s %7s %7s %6s %6s" % (
        "config", "Mb/s", "paper", "method", "phase", "step s", "x fp32", "x aq-st", "x aq-1", "rho", "resid",
        "load"))
    for d in out_rows:
        print("%-10s %5d %8.0f %-8s %-6s %7.3f %7s %7s %7s %7.2f %6s %6.1f%s" % (
            d["config"], d["link_mbps"], d["paper_equiv_mbps"], d["method"], d["phase"], d["step_s_med"],
            "%.2f" % d["speedup_vs_fp32"] if "speedup_vs_fp32" in d else "",
            "%.2f" % d["speedup_vs_aqsgd_steady"] if "speedup_vs_aqsgd_steady" in d else "",
            "%.2f" % d["speedup_vs_aqsgd_first"] if "speedup_vs_aqsgd_first" in d else "",
            d["rho"], "%+.0f%%" % (100 * d["resid_" + d["model_best"]]) if "model_best" in d else "",
            d["load1_max"], " CONTENDED" if d["contended"] else ""))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("rtt")
    k = sub.add_parser("keys")
    k.add_argument("csv")
    r = sub.add_parser("row")
    for o in ("csv", "timing", "tc", "method", "load", "rtt_us", "wall"):
        r.add_argument("--" + o.replace("_", "-"), dest=o, required=True)
    for o in ("link", "repeat", "windows"):
        r.add_argument("--" + o, type=int, required=True)
    r.add_argument("--monitor")
    r.add_argument("--wait", default="poll")
    r.add_argument("--tied", default="fp32")
    r.add_argument("--mtu", type=int, default=9000)
    r.add_argument("--load-end", dest="load_end", default="")
    r.add_argument("--retrans", type=int)
    r.add_argument("--t0", type=float, default=0)
    r.add_argument("--t1", type=float, default=0)
    pf = sub.add_parser("pmixfwd")
    pf.add_argument("netns")
    pf.add_argument("port", type=int)
    mo = sub.add_parser("monitor")
    mo.add_argument("root", type=int)
    mo.add_argument("out")
    qu = sub.add_parser("quiet")
    qu.add_argument("root", type=int)
    qu.add_argument("--max", type=float, default=0.3)
    qu.add_argument("--timeout", type=float, default=600)
    c = sub.add_parser("check")
    c.add_argument("csv")
    c.add_argument("--control", action="store_true")
    s = sub.add_parser("summary")
    s.add_argument("csv")
    s.add_argument("--out")
    nb = sub.add_parser("netbound")
    nb.add_argument("out")
    nb.add_argument("folders", nargs="+")
    nb.add_argument("--curves")
    cb = sub.add_parser("calib")
    cb.add_argument("csv")
    cb.add_argument("out")
    a = p.parse_args()
    if a.cmd == "rtt":
        rtt()
    elif a.cmd == "keys":
        keys(a.csv)
    elif a.cmd == "row":
        row(a)
    elif a.cmd == "check":
        return check(a)
    elif a.cmd == "summary":
        return summary(a)
    elif a.cmd == "calib":
        return calib(a)
    elif a.cmd == "netbound":
        return netbound(a)
    elif a.cmd == "pmixfwd":
        return pmixfwd(a.netns, a.port)
    elif a.cmd == "monitor":
        monitor(a.root, a.out)
    elif a.cmd == "quiet":
        return quiet(a.root, a.max, a.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Measured wall-clock of the tahq-train MPI pipeline over shaped links.
#
# The run makes its own private network namespace (unshare --net: a new,
# empty namespace holding only a loopback device), brings `lo` up in it,
# shapes `lo` with tc and runs `mpirun -np 2 tahq-train-mpi` there with
# Open MPI's TCP transport on `lo`. No address outside that namespace's
# loopback is ever a target; the namespace, its qdiscs and every process
# started in it disappear when the script ends (trap: the mpirun it started
# is stopped by its pid, the qdisc deleted).
#
# Shaping: one htb class per direction of the pipeline's boundary (K = 2:
# stage 0 -> stage 1 carries the forward activations, stage 1 -> stage 0
# the backward gradients), each at the link rate, i.e. one full-duplex link
# per boundary as in the throughput model; not one shared bucket, in which
# the ACKs and the other direction's messages would take from the same
# rate. The classes match TCP ports: each rank's TCP transport listens on
# a port of its own (OMPI_MCA_btl_tcp_port_min_v4 = BASE + rank, range 1,
# set per rank by a wrapper), so a packet from rank 0 to rank 1 has
# destination port BASE+1 (rank 0 connected) or source port BASE (rank 1
# connected); with two ranks that is exact. Everything else (Open MPI's
# out-of-band channel) goes to an unshaped default class. lo's MTU is set
# to 9000 and every bucket (burst) to at least 64 KiB (a GSO packet on lo
# can be 64 KiB) and at least 2 ms of the rate. With --mtu M the links get
# MTU M, generic segmentation is off (gso_max_segs 1: every packet at most
# one segment) and the bucket is max(M + 14 bytes, 2 ms of the rate): an
# idle class refills its bucket, and a 64 KiB bucket lets a phase start
# with 64 KiB sent at once (0.26 s of a 2 Mbit/s link), which a real link
# cannot do; htb sends a packet larger than the bucket by going into debt,
# so no packet is dropped either way.
# Latency: this kernel has no netem (CONFIG_NET_SCH_NETEM is not set), so
# no delay is added; the script measures the namespace's loopback round
# trip (TCP ping-pong, python3) and records it. Where tc, unshare, the
# namespace or htb is missing it prints SKIPPED and exits 77 (never
# numbers).
#
# K = 4 (--stages 4): one network namespace per rank (ip netns add, made
# inside the private namespace above and deleted on exit), a veth pair
# between neighbours (rank k's end "tqf", rank k+1's end "tqb", addresses
# 10.37.(k+1).1/30 and .2/30), each rank's own address 10.37.100.k on an
# interface of its own (the only one Open MPI uses), routes through the middle ranks
# for the traffic between non-neighbours (rank 1 and 2 forward), and an htb
# qdisc on every veth end: its egress is one direction of one boundary,
# shaped at the link rate (class 1:10). Each rank is started in its own
# namespace (ip netns exec); Open MPI's TCP transport uses 10.37.100.0/24.
# Waiting: --wait sleep (default) runs tahq-train-mpi --mpi-wait sleep (a
# waiting rank tests its request every 50 us and sleeps in between, so it
# does not take a core from a computing one); yield sets Open MPI's
# mpi_yield_when_idle; poll sets it to 0 (Open MPI's blocking calls poll).
# Output (--out DIR, default build/slow-links): runs.csv, one row per
# finished run (link, method, repeat), written as it finishes; a rerun skips
# the rows present (resume). meta.txt: the configuration, machine, load.
# timing/ and logs/: each run's --timing CSV and mpirun log.
set -euo pipefail

print_help() {
  cat <<'USAGE'
usage: scripts/slow_links.sh [--quick] [--out DIR] [--build DIR] [--data DIR]
                             [--links LIST] [--methods LIST] [--repeats N] [--steps N]
                             [--stages 2|4] [--wait sleep|yield|poll] [--tied fp32|none] [--mtu M]
Runs tahq-train-mpi (K = 2 stages, one rank each) in a private network
namespace whose loopback is shaped with tc htb, one class per direction at
each link rate, and writes one CSV row per run to DIR/runs.csv: step time
(median over the steps of the first epoch after step 1 and over the steady
steps), tokens/s, message bytes per step, per-stage compute and codec
times, the qdisc's own byte and packet counters next to the program's byte
counts, the load average and the CPU other processes at nice <= 0 used during the
run (foreign_cores; before each run the script waits, at most 10 minutes and
not with --quick, until that is below 0.3 cores; every 2 s in
DIR/cpu_monitor.csv). Rerunning resumes
(rows present are skipped).
  --quick        CI size: a small model (C=128, T=64), links 100 Mbit, methods fp32 and
                 tah, 1 repeat, 6 steps (about 20 s)
  --out DIR      results folder (build/slow-links; --quick: build/slow-links-quick)
  --build DIR    CMake build with tahq-train-mpi (build)
  --data DIR     corpus folder with train.bin, val.bin (BUILD/shakespeare;
                 scripts/fetch_corpus.sh DIR builds it)
  --links LIST   link rates in Mbit/s (10000,1000,500,200,100)
  --methods LIST tahq-train methods (fp32,fp16,aqsgd,tah,tah-tile,plain4)
  --repeats N    runs per (link, method) (3)
  --steps N      steps per run (10; the window set is 32 windows = 4 steps per epoch)
  --stages K     2 (one rank per core, shaped lo) or 4 (a namespace per rank, veth
                 pairs between neighbours, --layers 4: one block per stage as with K = 2)
  --wait W       how a waiting rank waits (sleep): sleep = tahq-train --mpi-wait sleep,
                 yield = Open MPI's mpi_yield_when_idle 1, poll = its mpi_yield_when_idle 0
  --tied X       tahq-train --tied-exchange: fp32 (default; the tied embedding's
                 gradients cross the link every step) or none (untied head)
  --mtu M        links of MTU M without segmentation offload, bucket max(M + 14 B, 2 ms)
                 (default: MTU 9000, bucket max(64 KiB, 2 ms), as the first sweep)
  --analyse      only the analysis of DIR/runs.csv (no namespace, no runs): summary.csv,
                 calib_input.csv, `tahq-sim throughput --calibrate` (links_*.csv, .txt) and
                 the figures (plots/links.sh); a full (not --quick) measurement ends with it
Needs root (or the capability to make a network namespace), iproute2's tc and
ip, Open MPI's mpirun, python3. Exit status: 0 done, 77 SKIPPED (no namespace,
tc or htb here), 1 a run failed, 2 usage error.
USAGE
}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$(pwd)
# fail, skip, usage, need_cmd: "FAIL (slow_links): ...", exit 1, 77, 2
. "$REPO/tests/lib.sh"
t_tag slow_links
quick=0
out=""
build=build
data=""
links=""
methods=""
repeats=""
steps=""
orig_args=("$@")
analyse_only=0
stages=2
mtu=""
wait_mode=sleep
tied=fp32
while [ "$#" -gt 0 ]; do
  case "$1" in
  -h | --help) print_help; exit 0 ;;
  --quick) quick=1; shift ;;
  --analyse) analyse_only=1; shift ;;
  --out | --build | --data | --links | --methods | --repeats | --steps | --stages | --wait | --tied | --mtu)
    [ "$#" -ge 2 ] || usage "slow_links: $1 needs a value"
    case "$1" in
    --out) out=$2 ;; --build) build=$2 ;; --data) data=$2 ;; --links) links=$2 ;;
    --methods) methods=$2 ;; --repeats) repeats=$2 ;; --steps) steps=$2 ;;
    --stages) stages=$2 ;; --wait) wait_mode=$2 ;; --tied) tied=$2 ;; --mtu) mtu=$2 ;;
    esac
    shift 2 ;;
  *) usage "slow_links: unknown argument '$1' (slow_links.sh --help)" ;;
  esac
done
if [ "$quick" = 1 ]; then
  : "${out:=build/slow-links-quick}" "${links:=100}" "${methods:=fp32,tah}" "${repeats:=1}" "${steps:=6}"
  quiet_wait=0 # a CI check of the mechanics, not a timing: other tests run beside it
  model=(--channels 128 --heads 2 --context 64 --layers 2 --micro 4 --batch 2)
else
  : "${out:=build/slow-links}" "${links:=10000,1000,500,200,100}" \
    "${methods:=fp32,fp16,aqsgd,tah,tah-tile,plain4}" "${repeats:=3}" "${steps:=10}"
  quiet_wait=600
  model=(--channels 320 --heads 5 --context 128 --layers 2 --micro 4 --batch 2)
fi
windows=32 # 8 samples per step: an epoch is 4 steps
case "$stages" in 2 | 4) ;; *) usage "slow_links: --stages must be 2 or 4" ;; esac
case "$wait_mode" in sleep | yield | poll) ;; *) usage "slow_links: --wait must be sleep, yield or poll" ;; esac
case "$tied" in fp32 | none) ;; *) usage "slow_links: --tied must be fp32 or none" ;; esac
if [ -z "$mtu" ]; then
  mtu=9000 burst_floor=65536 nogso=0
else
  case "$mtu" in '' | *[!0-9]*) usage "slow_links: --mtu must be an integer 1280..9000" ;; esac
  { [ "$mtu" -ge 1280 ] && [ "$mtu" -le 9000 ]; } || usage "slow_links: --mtu must be 1280..9000"
  burst_floor=$((mtu + 14)) nogso=1
fi
if [ "$stages" = 4 ]; then
  # one block per stage, as with K = 2 (--layers 2)
  for i in "${!model[@]}"; do [ "${model[$i]}" = "--layers" ] && model[i + 1]=4; done
fi
case "$repeats" in '' | *[!0-9]* | 0) usage "slow_links: --repeats must be a positive integer" ;; esac
case "$steps" in '' | *[!0-9]* | 0 | 1 | 2 | 3 | 4 | 5) usage "slow_links: --steps must be an integer >= 6" ;; esac
for l in ${links//,/ }; do
  case "$l" in '' | *[!0-9]* | 0) usage "slow_links: bad link rate '$l' (Mbit/s, integer)" ;; esac
done
: "${data:=$build/shakespeare}"
BIN=$build/sgd_sim/transformer/tahq-train-mpi

analyse() {
  local sim=$build/sgd_sim/tahq-sim
  [ -s "$out/runs.csv" ] || fail "$out/runs.csv missing"
  python3 plots/links.py summary "$out/runs.csv" --out "$out"
  python3 plots/links.py calib "$out/runs.csv" "$out/calib_input.csv"
  [ -x "$sim" ] || fail "$sim not built (cmake --build $build --target tahq_sim_cli)"
  "$sim" throughput --calibrate "$out/calib_input.csv" --out "$out" >"$out/calibration.txt"
  sed -n '/^calibration:/,$p' "$out/calibration.txt"
  sh plots/links.sh "$out"
}
if [ "$analyse_only" = 1 ]; then
  analyse
  exit 0
fi

if [ -z "${TAHQ_SLOW_LINKS_NS:-}" ]; then
  # outside: check what is needed, then run this script again in a new namespace
  for t in unshare tc ip mpirun python3; do
    need_cmd "$t" "$t not found (Debian: util-linux, iproute2, openmpi-bin, python3)"
  done
  [ -x "$BIN" ] || fail "$BIN not built (cmake --build $build --target tahq_train_mpi)"
  [ -s "$data/train.bin" ] || fail "corpus not found in $data (scripts/fetch_corpus.sh $data)"
  unshare --net true 2>/dev/null || skip "cannot create a network namespace here (unshare --net needs root or CAP_SYS_ADMIN)"
  export TAHQ_SLOW_LINKS_NS=1
  set +e
  unshare --net -- bash "$0" "${orig_args[@]+"${orig_args[@]}"}"
  rc=$?
  exit $rc
fi

# ---- inside the private namespace from here on
ip link set lo up
ip link set lo mtu "$mtu"
if [ "$nogso" = 1 ]; then
  ip link set dev lo gso_max_segs 1 || skip "cannot turn off segmentation offload on lo (ip link set dev lo gso_max_segs 1)"
fi
sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
if ! tc qdisc add dev lo root handle 1: htb default 30 2>/dev/null; then
  skip "tc cannot attach an htb qdisc to lo here (kernel without CONFIG_NET_SCH_HTB?)"
fi
tc qdisc del dev lo root
mpirun_pid=""
mon_pid=""
nsp="tq37_$$" # the per-rank namespaces of K = 4: ${nsp}_0 .. ${nsp}_3
ns_made=0
cleanup() {
  if [ -n "$mon_pid" ]; then kill "$mon_pid" 2>/dev/null || true; fi
  if [ -n "$mpirun_pid" ] && kill -0 "$mpirun_pid" 2>/dev/null; then
    kill "$mpirun_pid" 2>/dev/null || true
    wait "$mpirun_pid" 2>/dev/null || true
  fi
  tc qdisc del dev lo root 2>/dev/null || true
  if [ "$ns_made" = 1 ]; then
    # deleting a namespace removes its veth ends (and their peers) and qdiscs
    for k in 0 1 2 3; do ip netns del "${nsp}_$k" 2>/dev/null || true; done
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$stages" = 4 ]; then
  ns_made=1
  for k in 0 1 2 3; do
    ip netns add "${nsp}_$k" 2>/dev/null || skip "ip netns add failed: cannot make the per-rank namespaces of K = 4"
    ip netns exec "${nsp}_$k" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 \
      >/dev/null 2>&1 || true
    ip -n "${nsp}_$k" link set lo up
  done
  for k in 0 1 2; do
    j=$((k + 1))
    ip link add tq37f type veth peer name tq37b || skip "cannot create a veth pair here"
    ip link set tq37f netns "${nsp}_$k"
    ip link set tq37b netns "${nsp}_$j"
    ip -n "${nsp}_$k" link set tq37f name tqf mtu "$mtu" up
    ip -n "${nsp}_$j" link set tq37b name tqb mtu "$mtu" up
    if [ "$nogso" = 1 ]; then
      ip -n "${nsp}_$k" link set dev tqf gso_max_segs 1
      ip -n "${nsp}_$j" link set dev tqb gso_max_segs 1
    fi
    ip -n "${nsp}_$k" addr add "10.37.$j.1/30" dev tqf
    ip -n "${nsp}_$j" addr add "10.37.$j.2/30" dev tqb
  done
  # Each rank speaks from one address of its own, 10.37.100.k (Open MPI's
  # TCP transport is given only these): a rank with two
  # veth addresses would open one transport module per address, and a
  # connection arriving from the other one is refused by the peer
  # ("unexpected IP address") and retried for ever. Routes reach the other
  # ranks' addresses through the neighbours; the middle ranks forward, so
  # the traffic between non-neighbours (the tied embedding's exchange
  # between rank 0 and 3, collectives) crosses every link between them.
  for k in 0 1 2 3; do
    # on an interface of its own (Open MPI sees one address per interface,
    # lo's is 127.0.0.1): one end of a veth pair that stays inside the
    # namespace, carrying no traffic (local addresses are delivered on lo)
    ip -n "${nsp}_$k" link add tqid type veth peer name tqidp
    ip -n "${nsp}_$k" link set tqid up
    ip -n "${nsp}_$k" link set tqidp up
    ip -n "${nsp}_$k" addr add "10.37.100.$k/32" dev tqid
  done
  for k in 0 1 2 3; do
    for j in 0 1 2 3; do
      [ "$j" = "$k" ] && continue
      if [ "$j" -gt "$k" ]; then via="10.37.$((k + 1)).2"; else via="10.37.$k.1"; fi
      ip -n "${nsp}_$k" route add "10.37.100.$j/32" via "$via"
    done
  done
  for k in 1 2; do ip netns exec "${nsp}_$k" sysctl -q -w net.ipv4.ip_forward=1 >/dev/null; done
fi

mkdir -p "$out/timing" "$out/logs"
CSV=$out/runs.csv
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
HELPER=$REPO/plots/links.py

# CPU of this script's processes and of every other process at nice <= 0
# (they compete with the measurement), every 2 s, into cpu_monitor.csv
python3 "$HELPER" monitor $$ "$out/cpu_monitor.csv" &
mon_pid=$!
# the namespace's loopback round trip (no netem here: this is the latency)
rtt=$(python3 "$HELPER" rtt)
{
  echo "slow_links: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -sr), $(nproc) cpus"
  echo "model: ${model[*]}, K=$stages stages (mpirun -np $stages), --train-windows $windows, $steps steps per run"
  echo "waiting ranks: $wait_mode; tied embedding exchange: $tied"
  echo "links (Mbit/s): $links; methods: $methods; repeats: $repeats"
  if [ "$stages" = 2 ]; then
    echo "shaping: htb on lo (mtu $mtu$([ "$nogso" = 1 ] && echo ", gso_max_segs 1")), one class per direction at the link rate, burst max($burst_floor B, 2 ms)"
  else
    echo "shaping: a namespace per rank, a veth pair per boundary (mtu $mtu$([ "$nogso" = 1 ] && echo ", gso_max_segs 1")), htb on every veth end at the link rate, burst max($burst_floor B, 2 ms)"
  fi
  echo "latency: no netem in this kernel; loopback TCP round trip measured $rtt us (median of 2000)"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$out/meta.txt"

# shape: htb root, 1:10 rank0->rank1, 1:20 rank1->rank0, 1:30 the rest unshaped
shape() { # mbit port0 port1
  local rate=$1 p0=$2 p1=$3
  local burst=$((rate * 1000000 / 8 / 500)) # 2 ms of the rate, in bytes
  [ "$burst" -ge "$burst_floor" ] || burst=$burst_floor
  tc qdisc del dev lo root 2>/dev/null || true
  tc qdisc add dev lo root handle 1: htb default 30 r2q 1000
  tc class add dev lo parent 1: classid 1:1 htb rate 100gbit burst 4mb quantum 65536
  tc class add dev lo parent 1:1 classid 1:10 htb rate "${rate}mbit" ceil "${rate}mbit" burst "$burst" cburst "$burst" quantum 65536
  tc class add dev lo parent 1:1 classid 1:20 htb rate "${rate}mbit" ceil "${rate}mbit" burst "$burst" cburst "$burst" quantum 65536
  tc class add dev lo parent 1:1 classid 1:30 htb rate 50gbit burst 4mb quantum 65536
  for c in 10 20 30; do tc qdisc add dev lo parent 1:$c handle $c: pfifo limit 100000; done
  tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport "$p1" 0xffff flowid 1:10
  tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport "$p0" 0xffff flowid 1:10
  tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip dport "$p0" 0xffff flowid 1:20
  tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport "$p1" 0xffff flowid 1:20
}

shape4() { # mbit: every veth end's egress is one direction of one boundary
  local rate=$1 k dev
  local burst=$((rate * 1000000 / 8 / 500))
  [ "$burst" -ge "$burst_floor" ] || burst=$burst_floor
  for k in 0 1 2 3; do
    for dev in tqf tqb; do
      { [ "$k" = 0 ] && [ "$dev" = tqb ]; } && continue
      { [ "$k" = 3 ] && [ "$dev" = tqf ]; } && continue
      tc -n "${nsp}_$k" qdisc del dev "$dev" root 2>/dev/null || true
      tc -n "${nsp}_$k" qdisc add dev "$dev" root handle 1: htb default 10 r2q 1000
      tc -n "${nsp}_$k" class add dev "$dev" parent 1: classid 1:1 htb rate 100gbit burst 4mb quantum 65536
      tc -n "${nsp}_$k" class add dev "$dev" parent 1:1 classid 1:10 htb rate "${rate}mbit" ceil "${rate}mbit" \
        burst "$burst" cburst "$burst" quantum 65536
      tc -n "${nsp}_$k" qdisc add dev "$dev" parent 1:10 handle 10: pfifo limit 100000
    done
  done
}
tc_dump() { # file: the counters of every shaped class
  if [ "$stages" = 2 ]; then
    tc -s class show dev lo >"$1"
  else
    : >"$1"
    for k in 0 1 2; do
      { echo "== $k$((k + 1))"; tc -n "${nsp}_$k" -s class show dev tqf; } >>"$1"
      { echo "== $((k + 1))$k"; tc -n "${nsp}_$((k + 1))" -s class show dev tqb; } >>"$1"
    done
  fi
}
# TCP segments sent again, over the namespaces the ranks run in (K = 4:
# each rank's own; K = 2: this one)
retrans() {
  local k t=0 v
  if [ "$stages" = 2 ]; then
    awk '/^Tcp:/ { n++; if (n == 1) { for (i = 1; i <= NF; i++) if ($i == "RetransSegs") c = i } else { print $c; exit } }' /proc/net/snmp
    return
  fi
  for k in 0 1 2 3; do
    v=$(ip netns exec "${nsp}_$k" awk '/^Tcp:/ { n++; if (n == 1) { for (i = 1; i <= NF; i++) if ($i == "RetransSegs") c = i } else { print $c; exit } }' /proc/net/snmp)
    t=$((t + v))
  done
  echo "$t"
}
waitenv=()
waitopt=(--mpi-wait poll)
# poll sets yield_when_idle 0 explicitly: Open MPI turns it on by itself
# when it counts the node as oversubscribed
case "$wait_mode" in
sleep) waitopt=(--mpi-wait sleep) ;;
yield) waitenv=(-x OMPI_MCA_mpi_yield_when_idle=1) ;;
poll) waitenv=(-x OMPI_MCA_mpi_yield_when_idle=0) ;;
esac

done_keys=""
[ -s "$CSV" ] && done_keys=$(python3 "$HELPER" keys "$CSV")
total=0
for r in $(seq 1 "$repeats"); do for l in ${links//,/ }; do for m in ${methods//,/ }; do total=$((total + 1)); done; done; done
i=0
t_start=$(date +%s)
ran=0
for r in $(seq 1 "$repeats"); do
  for l in ${links//,/ }; do
    for m in ${methods//,/ }; do
      i=$((i + 1))
      key="$l,$m,$r"
      if grep -qxF "$key" <<<"$done_keys"; then
        echo "[$i/$total] $l Mbit/s $m repeat $r: in $CSV, skipped"
        continue
      fi
      base=$((21000 + (i % 500) * 4)) # below the ephemeral range; a new pair per run
      if [ "$stages" = 2 ]; then shape "$l" "$base" $((base + 1)); else shape4 "$l"; fi
      name="${l}M_${m//\//-}_r$r"
      tfile=$out/timing/$name.csv
      rm -f "$tfile"
      # wait (at most 10 min; --quick: not at all) until other processes at
      # nice <= 0 use < 0.3 cores; what they used is recorded either way
      python3 "$HELPER" quiet $$ --max 0.3 --timeout "$quiet_wait"
      load=$(cut -d' ' -f1 /proc/loadavg)
      rt0=$(retrans)
      t0=$(date +%s.%N)
      set +e
      if [ "$stages" = 2 ]; then
        launch=(--mca btl_tcp_if_include lo bash -c 'export OMPI_MCA_btl_tcp_port_min_v4=$(('"$base"' + OMPI_COMM_WORLD_RANK)) OMPI_MCA_btl_tcp_port_range_v4=1; exec "$@"' _)
      else
        # the rank runs in its namespace; Open MPI's PMIx server listens on
        # 127.0.0.1 of this one, reached through a forwarder (links.py pmixfwd)
        launch=(--mca btl_tcp_if_include 10.37.100.0/24 bash -c '
          ns=/run/netns/'"$nsp"'_$OMPI_COMM_WORLD_RANK
          exec 3< <(exec python3 '"$HELPER"' pmixfwd "$ns" "${PMIX_SERVER_URI4##*:}")
          fwd=$!
          read -r ok <&3 || { echo "slow_links: the PMIx forwarder of rank $OMPI_COMM_WORLD_RANK failed" >&2; exit 1; }
          ip netns exec "${ns##*/}" "$@"
          rc=$?
          kill "$fwd" 2>/dev/null
          exit $rc' _)
      fi
      mpirun --oversubscribe -np "$stages" --mca btl tcp,self \
        --mca oob_tcp_if_include lo --mca btl_tcp_disable_family 6 "${waitenv[@]+"${waitenv[@]}"}" "${launch[@]}" \
        "$BIN" "${model[@]}" --stages "$stages" --data "$data" --method "$m" --steps "$steps" \
        --train-windows "$windows" --warmup 1 --eval-every 0 --eval-windows 2 --print-every 0 \
        --tied-exchange "$tied" "${waitopt[@]}" \
        --seed "$r" --timing "$tfile" >"$out/logs/$name.log" 2>&1 &
      mpirun_pid=$!
      wait "$mpirun_pid"
      rc=$?
      mpirun_pid=""
      set -e
      t1=$(date +%s.%N)
      if [ "$rc" -ne 0 ]; then
        fail "run $name failed (exit $rc): $(tail -n 5 "$out/logs/$name.log")"
      fi
      tc_dump "$out/logs/$name.tc.txt"
      load_end=$(cut -d' ' -f1 /proc/loadavg)
      rt1=$(retrans)
      python3 "$HELPER" row --csv "$CSV" --timing "$tfile" --tc "$out/logs/$name.tc.txt" \
        --link "$l" --method "$m" --repeat "$r" --load "$load" --load-end "$load_end" --rtt-us "$rtt" \
        --wait "$wait_mode" --tied "$tied" --mtu "$mtu" \
        --wall "$(python3 -c "print(round($t1 - $t0, 3))")" --windows "$windows" \
        --monitor "$out/cpu_monitor.csv" --t0 "$t0" --t1 "$t1" --retrans $((rt1 - rt0))
      ran=$((ran + 1))
      el=$(($(date +%s) - t_start))
      left=$((total - i))
      echo "[$i/$total] $l Mbit/s $m repeat $r: step $(tail -n 1 "$CSV" | cut -d, -f24) s, $(tail -n 1 "$CSV" | cut -d, -f27) tokens/s, eta $((el * left / ran)) s"
    done
  done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/meta.txt"
python3 "$HELPER" check "$CSV"
[ "$quick" = 1 ] || analyse

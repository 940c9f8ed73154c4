#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CTest checks of what the codec commands cost besides time (issue 42, item 3):
#   crc_once          `tahq decode` passes over a message's payload with the
#                     CRC-32C once (counted with gdb on tahq_crc32c)
#   roundtrip_memory  `tahq roundtrip` peaks at <= 1.2 x (input + message +
#                     output) resident memory
# usage: codec_resources_test.sh PART PATH/TO/tahq WORKDIR
# Exit 0 passed, 1 failed, 77 skipped.
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"
P="$1"
t_tag "$P"
T="$(abs_file "$2")"
W="$(fresh_dir "$3")"
cd "$W"

json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

case "$P" in
crc_once)
  command -v gdb >/dev/null 2>&1 || skip "gdb is not installed"
  [ "$(uname -m)" = x86_64 ] || skip "the count reads the x86-64 argument register"
  "$T" gen-llm x.npy --batch 1 --seq 64 --channels 512 >/dev/null
  "$T" encode x.npy x.tahq >/dev/null
  "$T" inspect --json x.tahq >info.json
  payload=$(json_field info.json payload_bytes)
  # passes over the payload: calls of tahq_crc32c(crc, data, n) with n the
  # payload size (the header's 68 bytes are a separate, shorter call)
  payload_passes() {
    printf '%s\n' 'set pagination off' 'set confirm off' \
      "break tahq_crc32c if \$rdx == $payload" 'commands 1' 'silent' \
      'echo PAYLOAD_PASS\n' 'continue' 'end' 'run' >count.gdb
    gdb -q -batch -nx -x count.gdb --args "$T" "$@" >gdb.out 2>&1 || true
    grep -q "exited normally" gdb.out || {
      if grep -qi "ptrace\|not permitted" gdb.out; then skip "gdb cannot trace here: $(head -c 300 gdb.out)"; fi
      fail "gdb run of tahq $* did not finish: $(tail -c 600 gdb.out)"
    }
    grep -c PAYLOAD_PASS gdb.out || true
  }
  n_dec=$(payload_passes decode x.tahq y.npy)
  # control: inspect checks the header (tahq_parse_header) and reads the
  # tiles (tahq_tile_infos), two checks of the CRC, so the counter must see 2
  n_ctl=$(payload_passes inspect x.tahq)
  echo "payload $payload bytes: decode $n_dec CRC pass(es), inspect (control) $n_ctl"
  [ "$n_ctl" = 2 ] || fail "control: inspect made $n_ctl payload CRC passes, expected 2; the count does not work"
  [ "$n_dec" = 1 ] || fail "tahq decode made $n_dec payload CRC passes, expected 1"
  ;;
roundtrip_memory)
  command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
  # a sanitizer build keeps shadow memory and redzones beside every buffer:
  # its resident size is not the program's
  if grep -qa "__asan_init" "$T"; then skip "a sanitizer build ($T): its peak memory is not the program's"; fi
  # 64 MiB of input, the issue's paper point; large against the program's
  # own resident size (code, libraries), which is measured and subtracted
  "$T" gen-llm x.npy --batch 1 --seq 4096 --channels 4096 >/dev/null
  "$T" encode x.npy x.tahq >/dev/null
  python3 - "$T" <<'EOF' || exit 1
import os, resource, subprocess, sys
tahq = sys.argv[1]
def peak_kib(*args):
    # ru_maxrss of RUSAGE_CHILDREN is the largest of the waited-for children,
    # so each measurement runs in a child of its own
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        subprocess.run([tahq, *args], stdout=subprocess.DEVNULL, check=True)
        os.write(w, str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 64)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit(f"FAIL (roundtrip_memory): tahq {' '.join(args)} failed")
    return int(out)
base = peak_kib("--version")
rt = peak_kib("roundtrip", "x.npy")
rt2 = peak_kib("roundtrip", "--threads", "2", "x.npy")
n_in = os.path.getsize("x.npy") - 128          # the .npy header is 128 bytes
n_msg = os.path.getsize("x.tahq")
n_out = n_in
data_kib = (n_in + n_msg + n_out) / 1024
for name, peak in (("1 thread", rt), ("2 threads", rt2)):
    ratio = (peak - base) / data_kib
    print(f"roundtrip {name}: peak {peak} KiB, program alone {base} KiB, "
          f"input + message + output {data_kib:.0f} KiB: {ratio:.3f}x ({peak / data_kib:.3f}x with the program)")
    # control: the measurement sees the buffers (input and output are held together)
    if peak - base < (n_in + n_out) / 1024:
        sys.exit(f"FAIL (roundtrip_memory): control: {name} peak {peak - base} KiB is below input + output; the measure is broken")
    if ratio > 1.2:
        sys.exit(f"FAIL (roundtrip_memory): {name}: {ratio:.3f}x > 1.2x")
EOF
  ;;
*)
  echo "unknown part '$P'" >&2
  exit 2
  ;;
esac
echo "codec_resources_test $P: passed"

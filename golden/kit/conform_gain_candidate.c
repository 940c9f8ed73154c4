/* SPDX-License-Identifier: MIT */
/* conform_gain_candidate.c - a test candidate for the gain cases of
 * golden/v3 (`tahq conform --run`, golden/kit/golden_test.sh part v3): the encode
 * half of the --run protocol, for format-1 configurations.
 *   --rank gain     libtahq's encoder as it is: must pass every case.
 *   --rank entropy  alloc gain (3) ranked by entropy instead: the message of
 *                   alloc token, relabelled as a gain message (alloc 3,
 *                   header version 3, the CRC recomputed). The layouts are
 *                   the same (SPEC 8.2), so only the precision map (and with
 *                   it the widths of the codes) can tell it apart: the
 *                   control that the gain cases must fail.
 * Decoding is libtahq's (golden/tahq_adapter.sh).
 * usage: conform_gain_candidate --rank gain|entropy encode IN.npy OUT.bin --config JSON */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_ops.h"
#include "golden_common.h"
#include "message_reseal.h"
#include "npy.h"
#include "tahq.h"
#include "tahq_spec.h"

int main(int argc, char **argv)
{
    if (argc != 8 || strcmp(argv[1], "--rank") != 0 || strcmp(argv[3], "encode") != 0 ||
        strcmp(argv[6], "--config") != 0 ||
        (strcmp(argv[2], "gain") != 0 && strcmp(argv[2], "entropy") != 0)) {
        fprintf(stderr, "usage: conform_gain_candidate --rank gain|entropy encode IN.npy "
                        "OUT.bin --config JSON\n");
        return 2;
    }
    const int by_entropy = strcmp(argv[2], "entropy") == 0;
    char err[256];
    json_t *o = golden_json_load(argv[7], strlen(argv[7]), err, sizeof err);
    tahq_config cfg;
    if (!o || golden_config_parse(o, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "err_config: %s\n", err);
        json_decref(o);
        return 1;
    }
    json_decref(o);
    npy_tensor x;
    if (npy_read(argv[4], &x) != 0)
        return 1;
    if (x.ndim != 3) {
        fprintf(stderr, "err_shape: need [B, S, C]\n");
        npy_free(&x);
        return 1;
    }
    tahq_shape sh = {(uint32_t)x.dims[0], (uint32_t)x.dims[1], (uint32_t)x.dims[2]};
    const int relabel = by_entropy && cfg.alloc == TAHQ_ALLOC_GAIN;
    if (relabel)
        cfg.alloc = TAHQ_ALLOC_TOKEN;
    uint8_t *msg = NULL;
    size_t len = 0;
    const int st = run_encode(&cfg, &sh, x.data, &msg, &len);
    npy_free(&x);
    if (st != TAHQ_OK) {
        fprintf(stderr, "%s\n", tahq_status_name(st));
        return 1;
    }
    if (relabel) {
        msg[4] = (uint8_t)TAHQ_GAIN_VERSION;
        msg[5] = 0;
        msg[11] = (uint8_t)TAHQ_ALLOC_GAIN;
        message_reseal(msg, len);
    }
    FILE *f = fopen(argv[5], "wb");
    int rc = !f || fwrite(msg, 1, len, f) != len;
    if (f && fclose(f) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "%s: cannot write\n", argv[5]);
    free(msg);
    return rc;
}

/* SPDX-License-Identifier: MIT */
/* consumer.c - a program built against an installed libtahq, the way a
 * user's project would: encode a small tensor at the paper operating point,
 * decode it, and check every element against the SPEC error bound the
 * message itself gives. Prints "tahq VERSION ok" and exits 0, or says what
 * failed and exits 1. */
#include <stdio.h>
#include <stdlib.h>

#include <tahq.h>
#include <tahq_version.h>

int main(void)
{
    enum { B = 1, S = 8, C = 128, N = B * S * C };
    tahq_config cfg;
    tahq_config_default(&cfg);
    tahq_shape shape = {B, S, C};
    static float x[N], y[N];
    static double bound[N];
    for (int i = 0; i < N; ++i)
        x[i] = (float)((i * 37) % 101 - 50) / 16.0f;
    size_t cap = 0, wsz = 0, len = 0;
    if (tahq_encode_bound(&cfg, &shape, &cap) != TAHQ_OK ||
        tahq_encode_workspace_size(&cfg, &shape, &wsz) != TAHQ_OK) {
        fprintf(stderr, "consumer: size queries failed\n");
        return 1;
    }
    unsigned char *msg = malloc(cap), *ws = malloc(wsz ? wsz : 1);
    if (!msg || !ws)
        return 1;
    tahq_status st = tahq_encode(&cfg, &shape, x, ws, wsz, msg, cap, &len);
    if (st == TAHQ_OK)
        st = tahq_decode(msg, len, y, N);
    if (st == TAHQ_OK)
        st = tahq_error_bound(msg, len, bound, N);
    if (st != TAHQ_OK) {
        fprintf(stderr, "consumer: %s\n", tahq_strerror(st));
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < N; ++i)
        bad +=
            !((double)y[i] - (double)x[i] <= bound[i] && (double)x[i] - (double)y[i] <= bound[i]);
    free(msg);
    free(ws);
    if (bad) {
        fprintf(stderr, "consumer: %d elements outside the bound\n", bad);
        return 1;
    }
    printf("tahq %s ok (%zu bytes)\n", TAHQ_VERSION_STRING, len);
    return 0;
}

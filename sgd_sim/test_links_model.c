/* SPDX-License-Identifier: MIT */
/* The event model of links_model.h against schedules worked out by hand.
 * Every expected value is a sum of small integers (times in seconds with
 * bandwidths chosen so a message takes a whole number of seconds), exact in
 * binary64, so the comparisons are exact. A control (a model with the
 * backward compute dropped) must differ from the first case. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "links_model.h"

static int fails = 0;

static void expect(const char *what, double got, double want)
{
    int ok = got == want;
    printf("%s %s: %g (expected %g)\n", ok ? "ok  " : "FAIL", what, got, want);
    fails += !ok;
}

static lk_params base(int K, int M)
{
    lk_params p;
    memset(&p, 0, sizeof p);
    p.K = K, p.M = M, p.wire = 1, p.bw = 8; /* 1 byte per second */
    return p;
}

int main(void)
{
    /* 1. no communication cost: GPipe fill and drain, (M + K - 1) slots
     * forward and backward: 3 (M + K - 1) with cf = 1, cb = 2 */
    lk_params p = base(4, 8);
    for (int k = 0; k < 4; k++)
        p.cf[k] = 1, p.cb[k] = 2;
    expect("no comm, overlap", lk_step(&p, 0), 3.0 * (8 + 4 - 1));
    expect("no comm, blocking", lk_step(&p, 1), 3.0 * (8 + 4 - 1));
    lk_params q = p;
    for (int k = 0; k < 4; k++)
        q.cb[k] = 0;
    int control = lk_step(&q, 0) != 3.0 * (8 + 4 - 1);
    printf("%s control: the model without backward compute gives %g, not %g\n",
           control ? "ok  " : "FAIL", lk_step(&q, 0), 3.0 * (8 + 4 - 1));
    fails += !control;
    /* 2. link-bound: K = 2, no compute, each forward message 1 s: M s */
    p = base(2, 5);
    p.bf = 1;
    expect("link-bound, overlap", lk_step(&p, 0), 5);
    expect("link-bound, blocking", lk_step(&p, 1), 5);
    /* 3. latency only: K = 2, M = 1: forward, backward, loss broadcast */
    p = base(2, 1);
    p.lat = 0.5;
    expect("latency, overlap", lk_step(&p, 0), 1.5);
    /* 4. K = 2, M = 2, cf = 1, forward message 1 s. Overlap: stage 1 gets
     * m0 at 2 and m1 at 3, ends at 4. Blocking: stage 0 waits in its send of
     * m0 until 2, computes m1 until 3, m1 arrives at 4, stage 1 ends at 5. */
    p = base(2, 2);
    p.cf[0] = p.cf[1] = 1, p.bf = 1;
    expect("overlap vs blocking: overlap", lk_step(&p, 0), 4);
    expect("overlap vs blocking: blocking", lk_step(&p, 1), 5);
    /* the protocol: eager (overlapped) at or below the limit, else blocking */
    p.eager = 1;
    expect("protocol, message at the eager limit", lk_step(&p, LK_PROTOCOL), 4);
    p.eager = 0.5;
    expect("protocol, message above the eager limit", lk_step(&p, LK_PROTOCOL), 5);
    /* 5. codec and tail: case 4 (overlap) with encode 1 and decode 1 per
     * forward message: stage 0 ready at 2 and 4, link 2..3 and 4..5; stage 1
     * m0 3 + 1 + 1 = 5, m1 max(5, 5) + 2 = 7; then a 2-byte exchange (2 s)
     * and the longer update (3 s): 12 */
    p.ef[0] = 1, p.df[1] = 1, p.tail_bytes = 2, p.upd[0] = 3, p.upd[1] = 1;
    expect("codec, exchange and update", lk_step(&p, 0), 12);
    if (fails) {
        printf("test_links_model: %d FAILED\n", fails);
        return 1;
    }
    printf("test_links_model: all passed\n");
    return 0;
}

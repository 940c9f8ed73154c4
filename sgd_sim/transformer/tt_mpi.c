/* SPDX-License-Identifier: MIT */
/* tt_mpi.c - Open MPI transport (tt_mpi.h). Message order between two
 * ranks is MPI's (non-overtaking for one source, tag and communicator), so
 * a stage receives its micro-batches in the order they were sent. */
#include "tt_mpi.h"

#include <limits.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

typedef struct mpi_ctx {
    uint8_t *buf; /* the last received message */
    size_t cap;
    uint64_t sent;     /* payload bytes this rank sent point-to-point (send and swap) */
    uint64_t *sent_to; /* the same per destination rank */
    int size;
} mpi_ctx;

/* > 0: wait for a message or a send by testing it every g_sleep_us
 * microseconds and sleeping in between, so that a rank waiting on a slow
 * link leaves its core to the others (Open MPI's own blocking calls poll
 * the transport in a loop and keep the core busy; mpi_yield_when_idle only
 * adds sched_yield to that loop). 0: MPI's own blocking calls. */
static int g_sleep_us = 0;

void tt_mpi_set_wait_sleep(int us)
{
    g_sleep_us = us > 0 ? us : 0;
}

static void nap(void)
{
    struct timespec ts = {0, (long)g_sleep_us * 1000L};
    nanosleep(&ts, NULL);
}

/* complete a request: MPI_Wait, or test-and-sleep */
static int wait_req(MPI_Request *rq, MPI_Status *st)
{
    if (!g_sleep_us)
        return MPI_Wait(rq, st) != MPI_SUCCESS;
    for (;;) {
        int done = 0;
        if (MPI_Test(rq, &done, st) != MPI_SUCCESS)
            return 1;
        if (done)
            return 0;
        nap();
    }
}

static void count(mpi_ctx *c, int to, size_t len)
{
    c->sent += len;
    if (to >= 0 && to < c->size)
        c->sent_to[to] += len;
}

static int m_send(void *ctx, int to, int tag, const uint8_t *msg, size_t len)
{
    mpi_ctx *c = ctx;
    if (len > INT_MAX)
        return 1;
    count(c, to, len);
    if (!g_sleep_us)
        return MPI_Send(msg, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS;
    MPI_Request rq;
    if (MPI_Isend(msg, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
        return 1;
    return wait_req(&rq, MPI_STATUS_IGNORE);
}

static int m_recv(void *ctx, int from, int tag, const uint8_t **msg, size_t *len)
{
    mpi_ctx *c = ctx;
    MPI_Status st;
    int n = 0;
    if (g_sleep_us) {
        for (int flag = 0; !flag;) {
            if (MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
                return 1;
            if (!flag)
                nap();
        }
    } else if (MPI_Probe(from, tag, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
        return 1;
    if (MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
        return 1;
    if ((size_t)n > c->cap) {
        uint8_t *b = realloc(c->buf, (size_t)n);
        if (!b)
            return 1;
        c->buf = b, c->cap = (size_t)n;
    }
    if (g_sleep_us) {
        MPI_Request rq;
        if (MPI_Irecv(c->buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &rq) != MPI_SUCCESS ||
            wait_req(&rq, MPI_STATUS_IGNORE))
            return 1;
    } else if (MPI_Recv(c->buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
               MPI_SUCCESS)
        return 1;
    *msg = c->buf, *len = (size_t)n;
    return 0;
}

static int m_swap(void *ctx, int peer, const float *mine, float *theirs, size_t n)
{
    mpi_ctx *c = ctx;
    if (n > INT_MAX)
        return 1;
    count(c, peer, sizeof(float) * n);
    if (!g_sleep_us)
        return MPI_Sendrecv(mine, (int)n, MPI_FLOAT, peer, 3, theirs, (int)n, MPI_FLOAT, peer, 3,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS;
    MPI_Request rq[2];
    if (MPI_Irecv(theirs, (int)n, MPI_FLOAT, peer, 3, MPI_COMM_WORLD, &rq[0]) != MPI_SUCCESS)
        return 1;
    if (MPI_Isend(mine, (int)n, MPI_FLOAT, peer, 3, MPI_COMM_WORLD, &rq[1]) != MPI_SUCCESS) {
        wait_req(&rq[0], MPI_STATUS_IGNORE);
        return 1;
    }
    int e0 = wait_req(&rq[1], MPI_STATUS_IGNORE), e1 = wait_req(&rq[0], MPI_STATUS_IGNORE);
    return e0 || e1;
}

static int m_bcast(void *ctx, int root, double *v, int n)
{
    (void)ctx;
    if (!g_sleep_us)
        return MPI_Bcast(v, n, MPI_DOUBLE, root, MPI_COMM_WORLD) != MPI_SUCCESS;
    MPI_Request rq;
    if (MPI_Ibcast(v, n, MPI_DOUBLE, root, MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
        return 1;
    return wait_req(&rq, MPI_STATUS_IGNORE);
}

int tt_mpi_transport(tt_transport *tr)
{
    mpi_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return 1;
    if (MPI_Comm_size(MPI_COMM_WORLD, &c->size) != MPI_SUCCESS || c->size < 1 ||
        !(c->sent_to = calloc((size_t)c->size, sizeof *c->sent_to))) {
        free(c);
        return 1;
    }
    *tr = (tt_transport){c, m_send, m_recv, m_swap, m_bcast};
    return 0;
}

void tt_mpi_transport_free(tt_transport *tr)
{
    mpi_ctx *c = tr->ctx;
    if (c) {
        free(c->buf);
        free(c->sent_to);
    }
    free(c);
    tr->ctx = NULL;
}

int tt_mpi_sum_u64(uint64_t *v, int n)
{
    if (!g_sleep_us)
        return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD) !=
               MPI_SUCCESS;
    MPI_Request rq;
    if (MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD, &rq) !=
        MPI_SUCCESS)
        return 1;
    return wait_req(&rq, MPI_STATUS_IGNORE);
}

int tt_mpi_bcast_int(int *v)
{
    return MPI_Bcast(v, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
}

int tt_mpi_gather_f64(const double *mine, int n, double *all)
{
    if (!g_sleep_us)
        return MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD) !=
               MPI_SUCCESS;
    MPI_Request rq;
    if (MPI_Igather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq) != MPI_SUCCESS)
        return 1;
    return wait_req(&rq, MPI_STATUS_IGNORE);
}

uint64_t tt_mpi_sent_bytes(const tt_transport *tr)
{
    const mpi_ctx *c = tr->ctx;
    return c ? c->sent : 0;
}

uint64_t tt_mpi_sent_to(const tt_transport *tr, int to)
{
    const mpi_ctx *c = tr->ctx;
    return c && to >= 0 && to < c->size ? c->sent_to[to] : 0;
}

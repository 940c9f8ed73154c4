/* SPDX-License-Identifier: MIT */
/* tt_mpi.c - Open MPI transport (tt_mpi.h). Message order between two
 * ranks is MPI's (non-overtaking for one source, tag and communicator), so
 * a stage receives its micro-batches in the order they were sent. */
#include "tt_mpi.h"

#include <limits.h>
#include <stdlib.h>

#include <mpi.h>

typedef struct mpi_ctx {
    uint8_t *buf; /* the last received message */
    size_t cap;
    uint64_t sent; /* payload bytes this rank sent point-to-point (send and swap) */
} mpi_ctx;

static int m_send(void *ctx, int to, int tag, const uint8_t *msg, size_t len)
{
    mpi_ctx *c = ctx;
    if (len > INT_MAX)
        return 1;
    c->sent += len;
    return MPI_Send(msg, (int)len, MPI_BYTE, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static int m_recv(void *ctx, int from, int tag, const uint8_t **msg, size_t *len)
{
    mpi_ctx *c = ctx;
    MPI_Status st;
    int n = 0;
    if (MPI_Probe(from, tag, MPI_COMM_WORLD, &st) != MPI_SUCCESS ||
        MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
        return 1;
    if ((size_t)n > c->cap) {
        uint8_t *b = realloc(c->buf, (size_t)n);
        if (!b)
            return 1;
        c->buf = b, c->cap = (size_t)n;
    }
    if (MPI_Recv(c->buf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return 1;
    *msg = c->buf, *len = (size_t)n;
    return 0;
}

static int m_swap(void *ctx, int peer, const float *mine, float *theirs, size_t n)
{
    mpi_ctx *c = ctx;
    if (n > INT_MAX)
        return 1;
    c->sent += sizeof(float) * n;
    return MPI_Sendrecv(mine, (int)n, MPI_FLOAT, peer, 3, theirs, (int)n, MPI_FLOAT, peer, 3,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS;
}

static int m_bcast(void *ctx, int root, double *v, int n)
{
    (void)ctx;
    return MPI_Bcast(v, n, MPI_DOUBLE, root, MPI_COMM_WORLD) != MPI_SUCCESS;
}

int tt_mpi_transport(tt_transport *tr)
{
    mpi_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return 1;
    *tr = (tt_transport){c, m_send, m_recv, m_swap, m_bcast};
    return 0;
}

void tt_mpi_transport_free(tt_transport *tr)
{
    mpi_ctx *c = tr->ctx;
    if (c)
        free(c->buf);
    free(c);
    tr->ctx = NULL;
}

int tt_mpi_sum_u64(uint64_t *v, int n)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
}

int tt_mpi_bcast_int(int *v)
{
    return MPI_Bcast(v, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
}

int tt_mpi_gather_f64(const double *mine, int n, double *all)
{
    return MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
}

uint64_t tt_mpi_sent_bytes(const tt_transport *tr)
{
    const mpi_ctx *c = tr->ctx;
    return c ? c->sent : 0;
}

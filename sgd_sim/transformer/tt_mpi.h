/* SPDX-License-Identifier: MIT */
/* tt_mpi.h - the Open MPI transport of tahq-train-mpi: one rank per stage,
 * the boundary messages' bytes sent with MPI_Send / MPI_Recv. */
#ifndef TT_MPI_H
#define TT_MPI_H

#include <stdint.h>

#include "tt_train.h"

/* A transport on MPI_COMM_WORLD (MPI_Init done by the caller). */
int tt_mpi_transport(tt_transport *tr);
void tt_mpi_transport_free(tt_transport *tr);
/* sum n counters over all ranks (every rank gets the sums) */
int tt_mpi_sum_u64(uint64_t *v, int n);
/* n doubles from every rank to rank 0: all[rank*n .. rank*n+n) (all: rank 0 only) */
int tt_mpi_gather_f64(const double *mine, int n, double *all);
/* payload bytes this rank has sent point-to-point through tr since it was
 * made (boundary and evaluation messages, the tied-embedding exchange; not
 * the collectives' few bytes nor MPI's own headers) */
uint64_t tt_mpi_sent_bytes(const tt_transport *tr);
/* the same, only what went to rank `to` (0 for a rank out of range) */
uint64_t tt_mpi_sent_to(const tt_transport *tr, int to);
/* us > 0: every wait (receive, send, exchange, collectives) tests its
 * request every us microseconds and sleeps in between instead of polling
 * (the core is free while a rank waits); 0: MPI's blocking calls */
void tt_mpi_set_wait_sleep(int us);
/* rank 0's int to every rank */
int tt_mpi_bcast_int(int *v);

#endif

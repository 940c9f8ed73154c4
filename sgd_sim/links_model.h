/* SPDX-License-Identifier: MIT */
/* links_model.h - the GPipe step-time model of `tahq-sim throughput`,
 * calibrated against the slow-link measurement (scripts/slow_links.sh).
 *
 * A step of K stages and M micro-batches as events: stage k runs, for
 * m = 0..M-1, [receive, decode,] forward compute[, encode, send] of micro-batch
 * m, then the backwards in the same order (K-1..0); a message of b bytes
 * takes latency + wire * b * 8 / bandwidth on its own link (one per boundary
 * and direction, full duplex). Two kinds of send:
 *   overlap   the sender hands the message over and goes on; the link sends
 *             the messages of its direction one after the other (as with
 *             non-blocking sends on a separate stream: NCCL, the authors')
 *   blocking  rendezvous: the transfer starts when the receiver asks for the
 *             message and the sender waits until it has arrived (MPI_Send of
 *             a large message over Open MPI's ob1/TCP, what tahq-train-mpi
 *             does)
 *   protocol  Open MPI's choice per message: blocking above the eager limit
 *             (eager bytes of payload), overlapped at or below it (an eager
 *             message is handed to the socket and MPI_Send returns)
 * After the last backward: the tied embedding's gradients are exchanged
 * (tail_bytes each way), every stage updates (the longest update), and the
 * loss goes out (one latency). */
#ifndef TAHQ_LINKS_MODEL_H
#define TAHQ_LINKS_MODEL_H

#define LK_MAXK 16

typedef struct lk_params {
    int K, M;
    double cf[LK_MAXK], cb[LK_MAXK]; /* compute per micro-batch, forward / backward, s */
    double ef[LK_MAXK],
        df[LK_MAXK]; /* encode (stage k, to k+1) / decode (stage k, from k-1), forward */
    double eb[LK_MAXK],
        db[LK_MAXK];     /* encode (stage k, to k-1) / decode (stage k, from k+1), backward */
    double upd[LK_MAXK]; /* update after the step */
    double bf, bb;       /* message bytes per micro-batch, forward / backward */
    double tail_bytes;   /* exchanged between stage 0 and K-1 after the backward */
    double lat;          /* one-way latency per message, s */
    double bw;           /* bits per second */
    double wire;         /* bytes on the wire per payload byte (packet headers) */
    double eager;        /* LK_PROTOCOL: largest payload sent eagerly */
} lk_params;

enum { LK_OVERLAP = 0, LK_BLOCKING = 1, LK_PROTOCOL = 2 };

/* the step time (s) with sends of the given kind (LK_OVERLAP, LK_BLOCKING, LK_PROTOCOL) */
double lk_step(const lk_params *p, int mode);

/* Calibrate against a measurement (measured: plots/links.py calib's CSV,
 * one row per link, method and phase with the medians over the repeats of
 * the step time and of the per-stage compute, codec and update times) and
 * project to the paper's setting with the GPT2-XL message sizes of the nm
 * methods names[] (fb, bb: forward and backward bytes of a [1, S, C]
 * micro-batch, measured by `throughput`). Writes links_model_points.csv,
 * links_model_curve.csv, links_epochs.csv, links_projection.csv and
 * links_projection.txt into outdir, and the summary to stdout. 0, 1 on an
 * unreadable input, 2 on a malformed one. */
int lk_calibrate(const char *measured, const char *outdir, int nm, const char *const *names,
                 const double *fb, const double *bb, unsigned S, unsigned C);

#endif

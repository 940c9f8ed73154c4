/* SPDX-License-Identifier: MIT */
/* Dense kernels on OpenBLAS. This is the only file that includes <cblas.h>
 * (GSL's gsl_cblas.h clashes with it). */
#include <cblas.h>

#include "sim.h"

void sim_blas_init(void)
{
    /* results must be reproducible: one thread, the same kernel every call */
    openblas_set_num_threads(1);
}

void sim_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc)
{
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sim_dgemm(int trans_a, int trans_b, int m, int n, int k, double alpha, const double *a,
               int lda, const double *b, int ldb, double beta, double *c, int ldc)
{
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* SPDX-License-Identifier: MIT */
/*
 * tahq_cuda.cu - the CUDA executor of tq_pipeline.cuh and the C API of
 * tahq_cuda.h. Every warp program runs through one kernel template:
 * tq_kernel<P> gives each warp one work item (warp index), its own slice of
 * dynamic shared memory, and, for programs that have one, a block-wide
 * table filled before a __syncthreads.
 */
#include "tahq_cuda.h"

#include "tq_pipeline.cuh"

static thread_local cudaError_t tq_last_error = cudaSuccess;

extern "C" cudaError_t tahq_cuda_last_error(void)
{
    return tq_last_error;
}

template <class P>
__global__ void __launch_bounds__(256)
    tq_kernel(const typename P::Args a, uint64_t nwarps, uint32_t smem_warp)
{
    extern __shared__ __align__(16) uint8_t tq_smem[];
    if (P::kBlockSmem > 0) {
        P::block_init(tq_smem, threadIdx.x, blockDim.x);
        __syncthreads();
    }
    const uint32_t wib = threadIdx.x >> 5;
    const uint64_t gw = (uint64_t)blockIdx.x * (blockDim.x >> 5) + wib;
    if (gw >= nwarps)
        return; /* whole warps only */
    P::template run<DevW>(a, gw, tq_smem + P::kBlockSmem + (size_t)wib * smem_warp, tq_smem);
}

struct TqDevExec {
    cudaStream_t stream;

    tahq_status fail(cudaError_t e)
    {
        tq_last_error = e;
        return TAHQ_CUDA_ERR_RUNTIME;
    }
    tahq_status check(cudaError_t e)
    {
        return e == cudaSuccess ? TAHQ_OK : fail(e);
    }

    template <class P> tahq_status launch(const typename P::Args &a, uint64_t nwarps, uint32_t wpb)
    {
        if (nwarps == 0)
            return TAHQ_OK;
        if (wpb < 1u || wpb > 8u)
            wpb = 8u;
        const size_t sw = (P::smem_warp(a) + 15u) & ~(size_t)15u;
        const size_t smem = P::kBlockSmem + sw * wpb;
        const uint64_t blocks = (nwarps + wpb - 1u) / wpb;
        if (blocks > 0x7FFFFFFFull)
            return fail(cudaErrorInvalidConfiguration);
        if (smem > 48u * 1024u) {
            cudaError_t e = cudaFuncSetAttribute(
                tq_kernel<P>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
            if (e != cudaSuccess)
                return fail(e);
        }
        tq_kernel<P><<<(unsigned)blocks, wpb * 32u, smem, stream>>>(a, nwarps, (uint32_t)sw);
        return check(cudaGetLastError());
    }
    tahq_status memset(void *p, int v, size_t n)
    {
        return check(cudaMemsetAsync(p, v, n, stream));
    }
    /* from a host buffer that may go out of scope after the call: pageable
     * copies are staged before cudaMemcpyAsync returns */
    tahq_status h2d(void *d, const void *h, size_t n)
    {
        return check(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, stream));
    }
    tahq_status d2h(void *h, const void *d, size_t n)
    {
        tahq_status r = check(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, stream));
        return r == TAHQ_OK ? sync() : r;
    }
    tahq_status sync()
    {
        return check(cudaStreamSynchronize(stream));
    }
};

extern "C" tahq_status tahq_cuda_encode_bound(const tahq_config *cfg, const tahq_shape *shape,
                                              size_t *bytes)
{
    return tahq_encode_bound(cfg, shape, bytes);
}

extern "C" tahq_status tahq_cuda_encode_workspace_size(const tahq_config *cfg,
                                                       const tahq_shape *shape, size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    TqEncPlan p;
    tahq_status st = tq_enc_plan(cfg, shape, &p);
    if (st != TAHQ_OK)
        return st;
    *bytes = p.total;
    return TAHQ_OK;
}

extern "C" tahq_status tahq_cuda_encode(const tahq_config *cfg, const tahq_shape *shape,
                                        const float *d_x, void *d_workspace, size_t workspace_bytes,
                                        uint8_t *d_out, size_t out_capacity, size_t *out_len,
                                        cudaStream_t stream)
{
    TqDevExec ex = {stream};
    return tq_encode_impl(ex, cfg, shape, d_x, d_workspace, workspace_bytes, d_out, out_capacity,
                          out_len);
}

extern "C" tahq_status tahq_cuda_decode_workspace_size(size_t len, size_t count, size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    TqDecPlan p;
    tq_dec_plan(len, count, &p);
    *bytes = p.total;
    return TAHQ_OK;
}

extern "C" tahq_status tahq_cuda_decode(const uint8_t *d_msg, size_t len, float *d_out,
                                        size_t count, void *d_workspace, size_t workspace_bytes,
                                        cudaStream_t stream)
{
    TqDevExec ex = {stream};
    return tq_decode_impl(ex, d_msg, len, d_out, count, d_workspace, workspace_bytes);
}

extern "C" tahq_status tahq_cuda_fixpoint_workspace_size(uint32_t channels, size_t *bytes)
{
    if (!bytes)
        return TAHQ_ERR_NULL;
    *bytes = tq_fix_ws_bytes(channels);
    return TAHQ_OK;
}

extern "C" tahq_status tahq_cuda_fixpoint_encode(const float *d_g, uint64_t rows, uint32_t channels,
                                                 uint32_t bits, tahq_meta meta, uint8_t *d_codes,
                                                 float *d_steps, void *d_workspace,
                                                 size_t workspace_bytes, cudaStream_t stream)
{
    TqDevExec ex = {stream};
    return tq_fix_encode_impl(ex, d_g, rows, channels, bits, meta, d_codes, d_steps, d_workspace,
                              workspace_bytes);
}

extern "C" tahq_status tahq_cuda_fixpoint_decode(const uint8_t *d_codes, const float *d_steps,
                                                 uint64_t rows, uint32_t channels, uint32_t bits,
                                                 float *d_out, void *d_workspace,
                                                 size_t workspace_bytes, cudaStream_t stream)
{
    TqDevExec ex = {stream};
    return tq_fix_decode_impl(ex, d_codes, d_steps, rows, channels, bits, d_out, d_workspace,
                              workspace_bytes);
}

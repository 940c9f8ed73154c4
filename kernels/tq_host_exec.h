/* SPDX-License-Identifier: MIT */
/*
 * tq_host_exec.h - an executor for tq_pipeline.cuh that runs the warp
 * programs on the CPU with the emulated warp HostW: every warp of a launch
 * runs in turn, on host memory. Used by test_device_math (no GPU needed).
 * Each warp's shared memory is poisoned before it runs, so a program that
 * reads shared memory it did not write gets garbage, as it would on a GPU.
 */
#ifndef TQ_HOST_EXEC_H
#define TQ_HOST_EXEC_H

#include <string.h>

#include <vector>

#include "tq_pipeline.cuh"

struct TqHostExec {
    uint64_t launches = 0, warps = 0;
    template <class P> tahq_status launch(const typename P::Args &a, uint64_t nwarps, uint32_t)
    {
        launches++;
        if (nwarps == 0)
            return TAHQ_OK;
        size_t sw = (P::smem_warp(a) + 15u) & ~(size_t)15u;
        std::vector<uint8_t> blk(P::kBlockSmem + 32u), wsm(sw + 32u);
        uint8_t *sb = reinterpret_cast<uint8_t *>(((uintptr_t)blk.data() + 15u) & ~(uintptr_t)15u);
        uint8_t *swp = reinterpret_cast<uint8_t *>(((uintptr_t)wsm.data() + 15u) & ~(uintptr_t)15u);
        if (P::kBlockSmem)
            P::block_init(sb, 0, 1);
        for (uint64_t w = 0; w < nwarps; w++) {
            memset(swp, 0xA5, sw);
            P::template run<HostW>(a, w, swp, sb);
            warps++;
        }
        return TAHQ_OK;
    }
    tahq_status memset(void *p, int v, size_t n)
    {
        ::memset(p, v, n);
        return TAHQ_OK;
    }
    tahq_status h2d(void *d, const void *h, size_t n)
    {
        memcpy(d, h, n);
        return TAHQ_OK;
    }
    tahq_status d2h(void *h, const void *d, size_t n)
    {
        memcpy(h, d, n);
        return TAHQ_OK;
    }
    tahq_status sync()
    {
        return TAHQ_OK;
    }
};

#endif

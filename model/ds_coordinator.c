/* ds_coordinator.c — DeepSpeed ZeRO-3's PartitionedParameterCoordinator: the release / reuse rule
 * and the live-parameter peak, for zero3 and zero3-offload under framework deepspeed (the
 * header says what). The rules are the same in every release that has ZeRO-3: v0.3.12
 * (35fd7ccd, the first, 2021-03-12: stage3.py release_sub_module L413-456 keeps a sub-module's
 * parameters when _keep_for_later L464-470 finds its next use fewer than max_reuse_distance
 * elements on; prefetch_next_sub_modules L312-334 prefetches while fewer than
 * max_available_parameters are gathered) and v0.6.2 (32d97976, partitioned_param_coordinator.py
 * release_sub_module L302-312, __params_to_release L358-378, fetch_sub_module L219-293), which
 * is what the code below replays; v0.3.12 keeps a sub-module whose distance equals the limit
 * where v0.6.2 releases it, a tie no shape here meets. Not here: the timing of the fetches. */
#include "ds_coordinator.h"

#include "framework.h"
#include "memory_states.h"

double dsc_reuse(const spec_training *t)
{
    return t->max_reuse_params > 0 ? t->max_reuse_params : DSC_REUSE_DEFAULT;
}

/* After a checkpointed block's recompute, release_sub_module releases a sub-module's parameters
 * unless the trace uses them again within stage3_max_reuse_distance elements (__params_to_release:
 * the modules after the current one in the trace, each counted whole while the elements seen so
 * far are <= the distance). The trace after sub-module i's recompute is the recompute's later
 * sub-modules, then the backward from the last one down: i's backward use lies
 * sum(sz[i+1..k-1]) + sum(sz[i+1..k-1]) elements on (the last sub-module's is next: kept). The
 * persistent parameters in between (norms, biases: < 1e5 elements) are left out. */
double dsc_regather(const double *sz, int k, double reuse, int *n)
{
    double out = 0;
    *n = 0;
    for (int i = 0; i < k; i++) {
        double seen = 0;
        int kept = 0;
        for (int j = i + 1; j < 2 * k && seen <= reuse; j++) {
            int m = j < k ? j : 2 * k - 1 - j; /* j >= k: the backward, last sub-module first */
            if (j >= k && m == i) {
                kept = 1;
                break;
            }
            seen += sz[m];
        }
        if (!kept) {
            out += sz[i];
            (*n)++;
        }
    }
    return out;
}

/* Only full checkpointing reruns every sub-module before the backward (selective recomputes
 * attention's core, which holds no parameters). */
double dsc_backward_regather(const spec_training *t, const double *sz, int k, int recompute, int *n)
{
    *n = 0;
    if (t->framework != FW_DEEPSPEED || t->act_ckpt != CKPT_FULL || !recompute || k < 1)
        return 0;
    return dsc_regather(sz, k, dsc_reuse(t), n);
}

/* The coordinator's __n_available_params as v0.6.2 moves it: a sub-module's hook gathers its
 * parameters whatever the limits (fetch_sub_module L219-224), then prefetches from the trace
 * while fewer than min(stage3_max_live_parameters - available, stage3_prefetch_bucket_size)
 * elements are taken, counting ones already available (L277-293); release_sub_module frees them
 * unless reused within the distance (dsc_regather's rule). Replayed over one checkpointed block's
 * recompute and backward, then the previous block's (the steady state). The forward's peak (a
 * sub-module and the next) is not above this. */
double dsc_live_peak(const double *sz, int k, double live, double reuse, double bucket)
{
    int tr[4 * WL_MAX_GEMMS], n = 0;
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < k; i++)
            tr[n++] = b * k + i; /* recompute, forward order; block b = 1 is the one before */
        for (int i = k - 1; i >= 0; i--)
            tr[n++] = b * k + i; /* backward */
    }
    int avail[2 * WL_MAX_GEMMS] = {0}, qp = 0;
    double have = 0, peak = 0;
    for (int p = 0; p < n; p++) {
        int x = tr[p];
        if (!avail[x])
            avail[x] = 1, have += sz[x % k];
        if (qp < p + 1)
            qp = p + 1;
        double lim = live - have < bucket ? live - have : bucket, taken = 0;
        while (qp < n && taken < lim) {
            int y = tr[qp++];
            taken += sz[y % k];
            if (!avail[y])
                avail[y] = 1, have += sz[y % k];
        }
        peak = have > peak ? have : peak;
        double seen = 0; /* released unless used again within the distance */
        int reused = 0;
        for (int q = p + 1; q < n && seen <= reuse && !reused; q++) {
            reused = tr[q] == x;
            seen += sz[tr[q] % k];
        }
        if (!reused && avail[x])
            avail[x] = 0, have -= sz[x % k];
    }
    return peak;
}

/* The largest layer's gathered sub-modules at the coordinator's peak (dsc_live_peak), 16-bit,
 * plus its unsharded gradients: a gradient waits in the ipg bucket until the next one arrives
 * (v0.6.2 stage3.py reduce_independent_p_g_buckets_and_remove_grads L1469-1490), so two
 * adjacent sub-modules' gradients at once, and the contiguous bucket buffer of
 * reduce_bucket_size elements (L525-529) where contiguous_gradients is on: its default from
 * v0.4.3 (c9fee821, #1199: ZERO3_OPTIMIZATION_CONTIGUOUS_GRADIENTS_DEFAULT True, constants.py
 * L64 at v0.4.3), off before (L58-59 at v0.3.12; the gradients then wait in the bucket as
 * their own tensors, the two counted). The same with and without offload_optimizer: the
 * bucket is reduce-scattered on the GPU either way. */
double dsc_gathered(const wl *w, const spec_training *t)
{
    if (t->framework != FW_DEEPSPEED)
        return -1;
    double bp, bg, bo, sz[WL_MAX_GEMMS + 2], best = 0;
    mem_state_bytes(t->precision, &bp, &bg, &bo);
    const double e = w->elem_bytes;
    const double live = t->max_live_params > 0 ? t->max_live_params : DSC_LIVE_DEFAULT;
    const double pre = t->prefetch_bucket_bytes > 0 ? t->prefetch_bucket_bytes / e : DSC_PREFETCH_DEFAULT;
    const double bucket = fw_ds_before(t, DSC_CONTIGUOUS) ? 0 : fw_reduce_bucket(t, w) / e;
    for (int i = 0; i < w->n_layers; i++) {
        const int k = fw_fetches(t, w, &w->layer[i], sz);
        if (k < 1 || k > WL_MAX_GEMMS)
            continue;
        double g2 = sz[0];
        for (int j = 1; j < k; j++)
            g2 = sz[j] + sz[j - 1] > g2 ? sz[j] + sz[j - 1] : g2;
        double b = dsc_live_peak(sz, k, live, dsc_reuse(t), pre) * bp + (g2 + bucket) * bg;
        best = b > best ? b : best;
    }
    return best;
}

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

#include <string.h>

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
double dsc_gathered(const wl *w, const spec_training *t, const spec_layout *l)
{
    (void)l;
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

/* DeepSpeed ZeRO-3's ipg bucket: a gradient's hook flushes the bucket when it holds something and
 * the gradient would overflow reduce_bucket_size, then adds the gradient, so one at or above the
 * bucket goes alone and whole; a flushed bucket is one reduce-scatter (reduce_scatter_coalesced).
 * The same test in every release: v0.3.12 (35fd7ccd) stage3.py L1424 (without the "holds
 * something" guard, but an empty flush issues nothing), v0.6.2 (32d97976) L1477,
 * v0.9.0 (0b5252bb) L1012, v0.10.0 (f5c834a6) L1076, v0.19.6 (edaa7221) L1533 (a bucket per
 * communication dtype, one here). sz in forward order; the backward reduces the last first. */
int dsc_reduce_calls(const double *sz, int k, double bucket)
{
    int n = 0;
    double cur = 0;
    for (int i = k - 1; i >= 0; i--) {
        if (cur > 0 && cur + sz[i] > bucket) {
            n++;
            cur = 0;
        }
        cur += sz[i];
    }
    return n + (cur > 0);
}

/* Adds a linear's weight (n x k) and, with biases, its bias (n) to g. */
static int grad_linear(const spec_model *m, double n, double k, double *g, int c)
{
    g[c++] = n * k;
    if (m->bias)
        g[c++] = n;
    return c;
}

/* A norm's weight, and its bias unless RMSNorm. */
static int grad_norm(const spec_model *m, double *g, int c)
{
    g[c++] = m->hidden;
    if (!m->rmsnorm)
        g[c++] = m->hidden;
    return c;
}

/* workload.c's layers: an embedding (token, learned positions), a block (norm, qkv: one
 * query_key_value under Megatron-DeepSpeed, fw_fetches, else q, k and v; proj; norm; fc1 or
 * gate and up; fc2), the head (final norm, the untied output weight). */
int dsc_grad_tensors(const spec_training *t, const wl *w, const wl_layer *L, double *g)
{
    const spec_model *m = &w->model;
    const double h = m->hidden, kv = m->heads > 0 ? m->kv_heads * (h / m->heads) : h;
    int c = 0;
    if (L->kind == WL_EMBED) {
        g[c++] = m->vocab * h;
        if (m->learned_positions)
            g[c++] = m->seq_len * h;
        return c;
    }
    if (L->kind == WL_HEAD) {
        c = grad_norm(m, g, c);
        if (!m->tied_embeddings)
            g[c++] = m->vocab * h;
        return c;
    }
    c = grad_norm(m, g, c);
    for (int i = 0; i < L->n_gemm && c < DSC_MAX_GRADS - 8; i++) {
        const wl_gemm *x = &L->gemm[i];
        if (wl_role_core(x->role))
            continue; /* no parameters */
        if (x->role == WL_G_GATE_UP || x->role == WL_G_FC1)
            c = grad_norm(m, g, c); /* the MLP's norm */
        if (x->role == WL_G_QKV && t->ds_mpu <= 0) {
            c = grad_linear(m, h, h, g, c);
            c = grad_linear(m, kv, h, g, c);
            c = grad_linear(m, kv, h, g, c);
        } else if (x->role == WL_G_GATE_UP) {
            c = grad_linear(m, x->n / 2, x->k, g, c);
            c = grad_linear(m, x->n / 2, x->k, g, c);
        } else {
            c = grad_linear(m, x->n, x->k, g, c);
        }
    }
    return c;
}

/* Per copy of a layer. From v0.6.0 one call per flushed bucket; repeated blocks share the bucket
 * across their boundary (nothing flushes it between layers), so a block's count is the steady
 * state, two copies' calls less one copy's: a block below the bucket shares calls with its
 * neighbours, counted here as one (the graph's item needs one; an over-count of latency only).
 * v0.4.3-v0.5.x: contiguous_gradients on by default (constants.py L64 at v0.4.3, bc451c09) and
 * reduce_scatter true: reduce_ipg_grads -> average_tensor -> reduce_gradients_at_owner ->
 * _reduce_scatter_gradients, a dist.reduce_scatter per gradient tensor (v0.5.7, a8a17f23:
 * stage3.py L2225-2241, L2010-2025, partition_parameters.py L1050-1059). Before v0.4.3
 * contiguous_gradients was off (constants.py L63-64 at v0.3.16, a12aaedc): buffered_reduce_fallback
 * reduces each flushed bucket in one call (stage3.py L2162, L2319 at v0.3.16). */
int dsc_layer_reduces(const spec_training *t, const wl *w, const wl_layer *L, double bucket)
{
    double g[2 * DSC_MAX_GRADS];
    const int k = dsc_grad_tensors(t, w, L, g);
    if (k < 1)
        return 1;
    if (fw_ds_before(t, DSC_COALESCED) && !fw_ds_before(t, DSC_CONTIGUOUS))
        return k;
    int n = dsc_reduce_calls(g, k, bucket);
    if (L->count > 1) {
        memcpy(g + k, g, (size_t)k * sizeof g[0]);
        n = dsc_reduce_calls(g, 2 * k, bucket) - n;
    }
    return n > 1 ? n : 1;
}

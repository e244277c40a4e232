/* framework.c — per-framework schedule parameters (see framework.h for what and sources). */
#include "framework.h"

#include <math.h>
#include <string.h>

static int zero3_family(spec_layout_kind k)
{
    return k == LAYOUT_ZERO3 || k == LAYOUT_MICS || k == LAYOUT_ZEROPP || k == LAYOUT_HSDP ||
           k == LAYOUT_SHARD_GRAD_OP || k == LAYOUT_HSDP_ZERO2;
}

int fw_submodules(const wl_layer *L)
{
    if (L->kind != WL_BLOCK)
        return 1;
    int n = 2; /* the two norms */
    for (int i = 0; i < L->n_gemm; i++)
        if (strcmp(L->gemm[i].name, "scores") && strcmp(L->gemm[i].name, "context"))
            n++;
    return n;
}

double fw_reduce_bucket(const spec_training *t, const wl *w)
{
    if (t->framework != FW_DEEPSPEED)
        return t->bucket_bytes;
    return t->reduce_bucket_bytes > 0 ? t->reduce_bucket_bytes : 5e8 * w->elem_bytes;
}

int fw_param_tensors(const wl *w, const wl_layer *L)
{
    const spec_model *m = &w->model;
    int norm = m->rmsnorm ? 1 : 2;
    switch (L->kind) {
    case WL_EMBED: return 1 + m->learned_positions;
    case WL_HEAD: return norm + !m->tied_embeddings;
    default: {
        int lin = fw_submodules(L) - 2;
        return lin * (m->bias ? 2 : 1) + 2 * norm;
    }
    }
}

int fw_prefetch(const spec_training *t, const spec_layout *l, const wl *w)
{
    switch (t->framework) {
    case FW_DEEPSPEED: {
        if (!zero3_family(l->kind))
            return t->prefetch_layers;
        /* stage3_prefetch_bucket_size: parameters fetched ahead of use, here in whole layers
         * (at least one: below a layer DeepSpeed still prefetches the next sub-modules);
         * stage3_max_live_parameters: the current and prefetched layers must fit under it. */
        const double e = w->elem_bytes, layer = wl_max_layer_params(w);
        double bucket = t->prefetch_bucket_bytes > 0 ? t->prefetch_bucket_bytes / e : 5e7;
        double live = t->max_live_params > 0 ? t->max_live_params : 1e9;
        int d = layer > 0 ? (int)floor(bucket / layer) : 1;
        if (d < 1)
            d = 1;
        if (d > 64)
            d = 64;
        while (d > 0 && (d + 1) * layer > live)
            d--;
        return d;
    }
    case FW_FSDP: /* limit_all_gathers (default on): at most two all-gathers in flight */
        return t->limit_all_gathers != 0 ? (t->prefetch_layers < 1 ? t->prefetch_layers : 1) : t->prefetch_layers;
    case FW_FSDP2: /* implicit prefetch of the next module's all-gather, forward and backward */
        return 1;
    default: return t->prefetch_layers;
    }
}

int fw_depth(const spec_training *t, const spec_layout *l, const wl *w)
{
    if (l->kind == LAYOUT_MEGATRON && l->pp > 1)
        return 0; /* pipelines: no gathers (layout_pipe.c) */
    if ((l->kind == LAYOUT_TP || l->kind == LAYOUT_AXONN || l->kind == LAYOUT_MEGATRON) && !l->overlap)
        return 0; /* overlap=0: the gathers run inline (layout_tensor.c) */
    return fw_prefetch(t, l, w);
}

int fw_depth_pass(int d, int p1, int bwd)
{
    return bwd && p1 ? p1 - 1 : d;
}

double fw_reduce_elem_bytes(const spec_training *t, const wl *w)
{
    return t->reduce_dtype == REDUCE_FP32 ? 4.0 : w->elem_bytes;
}

int fw_opt_impl(const spec_training *t)
{
    if (t->opt_impl != OPT_IMPL_DEFAULT)
        return t->opt_impl;
    return t->framework == FW_FSDP || t->framework == FW_FSDP2 ? OPT_IMPL_FOREACH : OPT_IMPL_FUSED;
}

void fw_schedule(const spec_training *t, const spec_layout *l, const wl *w, fw_sched *f)
{
    memset(f, 0, sizeof *f);
    f->fw = t->framework;
    f->reduce_elem_bytes = fw_reduce_elem_bytes(t, w);
    f->opt_impl = fw_opt_impl(t);
    f->opt_scale = wl_opt_bytes_per_param(f->opt_impl) / wl_opt_bytes_per_param(OPT_IMPL_FUSED);
    if (wl_opt_passes(f->opt_impl))
        for (int i = 0; i < w->n_layers; i++)
            f->opt_launches += wl_opt_passes(f->opt_impl) * fw_param_tensors(w, &w->layer[i]) * w->layer[i].count;
    f->prefetch = fw_prefetch(t, l, w);
    f->overlap = 1;
    f->allgather_bucket_bytes = t->bucket_bytes;
    f->reduce_bucket_bytes = fw_reduce_bucket(t, w);
    switch (t->framework) {
    case FW_IDEAL: break; /* one stream, reduce-scatter, replica all-reduce at the boundary */
    case FW_DEEPSPEED:
        f->reduce_stream = f->replica_stream = 1; /* reduce_and_partition_stream / reduction_stream */
        f->grad_allreduce = 1;
        f->overlap = t->overlap_comm >= 0 ? t->overlap_comm : zero3_family(l->kind);
        f->replica_in_bwd = 1;
        f->submodule = 1;
        f->allgather_bucket_bytes = t->allgather_bucket_bytes > 0 ? t->allgather_bucket_bytes : 5e8 * w->elem_bytes;
        break;
    case FW_FSDP:
    case FW_FSDP2:
        f->reduce_stream = 1; /* post-backward (reduce-scatter) stream */
        f->replica_stream = 2; /* HYBRID_SHARD all-reduce stream */
        f->replica_in_bwd = 1;
        f->copy_in_out = t->framework == FW_FSDP2;
        f->grad_path = 1;
        /* BACKWARD_POST issues the next all-gather after the current layer's gradients, NONE
         * at the next layer's pre-backward hook: at layer granularity both are depth 0 */
        if (t->backward_prefetch && f->prefetch > 0)
            f->bwd_prefetch_p1 = 1;
        break;
    case FW_MEGATRON: /* distributed optimizer: --overlap-grad-reduce is opt-in */
        f->reduce_stream = f->replica_stream = 1;
        f->overlap = t->overlap_comm > 0;
        break;
    default: break;
    }
}

/* Layouts each framework runs (bit per spec_layout_kind). */
#define B(k) (1u << (k))
static const unsigned RUNS[N_FRAMEWORKS] = {
    [FW_IDEAL] = ~0u,
    [FW_DEEPSPEED] = B(LAYOUT_DDP) | B(LAYOUT_ZERO1) | B(LAYOUT_ZERO2) | B(LAYOUT_ZERO3) | B(LAYOUT_MICS) |
                     B(LAYOUT_ZEROPP) | B(LAYOUT_ZERO3_OFFLOAD),
    [FW_FSDP] = B(LAYOUT_DDP) | B(LAYOUT_ZERO3) | B(LAYOUT_HSDP) | B(LAYOUT_SHARD_GRAD_OP) | B(LAYOUT_HSDP_ZERO2),
    [FW_FSDP2] = B(LAYOUT_DDP) | B(LAYOUT_ZERO3) | B(LAYOUT_HSDP) | B(LAYOUT_SHARD_GRAD_OP) | B(LAYOUT_HSDP_ZERO2),
    [FW_MEGATRON] = B(LAYOUT_DDP) | B(LAYOUT_ZERO1) | B(LAYOUT_TP) | B(LAYOUT_MEGATRON),
};
static const char *const RUNS_TEXT[N_FRAMEWORKS] = {
    "", "ddp, zero1, zero2, zero3, mics, zeropp, zero3-offload",
    "ddp, zero3 (FULL_SHARD), hsdp (HYBRID_SHARD), shard_grad_op, hybrid_shard_zero2",
    "ddp, zero3, hsdp, shard_grad_op, hybrid_shard_zero2", "ddp, zero1 (distributed optimizer), tp, megatron"};

int fw_check(spec_framework f, const spec_layout *l, sc_err *err)
{
    if (RUNS[f] & B(l->kind)) {
        if (f == FW_DEEPSPEED && (l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2) && l->p) {
            char name[64];
            return sc_err_set(err, SC_EINPUT, "--framework", "",
                              "%s: DeepSpeed shards ZeRO-1/2 states over all data-parallel ranks (no partition "
                              "group); use ideal or megatron (zero1:p)",
                              spec_layout_str(l, name, sizeof name));
        }
        return 0;
    }
    char name[64];
    return sc_err_set(err, SC_EINPUT, "--framework", "", "%s does not run layout %s (it runs %s)",
                      spec_framework_str(f), spec_layout_str(l, name, sizeof name), RUNS_TEXT[f]);
}

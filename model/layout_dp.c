/* layout_dp.c — the data-parallel family (ddp, zero1-3, mics, hsdp, zeropp, shard_grad_op,
 * hybrid_shard_zero2): its op graph (per-layer gathers and reductions, the boundary), its
 * group-size check and optimizer shard, as rows (layout_row.h). Sources: ZeRO (Rajbhandari et
 * al. 2020, §5, §7), MiCS (Zhang et al. 2022, §3.2-3.4: partition groups, hierarchical
 * all-gather, 2-hop gradient synchronisation), PyTorch FSDP HYBRID_SHARD, ZeRO++ hpZ (Wang et
 * al. 2023, §3.2); plan's candidates and reasons, the frameworks that run each kind, hpZ's
 * memory copy. Not here: their memory columns (spec_layout.c's KINDS, memory.c). */
#include "layout_row.h"
#include "cp.h"
#include "ds_coordinator.h"
#include "layout_ops.h"
#include "layout_pipe.h"
#include "layout_tensor.h"

#include <math.h>
#include <string.h>

#define buckets lo_buckets
/* DeepSpeed-MiCS (runtime/zero/mics.py) arrived in v0.9 (layout_row_mics.ds_since) */
#define MICS_DS_SINCE 900

/* The optimizer shard on n ranks (every row's shard): ddp 1; mics, hsdp, hybrid_shard_zero2 p;
 * zero1:p / zero2:p p; zero1-3, zeropp and raf (the primary shard; the secondary copy is
 * separate) and shard_grad_op every rank. */
static int dp_shard(const spec_layout *l, int n_ranks)
{
    switch (l->kind) {
    case LAYOUT_DDP: return 1;
    case LAYOUT_MICS:
    case LAYOUT_HSDP:
    case LAYOUT_HSDP_ZERO2: return l->p;
    case LAYOUT_ZERO1:
    case LAYOUT_ZERO2: return l->p ? l->p : n_ranks;
    default: return n_ranks;
    }
}

/* zero3 with t > 1 (fsdp2:dp=D,t=T): FSDP2 shards each rank's TP slice over the D ranks of
 * its data-parallel group (GRP_AX3; torchtitan's dp mesh), not the world; D x T ranks shard the
 * states (dp_shard: every rank). */
static int fsdp_tp(const spec_layout *l) { return l->kind == LAYOUT_ZERO3 && l->t > 1; }
static lo_group_kind fsdp_group(const lo_graph *g) { return fsdp_tp(&g->layout) ? GRP_AX3 : GRP_WORLD; }

/* A collective on stream st. */
static lo_coll on(lo_coll c, int st)
{
    c.stream = st;
    return c;
}

/* Gradient synchronisation of ddp and zero1/zero2 (with or without a partition group) in one
 * backward item. Ideal: reduce-scatter (all-reduce for ddp) overlapped, per layer, on the last
 * micro-step (zero2: every micro-step; ZeRO §5.1-5.2). DeepSpeed (stage_1_and_2.py): the
 * bucket is all-reduced in full (use_multi_rank_bucket_allreduce, the default: 2 (n-1)/n S per
 * rank instead of the reduce-scatter's (n-1)/n S), on the reduction stream with overlap_comm;
 * without it stage 2 reduces on the compute stream (the backward waits for each bucket) and
 * stage 0/1 reduce everything after the backward (boundary ops, layout_build). Megatron
 * without --overlap-grad-reduce: after the backward as well. */
/* DeepSpeed before v0.12.4 (stage2.py L860-946 at bc7778ea, average_tensor with reduce_scatter
 * true): each bucket's slice of every owner rank is sent to it with dist.reduce, an NCCL Reduce
 * of that slice: S bytes per rank over the layer, n - 1 latency steps per call (tuning.cc:
 * ring Reduce nsteps = nRanks - 1), one call per owner slice. Costed as a ring reduce-scatter
 * of S n / (n - 1) bytes (it moves (n - 1)/n of its input per rank: S) in as many pieces as
 * calls: the layer's buckets plus the partition boundaries inside it (S / (psi e / n)). */
static lo_coll owner_reduce(const lo_graph *g, double S, double psi_e)
{
    const double n = g->layout.p ? g->layout.p : g->n_ranks;
    int calls = buckets(S, g->sched.reduce_bucket_bytes) + (int)lround(S * n / psi_e);
    return lo_coll_make(COLL_REDUCESCATTER, g->layout.p ? GRP_PARTITION : GRP_WORLD, S * n / (n - 1), calls);
}

static void grad_sync(const lo_graph *g, const spec_training *t, lo_last *last, double S, double psi_e, lo_item *it)
{
    const spec_layout *l = &g->layout;
    const fw_sched *f = &g->sched;
    const int N = g->n_ranks;
    const int zero2 = l->kind == LAYOUT_ZERO2, ddp = l->kind == LAYOUT_DDP;
    if (!zero2 && !lo_last_is(last))
        return;
    if (g->framework != FW_IDEAL && !f->overlap && !(g->framework == FW_DEEPSPEED && zero2))
        return; /* reduced after the backward: boundary ops */
    lo_group_kind grp = l->p ? GRP_PARTITION : GRP_WORLD;
    cost_coll kind = ddp || f->grad_allreduce ? COLL_ALLREDUCE : COLL_REDUCESCATTER;
    lo_coll c = on(lo_coll_make(kind, grp, S, buckets(S, f->reduce_bucket_bytes)), f->reduce_stream);
    if (f->owner_reduce && !ddp && N > 1)
        c = on(owner_reduce(g, S, psi_e), f->reduce_stream);
    (void)t;
    if (g->framework == FW_DEEPSPEED && zero2 && !f->overlap)
        it->inl[it->n_inline++] = c; /* inline_overlap 0: the compute waits */
    else
        it->reduce[it->n_reduce++] = c;
    /* zero1:p / zero2:p: the partition's shard all-reduced across the replicas, on the last
     * micro-step (ideal: at the boundary, as MiCS's 2-hop) */
    if (l->p && N / l->p > 1 && lo_last_is(last) && g->framework != FW_IDEAL)
        it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_ALLREDUCE, GRP_REPLICA, S / l->p, 1), f->replica_stream);
}

/* ZeRO++ qgZ (Wang et al. 2023 §3.3): the gradient reduce-scatter over the world replaced by
 * an int4 all-to-all inside the node (S/4 bytes: 2-byte gradients as 4 bits) then, after
 * dequantize-reduce-requantize, one across nodes among same-index ranks on 1/G of it. An
 * all-to-all moves (n-1)/n of its buffer per rank, as a reduce-scatter does: costed as one.
 * Kernels (HBM bytes): quantize S (read S, write S/4), dequantize + reduce + requantize inside
 * the node (read S/4, write S/4G... taken as S), final dequantize + reduce (~ S/G): ~2.5 S. */
static void qgz_reduce(const lo_graph *g, double S, int st, lo_item *it)
{
    const double G = g->gpus_per_node;
    it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_REDUCESCATTER, GRP_NODE, S / 4, 1), st);
    it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_REDUCESCATTER, GRP_XRAIL, S / (4 * G), 1), st);
    it->hbm_bytes += 2.5 * S;
}

/* What the framework adds to a data-parallel item (after its collectives): hooks, DeepSpeed's
 * synchronous fetches, FSDP2's copies, the FSDP gradient path. */
static void fw_item(const lo_graph *g, const wl *w, const wl_layer *L, double S, int chunks, lo_item *it)
{
    const fw_sched *f = &g->sched;
    const lo_pass pass = it->pass;
    /* framework hooks: DeepSpeed's per sub-module fetch / release; FSDP's per unit */
    if (g->framework == FW_DEEPSPEED) {
        it->hooks = fw_submodules(L);
        if (f->sync_fetch && it->n_gather) /* per fetch: syncs and launch, the GPU idle */
            it->host_s += chunks * f->fetch_host_s;
    }
    else if (g->framework == FW_FSDP) /* per parameter view, per pass (calib.c) */
        it->hooks = fw_param_tensors(w, L);
    else if (g->framework == FW_FSDP2 || g->framework == FW_MEGATRON)
        it->hooks = 1; /* per unit; Megatron-FSDP's pre-forward, pre-backward and post-backward
                          hooks on each FSDP unit module (megatron_fsdp.py L544-549, L590-602,
                          L709-718 at core_v0.14.0 23e00ed0) */
    /* FSDP2 (_fsdp_collectives.py): per-parameter shards copied into the all-gather input and
     * the output copied out into the parameters (read + write S); gradients copied into the
     * reduce-scatter input (read + write S) */
    if (f->copy_in_out) {
        it->hbm_bytes += 2 * S * it->n_gather;
        if (pass == LO_BWD)
            it->hbm_bytes += 2 * S;
    }
    /* FSDP / FSDP2: the per-micro-step gradient kernels on the post-backward stream
     * (wl_grad_path_bytes_per_param); WL_GRAD_PATH_EXPOSED of their time extends the step */
    if (f->grad_path && pass == LO_BWD)
        it->hbm_bytes += WL_GRAD_PATH_EXPOSED * L->params *
                         wl_grad_path_bytes_per_param(g->framework, g->elem_bytes, f->reduce_elem_bytes,
                                                      fsdp_tp(&g->layout) ? g->n_ranks / g->layout.t
                                                                          : dp_shard(&g->layout, g->n_ranks));
}

/* DeepSpeed stage2.py, contiguous_gradients (framework.c ds_era; dsv37): in the gradient hook,
 * on the compute stream, each gradient copied into the ipg bucket (read + write S); the bucket
 * divided by the world size in place (2S) and the rank's own slice copied into its partition
 * buffer (2S / N), on the reduction stream with overlap_comm (hidden there), else on the compute
 * stream. ZeRO-2 every micro-step (partition_gradients), ZeRO-1 at the accumulation boundary
 * (reduce_ready_partitions_and_remove_grads, v0.5.7 L1235-1237). S: the layer's gradient bytes. */
static double ds_contig_bytes(const lo_graph *g, double S, lo_last *last, lo_pass pass)
{
    const fw_sched *f = &g->sched;
    if (!f->ds_contig || pass != LO_BWD || (g->layout.kind != LAYOUT_ZERO2 && !lo_last_is(last)))
        return 0;
    return 2 * S + (f->overlap ? 0 : 2 * S + 2 * S / g->n_ranks);
}

/* One item of the data-parallel and sharded layouts. */
/* FSDP1 with fsdp_wrap module (framework.h fw_fsdp_units) on zero3: the k units of item it's
 * layer, each its own all-gather, and into *again whether it gathers them twice: the units sit
 * inside the block's checkpoint, so its recompute runs their forward hooks again (the recompute's
 * forward gathers and reshards each unit, the pre-backward hook gathers it once more,
 * _rebuild_full_params): 2 S in 2 k pieces in a checkpointed backward, S in k in the forward
 * (zero3-offload's FSDP graph builds on this one: layout_offload.c). 1 unit otherwise. */
static int fsdp_unit_gathers(const spec_layout *l, const spec_training *t, const wl_layer *L, const lo_item *it,
                             int *again)
{
    double unit;
    const int k = l->kind == LAYOUT_ZERO3 ? fw_fsdp_units(t, L, &unit) : 1;
    *again = k > 1 && it->pass == LO_BWD && it->recompute;
    return k;
}

static void dp_item(const lo_graph *g, const wl *w, const spec_training *t, lo_last *last, lo_item *it)
{
    const spec_layout *l = &g->layout;
    const fw_sched *f = &g->sched;
    const int N = g->n_ranks, G = g->gpus_per_node;
    const lo_pass pass = it->pass;
    const wl_layer *L = &w->layer[it->layer];
    double S = L->params * g->elem_bytes; /* its parameters (or gradients), bytes */
    const double Sr = L->params * f->reduce_elem_bytes; /* its gradients as reduced (reduce_dtype) */
    const int gs = f->gather_stream, rs = f->reduce_stream;
    /* DeepSpeed: one fetch per partitioned sub-module (fw_fetches: those at or above
     * stage3_param_persistence_threshold; the rest stay whole on every rank) */
    double fsz[WL_MAX_GEMMS + 2];
    const int chunks = f->submodule ? fw_fetches(t, w, L, fsz) : 1;
    /* DeepSpeed ZeRO-3 (zero3, MiCS from v0.9, ZeRO++ without qgZ): one reduce-scatter per
     * flushed ipg bucket (ds_coordinator.c dsc_layer_reduces); MiCS before v0.9 (the paper's
     * implementation) per reduce_bucket_size piece */
    const int rchunks = !f->submodule ? 1
                        : l->kind == LAYOUT_MICS && fw_ds_before(t, MICS_DS_SINCE)
                            ? buckets(S, f->reduce_bucket_bytes)
                            : dsc_layer_reduces(t, w, L, f->reduce_bucket_bytes / g->elem_bytes);
    switch (l->kind) {
    case LAYOUT_DDP:
    case LAYOUT_ZERO1:
    case LAYOUT_ZERO2:
        if (pass == LO_BWD)
            grad_sync(g, t, last, Sr, w->params * f->reduce_elem_bytes, it);
        it->hbm_bytes += ds_contig_bytes(g, S, last, pass);
        if (g->framework == FW_MEGATRON || g->framework == FW_FSDP || g->framework == FW_FSDP2)
            it->hooks = pass == LO_BWD; /* DDP / Megatron gradient-ready hooks per bucketed layer */
        return;
    case LAYOUT_ZERO3:
    case LAYOUT_SHARD_GRAD_OP: {
        /* DeepSpeed ZeRO-3: a checkpointed block's backward gathers again, in nre more fetches,
         * the sub-modules the coordinator released after its recompute (ds_coordinator.c) */
        int nre = 0;
        const double R = l->kind == LAYOUT_ZERO3 && pass == LO_BWD && f->submodule
                             ? dsc_backward_regather(t, fsz, chunks, it->recompute, &nre) * g->elem_bytes : 0;
        /* SHARD_GRAD_OP keeps the parameters gathered in the forward until the backward ends */
        int again;
        const int k = fsdp_unit_gathers(l, t, L, it, &again); /* fsdp_wrap module's units */
        if ((pass == LO_FWD || l->kind == LAYOUT_ZERO3) && chunks > 0)
            it->gather[it->n_gather++] =
                on(lo_coll_make(COLL_ALLGATHER, fsdp_group(g), S * (1 + again) + R, chunks * k * (1 + again) + nre), gs);
        if (pass == LO_BWD)
            it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_REDUCESCATTER, fsdp_group(g), Sr, rchunks), rs);
        lo_fsdp2_tp_item(g, w, t, it); /* fsdp2:dp=D,t=T: the TP collectives (layout_tensor.c); nothing when t <= 1 */
        cp_item(g, w, it, 1); /* zero3:cp=C: the K/V exchange beside the first step (cp.h; after TP's, each
                                 paired with its own steps of the core, TP's keeping their share); nothing
                                 when cp = 1 */
        fw_item(g, w, L, S, chunks + nre, it);
        return;
    }
    case LAYOUT_MICS:
        if (!chunks) {
            /* nothing partitioned to gather (a tied head's norm) */
        } else if (l->hier && l->p > G) {
            /* MiCS §3.3: all-gather among the k same-local-rank ranks (each gets k
             * shards = S/G bytes), then inside the node over NVLink. */
            it->gather[it->n_gather++] = on(lo_coll_make(COLL_ALLGATHER, GRP_RAIL, S / G, chunks), gs);
            it->gather[it->n_gather++] = on(lo_coll_make(COLL_ALLGATHER, GRP_INTRA, S, chunks), gs);
        } else {
            it->gather[it->n_gather++] = on(lo_coll_make(COLL_ALLGATHER, GRP_PARTITION, S, chunks), gs);
        }
        if (pass == LO_BWD) {
            it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_REDUCESCATTER, GRP_PARTITION, Sr, rchunks), rs);
            /* DeepSpeed-MiCS (mics.py allreduce_mics_shard_grads): the 2-hop all-reduce of each
             * reduced bucket, on the reduce stream, inside the last micro-step's backward */
            if (f->replica_in_bwd && lo_last_is(last) && N / l->p > 1)
                it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_ALLREDUCE, GRP_REPLICA, Sr / l->p,
                                                             fw_ds_before(t, MICS_DS_SINCE) ? 1 : rchunks),
                                                f->replica_stream); /* per flushed bucket (partition_grads) */
        }
        break;
    case LAYOUT_HSDP:
    case LAYOUT_HSDP_ZERO2:
        if (pass == LO_FWD || l->kind == LAYOUT_HSDP)
            it->gather[it->n_gather++] = on(lo_coll_make(COLL_ALLGATHER, GRP_PARTITION, S, chunks), gs);
        if (pass == LO_BWD) {
            it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_REDUCESCATTER, GRP_PARTITION, Sr, 1), rs);
            /* FSDP: the replica all-reduce on its own stream after each reduce-scatter, every
             * micro-step, or on the last only (sync=boundary: FSDP2's set_requires_all_reduce) */
            int now = !l->sync_boundary || (f->replica_in_bwd && lo_last_is(last));
            if (now && N / l->p > 1)
                it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_ALLREDUCE, GRP_REPLICA, Sr / l->p, 1), f->replica_stream);
        }
        break;
    default: /* tensor-parallel and offloading layouts: layout_tensor.c, layout_offload.c */
        return;
    case LAYOUT_RAF: /* FSDP2's reshard_after_forward=p: hpZ's schedule, unquantized (raf_check) */
    case LAYOUT_ZEROPP: {
        /* forward from the primary (world) shards; backward from the secondary copy sharded
         * inside hpz ranks (none: the world again); gradients reduce-scattered over the world.
         * qwZ (ZeRO++ §3.1): all-gathers from the world shards in int8 (S/2 bytes) with
         * block scales, the shard quantized (read S/N, write S/2N) and the gathered layer
         * dequantized (read S/2, write S) on the compute stream: ~1.5 S HBM bytes. hpZ
         * (§3.2): the secondary copy refreshed from each forward gather (read + write S/hpz). */
        int secondary = pass == LO_BWD && l->p > 1;
        double gb = S;
        if (l->qwz && !secondary) {
            gb = S / 2;
            it->hbm_bytes += 1.5 * S + 1.5 * S / N;
        }
        if (chunks > 0)
            it->gather[it->n_gather++] =
                on(lo_coll_make(COLL_ALLGATHER, secondary ? GRP_SECONDARY : GRP_WORLD, gb, chunks), gs);
        if (pass == LO_FWD && l->p > 1)
            it->hbm_bytes += 2 * S / l->p;
        if (pass == LO_BWD) {
            if (l->qgz && g->nodes > 1)
                qgz_reduce(g, S, rs, it);
            else
                it->reduce[it->n_reduce++] = on(lo_coll_make(COLL_REDUCESCATTER, GRP_WORLD, Sr, rchunks), rs);
        }
        break;
    }
    }
    fw_item(g, w, L, S, chunks, it);
}


/* zero3:cp=C: the layers as one rank of the cp group runs them (cp.h); fsdp2:dp=D,t=T: as one
 * rank of torchtitan's DTensor TP group (workload_local.c wl_localize_dtensor); else the model's own. */
static const wl *zero3_localize(const wl *w, const spec_layout *l, int n_ranks, wl *out)
{
    (void)n_ranks;
    if (l->t > 1)
        return wl_localize_dtensor(w, l, out);
    if (l->cp <= 1)
        return w;
    *out = *w;
    cp_localize(out, l->cp);
    cp_torch_ring(out, l->cp); /* PyTorch's ring: its fp32 merges and accumulations (cp.h) */
    return out;
}

/* The data-parallel kinds' graph: per-layer items (dp_item), then the boundary: gradients
 * reduced after the backward, the replica all-reduce, the optimizer, ZeRO-1/2's gather. */
static void dp_build(lo_graph *g, const wl *w, const spec_training *t, const spec_cluster *c)
{
    const spec_layout *l = &g->layout;
    if (l->pp > 1) { /* fsdp2:dp=D,t=T,p=P: torch.distributed.pipelining's stages (layout_pipe.c) */
        lo_build_pipe(g, w, t, c);
        return;
    }
    g->prefetch = g->sched.prefetch;
    g->bwd_prefetch_p1 = g->sched.bwd_prefetch_p1;
    wl cpw; /* zero3:cp=C: the layers as one rank of the cp group runs them, its axes (cp.h) */
    const wl *dw = w;
    if (l->kind == LAYOUT_ZERO3 && (l->cp > 1 || l->t > 1)) {
        dw = zero3_localize(w, l, g->n_ranks, &cpw);
        memcpy(g->lw, dw->layer, sizeof g->lw);
        lo_tp_ub_mark(l, t, g->lw, dw->n_layers); /* async TP's chunked GEMMs (layout_tensor.h) */
        g->local_layers = 1;
        int axes_rc = spec_layout_axes(l, g->n_ranks, g->ax_size, g->ax_stride);
        (void)axes_rc; /* 0: zero3_check made cp and t divide the GPUs */
    }
    lo_make_groups(g, c);
    lo_build_micro_pair(g, dw, t, dp_item); /* the last micro-step's items filled again only where they ask */

    const fw_sched *f = &g->sched;
    const int N = g->n_ranks;
    const double psi = w->params, e = g->elem_bytes, er = f->reduce_elem_bytes; /* er: gradients as reduced */
    int shard = dp_shard(l, N);
    const int z12 = l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2 || l->kind == LAYOUT_DDP;
    /* Gradients reduced after the backward (DeepSpeed stage 0/1 and Megatron without overlap) */
    if (z12 && g->framework != FW_IDEAL && !f->overlap && !(g->framework == FW_DEEPSPEED && l->kind == LAYOUT_ZERO2) &&
        N > 1) {
        lo_group_kind grp = l->p ? GRP_PARTITION : GRP_WORLD;
        cost_coll kind = l->kind == LAYOUT_DDP || f->grad_allreduce ? COLL_ALLREDUCE : COLL_REDUCESCATTER;
        lo_coll red = lo_coll_make(kind, grp, psi * er, buckets(psi * er, f->reduce_bucket_bytes));
        if (f->owner_reduce && l->kind != LAYOUT_DDP)
            red = owner_reduce(g, psi * er, psi * er);
        g->boundary[g->n_boundary++] = (lo_bop){.coll = red};
        if (l->p && N / l->p > 1)
            g->boundary[g->n_boundary++] = (lo_bop){.coll = lo_coll_make(COLL_ALLREDUCE, GRP_REPLICA, psi * er / l->p, 1)};
    }
    /* MiCS 2-hop (§3.4), HSDP sync=boundary, zero1:p / zero2:p (ideal schedule): all-reduce of
     * the gradient shard across the replication group at the accumulation boundary. */
    int replica = l->kind == LAYOUT_MICS || (l->kind == LAYOUT_HSDP && l->sync_boundary) ||
                  ((l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2) && l->p);
    if (replica && N / l->p > 1 && (g->framework == FW_IDEAL || (!f->replica_in_bwd && !z12)))
        g->boundary[g->n_boundary++] = (lo_bop){.coll = lo_coll_make(COLL_ALLREDUCE, GRP_REPLICA, psi * er / l->p, 1)};
    g->boundary[g->n_boundary++] = (lo_bop){.is_optimizer = 1, .opt_params = psi / shard};
    fw_ds_step_checks(t, l, w, N, &g->sched.step_syncs, &g->sched.step_hbm_bytes); /* DeepSpeed fp16 < 0.13.3 */
    double tr_syncs, tr_bytes, tr_launches; /* amp's unscale and the trainer's clip (fw_trainer_step) */
    fw_trainer_step(t, l, w, N, shard, &tr_syncs, &tr_bytes, &tr_launches);
    g->sched.step_syncs += tr_syncs;
    g->sched.step_hbm_bytes += tr_bytes;
    g->sched.opt_launches += (int)tr_launches;
    /* ZeRO-1/2: updated parameter shards all-gathered after the step (ZeRO §5.1-5.2), in
     * DeepSpeed's allgather_bucket_size buckets (all_gather_dp_groups). */
    if ((l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2) && shard > 1) {
        lo_group_kind grp = l->p ? GRP_PARTITION : GRP_WORLD;
        g->boundary[g->n_boundary++] =
            (lo_bop){.coll = lo_coll_make(COLL_ALLGATHER, grp, psi * e, buckets(psi * e, f->allgather_bucket_bytes))};
    }
}

/* A group either lives inside one node or spans whole nodes, so that groups never share a
 * node unevenly (MiCS paper §3.2; DeepSpeed requires the same of mics_shard_size). p = 0 (zero1,
 * zero2 and zeropp without a group): nothing to align. */
static int group_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    int p = l->p;
    (void)c;
    if (!p && (l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2 || l->kind == LAYOUT_ZEROPP))
        return 0;
    if (p < 1 || p > n || n % p)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected a group size dividing the %d GPUs (%d nodes x %d), got %d",
                          name, n, n / g, g, p);
    if (!(g % p == 0 || p % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a group size that divides or is a multiple of %d GPUs per node, got %d", name, g, p);
    return 0;
}

/* raf:p, FSDP2's reshard_after_forward=p (pytorch/pytorch 0140b62d, _fsdp_init.py
 * _get_post_forward_mesh_info: the world's mesh viewed as (-1, p), the post-forward shards over p
 * consecutive ranks, GRP_SECONDARY's groups): dp_item's hpZ schedule without qwZ and qgZ, each
 * layer's unsharded parameters copied to their post-forward shard after the forward (read +
 * write S/p), all-gathered among the p in the backward. PyTorch takes any factor of the shard
 * mesh and reads 1 as reshard_after_forward=False, the mesh's size as True; those are
 * shard_grad_op and zero3 here, so p lies strictly between; its groups align with nodes as every
 * group here does. */
static int raf_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    if (l->p < 2 || l->p >= n || n % l->p)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a group size p dividing the %d GPUs, 1 < p < %d (reshard_after_forward=1 is "
                          "shard_grad_op, =%d zero3), got %d", name, n, n, n, l->p);
    return group_check(l, c, n, g, name, err);
}

/* ---- plan's candidates (layout_row.h) ----------------------------------------------------- */

/* ddp, zero3, shard_grad_op: over all GPUs only. */
static int whole_cands(spec_layout_kind k, int p, spec_layout *out, int n, int max)
{
    return p ? n : layout_row_push(out, n, max, (spec_layout){.kind = k, .hier = 1});
}
static int ddp_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return whole_cands(LAYOUT_DDP, p, out, n, max);
}
static int zero3_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return whole_cands(LAYOUT_ZERO3, p, out, n, max);
}
static int sgo_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return whole_cands(LAYOUT_SHARD_GRAD_OP, p, out, n, max);
}

/* zero1, zero2: over all GPUs, and states sharded within p, replicated across. */
static int zero1_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_ZERO1, .p = p, .hier = 1});
}
static int zero2_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_ZERO2, .p = p, .hier = 1});
}

/* MiCS: every valid p with hierarchical all-gather, and without it where p spans nodes. */
static int mics_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    if (!p)
        return n;
    spec_layout ml = {.kind = LAYOUT_MICS, .p = p, .hier = 1};
    n = layout_row_push(out, n, max, ml);
    if (p > in->c->gpus_per_node) {
        ml.hier = 0;
        n = layout_row_push(out, n, max, ml);
    }
    return n;
}
static int hsdp_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return p ? layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_HSDP, .p = p, .hier = 1}) : n;
}
static int hsdp_zero2_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return p ? layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_HSDP_ZERO2, .p = p, .hier = 1}) : n;
}

/* FSDP2's reshard_after_forward=p: every valid group size p (partition_ok), as hsdp's. */
static int raf_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    (void)in;
    return p ? layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_RAF, .p = p, .hier = 1}) : n;
}

/* ZeRO++: without hpZ (quantized collectives only), and hpZ inside a node with and without them. */
static int zeropp_cands(const layout_cand_in *in, int p, spec_layout *out, int n, int max)
{
    if (!p)
        return layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_ZEROPP, .hier = 1, .qwz = 1, .qgz = 1});
    if (p <= in->c->gpus_per_node) {
        n = layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_ZEROPP, .p = p, .hier = 1});
        n = layout_row_push(out, n, max, (spec_layout){.kind = LAYOUT_ZEROPP, .p = p, .hier = 1, .qwz = 1, .qgz = 1});
    }
    return n;
}

/* ---- plan's explanations (layout_row.h) ----------------------------------------------------- */

/* ddp, zero1-3, shard_grad_op, hybrid_shard_zero2: replicated or sharded over all GPUs. */
static void all_explain(const layout_explain_in *x, char *out, size_t len)
{
    char where[512];
    layout_row_over_all(x, x->l->kind == LAYOUT_DDP ? "replicated" : "sharded", where, sizeof where);
    layout_row_say(x, "", where, out, len);
}

/* A group of p inside one node (its fabric), or spanning nodes. */
static void group_where(const layout_explain_in *x, const char *what, char *where, size_t len)
{
    int G = x->c->gpus_per_node, p = x->l->p;
    if (p <= G)
        snprintf(where, len, "%s group of %d inside one node (%s)", what, p,
                 x->c->fabric.kind == FABRIC_NVSWITCH ? "NVSwitch" : "NVLink");
    else
        snprintf(where, len, "partition group of %d spanning %d nodes", p, p / G);
}

static void mics_explain(const layout_explain_in *x, char *out, size_t len)
{
    char where[512];
    group_where(x, "partition", where, sizeof where);
    layout_row_say(x, x->smallest_p ? "smallest p that fits: " : "", where, out, len);
}

static void hsdp_explain(const layout_explain_in *x, char *out, size_t len)
{
    char where[512];
    group_where(x, "partition", where, sizeof where);
    layout_row_say(x, "", where, out, len);
}

static void zeropp_explain(const layout_explain_in *x, char *out, size_t len)
{
    char where[512], all[64];
    if (x->l->p <= 1) /* no hpZ: no secondary partition */
        snprintf(where, sizeof where, "%s (no secondary partition: hpZ off)",
                 layout_row_over_all(x, "sharded", all, sizeof all));
    else
        group_where(x, "secondary partition", where, sizeof where);
    layout_row_say(x, "", where, out, len);
}

/* ZeRO++ hpZ: a secondary 16-bit copy sharded over hpz ranks (ZeRO++ §3.2), beside the primary
 * shard (memory.c, layout_row.h's mem_states). */
static void zeropp_memory(const wl *w, const spec_training *t, const spec_layout *l, int n_ranks,
                          const spec_cluster *c, mem_breakdown *o)
{
    (void)n_ranks, (void)c;
    double bp, bg, bo;
    mem_state_bytes(t->precision, &bp, &bg, &bo);
    if (l->p)
        o->params += bp * w->params / l->p;
}

/* The frameworks: DeepSpeed's ZeRO stages 0-3, MiCS (mics_shard_size) and ZeRO++; PyTorch FSDP's
 * and FSDP2's sharding strategies (NO_SHARD as ddp, FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD,
 * _HYBRID_SHARD_ZERO2); Megatron-LM's DDP and distributed optimizer (zero1), as framework.c's
 * fw_check has always listed them. */

/* DeepSpeed's ZeRO-1/2 shard over every data-parallel rank (no partition group). */
static int zero12_fw_check(const spec_layout *l, spec_framework f, sc_err *err)
{
    char name[64];
    if (f != FW_DEEPSPEED || !l->p)
        return 0;
    return sc_err_set(err, SC_EINPUT, "--framework", "",
                      "%s: DeepSpeed shards ZeRO-1/2 states over all data-parallel ranks (no partition "
                      "group); use ideal or megatron (zero1:p)",
                      spec_layout_str(l, name, sizeof name));
}

/* zero3:cp=C and fsdp2:dp=D,t=T: torchtitan's context / tensor parallelism over FSDP2 (cp.h). */
static int zero3_fw_check(const spec_layout *l, spec_framework f, sc_err *err)
{
    char name[64];
    if ((l->cp <= 1 && l->t <= 1 && l->pp <= 1) || f == FW_FSDP2 || f == FW_IDEAL)
        return 0;
    return sc_err_set(err, SC_EINPUT, "--framework", "",
                      "%s: %s parallelism over FSDP runs under fsdp2 (torchtitan) or ideal, not %s",
                      spec_layout_str(l, name, sizeof name), l->pp > 1 ? "pipeline" : l->t > 1 ? "tensor" : "context",
                      spec_framework_str(f));
}

/* torchtitan's N-D spellings, fsdp2:dp=D[,cp=C],t=T[,p=P] (t > 1 or p > 1): D x C x T x P = the
 * GPUs (parallel_dims.py asserts the product: pytorch/torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b
 * L43-45), the T ranks of a TP group inside one node (its DTensor collectives ride NVLink), a
 * context-parallel group's C x T consecutive ranks and a stage's D x C x T ranks each a divisor or
 * a multiple of a node (the ring's and the pipeline's neighbours pair up rank by rank: megatron's
 * rules, cp.c, layout_pipe.c). Else zero3:cp's check (cp.h). */
static int zero3_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    if (l->t <= 1 && l->pp <= 1)
        return cp_check_zero3(l, c, n, g, name, err);
    const int cp = l->cp > 1 ? l->cp : 1, pp = l->pp > 1 ? l->pp : 1;
    if ((long long)l->dp * cp * l->t * pp != n) {
        char axes[32], vals[64];
        snprintf(axes, sizeof axes, "dp%s x t%s", cp > 1 ? " x cp" : "", pp > 1 ? " x p" : "");
        size_t o = (size_t)snprintf(vals, sizeof vals, "%d", l->dp);
        if (cp > 1)
            o += (size_t)snprintf(vals + o, sizeof vals - o, " x %d", cp);
        o += (size_t)snprintf(vals + o, sizeof vals - o, " x %d", l->t);
        if (pp > 1)
            snprintf(vals + o, sizeof vals - o, " x %d", pp);
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected %s = %d GPUs, got %s", name, axes, n, vals);
    }
    if (g % l->t)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected t dividing the %d GPUs per node (tensor parallelism inside a node is "
                          "modelled), got %d", name, g, l->t);
    int ring = cp * l->t, stage = n / pp;
    if (cp > 1 && !(g % ring == 0 || ring % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: a context-parallel group spans cp x t = %d ranks; expected a divisor or multiple of the "
                          "%d GPUs per node", name, ring, g);
    if (pp > 1 && !(g % stage == 0 || stage % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: a pipeline stage holds %d GPUs; expected a divisor or multiple of the %d GPUs per node",
                          name, stage, g);
    return 0;
}

/* fsdp2:dp=D,t=T splits hidden, ffn and the heads T ways (as tp); zero3:cp its sequence. */
static int zero3_check_model(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    /* torchtitan's generate_split_points: "Total stages cannot be greater than the number of
     * layers" (pipelining_utils.py L34-35 at 9dec370ad26b5f8e9a7333a0e36165018262644b) */
    int stages = l->pp * (l->vp > 1 ? l->vp : 1);
    if (l->pp > 1 && m->layers < stages)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: %d pipeline stages (p x stages per rank), but %s has %d layers",
                          name, stages, m->name, m->layers);
    int rc = cp_check_model(l, m, name, err);
    if (rc || l->t <= 1)
        return rc;
    if (m->ffn % l->t || m->hidden % l->t)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits hidden %d and ffn %d of %s %d ways", name, m->hidden,
                          m->ffn, m->name, l->t);
    return layout_row_check_heads(m, name, l->t, err);
}

/* fsdp2 with the interleaved schedule: torch's ScheduleInterleaved1F1B runs the micro-batches in
 * rounds (microbatches_per_round = m / max(1, m // p): _calculate_single_rank_operations,
 * pytorch/pytorch@00722e648b740f91d0e71494baa17891749fd291 torch/distributed/pipelining/schedules.py),
 * which are layout_pipe_order's groups of p when p divides m; other counts are refused, not
 * priced with another order. */
static int zero3_check_training(const spec_layout *l, const spec_training *t, const char *name, sc_err *err)
{
    if (l->pp <= 1 || l->vp <= 1 || t->grad_accum % l->pp == 0)
        return 0;
    return sc_err_set(err, SC_EINPUT, "layout", "",
                      "%s: the interleaved schedule is modelled for micro-batches per step (grad_accum %d) a multiple "
                      "of p = %d", name, t->grad_accum, l->pp);
}

/* The GPUs sharing one micro-batch (torchtitan's local batch is per data-parallel rank): a TP
 * group x its cp group x the P pipeline stages. */
static int zero3_replicas(const spec_layout *l)
{
    return (l->t > 1 ? l->t : 1) * cp_replicas(l) * (l->pp > 1 ? l->pp : 1);
}

/* Megatron-FSDP's gathered parameters and unsharded gradients at their peak, bytes (zero3 under
 * megatron; memory.c counts the rest). NVIDIA/Megatron-LM@23e00ed0963c35382dfe8a5a94fb3cda4d21e133
 * (core_v0.14.0) megatron/core/distributed/fsdp/src/megatron_fsdp/:
 *  - parameters: a unit's bucket is released after its forward (megatron_fsdp.py L762-772) and
 *    after its backward (L553); in flight, the unit in use and the buckets prefetched past it,
 *    up to 5e8 elements (fw_prefetch: d blocks), the prefetched size not counting the unit in
 *    use (param_and_grad_buffer.py L3194-3203): an embedding or output unit of E elements
 *    brings its d blocks with it, so max((1 + d) B, E + d B) elements, B the largest block;
 *  - gradients: each unit's unsharded gradient bucket stays allocated until its reduce-scatter
 *    is waited for, which happens only when the queue holds more than
 *    suggested_RS_queue_capacity = 1e9 elements (megatron_fsdp.py L379; param_and_grad_buffer.py
 *    L2757-2790 wait_for_previous_grad_reduce pops while above it, then the new bucket joins):
 *    up to 1e9 + B elements, never more than the model, in the reduce dtype (its main_grad
 *    buffer's dtype: grad_reduce_in_fp32).
 * Elsewhere: DeepSpeed's coordinator bound (dsc_gathered), or -1 (memory.c's). */
static double zero3_gathered(const wl *w, const spec_training *t, const spec_layout *l)
{
    if (t->framework != FW_MEGATRON)
        return dsc_gathered(w, t, l);
    double B = 0, E = 0;
    for (int i = 0; i < w->n_layers; i++) {
        double p = w->layer[i].params;
        if (w->layer[i].kind == WL_BLOCK)
            B = p > B ? p : B;
        else
            E = p > E ? p : E;
    }
    const double d = fw_prefetch(t, l, w);
    const double prm = fmin(w->params, fmax((1 + d) * B, E + d * B)); /* never more than the model */
    const double grd = fmin(w->params, MG_FSDP_RS_QUEUE_ELEMS + fmax(B, E));
    double bp, bg, bo;
    mem_state_bytes(t->precision, &bp, &bg, &bo);
    return prm * bp + grd * fw_reduce_elem_bytes(t, w);
}

/* DeepSpeed's eras (framework.c's ds_era, layout_row.h): before v0.6 ZeRO-3's fetches (zero3, and
 * zeropp's stage-3 base) synchronous; before v0.12.4 ZeRO-1/2's buckets reduced to owners. MiCS
 * arrived in v0.9 (DeepSpeed-MiCS, runtime/zero/mics.py): before it, the paper's implementation. */
#define MICS_PAPER "the MiCS paper's overlapped fetch (DeepSpeed-MiCS arrived in v0.9)"
#define FW_DS LR_FW(FW_DEEPSPEED)
#define FW_TORCH (LR_FW(FW_FSDP) | LR_FW(FW_FSDP2))
const layout_kind_row layout_row_ddp = {.build = dp_build, .shard = dp_shard, .candidates = ddp_cands,
                                        .explain = all_explain, .frameworks = FW_DS | FW_TORCH | LR_FW(FW_MEGATRON)};
const layout_kind_row layout_row_zero1 = {.check = group_check, .build = dp_build, .shard = dp_shard,
                                          .candidates = zero1_cands, .explain = all_explain,
                                          .frameworks = FW_DS | LR_FW(FW_MEGATRON), .ds_era = LR_DS_OWNER_REDUCE,
                                          .fw_check = zero12_fw_check};
const layout_kind_row layout_row_zero2 = {.check = group_check, .build = dp_build, .shard = dp_shard,
                                          .candidates = zero2_cands, .explain = all_explain, .frameworks = FW_DS,
                                          .ds_era = LR_DS_OWNER_REDUCE, .fw_check = zero12_fw_check};
/* zero3:cp=C (torchtitan's fsdp2:dp=D,cp=C): a micro-batch per group of cp ranks (cp.h) */
const layout_kind_row layout_row_zero3 = {.check = zero3_check, .check_model = zero3_check_model,
                                          .check_training = zero3_check_training, .build = dp_build,
                                          .replicas = zero3_replicas, .batch_per_replica = 1, .shard = dp_shard,
                                          .candidates = zero3_cands, .explain = all_explain,
                                          .frameworks = FW_DS | FW_TORCH | LR_FW(FW_MEGATRON), .gathers_params = 1,
                                          .ds_era = LR_DS_SYNC_FETCH, .fw_check = zero3_fw_check,
                                          .localize = zero3_localize, .mem_gathered = zero3_gathered};
const layout_kind_row layout_row_mics = {.check = group_check, .build = dp_build, .shard = dp_shard,
                                         .candidates = mics_cands, .explain = mics_explain, .frameworks = FW_DS,
                                         .gathers_params = 1, .hier_gather = 1, .ds_since = MICS_DS_SINCE,
                                         .ds_paper = MICS_PAPER};
const layout_kind_row layout_row_hsdp = {.check = group_check, .build = dp_build, .shard = dp_shard,
                                         .candidates = hsdp_cands, .explain = hsdp_explain, .frameworks = FW_TORCH,
                                         .gathers_params = 1, .group_of_node = 1};
const layout_kind_row layout_row_zeropp = {.check = group_check, .build = dp_build, .shard = dp_shard,
                                           .candidates = zeropp_cands, .explain = zeropp_explain, .frameworks = FW_DS,
                                           .gathers_params = 1, .mem_states = zeropp_memory,
                                           .ds_era = LR_DS_SYNC_FETCH};
const layout_kind_row layout_row_shard_grad_op = {.build = dp_build, .shard = dp_shard, .candidates = sgo_cands,
                                                  .explain = all_explain, .frameworks = FW_TORCH,
                                                  .gathers_params = 1};
/* FSDP2's reshard_after_forward=p: zeropp's hpZ memory (the post-forward shards of every layer
 * are held from its forward to its backward: at the backward's start, all of them). plan's
 * candidates: every valid group size (`--layouts raf`, or all under --framework fsdp2). */
const layout_kind_row layout_row_raf = {.check = raf_check, .build = dp_build, .shard = dp_shard,
                                        .candidates = raf_cands, .explain = zeropp_explain, .frameworks = LR_FW(FW_FSDP2),
                                        .gathers_params = 1, .mem_states = zeropp_memory};
const layout_kind_row layout_row_hsdp_zero2 = {.check = group_check, .build = dp_build, .shard = dp_shard,
                                               .candidates = hsdp_zero2_cands, .explain = all_explain,
                                               .frameworks = FW_TORCH, .gathers_params = 1, .group_of_node = 1};

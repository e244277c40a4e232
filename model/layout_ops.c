/* layout_ops.c — the op graph's building blocks, below every layout builder (layout.c's
 * data-parallel layouts, layout_tensor.c, layout_pipe.c, layout_offload.c): communicator
 * geometry, a collective, bucket counts, and one micro-step's items in order. Not here: what any
 * layout puts in an item (the builders). */
#include "layout_ops.h"

#include "memory_states.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* Geometry of contiguous blocks of q ranks. */
static void block_group(const spec_cluster *c, int q, cost_group *out)
{
    int G = c->gpus_per_node, locals[SPEC_MAX_GPUS_PER_NODE];
    int m = q <= G ? q : G;
    for (int i = 0; i < m; i++)
        locals[i] = i;
    if (q <= G)
        cost_group_make(c, 1, locals, m, G / q, out);
    else
        cost_group_make(c, q / G, locals, G, 1, out);
}

/* Geometry of strided groups: members base + i * stride, i < size (spec_layout_check made
 * stride and stride * size each divide, or be a multiple of, the GPUs per node). */
static void strided_group(const spec_cluster *c, int stride, int size, cost_group *out)
{
    int G = c->gpus_per_node, locals[SPEC_MAX_GPUS_PER_NODE];
    if (stride * size <= G) { /* inside a node: G / size such groups per node */
        for (int i = 0; i < size; i++)
            locals[i] = i * stride;
        cost_group_make(c, 1, locals, size, G / size, out);
    } else if (stride >= G) { /* one member per node, G groups per node, stride / G nodes apart */
        locals[0] = 0;
        cost_group_make(c, size, locals, 1, G, out);
        cost_group_spread(c, stride / G, out);
    } else { /* G / stride members per node over stride * size / G nodes, stride groups per node */
        int m = G / stride;
        for (int i = 0; i < m; i++)
            locals[i] = i * stride;
        cost_group_make(c, size / m, locals, m, stride, out);
    }
}

void lo_make_groups(lo_graph *g, const spec_cluster *c)
{
    /* (a geometry made with the same arguments as one already made is copied: the same bytes) */
    int unit = -1;
    for (int a = 0; a < 4; a++)
        if (g->ax_size[a] > 1)
            strided_group(c, g->ax_stride[a], g->ax_size[a], &g->group[GRP_AX0 + a]);
        else if (unit >= 0)
            g->group[GRP_AX0 + a] = g->group[unit];
        else
            cost_group_make(c, 1, (int[]){0}, 1, 1, &g->group[unit = GRP_AX0 + a]);
    int G = c->gpus_per_node, N = g->n_ranks, K = g->nodes;
    int p = g->layout.p ? g->layout.p : N, locals[SPEC_MAX_GPUS_PER_NODE];
    block_group(c, N, &g->group[GRP_WORLD]);
    if (p == N)
        g->group[GRP_PARTITION] = g->group[GRP_WORLD];
    else
        block_group(c, p, &g->group[GRP_PARTITION]);
    g->group[GRP_SECONDARY] = g->group[GRP_PARTITION]; /* block_group(c, p): the same geometry */
    /* replica: ranks r, r+p, r+2p, ...: p >= G gives one per node over N/p nodes; p < G gives
     * G/p per node on every node, p such groups per node. */
    if (p >= G) {
        locals[0] = 0;
        cost_group_make(c, N / p, locals, 1, G, &g->group[GRP_REPLICA]);
        cost_group_spread(c, p / G, &g->group[GRP_REPLICA]); /* nodes p / G apart */
    } else {
        for (int i = 0; i < G / p; i++)
            locals[i] = i * p;
        cost_group_make(c, K, locals, G / p, p, &g->group[GRP_REPLICA]);
    }
    locals[0] = 0;
    cost_group_make(c, p > G ? p / G : 1, locals, 1, G, &g->group[GRP_RAIL]);
    block_group(c, p < G ? p : G, &g->group[GRP_INTRA]);
    if (p >= G)
        g->group[GRP_NODE] = g->group[GRP_INTRA];
    else
        block_group(c, G, &g->group[GRP_NODE]);
    locals[0] = 0;
    cost_group_make(c, K, locals, 1, G, &g->group[GRP_XRAIL]);
    cost_group_host(c, &g->group[GRP_HOST]);
    if (c->nvme_read_Bps > 0) {
        cost_group_nvme(c, 1, &g->group[GRP_NVME]);
        cost_group_nvme(c, 0, &g->group[GRP_NVME_HOST]);
    } else { /* absent: zero, as every group the cluster lacks (layout_build zeroes none) */
        memset(&g->group[GRP_NVME], 0, sizeof g->group[GRP_NVME]);
        memset(&g->group[GRP_NVME_HOST], 0, sizeof g->group[GRP_NVME_HOST]);
    }
    if (c->innet.present) {
        cost_group_innet(c, K, 0, g->elem_bytes, &g->group[GRP_INNET]);
        cost_group_innet(c, K, 1, g->elem_bytes, &g->group[GRP_INNET_UPD]);
    } else {
        memset(&g->group[GRP_INNET], 0, sizeof g->group[GRP_INNET]);
        memset(&g->group[GRP_INNET_UPD], 0, sizeof g->group[GRP_INNET_UPD]);
    }
}

int lo_buckets(double bytes, double bucket)
{
    double n = ceil(bytes / bucket);
    return n < 1 ? 1 : n > 1e6 ? 1000000 : (int)n;
}

/* A collective over one rank moves nothing (a host copy does): drop it. */
static inline int keep(const lo_graph *g, lo_coll *c, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if ((g->group[c[i].group].n > 1 || g->group[c[i].group].transport != XPORT_NCCL) && c[i].bytes > 0) {
            if (k != i) /* (a kept one in place stays: the same bytes) */
                c[k] = c[i];
            k++;
        }
    return k;
}

void lo_item_drop_trivial(const lo_graph *g, lo_item *it)
{
    it->n_gather = keep(g, it->gather, it->n_gather);
    it->n_inline = keep(g, it->inl, it->n_inline);
    it->n_reduce = keep(g, it->reduce, it->n_reduce);
}

/* A collective that sits inside a linear layer's forward runs again when, and only when, a
 * recompute runs that linear again. AxoNN: AsyncLinear.forward all-reduces its output over the
 * forward group right after the matmul (dist.all_reduce, axonn-ai/axonn@0b6328ca6018dc64fcf29de08973e36c36d4c04a
 * axonn/intra_layer/fully_connected.py), so the checkpointed forward the model's own
 * torch.utils.checkpoint re-runs repeats it; Megatron's f / g sit in Column/RowParallelLinear the
 * same way. Full recompute re-runs the whole block, its collectives with it. Selective
 * recompute (Korthikanti et al. 2022 s5; Megatron --recompute-granularity selective,
 * NVIDIA/Megatron-LM@e9b61f78 megatron/core/transformer/attention.py L81, L258-259:
 * _checkpointed_attention_forward wraps core_attention alone) re-runs attention's core, which
 * lies between the linears and holds none. checkpointing op recomputes some of the block's
 * linears (workload.c op_sac): counted as re-running the block's forward collectives whole, as
 * before this rule (an upper bound; the share is not modelled). */
int lo_fwd_comm_rerun(const spec_training *t, const lo_item *it)
{
    return it->pass == LO_BWD && it->recompute && t->act_ckpt != CKPT_SELECTIVE;
}

/* activation_offload (layout_ops.h): the block's checkpointed input, ckpt_bytes per copy, out in
 * the forward and back in the backward, serial with the compute (inline_overlap 0). torch
 * checkpoint_wrapper(offload_to_cpu=True) wraps the checkpoint in autograd's save_on_cpu
 * (pin_memory=True): its pack hook copies each saved tensor into a new pinned host tensor with
 * copy_ (no non_blocking: the host waits), its unpack hook brings it back with
 * .to(device, non_blocking=True) on the current stream before the recompute uses it. */
static void act_offload_copy(const wl_layer *L, lo_item *it)
{
    lo_coll c = lo_coll_make(it->pass == LO_FWD ? COLL_REDUCESCATTER : COLL_ALLGATHER, GRP_HOST, L->ckpt_bytes, 1);
    c.offload = LO_OFFLOAD_ACT;
    /* beside inline collectives the compute already waits for (DeepSpeed ZeRO-2 without
     * overlap_comm reduces each bucket on the current stream, layout_dp.c grad_sync): on their
     * stream, after them, as on the one compute stream of the code: serial */
    c.stream = it->n_inline ? it->inl[0].stream : LO_ACT_STREAM;
    /* never full: lo_act_offload_priced's layouts (no t, cp, pipeline, megatron) add at most 2
     * (layout_offload.c) of LO_MAX_INLINE's 6 */
    assert(it->n_inline < LO_MAX_INLINE);
    it->inl[it->n_inline++] = c;
    it->inline_overlap = 0;
}

int lo_act_offload_priced(const spec_layout *l)
{
    return l->pp <= 1 && l->t <= 1 && l->cp <= 1 && l->kind != LAYOUT_MEGATRON && l->kind != LAYOUT_TP &&
           l->kind != LAYOUT_AXONN;
}

/* The items of one micro-step zeroed (fill relies on it; time_micro compares items by bytes),
 * not the whole micro-step: nothing reads an item past n_items (2 x n_layers of the 8). One
 * memset, not one per item (six `rep stos` starts: 4-5 % slower in bench_analytic quick); of a
 * fixed size for wl_build's three layers, which gcc writes inline (a variable size goes to the
 * library's `rep stosb`, which callgrind counts per byte: +3.7 k an estimate) */
static void zero_items(const wl *w, lo_micro *mi)
{
    mi->n_items = 0;
    if (w->n_layers == 3)
        memset(mi->item, 0, 6 * sizeof mi->item[0]);
    else
        memset(mi->item, 0, (size_t)(2 * w->n_layers) * sizeof mi->item[0]);
}

/* An item's place: the j-th layer of its pass (the backward in reverse), as every builder has it. */
static void item_head(const wl *w, const spec_training *t, int pass, int j, lo_item *it)
{
    int li = pass == LO_FWD ? j : w->n_layers - 1 - j;
    const wl_layer *L = &w->layer[li];
    it->pass = (lo_pass)pass;
    it->layer = li;
    it->count = L->count;
    it->recompute = pass == LO_BWD && t->act_ckpt && L->kind == WL_BLOCK;
}

/* Whether an item's inline collectives (if any) run after its compute, which waits for them, on
 * one stream: none beside the compute (inline_overlap 0), no tails, no copies fused with GEMMs
 * (DeepSpeed ZeRO-2 without overlap_comm: each bucket's reduce on the current stream). Until
 * 2026-11-28 only items without inline collectives got activation_offload's copy: ZeRO-2's
 * backward blocks went without theirs (llama3-8b, 2 x dgx-h100: +0.045 s against ZeRO-1's
 * +0.091 s). */
static int inline_serial(const lo_item *it)
{
    if (it->n_inline && (it->inline_overlap != 0 || it->inline_tail || it->n_pair))
        return 0;
    for (int k = 1; k < it->n_inline; k++)
        if (it->inl[k].stream != it->inl[0].stream)
            return 0;
    return 1;
}

/* What every builder does to an item after its fill, the same in both micro-steps (it must read
 * nothing of which one: lo_build_micro_pair copies an item that did not ask): its trivial
 * collectives dropped. */
static void item_done(const lo_graph *g, const wl *w, const spec_training *t, lo_item *it)
{
    /* memory.c's plan moves them to the host; spec_layout_check_training refuses the layouts
       whose copies are not priced (lo_act_offload_priced) */
    const wl_layer *L = &w->layer[it->layer];
    if (L->kind == WL_BLOCK && inline_serial(it) && mem_act_offloaded(t) && lo_act_offload_priced(&g->layout))
        act_offload_copy(L, it);
    lo_item_drop_trivial(g, it);
}

void lo_build_micro(lo_graph *g, const wl *w, const spec_training *t, int last, lo_micro *mi, lo_item_fn fill)
{
    zero_items(w, mi);
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < w->n_layers; j++) {
            lo_item *it = &mi->item[mi->n_items++];
            item_head(w, t, pass, j, it);
            fill(g, w, t, last, it);
            item_done(g, w, t, it);
        }
}

void lo_build_micro_pair(lo_graph *g, const wl *w, const spec_training *t, lo_item_fn_lazy fill)
{
    unsigned char asked[LO_MAX_ITEMS];
    zero_items(w, &g->micro);
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < w->n_layers; j++) {
            const int i = g->micro.n_items++;
            lo_item *it = &g->micro.item[i];
            item_head(w, t, pass, j, it);
            lo_last ls = {0, 0};
            fill(g, w, t, &ls, it);
            item_done(g, w, t, it);
            asked[i] = (unsigned char)ls.read;
        }
    /* the last micro-step: the items that did not ask are the same bytes (one copy of all, in
     * place of lo_build_micro's zeroing: a `rep movs` per item cost more time than the fills it
     * saved), the others filled again */
    g->last.n_items = g->micro.n_items;
    if (w->n_layers == 3) /* a fixed size, as zero_items */
        memcpy(g->last.item, g->micro.item, 6 * sizeof g->last.item[0]);
    else
        memcpy(g->last.item, g->micro.item, (size_t)g->micro.n_items * sizeof g->last.item[0]);
    for (int i = 0; i < g->last.n_items; i++)
        if (asked[i]) {
            lo_item *lt = &g->last.item[i];
            memset(lt, 0, sizeof *lt);
            item_head(w, t, i < w->n_layers ? LO_FWD : LO_BWD, i % w->n_layers, lt);
            lo_last ls = {1, 0};
            fill(g, w, t, &ls, lt);
            item_done(g, w, t, lt);
        }
}

void lo_item_pair(lo_item *it, int coll, wl_gemm_role role, int pass, int share, int chunks, int bare)
{
    /* the fullest item: async TP's backward pairs (6) beside the ring's three (cp.c): 9 of 10 */
    assert(it->n_pair < LO_MAX_PAIRS);
    lo_pair *p = &it->pair[it->n_pair++];
    const int c = chunks < 255 ? chunks : 255;
    p->coll = (unsigned char)coll;
    p->role = (unsigned char)role;
    p->pass = (unsigned char)pass;
    p->share = (unsigned char)share;
    p->chunks = (unsigned char)c;
    p->bare = (unsigned char)(bare < c ? bare : c - 1);
}

/* layout.c — build the per-rank op graph of each layout (rules in layout.h). Sources: ZeRO
 * (Rajbhandari et al. 2020, §5, §7), MiCS (Zhang et al. 2022, §3.2-3.4: partition groups,
 * hierarchical all-gather, 2-hop gradient synchronisation), PyTorch FSDP HYBRID_SHARD, ZeRO++
 * hpZ (Wang et al. 2023, §3.2). */
#include "layout.h"
#include "layout_int.h"

#include <math.h>
#include <string.h>

static const char *const GROUP_NAMES[N_GROUPS] = {"world", "partition", "replica", "rail", "intra", "secondary",
                                                   "axis-x", "axis-y", "axis-z", "axis-data", "host",
                                                   "in-network", "in-network+update"};
static const char *const COLL_NAMES[N_COLLS] = {"all-gather", "reduce-scatter", "all-reduce"};

const char *layout_group_name(lo_group_kind k) { return GROUP_NAMES[k]; }
const char *layout_coll_name(cost_coll k) { return COLL_NAMES[k]; }

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
    } else if (stride >= G) { /* one member per node, G groups per node */
        locals[0] = 0;
        cost_group_make(c, size, locals, 1, G, out);
    } else { /* G / stride members per node over stride * size / G nodes, stride groups per node */
        int m = G / stride;
        for (int i = 0; i < m; i++)
            locals[i] = i * stride;
        cost_group_make(c, size / m, locals, m, stride, out);
    }
}

void lo_make_groups(lo_graph *g, const spec_cluster *c)
{
    for (int a = 0; a < 4; a++)
        if (g->ax_size[a] > 1)
            strided_group(c, g->ax_stride[a], g->ax_size[a], &g->group[GRP_AX0 + a]);
        else
            cost_group_make(c, 1, (int[]){0}, 1, 1, &g->group[GRP_AX0 + a]);
    int G = c->gpus_per_node, N = g->n_ranks, K = g->nodes;
    int p = g->layout.p ? g->layout.p : N, locals[SPEC_MAX_GPUS_PER_NODE];
    block_group(c, N, &g->group[GRP_WORLD]);
    block_group(c, p, &g->group[GRP_PARTITION]);
    block_group(c, p, &g->group[GRP_SECONDARY]);
    /* replica: ranks r, r+p, r+2p, ...: p >= G gives one per node over N/p nodes; p < G gives
     * G/p per node on every node, p such groups per node. */
    if (p >= G) {
        locals[0] = 0;
        cost_group_make(c, N / p, locals, 1, G, &g->group[GRP_REPLICA]);
    } else {
        for (int i = 0; i < G / p; i++)
            locals[i] = i * p;
        cost_group_make(c, K, locals, G / p, p, &g->group[GRP_REPLICA]);
    }
    locals[0] = 0;
    cost_group_make(c, p > G ? p / G : 1, locals, 1, G, &g->group[GRP_RAIL]);
    block_group(c, p < G ? p : G, &g->group[GRP_INTRA]);
    cost_group_host(c, &g->group[GRP_HOST]);
    if (c->innet.present) {
        cost_group_innet(c, K, 0, g->elem_bytes, &g->group[GRP_INNET]);
        cost_group_innet(c, K, 1, g->elem_bytes, &g->group[GRP_INNET_UPD]);
    }
}

lo_coll lo_coll_make(cost_coll kind, lo_group_kind grp, double bytes, int chunks)
{
    return (lo_coll){kind, grp, bytes, chunks < 1 ? 1 : chunks, 0};
}


int lo_buckets(double bytes, double bucket)
{
    double n = ceil(bytes / bucket);
    return n < 1 ? 1 : n > 1e6 ? 1000000 : (int)n;
}
#define buckets lo_buckets

/* A collective over one rank moves nothing (a host copy does): drop it. */
static int keep(const lo_graph *g, lo_coll *c, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if ((g->group[c[i].group].n > 1 || g->group[c[i].group].transport != XPORT_NCCL) && c[i].bytes > 0)
            c[k++] = c[i];
    return k;
}

void lo_item_drop_trivial(const lo_graph *g, lo_item *it)
{
    it->n_gather = keep(g, it->gather, it->n_gather);
    it->n_inline = keep(g, it->inl, it->n_inline);
    it->n_reduce = keep(g, it->reduce, it->n_reduce);
}

void lo_build_micro(lo_graph *g, const wl *w, const spec_training *t, int last, lo_micro *mi, lo_item_fn fill)
{
    memset(mi, 0, sizeof *mi);
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < w->n_layers; j++) {
            int li = pass == LO_FWD ? j : w->n_layers - 1 - j;
            const wl_layer *L = &w->layer[li];
            lo_item *it = &mi->item[mi->n_items++];
            it->pass = (lo_pass)pass;
            it->layer = li;
            it->count = L->count;
            it->recompute = pass == LO_BWD && t->act_ckpt && L->kind == WL_BLOCK;
            fill(g, w, t, last, it);
            lo_item_drop_trivial(g, it);
        }
}

/* One item of the data-parallel and sharded layouts. */
static void dp_item(const lo_graph *g, const wl *w, const spec_training *t, int last, lo_item *it)
{
    const spec_layout *l = &g->layout;
    const int N = g->n_ranks, G = g->gpus_per_node;
    const lo_pass pass = it->pass;
    double S = w->layer[it->layer].params * g->elem_bytes; /* its parameters (or gradients), bytes */
    switch (l->kind) {
    case LAYOUT_DDP:
        if (pass == LO_BWD && last)
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_ALLREDUCE, GRP_WORLD, S, buckets(S, t->bucket_bytes));
        break;
    case LAYOUT_ZERO1:
    case LAYOUT_ZERO2:
        if (pass == LO_BWD && (last || l->kind == LAYOUT_ZERO2))
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_WORLD, S, buckets(S, t->bucket_bytes));
        break;
    case LAYOUT_ZERO3:
        it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_WORLD, S, 1);
        if (pass == LO_BWD)
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_WORLD, S, 1);
        break;
    case LAYOUT_MICS:
        if (l->hier && l->p > G) {
            /* MiCS §3.3: all-gather among the k same-local-rank ranks (each gets k
             * shards = S/G bytes), then inside the node over NVLink. */
            it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_RAIL, S / G, 1);
            it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_INTRA, S, 1);
        } else {
            it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_PARTITION, S, 1);
        }
        if (pass == LO_BWD)
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_PARTITION, S, 1);
        break;
    case LAYOUT_HSDP:
        it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, GRP_PARTITION, S, 1);
        if (pass == LO_BWD) {
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_PARTITION, S, 1);
            if (!l->sync_boundary && N / l->p > 1)
                it->reduce[it->n_reduce++] = lo_coll_make(COLL_ALLREDUCE, GRP_REPLICA, S / l->p, 1);
        }
        break;
    default: /* tensor-parallel and offloading layouts: layout_tensor.c, layout_offload.c */
        break;
    case LAYOUT_ZEROPP:
        /* forward from the primary (world) shards; backward from the secondary copy
         * sharded inside hpz ranks; gradients reduce-scattered over the world. */
        it->gather[it->n_gather++] = lo_coll_make(COLL_ALLGATHER, pass == LO_FWD ? GRP_WORLD : GRP_SECONDARY, S, 1);
        if (pass == LO_BWD)
            it->reduce[it->n_reduce++] = lo_coll_make(COLL_REDUCESCATTER, GRP_WORLD, S, 1);
        break;
    }
}

void layout_build(const wl *w, const spec_training *t, const spec_layout *l, const spec_cluster *c, int nodes,
                  lo_graph *g)
{
    memset(g, 0, sizeof *g);
    g->layout = *l;
    g->nodes = nodes;
    g->gpus_per_node = c->gpus_per_node;
    g->n_ranks = nodes * c->gpus_per_node;
    g->prefetch = t->prefetch_layers;
    g->grad_accum = t->grad_accum;
    g->elem_bytes = w->elem_bytes;
    if (l->kind == LAYOUT_MEGATRON && l->pp > 1) {
        lo_build_pipe(g, w, t, c);
        return;
    }
    if (l->kind == LAYOUT_TP || l->kind == LAYOUT_AXONN || l->kind == LAYOUT_MEGATRON) {
        lo_build_tensor(g, w, t, c);
        return;
    }
    if (l->kind == LAYOUT_ZERO3_OFFLOAD || l->kind == LAYOUT_LUWU) {
        lo_build_offload(g, w, t, c);
        return;
    }
    lo_make_groups(g, c);
    lo_build_micro(g, w, t, 0, &g->micro, dp_item);
    lo_build_micro(g, w, t, 1, &g->last, dp_item);

    const int N = g->n_ranks;
    const double psi = w->params, e = g->elem_bytes;
    int shard = spec_layout_shard(l, N);
    /* MiCS 2-hop (§3.4) and HSDP sync=boundary: all-reduce of the gradient shard across the
     * replication group at the accumulation boundary. */
    if ((l->kind == LAYOUT_MICS || (l->kind == LAYOUT_HSDP && l->sync_boundary)) && N / l->p > 1)
        g->boundary[g->n_boundary++] = (lo_bop){.coll = lo_coll_make(COLL_ALLREDUCE, GRP_REPLICA, psi * e / l->p, 1)};
    g->boundary[g->n_boundary++] = (lo_bop){.is_optimizer = 1, .opt_params = psi / shard};
    /* ZeRO-1/2: updated parameter shards all-gathered after the step (ZeRO §5.1-5.2). */
    if ((l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2) && N > 1)
        g->boundary[g->n_boundary++] = (lo_bop){.coll = lo_coll_make(COLL_ALLGATHER, GRP_WORLD, psi * e, buckets(psi * e, t->bucket_bytes))};
}

const wl_layer *layout_layer(const lo_graph *g, const wl *w, int i)
{
    return g->local_layers ? &g->lw[i] : &w->layer[i];
}

int layout_group_members(const lo_graph *g, lo_group_kind kind, int r, int *out)
{
    const int N = g->n_ranks, G = g->gpus_per_node;
    const int p = g->layout.p ? g->layout.p : N;
    int n = 0;
    switch (kind) {
    case GRP_HOST: out[n++] = r; break;
    case GRP_WORLD:
    case GRP_INNET:
    case GRP_INNET_UPD:
        for (int i = 0; i < N; i++)
            out[n++] = i;
        break;
    case GRP_PARTITION:
    case GRP_SECONDARY:
        for (int i = r / p * p; i < r / p * p + p; i++)
            out[n++] = i;
        break;
    case GRP_REPLICA:
        for (int i = r % p; i < N; i += p)
            out[n++] = i;
        break;
    case GRP_RAIL: {
        int base = r / p * p, local = r % G, k = p > G ? p / G : 1;
        for (int j = 0; j < k; j++)
            out[n++] = base + j * G + local;
        break;
    }
    case GRP_INTRA: {
        int q = p < G ? p : G;
        for (int i = r / q * q; i < r / q * q + q; i++)
            out[n++] = i;
        break;
    }
    case GRP_AX0:
    case GRP_AX1:
    case GRP_AX2:
    case GRP_AX3: {
        int a = kind - GRP_AX0, st = g->ax_stride[a], sz = g->ax_size[a];
        int base = r - (r / st % sz) * st;
        for (int i = 0; i < sz; i++)
            out[n++] = base + i * st;
        break;
    }
    default: break;
    }
    return n;
}

/* Bytes one rank moves for collective c, `times` over, added to its kind and communicator. */
static double coll_bytes(const lo_graph *g, const lo_coll *c, double times, double by_kind[N_COLLS],
                         double by_group[N_GROUPS])
{
    double b = times * cost_rank_bytes(c->kind, &g->group[c->group], c->bytes);
    by_kind[c->kind] += b;
    by_group[c->group] += b;
    return b;
}

/* The step's volume per rank, split per kind and per communicator. */
static double step_bytes(const lo_graph *g, double by_kind[N_COLLS], double by_group[N_GROUPS])
{
    memset(by_kind, 0, sizeof(double) * N_COLLS);
    memset(by_group, 0, sizeof(double) * N_GROUPS);
    double tot = 0;
    for (int last = 0; last < 2; last++) {
        const lo_micro *m = last ? &g->last : &g->micro;
        double times = last ? 1 : g->grad_accum - 1;
        for (int i = 0; i < m->n_items && times > 0; i++) {
            const lo_item *it = &m->item[i];
            double w = times * it->count;
            for (int j = 0; j < it->n_gather; j++)
                tot += coll_bytes(g, &it->gather[j], w, by_kind, by_group);
            for (int j = 0; j < it->n_inline; j++)
                tot += coll_bytes(g, &it->inl[j], w, by_kind, by_group);
            for (int j = 0; j < it->n_reduce; j++)
                tot += coll_bytes(g, &it->reduce[j], w, by_kind, by_group);
        }
    }
    for (int i = 0; i < g->n_boundary; i++)
        if (!g->boundary[i].is_optimizer)
            tot += coll_bytes(g, &g->boundary[i].coll, 1, by_kind, by_group);
    return tot;
}

double layout_comm_bytes(const lo_graph *g, double by_kind[N_COLLS])
{
    double k[N_COLLS], q[N_GROUPS], tot = step_bytes(g, k, q);
    if (by_kind)
        memcpy(by_kind, k, sizeof k);
    return tot;
}

double layout_comm_bytes_by_group(const lo_graph *g, double by_group[N_GROUPS])
{
    double k[N_COLLS];
    return step_bytes(g, k, by_group);
}

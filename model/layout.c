/* layout.c — the op graph's common part (rules in layout.h): layout_build fills the fields every
 * layout shares and calls its kind's row (layout_kind.c) for the rest; group membership, names
 * and communication volume. Not here: any kind's own graph (the family files: layout_dp.c,
 * layout_tensor.c, layout_pipe.c, layout_offload.c). */
#include "layout.h"
#include "layout_kind.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const char *const GROUP_NAMES[N_GROUPS] = {"world", "partition", "replica", "rail", "intra", "secondary",
                                                   "axis-x", "axis-y", "axis-z", "axis-data", "host",
                                                   "in-network", "in-network+update", "node", "cross-node rail", "nvme",
                                                   "host-nvme"};
static const char *const COLL_NAMES[N_COLLS] = {"all-gather", "reduce-scatter", "all-reduce"};

const char *layout_group_name(lo_group_kind k) { return GROUP_NAMES[k]; }
const char *layout_coll_name(cost_coll k) { return COLL_NAMES[k]; }

void layout_build(const wl *w, const spec_training *t, const spec_layout *l, const spec_cluster *c, int nodes,
                  lo_graph *g)
{
    /* lo_pipe's per-stage arrays (~14 KB of the graph's 24) are read only when pipelined; of
     * the rest, lw (2.6 KB) is read only under local_layers, which every builder that sets it
     * fills whole; group (1.8 KB) lo_make_groups, which every builder calls, makes whole (each
     * group, the absent ones zeroed); micro and last (2.8 KB each) have their items zeroed as
     * lo_build_micro, which every builder calls, makes them, so only their item counts here (no
     * item is read past n_items) */
    const int pipelined = l->pp > 1; /* megatron and fsdp2 (zero3) take pipeline stages */
    if (pipelined) {
        memset(g, 0, sizeof *g);
    } else {
        memset(g, 0, offsetof(lo_graph, lw));
        memset(g->ax_stride, 0, sizeof g->ax_stride);
        memset(g->ax_size, 0, sizeof g->ax_size);
        g->micro.n_items = g->last.n_items = 0;
        memset(&g->n_boundary, 0, offsetof(lo_graph, pipe) - offsetof(lo_graph, n_boundary));
        memset(&g->pipe, 0, offsetof(lo_pipe, blocks));
        g->pipe.p2p_bytes = 0;
        g->pipe.dp = 0;
    }
    g->layout = *l;
    g->framework = t->framework;
    g->nodes = nodes;
    g->gpus_per_node = c->gpus_per_node;
    g->n_ranks = nodes * c->gpus_per_node;
    g->prefetch = t->prefetch_layers;
    g->grad_accum = t->grad_accum;
    g->elem_bytes = w->elem_bytes;
    fw_schedule(t, l, w, &g->sched);
    const layout_kind_row *r = layout_kind_row_of(l->kind);
    if (r && r->build)
        r->build(g, w, t, c);
}

const wl_layer *layout_layer(const lo_graph *g, const wl *w, int i)
{
    return g->local_layers ? &g->lw[i] : &w->layer[i];
}

int layout_group_index(const lo_graph *g, lo_group_kind kind, int r)
{
    const int N = g->n_ranks, G = g->gpus_per_node;
    const int p = g->layout.p ? g->layout.p : N, q = p < G ? p : G;
    switch (kind) {
    case GRP_WORLD: return 0;
    case GRP_PARTITION:
    case GRP_SECONDARY: return r / p;
    case GRP_REPLICA: return r % p;
    case GRP_RAIL: return r / p * G + r % G;
    case GRP_INTRA: return r / q;
    case GRP_AX0:
    case GRP_AX1:
    case GRP_AX2:
    case GRP_AX3: {
        int st = g->ax_stride[kind - GRP_AX0], sz = g->ax_size[kind - GRP_AX0];
        return r / (st * sz) * st + r % st;
    }
    case GRP_HOST:
    case GRP_NVME:
    case GRP_NVME_HOST: return r;
    case GRP_NODE: return r / G;
    case GRP_XRAIL: return r % G;
    default: return 0;
    }
}

int layout_group_members(const lo_graph *g, lo_group_kind kind, int r, int *out)
{
    const int N = g->n_ranks, G = g->gpus_per_node;
    const int p = g->layout.p ? g->layout.p : N;
    int n = 0;
    switch (kind) {
    case GRP_HOST:
    case GRP_NVME:
    case GRP_NVME_HOST: out[n++] = r; break;
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
    case GRP_NODE:
        for (int i = r / G * G; i < r / G * G + G; i++)
            out[n++] = i;
        break;
    case GRP_XRAIL:
        for (int i = r % G; i < N; i += G)
            out[n++] = i;
        break;
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

static void vol_add(const lo_graph *g, const lo_coll *c, double count, lo_vol_term *t)
{
    t->count = count;
    t->bytes = cost_rank_bytes(c->kind, &g->group[c->group], c->bytes);
    t->kind = c->kind;
    t->group = c->group;
}

void layout_volume(const lo_graph *g, lo_volume *v)
{
    int n = 0;
    for (int last = 0; last < 2; last++) {
        const lo_micro *m = last ? &g->last : &g->micro;
        for (int i = 0; i < m->n_items; i++) {
            const lo_item *it = &m->item[i];
            for (int j = 0; j < it->n_gather; j++)
                vol_add(g, &it->gather[j], it->count, &v->term[n++]);
            for (int j = 0; j < it->n_inline; j++)
                vol_add(g, &it->inl[j], it->count, &v->term[n++]);
            for (int j = 0; j < it->n_reduce; j++)
                vol_add(g, &it->reduce[j], it->count, &v->term[n++]);
        }
        if (!last)
            v->n_micro = n;
        else
            v->n_last = n - v->n_micro;
    }
    for (int i = 0; i < g->n_boundary; i++)
        if (!g->boundary[i].is_optimizer)
            vol_add(g, &g->boundary[i].coll, 1, &v->term[n++]);
    v->n_bound = n - v->n_micro - v->n_last;
}

/* The step's volume per rank, split per kind and per communicator: each collective's copies x
 * its bytes per rank (times = grad_accum - 1 for the regular micro-steps, 1 for the last and
 * the boundary), summed in the graph's order. */
double layout_volume_bytes(const lo_volume *v, int grad_accum, double by_kind[N_COLLS], double by_group[N_GROUPS])
{
    if (by_kind)
        memset(by_kind, 0, sizeof(double) * N_COLLS);
    if (by_group)
        memset(by_group, 0, sizeof(double) * N_GROUPS);
    double tot = 0;
    const double times[3] = {grad_accum - 1, 1, 1};
    const int end[3] = {v->n_micro, v->n_micro + v->n_last, v->n_micro + v->n_last + v->n_bound};
    for (int part = 0, k = 0; part < 3; k = end[part++]) {
        if (!(times[part] > 0))
            continue;
        if (!by_kind && !by_group) { /* the memo's call for every configuration: the total alone */
            for (; k < end[part]; k++)
                tot += times[part] * v->term[k].count * v->term[k].bytes;
            continue;
        }
        for (; k < end[part]; k++) {
            const lo_vol_term *t = &v->term[k];
            double b = times[part] * t->count * t->bytes;
            if (by_kind)
                by_kind[t->kind] += b;
            if (by_group)
                by_group[t->group] += b;
            tot += b;
        }
    }
    return tot;
}

/* The busbw fractions of the communicators met, kept for one step_bytes call. */
typedef struct step_fracs {
    unsigned have; /* bit k: f[k] taken */
    double f[N_GROUPS];
} step_fracs;

/* One list of collectives into the step's sums (step_bytes): b = times x count x bytes each. */
static inline double add_colls(const lo_graph *g, const lo_coll *c, int n, double times, double count,
                               double by_kind[N_COLLS], double by_group[N_GROUPS], double tot, step_fracs *fr)
{
    for (int j = 0; j < n; j++) {
        const int gi = c[j].group;
        if (!(fr->have >> gi & 1u)) { /* the communicator's (n-1)/n, one division each */
            fr->f[gi] = g->group[gi].n > 1 ? cost_busbw_frac(g->group[gi].n) : 0;
            fr->have |= 1u << gi;
        }
        double b = times * count * cost_rank_bytes_f(c[j].kind, &g->group[gi], c[j].bytes, fr->f[gi]);
        if (by_kind)
            by_kind[c[j].kind] += b;
        if (by_group)
            by_group[c[j].group] += b;
        tot += b;
    }
    return tot;
}

/* layout_volume_bytes over layout_volume's terms, fused: the same terms in the same order, each
 * b = times x count x bytes (the same operations on the same values: the same bits), without
 * the 148-term table; a micro-step with no copies (grad_accum 1) is skipped unread, as there. */
static double step_bytes(const lo_graph *g, double by_kind[N_COLLS], double by_group[N_GROUPS])
{
    if (by_kind)
        memset(by_kind, 0, sizeof(double) * N_COLLS);
    if (by_group)
        memset(by_group, 0, sizeof(double) * N_GROUPS);
    double tot = 0;
    step_fracs fr;
    fr.have = 0;
    for (int last = 0; last < 2; last++) {
        const lo_micro *m = last ? &g->last : &g->micro;
        const double times = last ? 1 : g->grad_accum - 1;
        if (!(times > 0))
            continue;
        for (int i = 0; i < m->n_items; i++) {
            const lo_item *it = &m->item[i];
            const double count = it->count;
            tot = add_colls(g, it->gather, it->n_gather, times, count, by_kind, by_group, tot, &fr);
            tot = add_colls(g, it->inl, it->n_inline, times, count, by_kind, by_group, tot, &fr);
            tot = add_colls(g, it->reduce, it->n_reduce, times, count, by_kind, by_group, tot, &fr);
        }
    }
    for (int i = 0; i < g->n_boundary; i++)
        if (!g->boundary[i].is_optimizer)
            tot = add_colls(g, &g->boundary[i].coll, 1, 1, 1, by_kind, by_group, tot, &fr);
    return tot;
}

double layout_comm_bytes(const lo_graph *g, double by_kind[N_COLLS])
{
    return step_bytes(g, by_kind, NULL);
}

double layout_comm_bytes_by_group(const lo_graph *g, double by_group[N_GROUPS])
{
    return step_bytes(g, NULL, by_group);
}

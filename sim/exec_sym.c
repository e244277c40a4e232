/* exec_sym.c — exact symmetry: the smallest unit of nodes whose shift maps the topology and the
 * step's communicators onto themselves (see exec.h, exec_symmetry_unit), and for pipelines the
 * smallest rotation of every stage's nodes that does (exec_pipe_symmetry_unit). Pure analysis of
 * the op graph and the cluster; exec.c and pipe.c run the quotients they allow. */
#include "exec.h"

#include <stdlib.h>
#include <string.h>

#include "topo.h"

/* The communicators the step uses. */
static void kinds_used(const lo_graph *g, int used[N_GROUPS])
{
    memset(used, 0, sizeof(int) * N_GROUPS);
    const lo_micro *ms[2] = {&g->micro, &g->last};
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < ms[m]->n_items; i++) {
            const lo_item *it = &ms[m]->item[i];
            for (int j = 0; j < it->n_gather; j++)
                used[it->gather[j].group] = 1;
            for (int j = 0; j < it->n_inline; j++)
                used[it->inl[j].group] = 1;
            for (int j = 0; j < it->n_reduce; j++)
                used[it->reduce[j].group] = 1;
        }
    for (int b = 0; b < g->n_boundary; b++)
        if (!g->boundary[b].is_optimizer)
            used[g->boundary[b].coll.group] = 1;
}

/* Does the shift r -> (r + u) mod N map kind k's communicators onto its communicators (a
 * function of the group, one to one), and is every communicator of ranks 0..u-1 either mapped
 * onto itself or inside 0..u-1? scratch: 3 N ints. */
static int shift_ok(const lo_graph *g, lo_group_kind k, int u, int *scratch)
{
    const int N = g->n_ranks;
    int *img = scratch, *pre = scratch + N, *mine = scratch + 2 * (size_t)N;
    for (int i = 0; i < N; i++)
        img[i] = pre[i] = -1, mine[i] = 0;
    for (int r = 0; r < N; r++) {
        int a = layout_group_index(g, k, r), b = layout_group_index(g, k, (r + u) % N);
        if (a < 0 || a >= N || b < 0 || b >= N)
            return 0;
        if (img[a] < 0) {
            if (pre[b] >= 0)
                return 0; /* two groups onto one */
            img[a] = b;
            pre[b] = a;
        } else if (img[a] != b) {
            return 0; /* a group split by the shift */
        }
        if (r < u)
            mine[a] = 1;
    }
    for (int r = u; r < N; r++) {
        int a = layout_group_index(g, k, r);
        if (mine[a] && img[a] != a)
            return 0; /* a represented rank's group reaches past them and is not its own copy */
    }
    return 1;
}

int exec_symmetry_unit(const lo_graph *g, const spec_cluster *c, const exec_opts *o)
{
    const int nodes = g->nodes, G = g->gpus_per_node;
    if (o->full || o->jitter > 0 || o->n_stragglers > 0 || o->trace || g->pipelined || c->innet.present ||
        nodes < 2)
        return nodes;
    topo_shape t;
    topo_shape_make(c, nodes, &t);
    int base = 1; /* with a spine, the shift must carry whole pods onto pods */
    if (t.spine) {
        if (nodes % t.npl)
            return nodes;
        base = t.npl;
    }
    int used[N_GROUPS];
    kinds_used(g, used);
    int *scratch = malloc(sizeof(int) * 3 * (size_t)g->n_ranks);
    if (!scratch)
        return -1;
    int unit = nodes;
    for (int u = base; u < nodes && unit == nodes; u += base) {
        if (nodes % u)
            continue;
        int ok = 1;
        for (int k = 0; k < N_GROUPS && ok; k++)
            if (used[k])
                ok = shift_ok(g, (lo_group_kind)k, u * G, scratch);
        if (ok)
            unit = u;
    }
    free(scratch);
    return unit;
}


int exec_pipe_symmetry_unit(const lo_graph *g, const spec_cluster *c, const exec_opts *o)
{
    const int nodes = g->nodes, G = g->gpus_per_node, p = g->pipe.p, t = g->layout.t;
    if (!g->pipelined || o->full || o->jitter > 0 || o->n_stragglers > 0 || o->trace || c->innet.present ||
        p < 1 || t < 1 || g->n_ranks != nodes * G || g->n_ranks % p)
        return nodes;
    const int S = g->n_ranks / p; /* ranks of a stage: t x dp, rank q S + j + i t */
    if (S != t * g->pipe.dp || S % G)
        return nodes; /* a stage that is not whole nodes shares a node with the next */
    const int b = S / G;
    topo_shape sh;
    topo_shape_make(c, nodes, &sh);
    int base = 1; /* with a spine, relabelled pods must be whole pods (net_build_quotient) */
    if (sh.spine) {
        if (nodes % sh.npl)
            return nodes;
        base = sh.npl;
    }
    for (int u = base; u < b; u += base)
        if (b % u == 0 && (u * G) % t == 0)
            return p * u;
    return nodes;
}

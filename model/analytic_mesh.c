/* analytic_mesh.c — a copy's inline collectives per local index on an NVLink mesh (issue 28 item 4,
 * agree34): the groups of one axis inside a node are translates of one shape, and on a hybrid cube
 * mesh they differ (p3dn: AxoNN's y pairs {0,4}, {1,5} have 2 NVLinks, {2,6}, {3,7} one). The
 * recurrence (analytic.c) follows one rank whose every collective runs at its axis's slowest
 * group (cost_group_make); here each local index's own chain of the copy's inline collectives is
 * timed at its own groups' rates, a collective starting when its group's last member is ready
 * (max-plus, as the simulator runs it), which gives (1) the slowest chain any rank waits on (with
 * two axes, max over local indices of the sum of its own groups' times), at most the sum of the
 * per-axis maxima, and (2) how much earlier each other local index ends the copy (its lead), whose network
 * collectives then start on the node's shared NICs before the slowest index's (an_titem.lead,
 * applied in analytic.c). Not here: the recurrence, groups spanning nodes (their intra-node part
 * keeps the slowest translate), chains on several streams or with tails (no lead: unchanged).
 * Which local indices' groups are faster than their axis's slowest is decided once per graph
 * (an_mesh_plan_make: where none is, nothing here runs), and each distinct rate is priced once per
 * collective, not once per local index. */
#include "analytic_mesh.h"

#include <math.h>
#include <string.h>

/* The local indices on node 0 of local index l's group on axis a: the group's members
 * (layout_group_members) where it lies inside a node; spanning nodes, its members on l's node:
 * l alone (stride >= G) or G / stride of them, every stride-th from l % stride. */
static int on_node(const lo_graph *g, int a, int l, int *out)
{
    const int G = g->gpus_per_node, s = g->ax_stride[a];
    if ((long long)s * g->ax_size[a] <= G)
        return layout_group_members(g, (lo_group_kind)(GRP_AX0 + a), l, out);
    int m = s >= G ? 1 : G / s;
    for (int j = 0; j < m; j++)
        out[j] = l % s + j * s;
    return m;
}

void an_mesh_plan_make(const lo_graph *g, const spec_cluster *c, an_mesh_plan *p)
{
    const int G = c->gpus_per_node;
    p->on = 0;
    if (c->fabric.kind != FABRIC_NVLINK_MESH || G > SPEC_MAX_GPUS_PER_NODE)
        return;
    int mem[SPEC_MAX_GPUS_PER_NODE];
    for (int a = 0; a < 4; a++) {
        const cost_group *geo = &g->group[GRP_AX0 + a];
        for (int l = 0; l < G; l++) {
            p->bw[a][l] = 0;
            if (g->ax_size[a] < 2 || geo->k != 1)
                continue; /* one member, or spanning nodes: timed as it is */
            int m = on_node(g, a, l, mem);
            double bw = m < 2 ? 0 : cost_mesh_group_bw(c, mem, m);
            if (bw > geo->intra_bw_Bps) {
                p->bw[a][l] = bw;
                p->on = 1;
            }
        }
    }
}

/* The rates met so far for one collective and its times at them (a group's members share one
 * rate, and the translates of a shape take few values): each rate priced once. */
typedef struct own_seen {
    int n;
    double bw[SPEC_MAX_GPUS_PER_NODE], t[SPEC_MAX_GPUS_PER_NODE];
} own_seen;

/* Inline collective q's time on a local index whose own group's rate is bw (an_mesh_plan; 0:
 * in, the axis's slowest group's time, as q was timed), with the framework's per-call cost as
 * coll_time adds it. */
static double own_time(const lo_graph *g, const cost_calib *cal, const lo_coll *q, double bw, double in,
                       own_seen *seen)
{
    if (bw == 0)
        return in;
    for (int i = 0; i < seen->n; i++)
        if (seen->bw[i] == bw)
            return seen->t[i];
    cost_group own = g->group[q->group];
    own.intra_bw_Bps = bw;
    double tb, t1;
    cost_coll_best_lat_c(cal, q->kind, q->bytes, q->chunks, &own, NULL, &tb, &t1);
    double t = tb + q->chunks * cal->fw_coll_s[g->framework].v;
    seen->bw[seen->n] = bw;
    seen->t[seen->n++] = t;
    return t;
}

/* The chain's end on each local index, all starting at 0 (max-plus, the simulator's rule): a
 * collective starts on a group when its last member is ready and takes that group's time. A
 * group of no strided axis (not known per index) waits for the whole node. */
static void chain_ends(const lo_graph *g, const cost_calib *cal, const spec_cluster *c, const an_mesh_plan *p,
                       const lo_item *it, const an_titem *o, double *end)
{
    const int G = c->gpus_per_node;
    double nx[SPEC_MAX_GPUS_PER_NODE];
    int mem[SPEC_MAX_GPUS_PER_NODE];
    for (int l = 0; l < G; l++)
        end[l] = 0;
    for (int k = 0; k < it->n_inline; k++) {
        const lo_coll *q = &it->inl[k];
        const int a = (int)q->group - GRP_AX0;
        double all = -INFINITY;
        for (int l = 0; l < G; l++)
            all = end[l] > all ? end[l] : all;
        own_seen seen;
        seen.n = 0;
        for (int l = 0; l < G; l++) {
            if (a < 0 || a > 3) {
                nx[l] = all + o->in[k];
                continue;
            }
            int m = on_node(g, a, l, mem);
            double ready = -INFINITY;
            for (int j = 0; j < m; j++)
                ready = end[mem[j]] > ready ? end[mem[j]] : ready;
            nx[l] = ready + own_time(g, cal, q, p->bw[a][l], o->in[k], &seen);
        }
        memcpy(end, nx, (size_t)G * sizeof *end);
    }
}

/* Whether the item's inline collectives form one chain that per-index times can replace: all on
 * one stream, none a tail or an offload transfer. */
static int one_chain(const lo_item *it)
{
    for (int k = 0; k < it->n_inline; k++)
        if (it->inl[k].offload || (it->inline_tail >> k & 1u) || it->inl[k].stream != it->inl[0].stream)
            return 0;
    return it->n_inline > 0;
}

void an_mesh_leads(const lo_graph *g, const cost_calib *cal, const spec_cluster *c, const an_mesh_plan *p,
                   const lo_item *it, an_titem *o)
{
    o->nlead = 0;
    o->igain = 0;
    const int G = c->gpus_per_node;
    if (!p->on || !one_chain(it))
        return;
    double e[SPEC_MAX_GPUS_PER_NODE], sum = 0, emax = -INFINITY;
    for (int k = 0; k < it->n_inline; k++)
        sum += o->in[k];
    chain_ends(g, cal, c, p, it, o, e);
    for (int l = 0; l < G; l++)
        emax = e[l] > emax ? e[l] : emax;
    /* leads: distinct values ascending; lead_f[i] = the fraction of local indices whose lead is
     * at most lead[i] (they start their network work at or after that class) */
    int n = 0;
    for (int l = 0; l < G; l++) {
        double d = emax - e[l];
        int at = 0;
        while (at < n && o->lead[at] < d)
            at++;
        if (at < n && o->lead[at] == d)
            continue;
        if (n == AN_MAX_LEADS)
            return; /* more classes than kept: no lead (the slowest index's timing, as before) */
        memmove(&o->lead[at + 1], &o->lead[at], (size_t)(n - at) * sizeof o->lead[0]);
        o->lead[at] = d;
        n++;
    }
    if (n < 2 && !(emax < sum))
        return; /* every local index alike: nothing changes (bit-identical) */
    for (int i = 0; i < n; i++) {
        int cnt = 0;
        for (int l = 0; l < G; l++)
            cnt += emax - e[l] <= o->lead[i];
        o->lead_f[i] = (double)cnt / G;
    }
    o->nlead = n;
    o->igain = sum - emax > 0 ? sum - emax : 0;
}

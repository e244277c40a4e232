/* cost.c — compute and collective cost functions (see cost.h for the model and its sources). */
#include "cost.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

/* On an NVLink mesh, a ring's per-rank rate is bounded by each member's links to the other
 * members (NCCL builds one ring per usable link direction: sim/coll.c mesh_spread). A member
 * with no direct link relays through a neighbour: half a link. */
static double mesh_group_bw(const spec_cluster *c, const int *locals, int m)
{
    double bw_min = INFINITY;
    for (int i = 0; i < m; i++) {
        int links = 0;
        for (int j = 0; j < m; j++)
            if (i != j)
                links += c->fabric.links[locals[i]][locals[j]];
        double bw = links ? links * c->fabric.link_bw_Bps : 0.5 * c->fabric.link_bw_Bps;
        if (bw < bw_min)
            bw_min = bw;
    }
    return bw_min;
}

/* The slowest of the `concurrent` groups of this shape on a node: the translates of locals
 * that tile the node's GPUs, each starting at the lowest GPU not yet in one (block groups
 * {0,1}, {2,3}, ...; strided {0,4}, {1,5}, ...). A mesh's pairs differ ({0,4}: 2 links, {2,6}:
 * 1 on p3dn), and the step waits for the slowest group. Shapes that do not tile this way keep
 * the given group's rate. */
static double mesh_bw(const spec_cluster *c, const int *locals, int m, int concurrent)
{
    int G = c->gpus_per_node, in[SPEC_MAX_GPUS_PER_NODE] = {0}, tr[SPEC_MAX_GPUS_PER_NODE];
    double bw = mesh_group_bw(c, locals, m);
    if (concurrent <= 1 || (long long)concurrent * m > G)
        return bw;
    double slowest = INFINITY;
    for (int start = 0, made = 0; start < G && made < concurrent; start++) {
        if (in[start])
            continue;
        for (int i = 0; i < m; i++) {
            tr[i] = locals[i] - locals[0] + start;
            if (tr[i] < 0 || tr[i] >= G || in[tr[i]])
                return bw;
            in[tr[i]] = 1;
        }
        double b = mesh_group_bw(c, tr, m);
        slowest = b < slowest ? b : slowest;
        made++;
    }
    return slowest < bw ? slowest : bw;
}

double cost_mesh_group_bw(const spec_cluster *c, const int *locals, int m)
{
    return c->fabric.kind == FABRIC_NVLINK_MESH && m > 1 ? mesh_group_bw(c, locals, m) : 0;
}

void cost_group_make(const spec_cluster *c, int k, const int *locals, int m, int concurrent, cost_group *g)
{
    memset(g, 0, sizeof *g);
    g->k = k;
    g->m = m;
    g->n = k * m;
    g->concurrent = concurrent > 0 ? concurrent : 1;
    g->intra_tier = c->fabric.kind == FABRIC_PCIE ? TIER_PCIE : TIER_NVLINK;
    g->intra_bw_Bps = INFINITY;
    if (m > 1) {
        switch (c->fabric.kind) {
        case FABRIC_NVSWITCH: g->intra_bw_Bps = c->fabric.links_per_gpu * c->fabric.link_bw_Bps; break;
        case FABRIC_PCIE: g->intra_bw_Bps = c->pcie_bw_Bps; break;
        case FABRIC_NVLINK_MESH: g->intra_bw_Bps = mesh_bw(c, locals, m, g->concurrent); break;
        }
    }
    g->inter_bw_Bps = INFINITY;
    g->leaf_factor = 1.0;
    if (k > 1) {
        /* The node's NICs are shared by the groups of this shape running at once on it. */
        g->inter_bw_Bps = c->nics_per_node * c->nic_bw_Bps / g->concurrent;
        cost_group_spread(c, 1, g);
    }
}

/* ---- the network between nodes (sim/net.c builds the same switches and links) ----------- */
double cost_net_global_frac(const spec_cluster *c)
{
    /* Dragonfly (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable Dragonfly
     * Topology", ISCA 2008, s4): a ring's traffic is the adversarial pattern (every node of
     * group i sends to group i+1). Minimal routing has only the direct i -> i+1 global links;
     * adaptive routing (UGAL, what Slingshot does) sends it through a random intermediate group
     * (Valiant), so each byte crosses two global links and a group's global links carry half
     * their capacity of it. With two groups all global links join them: no penalty. */
    if (c->topology != NET_DRAGONFLY)
        return 1.0;
    return c->max_nodes > 0 && c->max_nodes <= 2 * c->nodes_per_leaf ? 1.0 : 0.5;
}

double cost_net_uplink_nics(const spec_cluster *c)
{
    /* fat-tree leaf: nodes_per_leaf nodes x all their NICs down; rail leaf: one NIC (its rail)
     * of each of the pod's nodes_per_leaf nodes; dragonfly group: its nodes' NICs, out over
     * the global links. Up = down / oversubscription (x the dragonfly's global fraction). */
    double down = (double)c->nodes_per_leaf * (c->topology == NET_RAIL ? 1 : c->nics_per_node);
    return down / c->oversubscription * cost_net_global_frac(c);
}

void cost_group_spread(const spec_cluster *c, int node_stride, cost_group *g)
{
    g->leaf_factor = 1.0;
    if (g->k <= 1 || g->transport != XPORT_NCCL)
        return;
    /* Groups of this shape tile the nodes: each group's nodes are node_stride apart, a ring in
     * node order, all groups at once. A leaf (rail leaf, dragonfly group) of npl nodes: if a
     * group spans leaves, each ring offset present in the leaf sends one node's stream out of
     * it (its edge to the next leaf; the last leaf's is the ring's wrap-around), i.e.
     * min(stride, npl) node streams through the leaf's uplinks, which carry npl node streams /
     * oversubscription (x the dragonfly's global fraction). A rail leaf carries one NIC of
     * each: the same ratio. NCCL keeps a ring channel on one rail (search.cc, crossNic), so a
     * rail network is this with leaf = the pod. Tree all-reduce is costed on the same edges. */
    int npl = c->nodes_per_leaf, s = node_stride < 1 ? 1 : node_stride;
    if (s < npl && (long long)g->k * s <= npl)
        return; /* the group stays under one leaf */
    int streams = s < npl ? s : npl;
    double f = (double)npl / c->oversubscription * cost_net_global_frac(c) / streams;
    if (f < 1)
        g->leaf_factor = f;
}

void cost_group_host(const spec_cluster *c, cost_group *g)
{
    memset(g, 0, sizeof *g);
    g->n = g->k = g->m = g->concurrent = 1;
    g->transport = XPORT_HOST;
    g->intra_tier = TIER_PCIE;
    g->intra_bw_Bps = c->pcie_bw_Bps;
    g->inter_bw_Bps = INFINITY;
    g->leaf_factor = 1.0;
}

void cost_group_innet(const spec_cluster *c, int nodes, int update, double elem_bytes, cost_group *g)
{
    memset(g, 0, sizeof *g);
    g->k = nodes;
    g->m = c->gpus_per_node;
    g->n = nodes * c->gpus_per_node;
    g->concurrent = 1;
    g->transport = XPORT_INNET;
    g->intra_tier = TIER_NET;
    g->intra_bw_Bps = INFINITY;
    g->inter_bw_Bps = c->nics_per_node * c->nic_bw_Bps; /* one node's NICs, shared by its m GPUs */
    g->leaf_factor = 1.0;
    g->port_bw_Bps = c->innet.port_bw_Bps;
    g->multicast = c->innet.multicast;
    g->aggregation = c->innet.aggregation;
    g->update_Bps = update ? c->innet.opt_params_per_s * elem_bytes : 0;
}

void cost_group_nvme(const spec_cluster *c, int via_gpu, cost_group *g)
{
    cost_group_host(c, g);
    g->transport = XPORT_NVME;
    g->via_gpu = via_gpu;
    g->intra_bw_Bps = via_gpu ? c->pcie_bw_Bps : INFINITY;
    g->concurrent = c->gpus_per_node; /* every GPU of the node fetches its own shard at once */
    g->nvme_read_Bps = c->nvme_read_Bps;
    g->nvme_write_Bps = c->nvme_write_Bps;
}

/* Host / in-network transports: one direction (fetch or push) of S bytes per member. The
 * slowest of: a node's NICs carrying its m members' copies, the optimizer node's port carrying
 * 1 or n copies, and (push with update) the node's optimizer consuming S; PCIe for the host. */
static double xport_dir_time(const cost_calib *cal, const cost_group *g, int push, double S)
{
    if (g->transport == XPORT_HOST)
        return S / (g->intra_bw_Bps * cal->bw_eff[TIER_PCIE].v);
    if (g->transport == XPORT_NVME) {
        /* staged through pinned host buffers (DeepSpeed buffer_count): the slower of the GPU's
         * PCIe link and its share of the node's drives; the drives' rates are sustained ones */
        double pcie = g->via_gpu ? g->intra_bw_Bps * cal->bw_eff[TIER_PCIE].v : INFINITY;
        double nvme = (push ? g->nvme_write_Bps : g->nvme_read_Bps) / g->concurrent;
        return S / (pcie < nvme ? pcie : nvme);
    }
    double eff = cal->bw_eff[TIER_NET].v;
    int one = push ? g->aggregation : g->multicast;
    double t = g->m * S / (g->inter_bw_Bps * eff);
    double port = (one ? 1 : g->n) * S / (g->port_bw_Bps * eff);
    if (port > t)
        t = port;
    if (push && g->update_Bps > 0 && S / g->update_Bps > t)
        t = S / g->update_Bps;
    return t;
}

static double xport_latency(const cost_calib *cal, const cost_group *g, cost_coll kind, int chunks)
{
    /* one DMA (PCIe hop) or one network hop to the optimizer node per direction */
    double hop = cal->hop_lat_s[g->transport == XPORT_INNET ? TIER_NET : TIER_PCIE].v;
    return (chunks < 1 ? 1 : chunks) * (kind == COLL_ALLREDUCE ? 2 : 1) * hop;
}

static double xport_time(const cost_calib *cal, const cost_group *g, cost_coll kind, double S, int chunks)
{
    if (S <= 0)
        return 0;
    double t = xport_latency(cal, g, kind, chunks);
    if (kind != COLL_REDUCESCATTER)
        t += xport_dir_time(cal, g, 0, S);
    if (kind != COLL_ALLGATHER)
        t += xport_dir_time(cal, g, 1, S);
    return t;
}

double cost_group_busbw(const cost_calib *cal, const cost_group *g)
{
    double intra = g->intra_bw_Bps * cal->bw_eff[g->intra_tier].v;
    double inter = g->inter_bw_Bps * cal->bw_eff[TIER_NET].v * g->leaf_factor;
    return intra < inter ? intra : inter;
}

/* ---- NCCL's algorithms and protocols (model/nccl.c) --------------------------------------- */
static void nccl_shape_of(const cost_calib *cal, cost_coll kind, const cost_group *g, nccl_shape *s)
{
    s->kind = (int)kind;
    s->n = g->n;
    s->k = g->k;
    s->m = g->m;
    s->intra_Bps = g->intra_bw_Bps * cal->bw_eff[g->intra_tier].v;
    s->net_Bps = g->inter_bw_Bps * cal->bw_eff[TIER_NET].v * g->leaf_factor;
}

static int nccl_code(cost_algo algo, nccl_algo *a, nccl_proto *p)
{
    int c = (int)algo - COST_ALGO_NCCL_BASE;
    if (c < 0 || c >= NCCL_N_ALGOS * NCCL_N_PROTOS) {
        *a = algo == ALGO_TREE ? NCCL_TREE : NCCL_RING;
        *p = NCCL_SIMPLE;
        return 0;
    }
    *a = (nccl_algo)(c / NCCL_N_PROTOS);
    *p = (nccl_proto)(c % NCCL_N_PROTOS);
    return 1;
}

/* The NCCL shape of a collective over g and the algorithm / protocol algo names (ring / Simple,
 * tree / Simple for the plain codes): what cost_coll_latency, _edge_bytes and _time ask of NCCL's
 * model, taken in one place. */
typedef struct nccl_ask {
    nccl_shape s;
    nccl_algo a;
    nccl_proto p;
} nccl_ask;
static inline nccl_ask nccl_of(const cost_calib *cal, cost_coll kind, cost_algo algo, const cost_group *g)
{
    nccl_ask q;
    nccl_shape_of(cal, kind, g, &q.s);
    nccl_code(algo, &q.a, &q.p);
    return q;
}

const char *cost_algo_name(cost_algo algo, char *buf, int n)
{
    nccl_algo a;
    nccl_proto p;
    if (nccl_code(algo, &a, &p))
        snprintf(buf, (size_t)n, "%s/%s", nccl_algo_name(a), nccl_proto_name(p));
    else
        snprintf(buf, (size_t)n, "%s", algo == ALGO_TREE ? "tree" : "ring");
    return buf;
}

/* A collective issued as `chunks` equal pieces: each piece is its own NCCL call. */
static double piece(double bytes, int chunks) { return chunks > 1 ? bytes / chunks : bytes; }

/* The plain model's latency of one piece over g (n > 1, NCCL transport, NCCL model off). */
static double plain_latency(const cost_calib *cal, cost_coll kind, cost_algo algo, const cost_group *g)
{
    double intra_lat = cal->hop_lat_s[g->intra_tier].v, inter_lat = cal->hop_lat_s[TIER_NET].v, lat;
    if (algo == ALGO_TREE && kind == COLL_ALLREDUCE && g->k > 1) {
        /* NCCL tree all-reduce: up and down a chain inside each node and a double binary tree
         * across nodes: baseLat + 2((ppn-1) intraLat + log2(nNodes) interLat) (tuning.cc). */
        int log2k = 0; /* NCCL's log2i: floor(log2(nNodes)) */
        for (int q = g->k; q >>= 1;)
            log2k++;
        lat = cal->base_lat_s[ALGO_TREE].v + 2 * ((g->m - 1) * intra_lat + log2k * inter_lat);
    } else {
        /* Ring: n-1 steps (2(n-1) for all-reduce). NCCL's ring is pipelined: every step's chunk
         * is in flight on every edge at once, so across nodes each step ends when the slowest
         * hop (the network's) has delivered, as model/nccl.c counts it by default. tuning.cc
         * counts only k-1 (2(k-1)) steps at the network hop; public nccl-tests at 16-32 p5
         * nodes reject that (docs/COLLECTIVES.md: a 32 and a 64 MiB all-gather both take 2.7 ms
         * at 32 x 8 ranks, ~10.5 us for each of the 255 steps). Inside a node: the NVLink hop. */
        int mult = kind == COLL_ALLREDUCE ? 2 : 1;
        double slow = g->k > 1 && inter_lat > intra_lat ? inter_lat : intra_lat;
        lat = cal->base_lat_s[ALGO_RING].v + mult * (g->n - 1) * slow;
    }
    return lat;
}

double cost_coll_latency(const cost_calib *cal, cost_coll kind, cost_algo algo, int chunks, const cost_group *g)
{
    if (g->transport != XPORT_NCCL)
        return xport_latency(cal, g, kind, chunks);
    if (g->n <= 1)
        return 0;
    if (cal->nccl.on) {
        const nccl_ask q = nccl_of(cal, kind, algo, g);
        return (chunks < 1 ? 1 : chunks) * nccl_latency(&cal->nccl, &q.s, q.a, q.p);
    }
    return (chunks < 1 ? 1 : chunks) * plain_latency(cal, kind, algo, g);
}

double cost_p2p_latency(const cost_calib *cal, const cost_group *pair)
{
    /* a 2-rank ring all-gather is one step: base + one hop (+ the floor across nodes) */
    cost_algo a = cal->nccl.on ? cost_algo_nccl(NCCL_RING, NCCL_SIMPLE) : ALGO_RING;
    return cost_coll_latency(cal, COLL_ALLGATHER, a, 1, pair);
}

/* The plain model's bytes over the busiest edge (NCCL transport, NCCL model off). */
static double plain_edge(const cost_calib *cal, cost_coll kind, cost_algo algo, double bytes, const cost_group *g)
{
    double b = cost_busbw_factor(kind, g->n) * bytes;
    if (algo == ALGO_TREE && kind == COLL_ALLREDUCE && g->k > 1)
        b /= cal->tree_bw_factor.v;
    return b;
}

double cost_coll_edge_bytes(const cost_calib *cal, cost_coll kind, cost_algo algo, double bytes, const cost_group *g)
{
    if (g->transport != XPORT_NCCL)
        return cost_rank_bytes(kind, g, bytes);
    if (cal->nccl.on) {
        const nccl_ask q = nccl_of(cal, kind, algo, g);
        return nccl_edge_bytes(&cal->nccl, &q.s, q.a, q.p, bytes);
    }
    return plain_edge(cal, kind, algo, bytes, g);
}

double cost_coll_edge_bytes_n(const cost_calib *cal, cost_coll kind, cost_algo algo, double bytes, int chunks,
                              const cost_group *g)
{
    if (chunks <= 1 || !cal->nccl.on || g->transport != XPORT_NCCL)
        return cost_coll_edge_bytes(cal, kind, algo, bytes, g);
    return chunks * cost_coll_edge_bytes(cal, kind, algo, bytes / chunks, g);
}

double cost_coll_time(const cost_calib *cal, cost_coll kind, cost_algo algo, double bytes, int chunks,
                      const cost_group *g)
{
    if (g->transport != XPORT_NCCL)
        return xport_time(cal, g, kind, bytes, chunks);
    if (g->n <= 1 || bytes <= 0)
        return 0;
    if (cal->nccl.on) {
        const nccl_ask q = nccl_of(cal, kind, algo, g);
        return (chunks < 1 ? 1 : chunks) * nccl_time(&cal->nccl, &q.s, q.a, q.p, piece(bytes, chunks));
    }
    return cost_coll_latency(cal, kind, algo, chunks, g) +
           cost_coll_edge_bytes(cal, kind, algo, bytes, g) / cost_group_busbw(cal, g);
}

double cost_coll_best(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g,
                      cost_algo *chosen)
{
    /* a run pinned with NCCL_ALGO (nccl.h pin_algo) takes that algorithm where it applies */
    int force = cal->nccl.pin_algo > 0 && cal->nccl.pin_algo <= NCCL_N_ALGOS ? cal->nccl.pin_algo - 1 : -1;
    return cost_coll_pick(cal, kind, bytes, chunks, g, force, chosen);
}

double cost_coll_pick(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g, int force,
                      cost_algo *chosen)
{
    if (!cal->nccl.on && force >= 0 && g->transport == XPORT_NCCL) {
        cost_algo a = force == 1 && kind == COLL_ALLREDUCE && g->k > 1 ? ALGO_TREE : ALGO_RING;
        if (chosen)
            *chosen = a;
        return cost_coll_time(cal, kind, a, bytes, chunks, g);
    }
    if (cal->nccl.on && g->transport == XPORT_NCCL) {
        nccl_shape s;
        nccl_algo na;
        nccl_proto np;
        nccl_shape_of(cal, kind, g, &s);
        double t = g->n > 1 && bytes > 0 ? nccl_best_of(&cal->nccl, &s, piece(bytes, chunks), force, &na, &np) : 0;
        if (g->n <= 1 || bytes <= 0)
            na = NCCL_RING, np = NCCL_SIMPLE;
        if (chosen)
            *chosen = cost_algo_nccl(na, np);
        return (chunks < 1 ? 1 : chunks) * t;
    }
    double ring = cost_coll_time(cal, kind, ALGO_RING, bytes, chunks, g);
    cost_algo a = ALGO_RING;
    double best = ring;
    if (kind == COLL_ALLREDUCE && g->k > 1 && g->transport == XPORT_NCCL) {
        double tree = cost_coll_time(cal, kind, ALGO_TREE, bytes, chunks, g);
        if (tree < ring) {
            best = tree;
            a = ALGO_TREE;
        }
    }
    if (chosen)
        *chosen = a;
    return best;
}

void cost_coll_best_lat(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g,
                        double *t, double *t_one)
{
    cost_coll_best_lat_c(cal, kind, bytes, chunks, g, NULL, t, t_one);
}

/* The cache's entry for (kind, g), made (its shape's tables taken) if new; NULL when full. */
static int cc_entry(const cost_calib *cal, cost_coll kind, const cost_group *g, cost_coll_cache *cc)
{
    for (int i = 0; i < cc->n; i++)
        if (cc->e[i].g == g && cost_coll_class((cost_coll)cc->e[i].kind, g) == cost_coll_class(kind, g))
            return i; /* an all-gather's table serves a reduce-scatter on g (cost_coll_class) */
    if (cc->n == COST_CC_N)
        return -1;
    if (cc->n == 0) /* a new cache: its powers too */
        cc->pm.used = 0;
    const int i = cc->n++;
    cc->e[i].g = g;
    cc->e[i].kind = (int)kind;
    cc->e[i].chunks = -1; /* no 1-byte time yet: not a piece count (0 is one: one piece) */
    nccl_shape_of(cal, kind, g, &cc->e[i].s);
    nccl_tab_of(&cal->nccl, &cc->e[i].s, &cc->e[i].tab);
    return i;
}

/* cost_coll_best at `bytes` and at 1 byte in the plain model (NCCL transport, NCCL model off,
 * no pinned algorithm), the latencies and the bandwidth taken once: cost_coll_pick's choice
 * (ring, or tree where it is faster for a multi-node all-reduce) over cost_coll_time's
 * latency + edge bytes / bandwidth, operation for operation, so the same bits. */
static void plain_best_lat(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g,
                           double *t, double *t_one)
{
    if (g->n <= 1) {
        *t = *t_one = 0;
        return;
    }
    const int n = chunks < 1 ? 1 : chunks, tree = kind == COLL_ALLREDUCE && g->k > 1;
    const double bw = cost_group_busbw(cal, g), lr = n * plain_latency(cal, kind, ALGO_RING, g),
                 lt = tree ? n * plain_latency(cal, kind, ALGO_TREE, g) : 0;
    for (int i = 0; i < 2; i++) {
        const double S = i ? 1 : bytes;
        double best = 0;
        if (S > 0) {
            best = lr + plain_edge(cal, kind, ALGO_RING, S, g) / bw;
            const double tt = tree ? lt + plain_edge(cal, kind, ALGO_TREE, S, g) / bw : best;
            best = tt < best ? tt : best;
        }
        *(i ? t_one : t) = best;
    }
}

void cost_coll_best_lat_c(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g,
                          cost_coll_cache *cc, double *t, double *t_one)
{
    if (!cal->nccl.on && cal->nccl.pin_algo <= 0 && g->transport == XPORT_NCCL) {
        plain_best_lat(cal, kind, bytes, chunks, g, t, t_one);
        return;
    }
    /* a pinned NCCL_ALGO (nccl.h pin_algo) goes through cost_coll_best, which honours it */
    if (!(cal->nccl.on && g->transport == XPORT_NCCL && g->n > 1 && bytes > 0) || cal->nccl.pin_algo > 0) {
        *t = cost_coll_best(cal, kind, bytes, chunks, g, NULL);
        *t_one = cost_coll_best(cal, kind, 1, chunks, g, NULL);
        return;
    }
    const int i = cc ? cc_entry(cal, kind, g, cc) : -1;
    const double n = chunks < 1 ? 1 : chunks;
    if (i < 0) {
        nccl_shape s;
        nccl_shape_of(cal, kind, g, &s);
        double a, b;
        nccl_best_pair(&cal->nccl, &s, piece(bytes, chunks), piece(1, chunks), &a, &b);
        *t = n * a;
        *t_one = n * b;
        return;
    }
    const nccl_shape *s = &cc->e[i].s;
    const nccl_tab *tab = &cc->e[i].tab;
    *t = n * nccl_best_tab_m(&cal->nccl, s, tab, piece(bytes, chunks), &cc->pm);
    if (cc->e[i].chunks != chunks) { /* the 1-byte time depends on the shape and the pieces only */
        cc->e[i].chunks = chunks;
        cc->e[i].one = n * nccl_best_tab_m(&cal->nccl, s, tab, piece(1, chunks), &cc->pm);
    }
    *t_one = cc->e[i].one;
}

const kern_calib *cost_kern(const cost_calib *cal, const spec_cluster *c, kern_calib *tmp)
{
    if (cal->kern.gemm_eff > 0)
        return &cal->kern;
    kern_defaults(c->gpu.arch, tmp);
    return tmp;
}

/* ---- the roofline of calibrations without kernel models (fitted by `shardcast calibrate`,
 * hand-made in tests): each GEMM overhead + FLOPs over m and n rounded to whole gemm_tile
 * tiles / (peak x gemm_eff), at least its bytes / (HBM x hbm_eff); element-wise work = the
 * stored activations written and read once; backward = 2x forward. ------------------------ */
static double roof_gemm(const cost_calib *cal, const spec_cluster *c, const wl_gemm *g, double elem_bytes)
{
    double m = g->m, n = g->n, tile = cal->gemm_tile.v;
    if (tile > 0) {
        m = ceil(m / tile) * tile;
        n = ceil(n / tile) * tile;
    }
    double flops = 2.0 * m * n * g->k * g->batch;
    double t_flop = cal->gemm_overhead_s.v + flops / (c->gpu.peak_flops * cal->gemm_eff.v);
    double bytes = (g->m * g->k + g->k * g->n + g->m * g->n) * g->batch * elem_bytes;
    double t_mem = bytes / (c->gpu.hbm_bw_Bps * cal->hbm_eff.v);
    return t_flop > t_mem ? t_flop : t_mem;
}

static double roof_fwd(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes)
{
    double t = 2.0 * l->act_bytes / (c->gpu.hbm_bw_Bps * cal->hbm_eff.v);
    for (int i = 0; i < l->n_gemm; i++)
        t += roof_gemm(cal, c, &l->gemm[i], elem_bytes);
    if (l->kind == WL_EMBED) /* a gather of rows: memory-bound */
        t += l->fwd_hbm_bytes / (c->gpu.hbm_bw_Bps * cal->hbm_eff.v);
    return t;
}

static double hbm_rate(const cost_calib *cal, const spec_cluster *c)
{
    return c->gpu.hbm_bw_Bps * cal->hbm_eff.v;
}

double cost_gemm_time(const cost_calib *cal, const spec_cluster *c, const wl_gemm *g, double elem_bytes)
{
    if (cal->kern.gemm_eff == 0)
        return roof_gemm(cal, c, g, elem_bytes);
    kern_calib tmp;
    const kern_calib *k = cost_kern(cal, c, &tmp);
    kern_dtype d = elem_bytes >= 4 ? KD_FP32 : KD_BF16;
    return kern_gemm_time(k, c, d, g->m, g->n, g->k, g->batch, elem_bytes, hbm_rate(cal, c));
}

static int is_core(const wl_gemm *g) { return wl_role_core(g->role); }

/* tc_align8 (dsv37): with cuBLAS before 11.0 a 16-bit GEMM uses the tensor cores only when its
 * m, n and k are multiples of 8 (NVIDIA, "Matrix Multiplication Background User's Guide" s2.2
 * "Tensor Core Requirements": cuBLAS < 11.0, FP16: multiples of 8; from 11.0 any size). PyTorch
 * 1.x calls cublasGemmEx / cublasGemmStridedBatchedEx on fp16 data with CUDA_R_32F compute
 * (aten/src/THC/THCBlas.cu THCudaBlas_HgemmStridedBatched), so the other path is FP32 FMA math
 * at the FP32 rate: priced as that math's GEMM (kernels.c, FP32 efficiency). A backward GEMM
 * permutes the same three sizes, so the forward GEMM decides all three. */
static int tc_misaligned(const wl_layer *l, const wl_gemm *g, kern_dtype d)
{
    if (!l->tc_align8 || (d != KD_FP16 && d != KD_BF16))
        return 0;
    return fmod(g->m, 8) != 0 || fmod(g->n, 8) != 0 || fmod(g->k, 8) != 0;
}

/* The math of a GEMM: the layer's for linear layers; attention's core in 16-bit (fp32 in
 * fp32 training), as FP8 recipes keep attention in bf16 (Transformer Engine). */
static kern_dtype gemm_math(const wl_layer *l, const wl_gemm *g, double elem_bytes)
{
    kern_dtype d = (kern_dtype)l->gemm_dtype;
    if (is_core(g) && d == KD_FP8)
        return KD_BF16;
    if (elem_bytes >= 4 && d != KD_TF32)
        return KD_FP32;
    if (tc_misaligned(l, g, d))
        return KD_FP32;
    return d;
}

/* The GEMM times one layer's three costs ask for, kept for the one call of cost_layer_times
 * (a local table, no state between calls): a layer's backward repeats forward shapes (the
 * data gradient of fc2 is fc1's forward, of the projection its own forward; wgrads of fc1 and
 * fc2 are one shape transposed) and full checkpointing repeats the whole forward. A GEMM's
 * time depends on (math, m, n, k, batch) only, here with element bytes and HBM rate fixed
 * for the call, and is the same bits for (n, m, k) as for (m, n, k): kern_gemm_time's tile set
 * and byte count are symmetric in m and n (tests/test_kernels.c checks it). NULL: no table. */
#define GEMM_MEMO 16 /* slots, a power of two: direct-mapped by the larger edge and K */
typedef struct gemm_memo {
    unsigned used;               /* bit i: slot i holds a time */
    kern_dtype d[GEMM_MEMO];
    double key[GEMM_MEMO][4], t[GEMM_MEMO];
    cost_gemm_rates *r;          /* the GPU's rate in each math, taken at its first GEMM */
} gemm_memo;

static inline double gemm_t(gemm_memo *gm, const kern_calib *k, const spec_cluster *c, kern_dtype d, double m, double n,
                     double kk, double batch, double eb, double hbm)
{
    if (!gm)
        return kern_gemm_time(k, c, d, m, n, kk, batch, eb, hbm);
    double lo = m < n ? m : n, hi = m < n ? n : m;
    /* one slot by the larger edge and K (they tell a layer's shapes apart, the smaller edge, the
     * tokens, mostly does not); a slot taken by another shape keeps it, the new one is timed
     * each time it is asked (the same bits: a kept time is the call's own) */
    uint64_t hb, kb;
    memcpy(&hb, &hi, sizeof hb);
    memcpy(&kb, &kk, sizeof kb);
    const unsigned i = (unsigned)(((hb ^ kb * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull) >> 60);
    const int used = gm->used >> i & 1u;
    if (used && gm->key[i][1] == hi && gm->key[i][2] == kk && gm->key[i][0] == lo && gm->key[i][3] == batch &&
        gm->d[i] == d)
        return gm->t[i];
    cost_gemm_rates *r = gm->r;
    if (!(r->rated & 1u << d)) {
        kern_gemm_rate_of(k, c, d, &r->rate[d]);
        r->rated |= 1u << d;
    }
    double t = kern_gemm_time_r(&r->rate[d], m, n, kk, batch, eb, hbm);
    if (!used) {
        gm->used |= 1u << i;
        gm->d[i] = d;
        gm->key[i][0] = lo;
        gm->key[i][1] = hi;
        gm->key[i][2] = kk;
        gm->key[i][3] = batch;
        gm->t[i] = t;
    }
    return t;
}

/* Attention's core of one copy unfused, forward (bwd = 0) or backward, from its scores and context
 * GEMMs. */
static double core_of(gemm_memo *gm, const kern_calib *k, const cost_calib *cal, const spec_cluster *c,
                      const wl_layer *l, double eb, const wl_gemm *sc, const wl_gemm *cx, int bwd)
{
    double t = 0, hbm = hbm_rate(cal, c);
    const wl_gemm *gs[2] = {sc, cx};
    for (int i = 0; i < 2; i++) {
        const wl_gemm *g = gs[i];
        kern_dtype d = gemm_math(l, g, eb);
        if (!bwd)
            t += gemm_t(gm, k, c, d, g->m, g->n, g->k, g->batch, eb, hbm);
        else /* dA = dC B^T [m x k], dB = A^T dC [k x n] */
            t += gemm_t(gm, k, c, d, g->m, g->k, g->n, g->batch, eb, hbm) +
                 gemm_t(gm, k, c, d, g->k, g->n, g->m, g->batch, eb, hbm);
    }
    return t;
}

/* Attention's core of one copy: forward into *fwd, backward into *bwd (NULL: not asked); 0
 * without a core. */
static void core_times(gemm_memo *gm, const kern_calib *k, const cost_calib *cal, const spec_cluster *c,
                       const wl_layer *l, double eb, double *fwd, double *bwd)
{
    const wl_gemm *sc = NULL, *cx = NULL;
    for (int i = 0; i < l->n_gemm; i++) { /* as is_core */
        if (l->gemm[i].role == WL_G_SCORES)
            sc = &l->gemm[i];
        if (l->gemm[i].role == WL_G_CONTEXT)
            cx = &l->gemm[i];
    }
    if (sc && cx && l->flash && eb < 4) { /* fused: bh = scores' batch, s = its m, head dim = its k */
        kern_attn_times(k, c, l->flash == 3 ? AK_FA3 : l->attn_kernel, sc->batch, sc->m, sc->k, l->causal, fwd, bwd);
        return;
    }
    if (fwd)
        *fwd = sc && cx ? core_of(gm, k, cal, c, l, eb, sc, cx, 0) : 0;
    if (bwd)
        *bwd = sc && cx ? core_of(gm, k, cal, c, l, eb, sc, cx, 1) : 0;
}

/* Attention's core of one copy, forward (bwd = 0) or backward. */
static double core_time(gemm_memo *gm, const kern_calib *k, const cost_calib *cal, const spec_cluster *c,
                        const wl_layer *l, double eb, int bwd)
{
    double t;
    core_times(gm, k, cal, c, l, eb, bwd ? NULL : &t, bwd ? &t : NULL);
    return t;
}

/* A linear layer's forward GEMM (dgrad = 0: [m x n] from k) or its data gradient (dgrad = 1:
 * [m x k] from n) as it runs. Where Transformer Engine's userbuffers split it into
 * wl_ub_chunks(l, g, dgrad) > 1 GEMMs of m / chunks (workload.h), the whole GEMM's time x the
 * measured chunk factor (kernels.h kern_gemm_chunk_factor: chunks one after another; the lent
 * H200 found TE's three streams no faster than one, docs/COMPUTE.md). FP8 the same. */
static inline double lin_gemm_t(gemm_memo *gm, const kern_calib *k, const spec_cluster *c, const wl_layer *l,
                         const wl_gemm *g, kern_dtype d, int dgrad, double eb, double hbm)
{
    const int ch = wl_ub_chunks(l, g, dgrad);
    const double t = dgrad ? gemm_t(gm, k, c, d, g->m, g->k, g->n, g->batch, eb, hbm)
                           : gemm_t(gm, k, c, d, g->m, g->n, g->k, g->batch, eb, hbm);
    return ch > 1 ? t * kern_gemm_chunk_factor(c, g->m / ch) : t;
}

/* The linear GEMMs of one copy: forward into *fwd, backward (data and weight gradients) into
 * *bwd; NULL: not asked. One pass over the GEMMs, each side summed in the GEMMs' order. */
static void linear_times(gemm_memo *gm, const kern_calib *k, const cost_calib *cal, const spec_cluster *c,
                         const wl_layer *l, double eb, double *fwd, double *bwd)
{
    double tf = 0, tb = 0, hbm = hbm_rate(cal, c);
    for (int i = 0; i < l->n_gemm; i++) {
        const wl_gemm *g = &l->gemm[i];
        if (is_core(g))
            continue;
        kern_dtype d = gemm_math(l, g, eb);
        if (fwd)
            tf += lin_gemm_t(gm, k, c, l, g, d, 0, eb, hbm);
        if (bwd) /* the weight gradient [k x n] from m runs whole */
            tb += lin_gemm_t(gm, k, c, l, g, d, 1, eb, hbm) + gemm_t(gm, k, c, d, g->k, g->n, g->m, g->batch, eb, hbm);
    }
    if (fwd)
        *fwd = tf;
    if (bwd)
        *bwd = tb;
}

/* A layer's forward into *fwd and backward into *bwd (NULL: not asked), from one pass over its
 * GEMMs and one look for its attention core: the same sums as asking each alone. */
static void layer_times(gemm_memo *gm, const cost_calib *cal, const spec_cluster *c, const wl_layer *l,
                        double elem_bytes, double *fwd, double *bwd)
{
    if (cal->kern.gemm_eff == 0) { /* the roofline: each forward GEMM becomes a data- and a weight-gradient GEMM */
        const double f = roof_fwd(cal, c, l, elem_bytes);
        if (fwd)
            *fwd = f;
        if (bwd)
            *bwd = 2.0 * f;
        return;
    }
    kern_calib tmp;
    const kern_calib *k = cost_kern(cal, c, &tmp);
    double hbm = hbm_rate(cal, c), lf, lb, cf, cb;
    linear_times(gm, k, cal, c, l, elem_bytes, fwd ? &lf : NULL, bwd ? &lb : NULL);
    core_times(gm, k, cal, c, l, elem_bytes, fwd ? &cf : NULL, bwd ? &cb : NULL);
    if (fwd) {
        *fwd = lf + cf + kern_mem_time(k, l->ew_fwd_bytes, l->ew_fwd_kernels, hbm);
        if (l->kind == WL_EMBED) /* a gather of rows: memory-bound */
            *fwd += kern_mem_time(k, l->fwd_hbm_bytes, 1, hbm);
    }
    if (bwd) {
        *bwd = lb + cb + kern_mem_time(k, l->ew_bwd_bytes, l->ew_bwd_kernels, hbm);
        if (l->kind == WL_EMBED) /* gradient rows scattered (read + add + write) */
            *bwd += kern_mem_time(k, 2 * l->fwd_hbm_bytes, 1, hbm);
    }
}

static double layer_fwd(gemm_memo *gm, const cost_calib *cal, const spec_cluster *c, const wl_layer *l,
                        double elem_bytes)
{
    double t;
    layer_times(gm, cal, c, l, elem_bytes, &t, NULL);
    return t;
}

static double layer_bwd(gemm_memo *gm, const cost_calib *cal, const spec_cluster *c, const wl_layer *l,
                        double elem_bytes)
{
    double t;
    layer_times(gm, cal, c, l, elem_bytes, NULL, &t);
    return t;
}

double cost_layer_gemm_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, wl_gemm_role role,
                            int grad, double elem_bytes)
{
    const wl_gemm *g = NULL;
    for (int i = 0; i < l->n_gemm && !g; i++)
        if (l->gemm[i].role == role)
            g = &l->gemm[i];
    if (!g || is_core(g))
        return 0;
    if (cal->kern.gemm_eff == 0) /* the roofline prices a data gradient as its forward (layer_bwd) */
        return roof_gemm(cal, c, g, elem_bytes);
    kern_calib tmp;
    const kern_calib *k = cost_kern(cal, c, &tmp);
    const kern_dtype d = gemm_math(l, g, elem_bytes);
    if (grad == 2) /* the weight gradient [k x n] from m, whole (linear_times) */
        return gemm_t(NULL, k, c, d, g->k, g->n, g->m, g->batch, elem_bytes, hbm_rate(cal, c));
    return lin_gemm_t(NULL, k, c, l, g, d, grad, elem_bytes, hbm_rate(cal, c));
}

double cost_layer_core_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, int bwd,
                            double elem_bytes)
{
    if (cal->kern.gemm_eff == 0) { /* the roofline: the core's GEMMs as roof_fwd prices them, x 2 backward */
        double t = 0;
        for (int i = 0; i < l->n_gemm; i++)
            t += is_core(&l->gemm[i]) ? roof_gemm(cal, c, &l->gemm[i], elem_bytes) : 0;
        return bwd ? 2.0 * t : t;
    }
    kern_calib tmp;
    return core_time(NULL, cost_kern(cal, c, &tmp), cal, c, l, elem_bytes, bwd);
}

double cost_layer_fwd_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes)
{
    return layer_fwd(NULL, cal, c, l, elem_bytes);
}

double cost_layer_bwd_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes)
{
    return layer_bwd(NULL, cal, c, l, elem_bytes);
}

/* checkpointing op (workload.c op_sac): op_rec of each GEMM's forward (fused attention is
 * saved, its share 0) and every forward element-wise kernel again. */
static double op_recompute_time(gemm_memo *gm, const cost_calib *cal, const spec_cluster *c, const wl_layer *l,
                                double elem_bytes)
{
    double t = 0, core = 0;
    if (cal->kern.gemm_eff == 0) {
        for (int i = 0; i < l->n_gemm; i++)
            t += l->op_rec[i] * roof_gemm(cal, c, &l->gemm[i], elem_bytes);
        return t + l->ew_fwd_bytes / (c->gpu.hbm_bw_Bps * cal->hbm_eff.v);
    }
    kern_calib tmp;
    const kern_calib *k = cost_kern(cal, c, &tmp);
    double hbm = hbm_rate(cal, c);
    for (int i = 0; i < l->n_gemm; i++) {
        const wl_gemm *g = &l->gemm[i];
        if (is_core(g))
            core += l->op_rec[i];
        else if (l->op_rec[i] > 0)
            t += l->op_rec[i] * lin_gemm_t(gm, k, c, l, g, gemm_math(l, g, elem_bytes), 0, elem_bytes, hbm);
    }
    if (core > 0) /* unfused attention: its bmm pair recomputed */
        t += core_time(gm, k, cal, c, l, elem_bytes, 0);
    return t + kern_mem_time(k, l->ew_fwd_bytes, l->ew_fwd_kernels, hbm);
}

/* What checkpointing recomputes; `fwd` the layer's forward time when the caller has it (full
 * checkpointing repeats it: the same call, the same bits), else a negative number. */
static double layer_rec(gemm_memo *gm, const cost_calib *cal, const spec_cluster *c, const wl_layer *l,
                        double elem_bytes, double fwd)
{
    if (l->kind != WL_BLOCK || l->ckpt == CKPT_NONE)
        return 0;
    if (l->ckpt == CKPT_FULL)
        return fwd >= 0 ? fwd : layer_fwd(gm, cal, c, l, elem_bytes);
    if (CKPT_IS_OPLIKE(l->ckpt))
        return op_recompute_time(gm, cal, c, l, elem_bytes);
    if (l->flash && elem_bytes < 4)
        return 0; /* FlashAttention's backward recomputes the core itself (in its time) */
    if (cal->kern.gemm_eff == 0) {
        double t = 0;
        for (int i = 0; i < l->n_gemm; i++)
            if (is_core(&l->gemm[i]))
                t += roof_gemm(cal, c, &l->gemm[i], elem_bytes);
        return t + 2.0 * l->act_core_bytes / (c->gpu.hbm_bw_Bps * cal->hbm_eff.v);
    }
    kern_calib tmp;
    const kern_calib *k = cost_kern(cal, c, &tmp);
    return core_time(gm, k, cal, c, l, elem_bytes, 0) +
           kern_mem_time(k, l->core_ew_fwd_bytes, l->core_ew_fwd_kernels, hbm_rate(cal, c));
}

double cost_layer_recompute_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes)
{
    return layer_rec(NULL, cal, c, l, elem_bytes, -1);
}

void cost_layer_times_r(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes,
                        cost_gemm_rates *r, double *fwd, double *bwd, double *rec)
{
    gemm_memo gm;
    gm.used = 0;
    gm.r = r;
    layer_times(&gm, cal, c, l, elem_bytes, fwd, bwd);
    *rec = layer_rec(&gm, cal, c, l, elem_bytes, *fwd);
}

void cost_layer_times(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes, double *fwd,
                      double *bwd, double *rec)
{
    cost_gemm_rates r;
    r.rated = 0;
    cost_layer_times_r(cal, c, l, elem_bytes, &r, fwd, bwd, rec);
}

double cost_optimizer_time(const cost_calib *cal, const spec_cluster *c, double params)
{
    return params * cal->opt_bytes_per_param.v / (c->gpu.hbm_bw_Bps * cal->hbm_eff.v);
}

double cost_optimizer_time_at(const cost_calib *cal, const spec_cluster *c, cost_opt_where where, double params)
{
    switch (where) {
    case OPT_HOST: /* a cluster built in code may leave it 0: the loader's default */
        return params / (c->cpu_adam_params_per_s > 0 ? c->cpu_adam_params_per_s : SPEC_CPU_ADAM_DEFAULT);
    case OPT_HOST_TORCH:
        return params / ((c->cpu_adam_params_per_s > 0 ? c->cpu_adam_params_per_s : SPEC_CPU_ADAM_DEFAULT) *
                         COST_TORCH_CPU_ADAM_RATIO);
    case OPT_INNET: return params / c->innet.opt_params_per_s;
    case OPT_HOST_NVME: return cost_optimizer_nvme_time(c, params, 0);
    default: return cost_optimizer_time(cal, c, params);
    }
}

double cost_optimizer_impl_time(const cost_calib *cal, double s_fused, double scale, double launches)
{
    return scale > 0 ? s_fused * scale + launches * cal->kern.launch_s : s_fused;
}

double cost_optimizer_nvme_time(const spec_cluster *c, double params, double subgroup_params)
{
    if (params <= 0)
        return 0;
    double rate = c->cpu_adam_params_per_s > 0 ? c->cpu_adam_params_per_s : SPEC_CPU_ADAM_DEFAULT;
    double cpu = params / rate;
    double rd = COST_NVME_OPT_READ_B * params / c->nvme_read_Bps, wr = COST_NVME_OPT_WRITE_B * params / c->nvme_write_Bps;
    double io = rd + wr; /* the same drives serve the reads and the writes */
    /* one sub-group per rank on each of the node's G ranks at once */
    double sub = subgroup_params > 0 ? subgroup_params * c->gpus_per_node : 1e9 * c->gpus_per_node;
    if (sub >= params) /* one sub-group: read, update, write in turn */
        return cpu + io;
    return (cpu > io ? cpu : io) + sub / params * io;
}

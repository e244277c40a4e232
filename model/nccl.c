/* nccl.c — NCCL's algorithm/protocol choice and per-collective cost (see nccl.h for the model
 * and its sources). Pure functions of the parameters and the shape; no state. */
#include "nccl.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const char *const ALGO_NAMES[NCCL_N_ALGOS] = {"ring", "tree", "nvls", "nvls-tree", "pat"};
static const char *const PROTO_NAMES[NCCL_N_PROTOS] = {"LL", "LL128", "Simple"};

const char *nccl_algo_name(nccl_algo a) { return a < NCCL_N_ALGOS ? ALGO_NAMES[a] : "?"; }
const char *nccl_proto_name(nccl_proto p) { return p < NCCL_N_PROTOS ? PROTO_NAMES[p] : "?"; }

void nccl_params_defaults(nccl_params *p)
{
    memset(p, 0, sizeof *p);
    p->on = 1;
    p->ll128 = 1;
    /* tuning.cc baseLat [algo][LL, LL128, Simple], us: Tree {6.8, 14, 8.4}, Ring {6.6, 14, 8.4};
     * NVLS / NVLS-tree / PAT have no base of their own there: their hwLat is used as base. */
    static const double base[NCCL_N_ALGOS][NCCL_N_PROTOS] = {
        {6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}, {0, 0, 25.0}, {0, 0, 25.0}, {0, 0, 8.4}};
    for (int a = 0; a < NCCL_N_ALGOS; a++)
        for (int q = 0; q < NCCL_N_PROTOS; q++)
            p->base_lat_s[a][q] = base[a][q] * 1e-6;
    /* tuning.cc hwLat[NVLINK][Ring] {.6, 1.9, 3.4}, hwLat[NET][Ring] {2.7, 4.0, 14.0}, us */
    p->intra_hop_s[NCCL_LL] = 0.6e-6;
    p->intra_hop_s[NCCL_LL128] = 1.9e-6;
    p->intra_hop_s[NCCL_SIMPLE] = 3.4e-6;
    p->net_hop_s[NCCL_LL] = 2.7e-6;
    p->net_hop_s[NCCL_LL128] = 4.0e-6;
    p->net_hop_s[NCCL_SIMPLE] = 14.0e-6;
    /* tuning.cc: ring LL busBw x 1/4 (all-reduce or multi-node), LL128 x 0.92 (8 GPUs/node) */
    p->proto_bw[NCCL_LL] = 0.25;
    p->proto_bw[NCCL_LL128] = 0.92;
    p->proto_bw[NCCL_SIMPLE] = 1.0;
    p->tree_bw = 0.92;  /* tuning.cc: tree all-reduce busBw x .92, per node-edge S vs the ring's 2S */
    p->nvls_bw = 1.0;
    p->pat_bw = 0.75;   /* tuning.cc: PAT busBw x .75 */
    p->chunk_exp = 1;
}

static int log2i(int x)
{
    int r = 0;
    while (x >>= 1)
        r++;
    return r;
}

/* log2(k / 2), exact and without libm for the usual power-of-two node counts */
static double log2_half(int k)
{
    return k > 0 && !(k & (k - 1)) ? (double)(log2i(k) - 1) : log2(k / 2.0);
}

/* nccl_usable's rule, inlined where nccl_best_of asks it 15 times per collective */
static inline int usable(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr)
{
    if (s->n < 2)
        return 0;
    if (pr == NCCL_LL128 && !p->ll128)
        return 0;
    if (pr != NCCL_SIMPLE && p->simple_only)
        return 0;
    int ar = nccl_kind_class(s->kind);
    switch (a) {
    case NCCL_RING: return 1;
    /* NCCL builds trees for all-reduce; on one node its chain never beats the ring */
    case NCCL_TREE: return ar && s->k > 1;
    /* NVLink SHARP: in-switch reduction on one node (NVLS) or inside each node of a tree
     * across nodes (NVLS-tree); Simple only (tuning.cc disables LL/LL128 for them) */
    case NCCL_NVLS: return ar && p->nvls && s->k == 1 && s->m > 1 && pr == NCCL_SIMPLE;
    case NCCL_NVLS_TREE: return ar && p->nvls && s->k > 1 && s->m > 1 && pr == NCCL_SIMPLE;
    /* PAT (NCCL 2.23+): all-gather / reduce-scatter with one GPU per node, Simple only */
    case NCCL_PAT: return !ar && s->m == 1 && s->k > 1 && pr == NCCL_SIMPLE;
    default: return 0;
    }
}

int nccl_usable(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr) { return usable(p, s, a, pr); }

double nccl_latency(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr)
{
    if (s->n < 2)
        return 0;
    double lat = p->base_lat_s[a][pr];
    double intra = p->intra_hop_s[pr], net = p->net_hop_s[pr];
    /* a ring step ends when its slowest hop has delivered: across nodes every step waits for
     * the network hop (the p5 sweeps: the same per-step cost at 2 to 32 nodes) */
    double slow = s->k > 1 ? (net > intra ? net : intra) : intra;
    switch (a) {
    case NCCL_RING: {
        const int f = nccl_kind_class(s->kind) ? 2 : 1, steps = f * (s->n - 1);
        if (p->ring_by_node && s->k > 1) { /* only the steps that cross a node pay the network */
            const int inter = f * (s->k - 1);
            lat += (steps - inter) * intra + inter * net;
        } else {
            lat += steps * slow;
        }
        break;
    }
    case NCCL_TREE: /* up and down: a chain of m inside each node, log2(nodes) across (tuning.cc) */
        lat += 2 * ((s->m - 1) * intra + log2i(s->k) * net);
        break;
    case NCCL_NVLS: break;
    case NCCL_NVLS_TREE: lat += 2 * log2i(s->k) * net; break;
    case NCCL_PAT: lat += log2i(s->n) * slow; break;
    default: break;
    }
    if (s->k > 1)
        lat += p->net_floor_s;
    return lat;
}

/* Bandwidth a pipeline reaches with per-rank chunk c: 1 / (1 + (c_half / c)^e). */
static double chunk_eff(const nccl_params *p, nccl_algo a, double c)
{
    double h = p->chunk_half_B[a];
    if (!(h > 0))
        return 1;
    if (!(c > 0))
        return 0;
    return 1.0 / (1.0 + (p->chunk_exp == 1 ? h / c : pow(h / c, p->chunk_exp)));
}

/* Bytes the algorithm moves per rank over its busiest edge per byte of S, before efficiencies. */
static inline double algo_mul(const nccl_shape *s, nccl_algo a)
{
    double f = (double)(s->n - 1) / s->n;
    switch (a) {
    case NCCL_TREE:
    case NCCL_NVLS_TREE:
        /* NCCL's double binary tree: on 2 nodes each node is one tree's root and the other's
         * leaf, so S/2 up + S/2 down per tree = S per direction through its NICs; on more
         * nodes a node is interior in one tree (2 children) and a leaf in the other: 2S, what
         * a ring moves. (This is why 2-node all-reduce busbw exceeds the NIC line.) */
        return s->k == 2 ? 1.0 : 2.0;
    case NCCL_NVLS: return 1.0; /* each GPU's port into the switch carries S each way */
    default: return nccl_kind_class(s->kind) ? 2 * f : f;
    }
}

/* Bytes the algorithm moves per rank over its busiest edge, before efficiencies. */
static inline double algo_bytes(const nccl_shape *s, nccl_algo a, double S) { return algo_mul(s, a) * S; }

/* The algorithm's bandwidth before the protocol's fraction. */
static double algo_bw(const nccl_params *p, const nccl_shape *s, nccl_algo a, double S);

double nccl_bw(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr, double S)
{
    return algo_bw(p, s, a, S) * p->proto_bw[pr];
}

static double algo_bw_raw(const nccl_params *p, const nccl_shape *s, nccl_algo a);

static double algo_bw(const nccl_params *p, const nccl_shape *s, nccl_algo a, double S)
{
    double c = a == NCCL_RING || a == NCCL_PAT ? S / s->n : S;
    return algo_bw_raw(p, s, a) * chunk_eff(p, a, c);
}

/* Without the chunk efficiency (an upper bound of algo_bw). */
static double algo_bw_raw(const nccl_params *p, const nccl_shape *s, nccl_algo a)
{
    double intra = s->m > 1 ? s->intra_Bps : INFINITY;
    double net = s->k > 1 ? s->net_Bps : INFINITY;
    switch (a) {
    case NCCL_RING:
    case NCCL_PAT:
        if (s->k > 1)
            net /= 1 + p->ring_node_fall * log2_half(s->k);
        if (a == NCCL_PAT)
            net *= p->pat_bw, intra *= p->pat_bw;
        break;
    case NCCL_TREE: net *= p->tree_bw / (1 + p->tree_node_fall * log2_half(s->k)); break;
    case NCCL_NVLS: intra *= p->nvls_bw; break;
    case NCCL_NVLS_TREE:
        net *= p->tree_bw / (1 + p->tree_node_fall * log2_half(s->k));
        intra *= p->nvls_bw;
        break;
    default: break;
    }
    return intra < net ? intra : net;
}

double nccl_edge_bytes(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr, double S)
{
    if (s->n < 2 || !(S > 0))
        return 0;
    /* the rate the simulator's ring edges run at: the slower of NVLink and the node's NICs */
    double intra = s->m > 1 ? s->intra_Bps : INFINITY, net = s->k > 1 ? s->net_Bps : INFINITY;
    double link = intra < net ? intra : net;
    return algo_bytes(s, a, S) * link / nccl_bw(p, s, a, pr, S);
}

double nccl_time(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr, double S)
{
    if (s->n < 2 || !(S > 0))
        return 0;
    return nccl_latency(p, s, a, pr) + algo_bytes(s, a, S) / nccl_bw(p, s, a, pr, S);
}

double nccl_best(const nccl_params *p, const nccl_shape *s, double S, nccl_algo *ba, nccl_proto *bp)
{
    return nccl_best_of(p, s, S, -1, ba, bp);
}

double nccl_best_of(const nccl_params *p, const nccl_shape *s, double S, int force, nccl_algo *ba, nccl_proto *bp)
{
    double best = INFINITY;
    nccl_algo A = NCCL_RING;
    nccl_proto P = NCCL_SIMPLE;
    if (force >= 0) {
        int any = 0;
        for (int q = 0; q < NCCL_N_PROTOS; q++)
            any |= usable(p, s, (nccl_algo)force, (nccl_proto)q);
        if (!any)
            force = -1;
    }
    /* per algorithm: its bytes and bandwidth (the chunk efficiency's pow) once, then each
     * protocol's latency and fraction; the same arithmetic as nccl_time */
    for (int a = 0; a < NCCL_N_ALGOS; a++) {
        if (force >= 0 && a != force)
            continue;
        double xfer = -1, eff = -1; /* bytes / bandwidth without protocol and chunk */
        /* Simple first: it wins for most sizes, so its time prunes the others early */
        for (int qi = NCCL_N_PROTOS - 1; qi >= 0; qi--) {
            const nccl_proto q = (nccl_proto)qi;
            if (!usable(p, s, (nccl_algo)a, q))
                continue;
            if (xfer < 0)
                xfer = algo_bytes(s, (nccl_algo)a, S) / algo_bw_raw(p, s, (nccl_algo)a);
            double lat = nccl_latency(p, s, (nccl_algo)a, q);
            if (lat >= best)
                continue;
            double tq = xfer / p->proto_bw[q];
            /* the chunk efficiency only slows: skip its pow when the bound cannot win */
            if (lat + tq >= best)
                continue;
            if (eff < 0)
                eff = chunk_eff(p, (nccl_algo)a, a == NCCL_RING || a == NCCL_PAT ? S / s->n : S);
            double t = lat + tq / eff;
            if (t < best) {
                best = t;
                A = (nccl_algo)a;
                P = q;
            }
        }
    }
    if (ba)
        *ba = A;
    if (bp)
        *bp = P;
    return isfinite(best) ? best : 0;
}

/* pow(x, e) through the memo (an equal base: the same call, the same bits) */
static double pow_m(double x, double e, nccl_pow_memo *pm)
{
    uint64_t xb;
    memcpy(&xb, &x, sizeof xb);
    _Static_assert(NCCL_POW_N == 8, "pow_m takes 3 bits for the slot");
    const unsigned i = (unsigned)((xb * 0x9e3779b97f4a7c15ull) >> 61);
    const int used = pm->used >> i & 1u;
    if (used && pm->x[i] == x)
        return pm->y[i];
    double y = pow(x, e);
    if (!used) {
        pm->used |= 1u << i;
        pm->x[i] = x;
        pm->y[i] = y;
    }
    return y;
}

void nccl_pow2_fill(nccl_params *p)
{
    p->pow2_on = p->chunk_exp != 1;
    p->pow2_e = p->chunk_exp;
    for (int a = 0; a < NCCL_N_ALGOS; a++) {
        p->pow2_h[a] = p->chunk_half_B[a];
        for (int j = 0; j < NCCL_POW2_N; j++) /* h / 2^-j, as chunk_eff divides: exact (or inf both) */
            p->pow2[a][j] = p->pow2_on && p->chunk_half_B[a] > 0 ? pow(p->chunk_half_B[a] / ldexp(1.0, -j), p->chunk_exp) : 0;
    }
}

/* chunk_eff, its pow from the calibration's table where the chunk is 2^-j (an32b: on p4d ~27 %
 * of the powers, a 1-byte latency's, each ~125 instructions) or through the memo when there is one */
static double chunk_eff_m(const nccl_params *p, nccl_algo a, double c, nccl_pow_memo *pm)
{
    double h = p->chunk_half_B[a];
    if (!pm || p->chunk_exp == 1 || !(h > 0) || !(c > 0))
        return chunk_eff(p, a, c);
    uint64_t cb;
    memcpy(&cb, &c, sizeof cb);
    if (!(cb & 0xfffffffffffffull) && p->pow2_on && p->pow2_e == p->chunk_exp && p->pow2_h[a] == h) {
        const int j = 1023 - (int)(cb >> 52); /* c = 2^-j: a normal power of two (c > 0, no mantissa) */
        if (j >= 0 && j < NCCL_POW2_N)
            return 1.0 / (1.0 + p->pow2[a][j]);
    }
    return 1.0 / (1.0 + pow_m(h / c, p->chunk_exp, pm));
}

/* One size's choice over the per-shape usable pairs, latencies and raw bandwidths (nccl_tab_of):
 * nccl_best_of's loop, unforced, operation for operation (the pairs nccl_best_of skips as
 * unusable are not in the list; each algorithm's bytes / bandwidth is taken at its first). */
double nccl_best_tab_m(const nccl_params *p, const nccl_shape *s, const nccl_tab *tab, double S, nccl_pow_memo *pm)
{
    double best = INFINITY, xfer = 0, eff = -1;
    int cur = -1;
    for (int j = 0; j < tab->nc; j++) {
        const int a = tab->ca[j];
        if (a != cur) {
            cur = a;
            xfer = tab->mul[a] * S / tab->raw[a]; /* algo_bytes / raw */
            eff = -1;
        }
        double lat = tab->cl[j];
        if (lat >= best)
            continue;
        double tq = xfer / p->proto_bw[tab->cq[j]];
        if (lat + tq >= best)
            continue;
        if (eff < 0)
            eff = chunk_eff_m(p, (nccl_algo)a, a == NCCL_RING || a == NCCL_PAT ? S / s->n : S, pm);
        double t = lat + tq / eff;
        if (t < best)
            best = t;
    }
    return isfinite(best) ? best : 0;
}

double nccl_best_tab(const nccl_params *p, const nccl_shape *s, const nccl_tab *tab, double S)
{
    return nccl_best_tab_m(p, s, tab, S, NULL);
}

/* usable()'s algorithm part: whether algorithm a runs this shape with some protocol, and in *simple
 * whether with Simple only (NVLS, NVLS-tree and PAT). */
static int algo_usable(const nccl_params *p, const nccl_shape *s, nccl_algo a, int *simple)
{
    const int ar = nccl_kind_class(s->kind);
    *simple = a == NCCL_NVLS || a == NCCL_NVLS_TREE || a == NCCL_PAT;
    switch (a) {
    case NCCL_RING: return 1;
    case NCCL_TREE: return ar && s->k > 1;
    case NCCL_NVLS: return ar && p->nvls && s->k == 1 && s->m > 1;
    case NCCL_NVLS_TREE: return ar && p->nvls && s->k > 1 && s->m > 1;
    case NCCL_PAT: return !ar && s->m == 1 && s->k > 1;
    default: return 0;
    }
}

/* usable() split in two (the protocols the parameters allow, in nccl_best_of's order, Simple
 * first; then each algorithm's own rule) so that only the usable pairs are visited: on p4d 1-3 of
 * the 15 (perfan36: 643 -> ~150 instructions a table). The same pairs, order and values. */
void nccl_tab_of(const nccl_params *p, const nccl_shape *s, nccl_tab *t)
{
    t->nc = 0;
    nccl_proto qs[NCCL_N_PROTOS];
    int nq = 0;
    qs[nq++] = NCCL_SIMPLE;
    if (!p->simple_only) {
        if (p->ll128)
            qs[nq++] = NCCL_LL128;
        qs[nq++] = NCCL_LL;
    }
    for (int a = 0; a < NCCL_N_ALGOS; a++) {
        int simple;
        if (s->n < 2 || !algo_usable(p, s, (nccl_algo)a, &simple)) {
            t->raw[a] = t->mul[a] = 0;
            continue;
        }
        t->raw[a] = algo_bw_raw(p, s, (nccl_algo)a);
        t->mul[a] = algo_mul(s, (nccl_algo)a);
        for (int j = 0; j < (simple ? 1 : nq); j++) {
            t->ca[t->nc] = (unsigned char)a;
            t->cq[t->nc] = (unsigned char)qs[j];
            t->cl[t->nc++] = nccl_latency(p, s, (nccl_algo)a, qs[j]);
        }
    }
}

void nccl_best_pair(const nccl_params *p, const nccl_shape *s, double S1, double S2, double *t1, double *t2)
{
    nccl_tab tab;
    nccl_tab_of(p, s, &tab);
    *t1 = nccl_best_tab(p, s, &tab, S1);
    *t2 = nccl_best_tab(p, s, &tab, S2);
}

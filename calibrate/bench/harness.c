/* harness.c — what every measurement of the harness uses (see harness.h): the collectives'
 * names and nccl-tests bus-bandwidth factors, ending all ranks on a failure, allocation,
 * barriers, the max over ranks, statistics, element patterns, and the communicators planned
 * from the layout membership rules. Not here: the measurements (meas_*.c), the loop and
 * output (driver.c), MPI, CUDA, BLAS (backend.h). */
#include "harness.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../base/atomic.h"
#include "../../model/layout.h"
#include "../../traces/trace.h"



const char *bench_coll_name(bench_coll kind)
{
    static const char *const n[] = {"all-gather", "reduce-scatter", "all-reduce"};
    return kind < BENCH_N_COLLS ? n[kind] : "?";
}

double bench_busbw_factor(bench_coll kind, int n)
{
    if (n < 1)
        return 0;
    double f = (double)(n - 1) / n;
    return kind == BENCH_ALLREDUCE ? 2 * f : f;
}

/* A failed operation leaves the other ranks waiting inside a collective: end them all. */
void bench_die(const bench_ctx *r, const char *what)
{
    fprintf(stderr, "shardcast-bench: rank %d: %s: %s\n", r->h->rank, what, r->be->error());
    fflush(stderr);
    r->be->abort(1);
    exit(1);
}

void *bench_alloc(const bench_ctx *r, size_t bytes, const char *what)
{
    void *p = r->be->alloc(bytes ? bytes : 16);
    if (!p) {
        fprintf(stderr, "shardcast-bench: rank %d: cannot allocate %zu bytes for %s\n", r->h->rank, bytes, what);
        fflush(stderr);
        r->be->abort(1);
        exit(1);
    }
    return p;
}

void bench_sync(const bench_ctx *r)
{
    if (r->be->barrier())
        bench_die(r, "barrier");
}

void bench_max_over_ranks(const bench_ctx *r, double *v, int n)
{
    if (r->be->host_allreduce(v, n, 1))
        bench_die(r, "reduction over ranks");
}

/* ---- statistics ---------------------------------------------------------------------------- */

int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Mean, min and p95 (nearest rank) of n samples; sorts v. */
bench_stats bench_stats_of(double *v, int n)
{
    bench_stats s = {0, 0, 0};
    if (n < 1)
        return s;
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    for (int i = 0; i < n; i++)
        s.mean += v[i];
    s.mean /= n;
    s.min = v[0];
    int k = (int)ceil(0.95 * n) - 1;
    s.p95 = v[k < 0 ? 0 : k];
    return s;
}

/* ---- element patterns ------------------------------------------------------------------------ */
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(u >> 16);
}

/* Fill `elems` elements of device memory with pseudo-random values in [-1, 1) with every
 * mantissa bit random (a splitmix64 hash of seed and index; never denormal: |v| >= 2^-24 or 0),
 * in chunks through the host scratch. Random operands matter: an H100 8192^3 bf16 GEMM runs at
 * 805 TFLOP/s on zeros and 716 on randn in the same 0.5 s burst
 * (bench/gpu-results/2026-11-27-h100-sxm/sustained_gemm.json); the small repeating values this
 * fill used before (k/8) measured 871-877 in the harness's short bursts. */
void bench_fill(const bench_ctx *r, void *dev, size_t elems, bench_dtype dt, int seed)
{
    size_t esz = dt == BENCH_BF16 ? 2 : 4;
    size_t chunk = r->host_bytes / esz;
    for (size_t off = 0; off < elems; off += chunk) {
        size_t n = elems - off < chunk ? elems - off : chunk;
        for (size_t i = 0; i < n; i++) {
            uint64_t z = (uint64_t)seed * 0xD1B54A32D192ED03ull + 0x9E3779B97F4A7C15ull * (off + i + 1);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            float v = (float)((double)(int64_t)(z >> 40) / (double)(1 << 23) - 1.0); /* 24 bits -> [-1, 1) */
            if (dt == BENCH_BF16)
                ((uint16_t *)r->host)[i] = to_bf16(v);
            else
                r->host[i] = v;
        }
        if (r->be->upload((char *)dev + off * esz, r->host, n * esz))
            bench_die(r, "upload");
    }
}

/* Correctness pattern of collectives (fp32, small integers: sums stay exact). */
/* ---- communicators ------------------------------------------------------------------------- */
/* The geometry every consumer of the layout graph uses; layout_group_members needs only these
 * (the group size p, whatever the kind: groups of p as mics:p has them). */
static void geometry(const bench_ctx *r, int p, lo_graph *g)
{
    memset(g, 0, sizeof *g);
    g->n_ranks = r->N;
    g->gpus_per_node = r->G;
    g->layout.p = p;
}


/* Shape of the communicators of this kind (all of them alike when p aligns with nodes):
 * measured from the actual node of every rank. */
static void grp_shape(const bench_ctx *r, bench_grp *gr)
{
    lo_graph g;
    geometry(r, gr->p, &g);
    int *mem = malloc(sizeof(int) * (size_t)r->N), *seen = calloc((size_t)r->N, sizeof(int));
    if (!mem || !seen) {
        free(mem), free(seen);
        gr->n = 0;
        return;
    }
    gr->n = layout_group_members(&g, gr->kind, 0, mem);
    int k = 0;
    for (int i = 0; i < gr->n; i++)
        if (!seen[r->node_of[mem[i]]]++)
            k++;
    gr->k = k;
    gr->m = k ? gr->n / k : 0;
    /* groups with members on node 0: one per distinct lowest member */
    memset(seen, 0, sizeof(int) * (size_t)r->N);
    int conc = 0;
    for (int w = 0; w < r->N; w++)
        if (r->node_of[w] == 0) {
            layout_group_members(&g, gr->kind, w, mem);
            if (!seen[mem[0]]++)
                conc++;
        }
    gr->concurrent = conc;
    free(mem);
    free(seen);
}

/* Split the world into this rank's communicators of a kind: color = lowest member. */
bench_comm *bench_split_kind(const bench_ctx *r, lo_group_kind kind, int p)
{
    lo_graph g;
    geometry(r, p, &g);
    int *mem = malloc(sizeof(int) * (size_t)r->N);
    if (!mem) {
        fprintf(stderr, "shardcast-bench: out of memory\n");
        r->be->abort(1);
        exit(1);
    }
    layout_group_members(&g, kind, r->h->rank, mem);
    bench_comm *c = NULL;
    if (r->be->split(r->world, mem[0], r->h->rank, &c))
        bench_die(r, "communicator split");
    free(mem);
    return c;
}

static int p_aligned(int p, int N, int G) { return p >= 1 && N % p == 0 && (G % p == 0 || p % G == 0); }

/* The communicators to measure: the world, and per partition size p its partition, replica,
 * and (spanning nodes) rail and intra-node groups; identical shapes of a kind measured once. */
int bench_plan_groups(const bench_ctx *r, bench_grp *out, int max)
{
    const bench_opts *o = r->o;
    int ps[64], n_ps = 0;
    if (!o->world_only) {
        if (o->n_p)
            for (int i = 0; i < o->n_p && n_ps < 64; i++)
                ps[n_ps++] = o->p[i];
        else
            for (int p = 1; p <= r->N && n_ps < 64; p++)
                if (p_aligned(p, r->N, r->G))
                    ps[n_ps++] = p;
    }
    int n = 0;
    bench_grp cand[4 * 64 + 1];
    int nc = 0;
    cand[nc++] = (bench_grp){.kind = GRP_WORLD, .p = r->N};
    for (int i = 0; i < n_ps; i++) {
        int p = ps[i];
        if (p > 1 && p < r->N)
            cand[nc++] = (bench_grp){.kind = GRP_PARTITION, .p = p};
        if (p > 1 && r->N / p > 1)
            cand[nc++] = (bench_grp){.kind = GRP_REPLICA, .p = p};
        if (p > r->G && p % r->G == 0 && p / r->G > 1)
            cand[nc++] = (bench_grp){.kind = GRP_RAIL, .p = p};
        if (p > r->G && p % r->G == 0 && r->G > 1)
            cand[nc++] = (bench_grp){.kind = GRP_INTRA, .p = p};
    }
    for (int i = 0; i < nc && n < max; i++) {
        grp_shape(r, &cand[i]);
        if (cand[i].n < 2)
            continue;
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= out[j].kind == cand[i].kind && out[j].n == cand[i].n && out[j].k == cand[i].k &&
                   out[j].m == cand[i].m && out[j].concurrent == cand[i].concurrent;
        if (!dup)
            out[n++] = cand[i];
    }
    return n;
}

/* driver.c — the harness loop over any backend (see driver.h): communicators from the layout
 * membership rules, collectives across sizes with a correctness check, GEMMs, memory bandwidth,
 * GEMMs beside concurrent communication (interference), the real sharded step of ZeRO-3 and
 * MiCS, statistics, tables and measurements.json.
 * Timing (every measurement): untimed warm-up; then per timed iteration a world barrier and one
 * blocking operation timed by the backend (CUDA events / MPI_Wtime), i.e. isolated latency as a
 * training step sees it, not nccl-tests' pipelined mean; per iteration the max over ranks; then
 * mean, min and p95 over iterations. Not here: MPI, CUDA, BLAS (backend.h), options (main.c). */
#include "driver.h"

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

#define MiB ((size_t)1 << 20)

typedef struct run {
    const bench_backend *be;
    const bench_host *h;
    const bench_opts *o;
    bench_comm *world;
    int N, G;          /* world size, ranks per node                                        */
    int *node_of;      /* node index of every world rank                                    */
    int *local_of;     /* local index of every world rank                                   */
    size_t esz;        /* bytes of one element of be->dtype                                 */
    float *host;       /* scratch for patterns and checks                                   */
    size_t host_bytes;
    json_t *colls, *gemms, *membw, *interf, *steps;
    int print;         /* rank 0 and not quiet                                              */
} run;

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
static void die(const run *r, const char *what)
{
    fprintf(stderr, "shardcast-bench: rank %d: %s: %s\n", r->h->rank, what, r->be->error());
    fflush(stderr);
    r->be->abort(1);
    exit(1);
}

static void *xalloc(const run *r, size_t bytes, const char *what)
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

static void sync_all(const run *r)
{
    if (r->be->barrier())
        die(r, "barrier");
}

static void max_over_ranks(const run *r, double *v, int n)
{
    if (r->be->host_allreduce(v, n, 1))
        die(r, "reduction over ranks");
}

/* ---- statistics ---------------------------------------------------------------------------- */
typedef struct stats {
    double mean, min, p95;
} stats;

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Mean, min and p95 (nearest rank) of n samples; sorts v. */
static stats stats_of(double *v, int n)
{
    stats s = {0, 0, 0};
    if (n < 1)
        return s;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
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

/* Fill `elems` elements of device memory with small exact values in [-0.75, 0.75] (never
 * denormal, exact in bf16), in chunks through the host scratch. */
static void fill(const run *r, void *dev, size_t elems, bench_dtype dt, int seed)
{
    size_t esz = dt == BENCH_BF16 ? 2 : 4;
    size_t chunk = r->host_bytes / esz;
    for (size_t off = 0; off < elems; off += chunk) {
        size_t n = elems - off < chunk ? elems - off : chunk;
        for (size_t i = 0; i < n; i++) {
            float v = (float)((int)((off + i) * 7 % 13) - 6 + seed % 3) / 8.0f;
            if (dt == BENCH_BF16)
                ((uint16_t *)r->host)[i] = to_bf16(v);
            else
                r->host[i] = v;
        }
        if (r->be->upload((char *)dev + off * esz, r->host, n * esz))
            die(r, "upload");
    }
}

/* Correctness pattern of collectives (fp32, small integers: sums stay exact). */
static float pat(int q, size_t j) { return (float)((q * 5 + (int)(j % 11)) % 11 + 1); }

/* Run the collective once on patterned input and count wrong output elements on this rank. */
static long coll_check(const run *r, bench_comm *c, bench_coll kind, void *send, void *recv, size_t count)
{
    const bench_backend *be = r->be;
    int n = be->comm_size(c), q = be->comm_rank(c);
    size_t n_send = kind == BENCH_REDUCESCATTER ? count * (size_t)n : count;
    size_t n_recv = kind == BENCH_ALLGATHER ? count * (size_t)n : count;
    for (size_t j = 0; j < n_send; j++)
        r->host[j] = pat(q, j);
    if (be->upload(send, r->host, n_send * 4))
        die(r, "upload");
    memset(r->host, 0, n_recv * 4);
    if (be->upload(recv, r->host, n_recv * 4))
        die(r, "upload");
    double t;
    if (be->coll(c, kind, BENCH_F32, send, recv, count, &t))
        die(r, bench_coll_name(kind));
    if (be->download(r->host, recv, n_recv * 4))
        die(r, "download");
    double sums[11]; /* sum over ranks of pat(s, j) depends on j mod 11 only */
    for (int res = 0; res < 11; res++) {
        sums[res] = 0;
        for (int s = 0; s < n; s++)
            sums[res] += pat(s, (size_t)res);
    }
    long bad = 0;
    for (size_t i = 0; i < n_recv; i++) {
        double want;
        if (kind == BENCH_ALLGATHER)
            want = pat((int)(i / count), i % count);
        else if (kind == BENCH_REDUCESCATTER)
            want = sums[((size_t)q * count + i) % 11];
        else
            want = sums[i % 11];
        bad += r->host[i] != (float)want;
    }
    return bad;
}

/* ---- communicators ------------------------------------------------------------------------- */
/* The geometry every consumer of the layout graph uses; layout_group_members needs only these. */
static void geometry(const run *r, int p, lo_graph *g)
{
    memset(g, 0, sizeof *g);
    g->n_ranks = r->N;
    g->gpus_per_node = r->G;
    g->layout.kind = LAYOUT_MICS;
    g->layout.p = p;
}

typedef struct grp {
    lo_group_kind kind;
    int p;
    int n, k, m, concurrent; /* ranks, nodes spanned, members per node, groups per node       */
} grp;

/* Shape of the communicators of this kind (all of them alike when p aligns with nodes):
 * measured from the actual node of every rank. */
static void grp_shape(const run *r, grp *gr)
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
static bench_comm *split_kind(const run *r, lo_group_kind kind, int p)
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
        die(r, "communicator split");
    free(mem);
    return c;
}

static int p_aligned(int p, int N, int G) { return p >= 1 && N % p == 0 && (G % p == 0 || p % G == 0); }

/* The communicators to measure: the world, and per partition size p its partition, replica,
 * and (spanning nodes) rail and intra-node groups; identical shapes of a kind measured once. */
static int plan_groups(const run *r, grp *out, int max)
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
    grp cand[4 * 64 + 1];
    int nc = 0;
    cand[nc++] = (grp){.kind = GRP_WORLD, .p = r->N};
    for (int i = 0; i < n_ps; i++) {
        int p = ps[i];
        if (p > 1 && p < r->N)
            cand[nc++] = (grp){.kind = GRP_PARTITION, .p = p};
        if (p > 1 && r->N / p > 1)
            cand[nc++] = (grp){.kind = GRP_REPLICA, .p = p};
        if (p > r->G && p % r->G == 0 && p / r->G > 1)
            cand[nc++] = (grp){.kind = GRP_RAIL, .p = p};
        if (p > r->G && p % r->G == 0 && r->G > 1)
            cand[nc++] = (grp){.kind = GRP_INTRA, .p = p};
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

/* ---- collectives --------------------------------------------------------------------------- */
static void measure_collectives(run *r)
{
    const bench_backend *be = r->be;
    const bench_opts *o = r->o;
    grp groups[256];
    int ng = plan_groups(r, groups, 256);
    if (r->print) {
        printf("\n# collectives: fp32 sum, out-of-place; time per op = max over ranks, over %d iterations after %d "
               "warm-up; algbw/busbw as nccl-tests\n",
               o->iters, o->warmup);
        printf("# %-9s %4s %3s %3s %4s %-14s %12s %10s %10s %10s %8s %8s %6s\n", "group", "n", "k", "m", "conc",
               "collective", "bytes", "time_us", "min_us", "p95_us", "algbw", "busbw", "errors");
        printf("# %-9s %4s %3s %3s %4s %-14s %12s %10s %10s %10s %8s %8s %6s\n", "", "", "", "", "", "", "", "", "", "",
               "GB/s", "GB/s", "");
    }
    size_t cap = o->max_bytes + 64;
    void *send = xalloc(r, cap, "collective send buffer"), *recv = xalloc(r, cap, "collective receive buffer");
    double *t = malloc(sizeof(double) * (size_t)o->iters);
    if (!t)
        die(r, "out of memory");
    for (int gi = 0; gi < ng; gi++) {
        const grp *gr = &groups[gi];
        bench_comm *c = gr->kind == GRP_WORLD ? r->world : split_kind(r, gr->kind, gr->p);
        int n = be->comm_size(c);
        for (int kind = 0; kind < BENCH_N_COLLS; kind++) {
            for (size_t S = o->min_bytes; S <= o->max_bytes; S *= 2) {
                size_t count = kind == BENCH_ALLREDUCE ? S / 4 : S / (4 * (size_t)n);
                if (!count)
                    continue;
                size_t bytes = kind == BENCH_ALLREDUCE ? count * 4 : count * 4 * (size_t)n;
                double errs = (double)coll_check(r, c, (bench_coll)kind, send, recv, count);
                if (be->host_allreduce(&errs, 1, 0))
                    die(r, "reduction over ranks");
                for (int i = 0; i < o->warmup; i++)
                    if (be->coll(c, (bench_coll)kind, BENCH_F32, send, recv, count, &t[0]))
                        die(r, bench_coll_name((bench_coll)kind));
                for (int i = 0; i < o->iters; i++) {
                    sync_all(r);
                    if (be->coll(c, (bench_coll)kind, BENCH_F32, send, recv, count, &t[i]))
                        die(r, bench_coll_name((bench_coll)kind));
                }
                max_over_ranks(r, t, o->iters);
                stats st = stats_of(t, o->iters);
                double algbw = st.mean > 0 ? (double)bytes / st.mean / 1e9 : 0;
                double busbw = algbw * bench_busbw_factor((bench_coll)kind, n);
                if (r->h->rank == 0) {
                    json_t *rec = json_pack(
                        "{s:s, s:s, s:i, s:i, s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:i, s:I}", "kind",
                        bench_coll_name((bench_coll)kind), "group", layout_group_name(gr->kind), "n", n, "k", gr->k, "m",
                        gr->m, "concurrent", gr->concurrent, "bytes", (json_int_t)bytes, "time_us", st.mean * 1e6,
                        "time_min_us", st.min * 1e6, "time_p95_us", st.p95 * 1e6, "algbw_GBps", algbw, "busbw_GBps",
                        busbw, "iters", o->iters, "errors", (json_int_t)errs);
                    json_array_append_new(r->colls, rec);
                }
                if (r->print) {
                    printf("  %-9s %4d %3d %3d %4d %-14s %12zu %10.2f %10.2f %10.2f %8.3f %8.3f %6.0f\n",
                           layout_group_name(gr->kind), n, gr->k, gr->m, gr->concurrent,
                           bench_coll_name((bench_coll)kind), bytes, st.mean * 1e6, st.min * 1e6, st.p95 * 1e6, algbw,
                           busbw, errs);
                    fflush(stdout);
                }
                if (S > SIZE_MAX / 2)
                    break;
            }
        }
        if (c != r->world)
            be->comm_free(c);
    }
    free(t);
    be->release(send);
    be->release(recv);
}

/* ---- GEMMs ----------------------------------------------------------------------------------- */
static void measure_gemm(run *r, int m, int n, int k, int batch, double *t)
{
    const bench_backend *be = r->be;
    const bench_opts *o = r->o;
    size_t b = (size_t)batch;
    void *A = xalloc(r, (size_t)m * k * b * r->esz, "GEMM A"), *B = xalloc(r, (size_t)k * n * b * r->esz, "GEMM B"),
         *C = xalloc(r, (size_t)m * n * b * r->esz, "GEMM C");
    fill(r, A, (size_t)m * k * b, be->dtype, 1);
    fill(r, B, (size_t)k * n * b, be->dtype, 2);
    for (int i = 0; i < o->warmup; i++)
        if (be->gemm(be->dtype, 0, 0, m, n, k, batch, A, B, C, &t[0]))
            die(r, "GEMM");
    for (int i = 0; i < o->iters; i++) {
        sync_all(r);
        if (be->gemm(be->dtype, 0, 0, m, n, k, batch, A, B, C, &t[i]))
            die(r, "GEMM");
    }
    max_over_ranks(r, t, o->iters);
    stats st = stats_of(t, o->iters);
    double flops = 2.0 * m * n * (double)k * batch;
    double tflops = st.mean > 0 ? flops / st.mean / 1e12 : 0;
    if (r->h->rank == 0)
        json_array_append_new(r->gemms, json_pack("{s:i, s:i, s:i, s:i, s:s, s:f, s:f}", "m", m, "n", n, "k", k, "batch",
                                                  batch, "dtype", be->dtype == BENCH_BF16 ? "bf16" : "fp32", "time_us",
                                                  st.mean * 1e6, "tflops", tflops));
    if (r->print) {
        printf("  %7d %7d %7d %6d %12.2f %10.2f %10.2f %9.3f\n", m, n, k, batch, st.mean * 1e6, st.min * 1e6,
               st.p95 * 1e6, tflops);
        fflush(stdout);
    }
    be->release(A);
    be->release(B);
    be->release(C);
}

static int as_int(double v) { return v >= 1 && v <= INT_MAX ? (int)v : 0; }

static void measure_gemms(run *r)
{
    const bench_opts *o = r->o;
    if (r->print) {
        printf("\n# GEMMs (%s, row-major C = A B, every rank at once): time = max over ranks, %d iterations\n",
               r->be->dtype == BENCH_BF16 ? "bf16, fp32 accumulate" : "fp32", o->iters);
        printf("# %7s %7s %7s %6s %12s %10s %10s %9s\n", "m", "n", "k", "batch", "time_us", "min_us", "p95_us",
               "TFLOP/s");
    }
    double *t = malloc(sizeof(double) * (size_t)o->iters);
    if (!t)
        die(r, "out of memory");
    for (int s = 128; o->gemm_max > 0 && s <= o->gemm_max; s *= 2)
        measure_gemm(r, s, s, s, 1, t);
    if (o->n_model_gemms && r->print)
        printf("# layer GEMMs of %s\n", o->gemm_model);
    for (int i = 0; i < o->n_model_gemms; i++) {
        const wl_gemm *g = &o->model_gemm[i];
        int m = as_int(g->m), n = as_int(g->n), k = as_int(g->k), b = as_int(g->batch);
        if (m && n && k && b)
            measure_gemm(r, m, n, k, b, t);
    }
    free(t);
}

/* ---- memory bandwidth ------------------------------------------------------------------------ */
static void measure_membw(run *r)
{
    const bench_backend *be = r->be;
    const bench_opts *o = r->o;
    if (r->print) {
        printf("\n# memory bandwidth (copy; GB/s counts reads + writes = 2 x bytes), every rank at once\n");
        printf("# %12s %12s %10s %10s\n", "bytes", "time_us", "min_us", "GB/s");
    }
    double *t = malloc(sizeof(double) * (size_t)o->iters);
    if (!t)
        die(r, "out of memory");
    size_t top = o->membw_bytes;
    size_t first = MiB < top ? MiB : top;
    for (size_t bytes = first; bytes > 0;) {
        void *src = xalloc(r, bytes, "copy source"), *dst = xalloc(r, bytes, "copy destination");
        fill(r, src, bytes / 4, BENCH_F32, 0);
        for (int i = 0; i < o->warmup; i++)
            if (be->membw(dst, src, bytes, &t[0]))
                die(r, "memory copy");
        for (int i = 0; i < o->iters; i++) {
            sync_all(r);
            if (be->membw(dst, src, bytes, &t[i]))
                die(r, "memory copy");
        }
        max_over_ranks(r, t, o->iters);
        stats st = stats_of(t, o->iters);
        double gbps = st.mean > 0 ? 2.0 * (double)bytes / st.mean / 1e9 : 0;
        if (r->h->rank == 0)
            json_array_append_new(r->membw, json_pack("{s:I, s:f, s:f}", "bytes", (json_int_t)bytes, "time_us",
                                                      st.mean * 1e6, "GBps", gbps));
        if (r->print) {
            printf("  %12zu %12.2f %10.2f %10.2f\n", bytes, st.mean * 1e6, st.min * 1e6, gbps);
            fflush(stdout);
        }
        be->release(src);
        be->release(dst);
        if (bytes >= top)
            break;
        bytes = bytes > top / 4 ? top : bytes * 4; /* 1 MiB, 4 MiB, ..., and the largest */
    }
    free(t);
}

/* ---- interference --------------------------------------------------------------------------- */
/* How much slower a GEMM runs while communication shares the GPU (cost_calib.overlap_slowdown):
 * per GEMM shape and kind of traffic, repetitions of (a) a burst of G GEMMs alone and (b) the
 * same burst started just after K back-to-back traffic operations on another stream, K chosen
 * so that the traffic alone lasts 3x the burst alone and so spans the whole burst even when it
 * slows down too (the backend reports how much of the burst it covered). Per repetition the
 * max over ranks; per GEMM the median over repetitions; factor = overlapped / alone - 1.
 * Traffic: NCCL all-reduces on the world communicator; on one rank an all-reduce moves nothing,
 * so device copies by a kernel of NCCL-like size stand in (and are measured beside all-reduces
 * on several ranks too, for comparison). The entries say which: "concurrent". */
static const char *traffic_name(bench_traffic t)
{
    return t == BENCH_TRAFFIC_ALLREDUCE ? "nccl-allreduce" : t == BENCH_TRAFFIC_COPY ? "memcpy-d2d" : "none";
}

/* Median of n samples; sorts v. */
static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct interf_bufs {
    void *A, *B, *C, *src, *dst;
    size_t bytes;
} interf_bufs;

/* One call of the backend; dies on failure. */
static void interfere(const run *r, const interf_bufs *b, bench_traffic t, int s, int gemms, int ops, double *t_gemm,
                      double *t_traffic, double *covered)
{
    if (r->be->interfere(r->world, t, r->be->dtype, s, s, s, gemms, b->A, b->B, b->C, b->src, b->dst, b->bytes, ops,
                         t_gemm, t_traffic, covered))
        die(r, "interference");
}

static void measure_interference_one(run *r, const interf_bufs *b, int s, bench_traffic kind, double *ta, double *to,
                                     double *unc)
{
    const bench_opts *o = r->o;
    double tg, tt, cov, v[3], x[2];
    const int warm = o->warmup > 0 ? o->warmup : 1;
    for (int i = 0; i < warm; i++) {
        interfere(r, b, BENCH_TRAFFIC_NONE, s, 1, 0, &tg, &tt, &cov);
        interfere(r, b, kind, s, 0, 1, &tg, &tt, &cov);
    }
    /* one GEMM and one traffic operation alone (median of 3, max over ranks): the sizes of G, K */
    for (int i = 0; i < 3; i++)
        interfere(r, b, BENCH_TRAFFIC_NONE, s, 1, 0, &v[i], &tt, &cov);
    x[0] = median_of(v, 3);
    for (int i = 0; i < 3; i++)
        interfere(r, b, kind, s, 0, 1, &tg, &v[i], &cov);
    x[1] = median_of(v, 3);
    max_over_ranks(r, x, 2); /* every rank sizes G and K the same: NCCL needs the same calls */
    const double burst_s = 10e-3; /* a burst of about 10 ms: far above launch and event overheads */
    double g = x[0] > 0 ? ceil(burst_s / x[0]) : 4;
    int G = g < 4 ? 4 : g > 10000 ? 10000 : (int)g;
    double kk = x[1] > 0 ? ceil(3.0 * G * x[0] / x[1]) : 1;
    int K = kk < 1 ? 1 : kk > 100000 ? 100000 : (int)kk;
    const int n = o->iters;
    for (int i = 0; i < n; i++) {
        sync_all(r);
        interfere(r, b, BENCH_TRAFFIC_NONE, s, G, 0, &ta[i], &tt, &cov);
        sync_all(r);
        interfere(r, b, kind, s, G, K, &to[i], &tt, &cov);
        unc[i] = to[i] > 0 ? 1 - cov / to[i] : 1; /* part of the burst without traffic beside it */
        if (unc[i] < 0)
            unc[i] = 0;
    }
    max_over_ranks(r, ta, n);
    max_over_ranks(r, to, n);
    max_over_ranks(r, unc, n);
    double alone = median_of(ta, n) / G, over = median_of(to, n) / G, worst = 0;
    for (int i = 0; i < n; i++)
        worst = unc[i] > worst ? unc[i] : worst;
    double factor = alone > 0 ? over / alone - 1 : 0, coverage = 1 - worst;
    if (r->h->rank == 0)
        json_array_append_new(
            r->interf,
            json_pack("{s:i, s:i, s:i, s:s, s:i, s:i, s:s, s:I, s:i, s:i, s:f, s:f, s:f, s:f}", "m", s, "n", s, "k", s,
                      "dtype", r->be->dtype == BENCH_BF16 ? "bf16" : "fp32", "gemms", G, "reps", n, "concurrent",
                      traffic_name(kind), "bytes", (json_int_t)b->bytes, "ops", K, "ranks", r->N, "t_alone_s", alone,
                      "t_overlapped_s", over, "factor", factor, "coverage", coverage));
    if (r->print) {
        printf("  %6d %6d %-15s %11zu %6d %10.2f %13.2f %8.4f %8.3f%s\n", s, G, traffic_name(kind), b->bytes, K,
               alone * 1e6, over * 1e6, factor, coverage,
               coverage < 0.99 ? "  (traffic ended before the GEMMs)" : "");
        fflush(stdout);
    }
}

static void measure_interference(run *r)
{
    const bench_backend *be = r->be;
    const bench_opts *o = r->o;
    if (!be->interfere) {
        if (r->print)
            printf("\n# interference: not measured (the %s backend does not implement it)\n", be->name);
        return;
    }
    static const int shapes[] = {4096, 8192};
    const int n_shapes = (int)(sizeof shapes / sizeof shapes[0]);
    /* one rank: an all-reduce moves nothing, device copies stand in; several: both */
    bench_traffic kinds[2] = {BENCH_TRAFFIC_ALLREDUCE, BENCH_TRAFFIC_COPY};
    int first_kind = r->N > 1 ? 0 : 1;
    if (r->print) {
        printf("\n# interference (%s GEMMs m = n = k, every rank at once): per GEMM, median of %d bursts of G GEMMs "
               "alone and with K\n# operations of concurrent traffic on another stream; max over ranks; factor = "
               "overlapped / alone - 1; coverage: part of the burst the traffic spanned\n",
               be->dtype == BENCH_BF16 ? "bf16" : "fp32", o->iters);
        printf("# %6s %6s %-15s %11s %6s %10s %13s %8s %8s\n", "m", "G", "concurrent", "bytes", "K", "alone_us",
               "overlapped_us", "factor", "coverage");
    }
    double *t = malloc(sizeof(double) * (size_t)o->iters * 3);
    if (!t)
        die(r, "out of memory");
    interf_bufs b;
    const size_t smax = (size_t)shapes[n_shapes - 1];
    b.bytes = o->interf_bytes & ~(size_t)15; /* whole 16-byte words for the copy kernel */
    b.A = xalloc(r, smax * smax * r->esz, "interference GEMM A");
    b.B = xalloc(r, smax * smax * r->esz, "interference GEMM B");
    b.C = xalloc(r, smax * smax * r->esz, "interference GEMM C");
    b.src = xalloc(r, b.bytes, "interference traffic source");
    b.dst = xalloc(r, b.bytes, "interference traffic destination");
    fill(r, b.A, smax * smax, be->dtype, 1);
    fill(r, b.B, smax * smax, be->dtype, 2);
    fill(r, b.src, b.bytes / r->esz, be->dtype, 3);
    for (int i = 0; i < n_shapes; i++)
        for (int k = first_kind; k < 2; k++)
            measure_interference_one(r, &b, shapes[i], kinds[k], t, t + o->iters, t + 2 * o->iters);
    free(t);
    be->release(b.A), be->release(b.B), be->release(b.C), be->release(b.src), be->release(b.dst);
}

/* ---- the real sharded step ------------------------------------------------------------------- */
enum { OP_COMPUTE, OP_AG, OP_RS, OP_AR, N_OPS };
static const char *const OP_NAMES[N_OPS] = {"compute", "all-gather", "reduce-scatter", "all-reduce"};

typedef struct span {
    char name[24];
    int32_t stream; /* 0 compute, 1 communication */
    int32_t layer;
    double t0, dur, bytes;
} span;

typedef struct step {
    run *r;
    int p, hier;
    bench_comm *part, *repl, *rail, *intra;
    int n_part, n_repl, n_rail;
    size_t T, h, f;           /* tokens, hidden, ffn                                        */
    size_t P, shard, full;    /* parameters of one layer; this rank's shard; padded p x shard */
    size_t off[4];            /* element offsets of Wqkv, Wproj, Wfc1, Wfc2 in a layer       */
    char *wshard, *gshard, *gsync, *wfull, *gfull, *tmp;
    char *X, *QKV, *Y, *F, *Z, *dZ, *dF, *dY, *dX, *dQKV;
    double t_start, op_t[N_OPS];
    span *spans;
    int n_spans, max_spans, tracing;
} step;

static void step_note(step *s, int op, const char *name, int layer, double t_issue, double dur, double bytes)
{
    s->op_t[op] += dur;
    if (s->tracing && s->n_spans < s->max_spans) {
        span *sp = &s->spans[s->n_spans++];
        memset(sp, 0, sizeof *sp);
        snprintf(sp->name, sizeof sp->name, "%s", name);
        sp->stream = op == OP_COMPUTE ? 0 : 1;
        sp->layer = layer;
        sp->t0 = t_issue - s->t_start;
        sp->dur = dur;
        sp->bytes = bytes;
    }
}

static void step_gemm(step *s, const char *name, int layer, int ta, int tb, size_t m, size_t n, size_t k,
                      const void *A, const void *B, void *C)
{
    const run *r = s->r;
    double t, t0 = r->be->now();
    if (r->be->gemm(r->be->dtype, ta, tb, (int)m, (int)n, (int)k, 1, A, B, C, &t))
        die(r, "step GEMM");
    step_note(s, OP_COMPUTE, name, layer, t0, t, 2.0 * (double)m * (double)n * (double)k);
}

static void step_coll(step *s, int op, const char *name, int layer, bench_comm *c, bench_coll kind, const void *send,
                      void *recv, size_t count, int n)
{
    const run *r = s->r;
    double t, t0 = r->be->now();
    if (r->be->coll(c, kind, r->be->dtype, send, recv, count, &t))
        die(r, bench_coll_name(kind));
    double bytes = (double)count * (double)r->esz * (kind == BENCH_ALLREDUCE ? 1 : n);
    step_note(s, op, name, layer, t0, t, bytes);
}

/* Parameters of layer l, gathered (or the local copy when the partition is one rank). */
static char *gather_layer(step *s, int l, const char *pass)
{
    const size_t e = s->r->esz;
    char *mine = s->wshard + (size_t)l * s->shard * e;
    if (s->n_part == 1)
        return mine;
    char name[24];
    if (s->hier) { /* MiCS hierarchical: rail across nodes, then inside the node */
        snprintf(name, sizeof name, "%s AG rail L%d", pass, l);
        step_coll(s, OP_AG, name, l, s->rail, BENCH_ALLGATHER, mine, s->tmp, s->shard, s->n_rail);
        snprintf(name, sizeof name, "%s AG intra L%d", pass, l);
        step_coll(s, OP_AG, name, l, s->intra, BENCH_ALLGATHER, s->tmp, s->wfull, s->shard * (size_t)s->n_rail,
                  s->n_part / s->n_rail);
    } else {
        snprintf(name, sizeof name, "%s AG L%d", pass, l);
        step_coll(s, OP_AG, name, l, s->part, BENCH_ALLGATHER, mine, s->wfull, s->shard, s->n_part);
    }
    return s->wfull;
}

/* One micro-step: forward over the layers, backward in reverse, gradients reduce-scattered. */
static void micro_step(step *s)
{
    const run *r = s->r;
    const size_t e = r->esz, T = s->T, h = s->h, f = s->f;
    const int L = r->o->layers;
    char name[24];
    for (int l = 0; l < L; l++) {
        char *W = gather_layer(s, l, "fwd");
        step_gemm(s, "fwd qkv", l, 0, 0, T, 3 * h, h, s->X, W + s->off[0] * e, s->QKV);
        step_gemm(s, "fwd proj", l, 0, 0, T, h, h, s->X, W + s->off[1] * e, s->Y);
        step_gemm(s, "fwd fc1", l, 0, 0, T, f, h, s->Y, W + s->off[2] * e, s->F);
        step_gemm(s, "fwd fc2", l, 0, 0, T, h, f, s->F, W + s->off[3] * e, s->Z);
    }
    for (int l = L - 1; l >= 0; l--) {
        char *W = gather_layer(s, l, "bwd");
        char *dW = s->n_part == 1 ? s->gshard + (size_t)l * s->shard * e : s->gfull;
        /* each forward C = A W gives dA = dC W^T and dW = A^T dC */
        step_gemm(s, "bwd fc2 dA", l, 0, 1, T, f, h, s->dZ, W + s->off[3] * e, s->dF);
        step_gemm(s, "bwd fc2 dW", l, 1, 0, f, h, T, s->F, s->dZ, dW + s->off[3] * e);
        step_gemm(s, "bwd fc1 dA", l, 0, 1, T, h, f, s->dF, W + s->off[2] * e, s->dY);
        step_gemm(s, "bwd fc1 dW", l, 1, 0, h, f, T, s->Y, s->dF, dW + s->off[2] * e);
        step_gemm(s, "bwd proj dA", l, 0, 1, T, h, h, s->dY, W + s->off[1] * e, s->dX);
        step_gemm(s, "bwd proj dW", l, 1, 0, h, h, T, s->X, s->dY, dW + s->off[1] * e);
        step_gemm(s, "bwd qkv dA", l, 0, 1, T, h, 3 * h, s->dQKV, W + s->off[0] * e, s->dX);
        step_gemm(s, "bwd qkv dW", l, 1, 0, h, 3 * h, T, s->X, s->dQKV, dW + s->off[0] * e);
        if (s->n_part > 1) {
            snprintf(name, sizeof name, "bwd RS L%d", l);
            step_coll(s, OP_RS, name, l, s->part, BENCH_REDUCESCATTER, s->gfull, s->gshard + (size_t)l * s->shard * e,
                      s->shard, s->n_part);
        }
    }
}

static void one_step(step *s)
{
    const run *r = s->r;
    memset(s->op_t, 0, sizeof s->op_t);
    s->n_spans = 0;
    sync_all(r);
    s->t_start = r->be->now();
    for (int a = 0; a < r->o->grad_accum; a++)
        micro_step(s);
    if (s->n_repl > 1) /* MiCS 2-hop: gradient shards all-reduced across replicas at the boundary */
        step_coll(s, OP_AR, "AR grads", -1, s->repl, BENCH_ALLREDUCE, s->gshard, s->gsync,
                  s->shard * (size_t)r->o->layers, s->n_repl);
}

/* FILE for the first layout, FILE with ".<layout>" before its extension for the others. */
static void trace_path(const char *base, const char *layout, int first, char *out, size_t n)
{
    if (first) {
        snprintf(out, n, "%s", base);
        return;
    }
    char tag[64];
    snprintf(tag, sizeof tag, "%s", layout);
    for (char *c = tag; *c; c++)
        if (*c == ':' || *c == '=' || *c == ',')
            *c = '-';
    const char *dot = strrchr(base, '.'), *slash = strrchr(base, '/');
    if (!dot || (slash && dot < slash))
        snprintf(out, n, "%s.%s", base, tag);
    else
        snprintf(out, n, "%.*s.%s%s", (int)(dot - base), base, tag, dot);
}

/* Rank 0 gathers every rank's spans of the last measured step and writes the Chrome trace:
 * one process per node, tid = local_rank * 8 + 0 (compute) or 1 (communication). */
static int write_trace(step *s, const char *path, const char *layout, sc_err *err)
{
    const run *r = s->r;
    const int N = r->N;
    int cnt = s->n_spans;
    int *counts = r->h->rank == 0 ? calloc((size_t)N, sizeof(int)) : NULL;
    span *all = r->h->rank == 0 ? calloc((size_t)N * (size_t)s->max_spans, sizeof(span)) : NULL;
    if (r->h->rank == 0 && (!counts || !all)) {
        fprintf(stderr, "shardcast-bench: out of memory for the trace\n");
        r->be->abort(1);
        exit(1);
    }
    if (r->be->host_gather(&cnt, sizeof cnt, counts) ||
        r->be->host_gather(s->spans, sizeof(span) * (size_t)s->max_spans, all))
        die(r, "gathering trace spans");
    int rc = 0;
    if (r->h->rank == 0) {
        tr_writer *w;
        if ((rc = tr_open(path, &w, err)) == 0) {
            for (int nd = 0; nd < r->h->nodes; nd++) {
                char nm[64];
                snprintf(nm, sizeof nm, "node %d", nd);
                tr_process_name(w, nd, nm);
            }
            for (int q = 0; q < N; q++) {
                char nm[64];
                int pid = r->node_of[q], tid = TR_TID(r->local_of[q], TR_STREAM_COMPUTE);
                snprintf(nm, sizeof nm, "rank %d compute", q);
                tr_thread_name(w, pid, tid, nm);
                snprintf(nm, sizeof nm, "rank %d comm", q);
                tr_thread_name(w, pid, TR_TID(r->local_of[q], TR_STREAM_COMM), nm);
                for (int i = 0; i < counts[q] && i < s->max_spans; i++) {
                    const span *sp = &all[(size_t)q * (size_t)s->max_spans + (size_t)i];
                    char args[160];
                    if (sp->stream)
                        snprintf(args, sizeof args, "{\"layout\":\"%s\",\"layer\":%d,\"bytes\":%.0f}", layout,
                                 sp->layer, sp->bytes);
                    else
                        snprintf(args, sizeof args, "{\"layout\":\"%s\",\"layer\":%d,\"flops\":%.0f}", layout,
                                 sp->layer, sp->bytes);
                    tr_span(w, pid, TR_TID(r->local_of[q], sp->stream ? TR_STREAM_COMM : TR_STREAM_COMPUTE), sp->name,
                            sp->stream ? TR_CAT_COLLECTIVE : TR_CAT_COMPUTE, sp->t0, sp->dur, args);
                }
            }
            rc = tr_close(w, err);
        }
    }
    free(counts);
    free(all);
    return rc;
}

static int run_step(run *r, const spec_layout *lay, int first, sc_err *err)
{
    const bench_opts *o = r->o;
    const bench_backend *be = r->be;
    const int N = r->N;
    char lname[64];
    spec_layout_str(lay, lname, sizeof lname);
    step s;
    memset(&s, 0, sizeof s);
    s.r = r;
    s.p = lay->kind == LAYOUT_ZERO3 ? N : lay->p;
    if (s.p < 1 || s.p > N || N % s.p)
        return sc_err_set(err, SC_EINPUT, "--step", "", "%s: expected a partition size dividing the %d ranks, got %d",
                          lname, N, s.p);
    s.hier = lay->kind == LAYOUT_MICS && lay->hier && r->G > 1 && s.p > r->G && s.p % r->G == 0;
    s.T = (size_t)o->seq * (size_t)o->micro_batch;
    s.h = (size_t)o->hidden;
    s.f = (size_t)o->ffn;
    const size_t e = r->esz, T = s.T, h = s.h, f = s.f;
    s.off[0] = 0;
    s.off[1] = 3 * h * h;
    s.off[2] = 4 * h * h;
    s.off[3] = 4 * h * h + h * f;
    s.P = 4 * h * h + 2 * h * f;
    s.shard = (s.P + (size_t)s.p - 1) / (size_t)s.p;
    s.full = s.shard * (size_t)s.p;
    const size_t L = (size_t)o->layers;

    s.part = s.p == N ? r->world : split_kind(r, GRP_PARTITION, s.p);
    s.repl = split_kind(r, GRP_REPLICA, s.p);
    s.n_part = be->comm_size(s.part);
    s.n_repl = be->comm_size(s.repl);
    if (s.hier) {
        s.rail = split_kind(r, GRP_RAIL, s.p);
        s.intra = split_kind(r, GRP_INTRA, s.p);
        s.n_rail = be->comm_size(s.rail);
    }
    s.wshard = xalloc(r, L * s.shard * e, "parameter shards");
    s.gshard = xalloc(r, L * s.shard * e, "gradient shards");
    s.gsync = xalloc(r, L * s.shard * e, "synchronised gradients");
    s.wfull = xalloc(r, s.full * e, "gathered layer");
    s.gfull = xalloc(r, s.full * e, "layer gradients");
    s.tmp = xalloc(r, s.hier ? s.shard * (size_t)s.n_rail * e : 16, "rail gather");
    char **acts[] = {&s.X, &s.QKV, &s.Y, &s.F, &s.Z, &s.dZ, &s.dF, &s.dY, &s.dX, &s.dQKV};
    const size_t widths[] = {h, 3 * h, h, f, h, h, f, h, h, 3 * h};
    for (int i = 0; i < 10; i++) {
        *acts[i] = xalloc(r, T * widths[i] * e, "activations");
        fill(r, *acts[i], T * widths[i], be->dtype, i);
    }
    fill(r, s.wshard, L * s.shard, be->dtype, 7);
    fill(r, s.gfull, s.full, be->dtype, 8);
    fill(r, s.gshard, L * s.shard, be->dtype, 9);

    s.max_spans = o->grad_accum * o->layers * (2 * 2 + 4 + 8 + 1) + 1;
    s.spans = calloc((size_t)s.max_spans, sizeof(span));
    const int n_t = o->timed_steps;
    double *v = calloc((size_t)n_t * (N_OPS + 1), sizeof(double));
    if (!s.spans || !v)
        die(r, "out of memory");
    for (int i = 0; i < (o->warmup > 0 ? o->warmup : 1); i++)
        one_step(&s);
    for (int i = 0; i < n_t; i++) {
        s.tracing = o->trace && i == n_t - 1;
        one_step(&s);
        v[i] = be->now() - s.t_start;
        for (int k = 0; k < N_OPS; k++)
            v[(size_t)n_t * (size_t)(k + 1) + (size_t)i] = s.op_t[k];
    }
    max_over_ranks(r, v, n_t * (N_OPS + 1));
    double per_op[N_OPS];
    for (int k = 0; k < N_OPS; k++) {
        per_op[k] = 0;
        for (int i = 0; i < n_t; i++)
            per_op[k] += v[(size_t)n_t * (size_t)(k + 1) + (size_t)i];
        per_op[k] /= n_t;
    }
    stats st = stats_of(v, n_t);
    int rc = 0;
    if (r->h->rank == 0) {
        json_t *ops = json_object();
        for (int k = 0; k < N_OPS; k++)
            json_object_set_new(ops, OP_NAMES[k], json_real(per_op[k]));
        json_array_append_new(r->steps,
                              json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:f, s:f, s:o}", "layout", lname,
                                        "layers", o->layers, "hidden", o->hidden, "ffn", o->ffn, "seq_len", o->seq,
                                        "micro_batch", o->micro_batch, "grad_accum", o->grad_accum, "dtype",
                                        be->dtype == BENCH_BF16 ? "bf16" : "fp32", "step_s", st.mean, "step_min_s",
                                        st.min, "per_op_s", ops));
    }
    if (r->print) {
        printf("  %-16s %4d %4d %4d %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f\n", lname, s.n_part, s.n_repl,
               o->layers, st.mean, st.min, per_op[OP_COMPUTE], per_op[OP_AG], per_op[OP_RS], per_op[OP_AR]);
        fflush(stdout);
    }
    if (o->trace) {
        char path[4200];
        trace_path(o->trace, lname, first, path, sizeof path);
        rc = write_trace(&s, path, lname, err);
        if (!rc && r->print)
            printf("  trace: %s\n", path);
    }
    free(v);
    free(s.spans);
    for (int i = 0; i < 10; i++)
        be->release(*acts[i]);
    be->release(s.wshard), be->release(s.gshard), be->release(s.gsync);
    be->release(s.wfull), be->release(s.gfull), be->release(s.tmp);
    if (s.part != r->world)
        be->comm_free(s.part);
    be->comm_free(s.repl);
    if (s.hier) {
        be->comm_free(s.rail);
        be->comm_free(s.intra);
    }
    return rc;
}

/* ---- output ---------------------------------------------------------------------------------- */
static int write_json(const run *r, json_t *root, sc_err *err)
{
    const char *path = r->o->out;
    char *txt = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
    if (!txt)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory building JSON");
    at_file *f;
    int rc = at_begin(path, &f, err);
    if (!rc) {
        size_t len = strlen(txt);
        if (fwrite(txt, 1, len, at_stream(f)) != len || fputc('\n', at_stream(f)) == EOF) {
            at_abort(f);
            rc = sc_err_set(err, SC_ERUNTIME, path, "", "cannot write measurements");
        } else {
            rc = at_commit(f, AT_CHECK_NONE, err);
        }
    }
    free(txt);
    return rc;
}

static json_t *host_json(const run *r)
{
    const bench_host *h = r->h;
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    char note[1024];
    int len = snprintf(note, sizeof note,
                       "%d ranks on %d node(s), %d per node; %d cores per host", h->ranks, h->nodes, h->ranks_per_node,
                       h->cores);
    if (!strcmp(r->be->name, "cpu") && len > 0 && (size_t)len < sizeof note)
        len += snprintf(note + len, sizeof note - (size_t)len, " shared by its ranks, %d BLAS thread(s) per rank",
                        h->blas_threads);
    if (len > 0 && (size_t)len < sizeof note)
        len += snprintf(note + len, sizeof note - (size_t)len,
                        "; per-op times after a world barrier (isolated, not pipelined), max over ranks");
    if (h->uneven_nodes && len > 0 && (size_t)len < sizeof note)
        len += snprintf(note + len, sizeof note - (size_t)len, "; WARNING: nodes hold different rank counts");
    if (r->o->note && len > 0 && (size_t)len < sizeof note)
        snprintf(note + len, sizeof note - (size_t)len, "; %s", r->o->note);
    return json_pack("{s:s, s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "backend", r->be->name,
                     "device", h->device, "ranks", h->ranks, "nodes", h->nodes, "ranks_per_node", h->ranks_per_node,
                     "driver", h->driver, "cuda", h->cuda, "nccl", h->nccl, "mpi", h->mpi, "blas", h->blas, "date",
                     date, "hostname", h->hostname, "note", note);
}

int bench_run(const bench_backend *be, const bench_host *host, const bench_opts *o, sc_err *err)
{
    run r;
    memset(&r, 0, sizeof r);
    r.be = be;
    r.h = host;
    r.o = o;
    r.world = be->world();
    r.N = host->ranks;
    r.G = host->ranks_per_node > 0 ? host->ranks_per_node : 1;
    r.esz = be->dtype == BENCH_BF16 ? 2 : 4;
    r.print = host->rank == 0 && !o->quiet;

    /* every rank's node and local index (each rank fills its slot, the sum spreads them) */
    double *slots = calloc((size_t)r.N * 2, sizeof(double));
    r.node_of = calloc((size_t)r.N, sizeof(int));
    r.local_of = calloc((size_t)r.N, sizeof(int));
    r.host_bytes = o->max_bytes + 64;
    if (r.host_bytes < 16 * MiB)
        r.host_bytes = 16 * MiB;
    r.host = malloc(r.host_bytes);
    if (!slots || !r.node_of || !r.local_of || !r.host) {
        free(slots), free(r.node_of), free(r.local_of), free(r.host);
        return sc_err_set(err, SC_ERUNTIME, "", "", "out of memory");
    }
    slots[host->rank] = host->node;
    slots[r.N + host->rank] = host->local_rank;
    if (be->host_allreduce(slots, 2 * r.N, 0))
        die(&r, "reduction over ranks");
    for (int i = 0; i < r.N; i++) {
        r.node_of[i] = (int)slots[i];
        r.local_of[i] = (int)slots[r.N + i];
    }
    free(slots);

    /* every rank checks the step layouts the same way before measuring anything */
    int rc = 0;
    for (int i = 0; i < o->n_steps && !rc; i++) {
        int p = o->step[i].kind == LAYOUT_ZERO3 ? r.N : o->step[i].p;
        if (p < 1 || p > r.N || r.N % p) {
            char nm[64];
            rc = sc_err_set(err, SC_EINPUT, "--step", "", "%s: expected a partition size dividing the %d ranks, got %d",
                            spec_layout_str(&o->step[i], nm, sizeof nm), r.N, p);
        }
    }
    for (int i = 0; i < o->n_p && !rc; i++)
        if (r.N % o->p[i])
            rc = sc_err_set(err, SC_EINPUT, "--groups", "", "expected p dividing the %d ranks, got %d", r.N, o->p[i]);
    if (rc) {
        free(r.node_of), free(r.local_of), free(r.host);
        return rc;
    }

    r.colls = json_array();
    r.gemms = json_array();
    r.membw = json_array();
    r.interf = json_array();
    r.steps = json_array();
    if (r.print) {
        printf("# shardcast-bench (%s): %d ranks, %d node(s) x %d; %s", be->name, r.N, host->nodes, r.G, host->device);
        if (*host->nccl)
            printf("; NCCL %s", host->nccl);
        printf("; %s; %s\n", *host->mpi ? host->mpi : "no MPI", host->blas);
        fflush(stdout);
    }
    if (!o->skip_coll)
        measure_collectives(&r);
    if (!o->skip_gemm && (o->gemm_max > 0 || o->n_model_gemms))
        measure_gemms(&r);
    if (!o->skip_membw && o->membw_bytes)
        measure_membw(&r);
    if (!o->skip_interf && o->interf_bytes)
        measure_interference(&r);
    if (o->n_steps && r.print) {
        printf("\n# sharded step (%s, %d layers, hidden %d, ffn %d, %d tokens x %d micro-steps): seconds, max over "
               "ranks, %d steps\n",
               be->dtype == BENCH_BF16 ? "bf16" : "fp32", o->layers, o->hidden, o->ffn, o->seq * o->micro_batch,
               o->grad_accum, o->timed_steps);
        printf("# %-16s %4s %4s %4s %10s %10s %10s %10s %10s %10s\n", "layout", "p", "repl", "L", "step_s", "min_s",
               "compute", "all-gather", "red-scat", "all-reduce");
    }
    for (int i = 0; i < o->n_steps && !rc; i++)
        rc = run_step(&r, &o->step[i], i == 0, err);

    if (!rc && host->rank == 0) {
        json_t *root = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "schema", "shardcast-measurements/1", "host",
                                 host_json(&r), "collectives", r.colls, "gemms", r.gemms, "membw", r.membw,
                                 "interference", r.interf, "steps", r.steps);
        if (!root)
            rc = sc_err_set(err, SC_ERUNTIME, o->out, "", "out of memory building JSON");
        else {
            rc = write_json(&r, root, err);
            json_decref(root);
        }
        if (!rc && r.print)
            printf("\nwrote %s\n", o->out);
    } else {
        json_decref(r.colls), json_decref(r.gemms), json_decref(r.membw), json_decref(r.interf);
        json_decref(r.steps);
    }
    free(r.node_of), free(r.local_of), free(r.host);
    return rc;
}

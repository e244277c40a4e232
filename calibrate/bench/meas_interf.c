/* meas_interf.c — one measurement of the harness (harness.h): GEMMs alone and beside concurrent communication (interference).
 * Timing as driver.c describes. Not here: the loop, output, backends. */
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
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct interf_bufs {
    void *A, *B, *C, *src, *dst;
    size_t bytes;
} interf_bufs;

/* One call of the backend; dies on failure. */
static void interfere(const bench_ctx *r, const interf_bufs *b, bench_traffic t, int s, int gemms, int ops, double *t_gemm,
                      double *t_traffic, double *covered)
{
    if (r->be->interfere(r->world, t, r->be->dtype, s, s, s, gemms, b->A, b->B, b->C, b->src, b->dst, b->bytes, ops,
                         t_gemm, t_traffic, covered))
        bench_die(r, "interference");
}

static void measure_interference_one(bench_ctx *r, const interf_bufs *b, int s, bench_traffic kind, double *ta, double *to,
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
    bench_max_over_ranks(r, x, 2); /* every rank sizes G and K the same: NCCL needs the same calls */
    const double burst_s = 10e-3; /* a burst of about 10 ms: far above launch and event overheads */
    double g = x[0] > 0 ? ceil(burst_s / x[0]) : 4;
    int G = g < 4 ? 4 : g > 10000 ? 10000 : (int)g;
    double kk = x[1] > 0 ? ceil(3.0 * G * x[0] / x[1]) : 1;
    int K = kk < 1 ? 1 : kk > 100000 ? 100000 : (int)kk;
    const int n = o->iters;
    for (int i = 0; i < n; i++) {
        bench_sync(r);
        interfere(r, b, BENCH_TRAFFIC_NONE, s, G, 0, &ta[i], &tt, &cov);
        bench_sync(r);
        interfere(r, b, kind, s, G, K, &to[i], &tt, &cov);
        unc[i] = to[i] > 0 ? 1 - cov / to[i] : 1; /* part of the burst without traffic beside it */
        if (unc[i] < 0)
            unc[i] = 0;
    }
    bench_max_over_ranks(r, ta, n);
    bench_max_over_ranks(r, to, n);
    bench_max_over_ranks(r, unc, n);
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

void bench_measure_interference(bench_ctx *r)
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
        bench_die(r, "out of memory");
    interf_bufs b;
    const size_t smax = (size_t)shapes[n_shapes - 1];
    b.bytes = o->interf_bytes & ~(size_t)15; /* whole 16-byte words for the copy kernel */
    b.A = bench_alloc(r, smax * smax * r->esz, "interference GEMM A");
    b.B = bench_alloc(r, smax * smax * r->esz, "interference GEMM B");
    b.C = bench_alloc(r, smax * smax * r->esz, "interference GEMM C");
    b.src = bench_alloc(r, b.bytes, "interference traffic source");
    b.dst = bench_alloc(r, b.bytes, "interference traffic destination");
    bench_fill(r, b.A, smax * smax, be->dtype, 1);
    bench_fill(r, b.B, smax * smax, be->dtype, 2);
    bench_fill(r, b.src, b.bytes / r->esz, be->dtype, 3);
    for (int i = 0; i < n_shapes; i++)
        for (int k = first_kind; k < 2; k++)
            measure_interference_one(r, &b, shapes[i], kinds[k], t, t + o->iters, t + 2 * o->iters);
    free(t);
    be->release(b.A), be->release(b.B), be->release(b.C), be->release(b.src), be->release(b.dst);
}

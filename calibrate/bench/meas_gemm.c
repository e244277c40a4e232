/* meas_gemm.c — one measurement of the harness (harness.h): GEMMs: a square grid and the shapes of a model's layer.
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

/* ---- GEMMs ----------------------------------------------------------------------------------- */
/* Back-to-back calls per timed sample: enough to span GEMM_SPAN_S (200 us: the isolated floor of
 * 11-15 us on the lent H100 / H200 is then under a tenth of a sample even at one call), at most
 * GEMM_MAX_REPS (the GPU backend holds its stream 20 us a call while they are enqueued). */
#define GEMM_SPAN_S 200e-6
#define GEMM_MAX_REPS 64

static int gemm_reps(double t_one_s)
{
    if (!(t_one_s > 0))
        return GEMM_MAX_REPS;
    double n = ceil(GEMM_SPAN_S / t_one_s);
    return n < 1 ? 1 : n > GEMM_MAX_REPS ? GEMM_MAX_REPS : (int)n;
}

static void measure_gemm(bench_ctx *r, int m, int n, int k, int batch, double *t)
{
    const bench_backend *be = r->be;
    const bench_opts *o = r->o;
    size_t b = (size_t)batch;
    void *A = bench_alloc(r, (size_t)m * k * b * r->esz, "GEMM A"), *B = bench_alloc(r, (size_t)k * n * b * r->esz, "GEMM B"),
         *C = bench_alloc(r, (size_t)m * n * b * r->esz, "GEMM C");
    bench_fill(r, A, (size_t)m * k * b, be->dtype, 1);
    bench_fill(r, B, (size_t)k * n * b, be->dtype, 2);
    /* warm-up: o->warmup calls, then on until gemm_warm_s seconds of this GEMM have run, so the
     * timed calls see the clock a sustained load settles at (power-limited GPUs slow down within
     * about a second: H100 SXM 1980 -> 1350 MHz at 700 W, bench/gpu-results/2026-11-27-h100-sxm) */
    double warm = 0;
    for (int i = 0; i < o->warmup || (warm < o->gemm_warm_s && i < 1000000); i++) {
        if (be->gemm(be->dtype, 0, 0, m, n, k, batch, 0, A, B, C, &t[0]))
            bench_die(r, "GEMM");
        warm += t[0] > 0 ? t[0] : 1e-6;
    }
    /* timed: back to back (backend.h), as many calls a sample as fill GEMM_SPAN_S by the last
     * warm-up call's time (itself an upper bound: one isolated call), 1 to GEMM_MAX_REPS */
    int reps = gemm_reps(t[0]);
    for (int i = 0; i < o->iters; i++) {
        bench_sync(r);
        if (be->gemm(be->dtype, 0, 0, m, n, k, batch, reps, A, B, C, &t[i]))
            bench_die(r, "GEMM");
    }
    bench_max_over_ranks(r, t, o->iters);
    bench_stats st = bench_stats_of(t, o->iters);
    double flops = 2.0 * m * n * (double)k * batch;
    double tflops = st.mean > 0 ? flops / st.mean / 1e12 : 0;
    if (r->h->rank == 0)
        json_array_append_new(r->gemms, json_pack("{s:i, s:i, s:i, s:i, s:s, s:f, s:f, s:s, s:i}", "m", m, "n", n, "k", k,
                                                  "batch", batch, "dtype", be->dtype == BENCH_BF16 ? "bf16" : "fp32",
                                                  "time_us", st.mean * 1e6, "tflops", tflops, "timing", "back_to_back",
                                                  "reps", reps));
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

void bench_measure_gemms(bench_ctx *r)
{
    const bench_opts *o = r->o;
    if (r->print) {
        printf("\n# GEMMs (%s, row-major C = A B, random operands, every rank at once): time = max over ranks of"
               " one GEMM back to back (a sample: enough calls to span %.0f us), %d samples after %g s of the same GEMM\n",
               r->be->dtype == BENCH_BF16 ? "bf16, fp32 accumulate" : "fp32", GEMM_SPAN_S * 1e6, o->iters, o->gemm_warm_s);
        printf("# %7s %7s %7s %6s %12s %10s %10s %9s\n", "m", "n", "k", "batch", "time_us", "min_us", "p95_us",
               "TFLOP/s");
    }
    double *t = malloc(sizeof(double) * (size_t)o->iters);
    if (!t)
        bench_die(r, "out of memory");
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

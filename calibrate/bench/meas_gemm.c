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
        if (be->gemm(be->dtype, 0, 0, m, n, k, batch, A, B, C, &t[0]))
            bench_die(r, "GEMM");
        warm += t[0] > 0 ? t[0] : 1e-6;
    }
    for (int i = 0; i < o->iters; i++) {
        bench_sync(r);
        if (be->gemm(be->dtype, 0, 0, m, n, k, batch, A, B, C, &t[i]))
            bench_die(r, "GEMM");
    }
    bench_max_over_ranks(r, t, o->iters);
    bench_stats st = bench_stats_of(t, o->iters);
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

void bench_measure_gemms(bench_ctx *r)
{
    const bench_opts *o = r->o;
    if (r->print) {
        printf("\n# GEMMs (%s, row-major C = A B, random operands, every rank at once): time = max over ranks,"
               " %d iterations after %g s of the same GEMM\n",
               r->be->dtype == BENCH_BF16 ? "bf16, fp32 accumulate" : "fp32", o->iters, o->gemm_warm_s);
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

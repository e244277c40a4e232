/* ub_chunks_table.c — docs/COMPUTE.md's table for Transformer Engine's userbuffers chunks: at
 * every shape of the lent H200's ub_chunks.json, the kernel model's own chunked / whole GEMM time
 * (`chunks` GEMMs of m / chunks against the whole one: held out, nothing fitted), the factor
 * cost.c prices (kern_gemm_chunk_factor, the measured medians by chunk rows) and the measured
 * serial and 3-stream ratios; then the factor's leave-one-model-out check (each model's rows
 * against the median of the other model's). The kernel model runs the dgx-h100 calibration at its
 * sustained clock (the H200's dense GEMM rate equals the H100's: 666 vs 668 TFLOP/s sustained,
 * 132 SMs both; bench/RESULTS.md). Not a benchmark: `make bench` builds it; from the repository
 * root: make build/bench/ub_chunks_table && build/bench/ub_chunks_table */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/cost.h"

#define UB_JSON "bench/gpu-results/2026-11-27-h200/ub_chunks.json"

static double num(const json_t *r, const char *k) { return json_number_value(json_object_get(r, k)); }

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int is_model(const json_t *r, const char *model)
{
    return !strcmp(json_string_value(json_object_get(r, "model")), model);
}

/* Leave one model out: each model's serial ratios against the median of the other model's at
 * the same m (the factor's table is the median over both). */
static void loo(const json_t *rows)
{
    static const char *const MODELS[2] = {"gpt3-175b-t4", "llama3-70b-t4"};
    for (int h = 0; h < 2; h++) {
        double err[64], other[64];
        int ne = 0;
        for (double M = 2048; M <= 8192; M *= 2) {
            int no = 0;
            size_t i;
            json_t *r;
            json_array_foreach(rows, i, r)
            {
                if (num(r, "m") == M && !is_model(r, MODELS[h]) && no < 64)
                    other[no++] = num(r, "serial_over_whole");
            }
            if (!no)
                continue;
            double med = median(other, no);
            json_array_foreach(rows, i, r)
            {
                if (num(r, "m") == M && is_model(r, MODELS[h]) && ne < 64)
                    err[ne++] = fabs(med - num(r, "serial_over_whole"));
            }
        }
        if (ne)
            printf("held out %s: %d rows, median |other model's median - measured serial| %.3f\n", MODELS[h], ne,
                   median(err, ne));
    }
}

int main(void)
{
    spec_cluster C;
    cost_calib K;
    sc_err e;
    if (spec_load_cluster("configs/clusters/dgx-h100.json", &C, &e) ||
        cost_calib_load("configs/calibrations/dgx-h100.json", &K, &e)) {
        fprintf(stderr, "ub_chunks_table: %s\n", e.text);
        return 1;
    }
    json_error_t je;
    json_t *root = json_load_file(UB_JSON, 0, &je);
    json_t *rows = root ? json_object_get(root, "rows") : NULL;
    if (!json_is_array(rows)) {
        fprintf(stderr, "ub_chunks_table: %s: %s\n", UB_JSON, root ? "$.rows: expected an array" : je.text);
        return 1;
    }
    const double hbm = C.gpu.hbm_bw_Bps * K.hbm_eff.v;
    double e_kern[64], e_fac[64];
    int n = 0;
    puts("| model | GEMM | m | n | k | chunks | kernel model TFLOP/s whole | measured whole | kernel model "
         "chunked / whole | priced (factor) | measured serial | measured 3 streams |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        double m = num(r, "m"), nn = num(r, "n"), k = num(r, "k"), ch = num(r, "chunks");
        double whole = kern_gemm_time(&K.kern, &C, KD_BF16, m, nn, k, 1, 2, hbm);
        double part = ch * kern_gemm_time(&K.kern, &C, KD_BF16, m / ch, nn, k, 1, 2, hbm);
        double fac = kern_gemm_chunk_factor(&C, m / ch), ms = num(r, "serial_over_whole");
        printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | %.3f | %.3f | %.3f |\n",
               json_string_value(json_object_get(r, "model")), json_string_value(json_object_get(r, "gemm")), m, nn,
               k, ch, 2 * m * nn * k / whole / 1e12, num(r, "whole_tflops"), part / whole, fac, ms,
               num(r, "streams3_over_whole"));
        if (n < 64) {
            e_kern[n] = fabs(part / whole - ms);
            e_fac[n++] = fabs(fac - ms);
        }
    }
    printf("\nmedian |x - measured serial| over %d shapes: kernel model %.3f, priced factor %.3f "
           "(the factor is the median of these very rows: not held out)\n",
           n, median(e_kern, n), median(e_fac, n));
    loo(rows);
    json_decref(root);
    return 0;
}

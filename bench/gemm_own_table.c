/* gemm_own_table.c — docs/COMPUTE.md's table of the kernel model's GEMM times against the GEMMs
 * we measured ourselves on the lent H100 SXM and H200 (bench/gpu-results/2026-11-27-*: the
 * harness' GEMM rows, sustained_gemm.json's Llama-3-8B layer GEMMs, ub_chunks.json's whole and
 * 4-chunk Transformer Engine GEMMs), data-parallel waves only (gemm_streamk 0: the model before
 * issue 27 smallm27) and with stream-K, per set: the shaping set (H100 rows + the GPT-3 175B
 * chunk rows) and the held-out set (H200 harness and layer rows + the Llama-3 70B chunk rows),
 * chosen before the held-out errors were looked at; then the model's own chunked / whole ratio
 * against the measured one (the question whether kern_gemm_chunk_factor can go). Squares of
 * 1024 and less are left out (launch-bound: 11-18 us whatever the tiles). Not a benchmark:
 * `make bench` builds it; from the repository root:
 *   make build/bench/gemm_own_table && build/bench/gemm_own_table [-v] */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/cost.h"

#define RES "bench/gpu-results/"

typedef struct gpu {
    const char *name, *cluster, *dir; /* the cluster file carries its sustained clock_ratio */
    spec_cluster c;
    kern_calib k;
    double hbm;
} gpu;

typedef struct acc {
    double sum, max, bias;
    int n;
} acc;

static int verbose;

static double num(const json_t *r, const char *key) { return json_number_value(json_object_get(r, key)); }

static double tflops(gpu *g, int streamk, double m, double n, double k, double b)
{
    g->k.gemm_streamk = streamk;
    return 2 * m * n * k * b / kern_gemm_time(&g->k, &g->c, KD_BF16, m, n, k, b, 2, g->hbm) / 1e12;
}

static void add(acc *a, double e)
{
    a->sum += fabs(e);
    a->bias += e;
    a->max = fabs(e) > a->max ? fabs(e) : a->max;
    a->n++;
}

/* one measured GEMM: both models' errors into set s (0 shaping, 1 held out) */
static void row(acc a[2][2], int s, gpu *g, const char *what, double m, double n, double k, double b, double meas)
{
    double e[2];
    for (int sk = 0; sk < 2; sk++) {
        e[sk] = 100 * (tflops(g, sk, m, n, k, b) / meas - 1);
        add(&a[s][sk], e[sk]);
    }
    if (verbose)
        printf("| %s | %s | %s | %.0f x %.0f x %.0f x %.0f | %.1f | %.1f (%+.1f%%) | %.1f (%+.1f%%) |\n",
               s ? "held out" : "shaping", g->name, what, m, n, k, b, meas, tflops(g, 0, m, n, k, b), e[0],
               tflops(g, 1, m, n, k, b), e[1]);
}

static json_t *load_rows(const char *dir, const char *file, const char *key)
{
    char p[256];
    snprintf(p, sizeof p, RES "%s/%s", dir, file);
    json_error_t je;
    json_t *root = json_load_file(p, 0, &je);
    if (!root || !json_is_array(json_object_get(root, key))) {
        fprintf(stderr, "gemm_own_table: %s: %s\n", p, root ? "no rows" : je.text);
        exit(1);
    }
    return root;
}

static void harness_and_layers(acc a[2][2], int s, gpu *g)
{
    json_t *h = load_rows(g->dir, "harness-measurements.json", "gemms");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(h, "gemms"), i, r)
    {
        double m = num(r, "m"), n = num(r, "n"), k = num(r, "k");
        if (m == n && n == k && m <= 1024)
            continue;
        row(a, s, g, "harness", m, n, k, num(r, "batch"), num(r, "tflops"));
    }
    json_decref(h);
    json_t *su = load_rows(g->dir, "sustained_gemm.json", "rows");
    json_array_foreach(json_object_get(su, "rows"), i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "kind")), "llama3-8b"))
            continue;
        char w[64];
        snprintf(w, sizeof w, "Llama-3-8B %s %s", json_string_value(json_object_get(r, "gemm")),
                 json_string_value(json_object_get(r, "role")));
        row(a, s, g, w, num(r, "m"), num(r, "n"), num(r, "k"), 1, num(r, "tflops"));
    }
    json_decref(su);
}

static void print_acc(acc a[2][2])
{
    static const char *const SET[2] = {"shaping (H100 harness + layers, GPT-3 175B chunk rows)",
                                       "held out (H200 harness + layers, Llama-3 70B chunk rows)"};
    puts("\n| set | GEMMs | data-parallel waves: mean abs / max / bias | with stream-K: mean abs / max / bias |\n"
         "|---|---:|---|---|");
    for (int s = 0; s < 2; s++)
        printf("| %s | %d | %.2f / %.1f / %+.2f %% | %.2f / %.1f / %+.2f %% |\n", SET[s], a[s][0].n,
               a[s][0].sum / a[s][0].n, a[s][0].max, a[s][0].bias / a[s][0].n, a[s][1].sum / a[s][1].n, a[s][1].max,
               a[s][1].bias / a[s][1].n);
}

/* The kernel model's own 4-chunk / whole time against the measured serial ratio, per set. */
static void chunk_ratios(gpu *g, const json_t *rows)
{
    puts("\n| set (TE 4-chunk GEMMs, H200) | GEMMs | data-parallel: median / max abs(model - measured) | with stream-K "
         "| kern_gemm_chunk_factor (the other model's median) |\n|---|---:|---|---|---|");
    for (int s = 0; s < 2; s++) {
        double d[2][64], dmax[2] = {0, 0};
        int n = 0;
        size_t i;
        json_t *r;
        json_array_foreach(rows, i, r)
        {
            const int held = strncmp(json_string_value(json_object_get(r, "model")), "gpt3", 4) != 0;
            if (held != s || n >= 64)
                continue;
            double m = num(r, "m"), nn = num(r, "n"), k = num(r, "k"), ch = num(r, "chunks");
            for (int sk = 0; sk < 2; sk++) {
                double rat = tflops(g, sk, m, nn, k, 1) / tflops(g, sk, m / ch, nn, k, 1);
                d[sk][n] = fabs(rat - num(r, "serial_over_whole"));
                dmax[sk] = d[sk][n] > dmax[sk] ? d[sk][n] : dmax[sk];
            }
            n++;
        }
        double med[2];
        for (int sk = 0; sk < 2; sk++) {
            for (int x = 1; x < n; x++) /* insertion sort: n <= 64 */
                for (int y = x; y > 0 && d[sk][y - 1] > d[sk][y]; y--) {
                    double t = d[sk][y];
                    d[sk][y] = d[sk][y - 1];
                    d[sk][y - 1] = t;
                }
            med[sk] = n % 2 ? d[sk][n / 2] : (d[sk][n / 2 - 1] + d[sk][n / 2]) / 2;
        }
        printf("| %s | %d | %.3f / %.3f | %.3f / %.3f | build/bench/ub_chunks_table (leave one model out) |\n",
               s ? "held out: Llama-3 70B" : "shaping: GPT-3 175B", n, med[0], dmax[0], med[1], dmax[1]);
    }
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && !strcmp(argv[1], "-v");
    static const char *const DEF[2][3] = {{"H100 SXM", "configs/clusters/dgx-h100.json", "2026-11-27-h100-sxm"},
                                           {"H200", "validation/clusters/h200-node.json", "2026-11-27-h200"}};
    gpu G[2];
    memset(G, 0, sizeof G);
    for (int i = 0; i < 2; i++) {
        G[i].name = DEF[i][0];
        G[i].cluster = DEF[i][1];
        G[i].dir = DEF[i][2];
        cost_calib cal;
        sc_err e;
        if (spec_load_cluster(G[i].cluster, &G[i].c, &e) ||
            cost_calib_load("configs/calibrations/dgx-h100.json", &cal, &e)) {
            fprintf(stderr, "gemm_own_table: %s\n", e.text);
            return 1;
        }
        G[i].k = cal.kern;
        G[i].hbm = G[i].c.gpu.hbm_bw_Bps * cal.hbm_eff.v;
    }
    acc a[2][2];
    memset(a, 0, sizeof a);
    if (verbose)
        puts("| set | GPU | GEMM | m x n x k x batch | measured TFLOP/s | data-parallel | with stream-K |\n"
             "|---|---|---|---|---:|---:|---:|");
    harness_and_layers(a, 0, &G[0]);
    harness_and_layers(a, 1, &G[1]);
    json_t *ub = load_rows(G[1].dir, "ub_chunks.json", "rows");
    const json_t *rows = json_object_get(ub, "rows");
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const int held = strncmp(json_string_value(json_object_get(r, "model")), "gpt3", 4) != 0;
        double m = num(r, "m"), n = num(r, "n"), k = num(r, "k"), ch = num(r, "chunks");
        char w[96];
        snprintf(w, sizeof w, "%s %s whole", json_string_value(json_object_get(r, "model")),
                 json_string_value(json_object_get(r, "gemm")));
        row(a, held, &G[1], w, m, n, k, 1, num(r, "whole_tflops"));
        snprintf(w, sizeof w, "%s %s chunk", json_string_value(json_object_get(r, "model")),
                 json_string_value(json_object_get(r, "gemm")));
        row(a, held, &G[1], w, m / ch, n, k, 1, num(r, "serial_tflops"));
    }
    print_acc(a);
    chunk_ratios(&G[1], rows);
    json_decref(ub);
    return 0;
}

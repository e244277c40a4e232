/* block_table.c — docs/COMPUTE.md's "H200 held-out checks": bench/gpu/eager_block.py's two blocks
 * (2 x 4096 tokens, fwd + bwd) timed by the model (model/workload + model/cost, the dgx-h100
 * calibration) on the H100 SXM and H200 clusters, eager and compiled, by kernel class, beside the
 * lent GPUs' profiles (bench/gpu-results/2026-11-27-{h100-sxm,h200}/eager_block.json). Nothing is
 * fitted here. Not a benchmark: `make bench` builds it, nothing runs it; from the repository root:
 *   make build/bench/block_table && build/bench/block_table */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../model/cost.h"
#include "../model/stack.h"

typedef struct { double gemm, attn, ew, total; } cls_t;

static void load(const char *cl, spec_cluster *C, cost_calib *K)
{
    sc_err e;
    if (spec_load_cluster(cl, C, &e) || cost_calib_load("configs/calibrations/dgx-h100.json", K, &e)) {
        printf("%s: %s\n", e.source, e.text);
        exit(1);
    }
}

/* eager_block.py's settings: no checkpointing, no dropout, SDPA's cuDNN backend (the profiles'
 * cudnn_generated_fort_native_sdpa_sm90 kernels); the llama block as torchtitan-eager's
 * element-wise implementation, its whole loss inside torch.compile when compiled */
static void training(int llama, int compiled, spec_training *t)
{
    spec_training_defaults(t);
    t->micro_batch = 2;
    t->act_ckpt = CKPT_NONE;
    t->execution = compiled ? EXEC_COMPILED : EXEC_EAGER;
    t->attn_kernel = AK_SDPA_CUDNN;
    t->hidden_dropout = t->attention_dropout = 0;
    if (llama) {
        t->norm_fp32 = t->rope_fp32 = t->repeat_kv = t->swiglu_unfused = 1;
        t->loss_fp32 = !compiled;
    }
}

/* one pass of the layers the script runs (llama: block + head; gpt: block), by class */
static cls_t predict(const spec_cluster *C, const cost_calib *K, const spec_model *m, int llama, int compiled)
{
    spec_training t;
    training(llama, compiled, &t);
    static wl w;
    wl_build(m, &t, &w);
    cls_t r = {0, 0, 0, 0};
    double hbm = C->gpu.hbm_bw_Bps * K->hbm_eff.v, eb = w.elem_bytes;
    for (int i = 0; i < w.n_layers; i++) {
        const wl_layer *l = &w.layer[i];
        if (l->kind == WL_EMBED || (l->kind == WL_HEAD && !llama))
            continue;
        double f, b, rec;
        cost_layer_times(K, C, l, eb, &f, &b, &rec);
        double g = 0;
        for (int j = 0; j < l->n_gemm; j++) {
            const wl_gemm *x = &l->gemm[j];
            if (wl_role_core(x->role))
                continue;
            wl_gemm dg = {.m = x->m, .n = x->k, .k = x->n, .batch = x->batch};
            wl_gemm wg = {.m = x->k, .n = x->n, .k = x->m, .batch = x->batch};
            g += cost_gemm_time(K, C, x, eb) + cost_gemm_time(K, C, &dg, eb) + cost_gemm_time(K, C, &wg, eb);
        }
        double ew = kern_mem_time(&K->kern, l->ew_fwd_bytes, l->ew_fwd_kernels, hbm) +
                    kern_mem_time(&K->kern, l->ew_bwd_bytes, l->ew_bwd_kernels, hbm);
        r.gemm += g;
        r.ew += ew;
        r.attn += f + b - g - ew;
        r.total += f + b;
    }
    return r;
}

static void row(const char *gpu, const char *blk, const char *mode, cls_t p, const double meas[4])
{
    printf("| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f / %.1f / %.1f | %.1f | %+.1f%% |\n", gpu, blk, mode,
           p.gemm * 1e3, p.attn * 1e3, p.ew * 1e3, p.total * 1e3, meas[0], meas[1], meas[2], meas[3],
           100 * (p.total * 1e3 / meas[3] - 1));
}

/* measured ms (eager_block.json kernel_s_by_class gemm / attention / elementwise, s_fwdbwd):
 * [gpu][block][mode][4] */
static const double MEAS[2][2][2][4] = {
    {{{46.90, 2.14, 27.39, 78.48}, {52.13, 2.45, 6.97, 58.85}}, {{12.69, 2.10, 2.79, 18.57}, {13.75, 2.28, 2.06, 17.42}}},
    {{{45.15, 2.05, 21.08, 70.26}, {53.32, 2.47, 5.97, 58.53}}, {{13.24, 2.17, 2.24, 17.65}, {13.15, 2.13, 1.68, 17.44}}},
};

int main(void)
{
    const char *cl[2] = {"configs/clusters/dgx-h100.json", "validation/clusters/h200-node.json"}, *gn[2] = {"H100", "H200"};
    const char *bn[2] = {"llama", "gpt"}, *mn[2] = {"eager", "compiled"};
    spec_model m[2];
    sc_err e;
    if (spec_load_model("configs/models/llama3-8b.json", &m[0], &e) || spec_load_model("configs/models/gpt3-6.7b.json", &m[1], &e)) {
        printf("%s\n", e.text);
        return 1;
    }
    m[0].seq_len = m[1].seq_len = 4096;
    cls_t P[2][2][2][2]; /* [clock: sustained, burst][gpu][block][mode] */
    for (int ck = 0; ck < 2; ck++) {
        printf("\n%s clock\n\n| GPU | block | mode | GEMM | attention | element-wise | total | measured GEMM / attn / ew | "
               "measured | error |\n|---|---|---|---|---|---|---|---|---|---|\n", ck ? "burst (clock_ratio 1)" : "sustained (the cluster's clock_ratio)");
        for (int g = 0; g < 2; g++) {
            spec_cluster C;
            cost_calib K;
            load(cl[g], &C, &K);
            if (ck)
                C.gpu.clock_ratio = 1;
            for (int b = 0; b < 2; b++)
                for (int x = 0; x < 2; x++)
                    row(gn[g], bn[b], mn[x], P[ck][g][b][x] = predict(&C, &K, &m[b], b == 0, x), MEAS[g][b][x]);
        }
    }
    puts("\nratios (sustained clock): H200 / H100 time, compile gain eager / compiled - 1, predicted (measured)\n");
    for (int b = 0; b < 2; b++)
        for (int x = 0; x < 2; x++)
            printf("%s %s H200/H100 %.3f (%.3f)\n", bn[b], mn[x], P[0][1][b][x].total / P[0][0][b][x].total,
                   MEAS[1][b][x][3] / MEAS[0][b][x][3]);
    for (int g = 0; g < 2; g++)
        for (int b = 0; b < 2; b++)
            printf("%s %s compile gain %+.1f%% (%+.1f%%)\n", gn[g], bn[b], 100 * (P[0][g][b][0].total / P[0][g][b][1].total - 1),
                   100 * (MEAS[g][b][0][3] / MEAS[g][b][1][3] - 1));
    return 0;
}

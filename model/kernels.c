/* kernels.c — kernel time models (see kernels.h). Constants per arch below, each with its
 * source; fitted ones were fitted to published microbenchmarks (never to end-to-end training
 * throughputs), the fit points and the held-out comparison are in docs/COMPUTE.md. */
#include "kernels.h"

#include <math.h>
#include <string.h>

static const char *const DTYPES[KD_N] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
const char *kern_dtype_str(kern_dtype d) { return d >= 0 && d < KD_N ? DTYPES[d] : "?"; }

kern_dtype kern_gemm_dtype(spec_precision p)
{
    switch (p) {
    case PREC_FP32: return KD_FP32; /* PyTorch does not use TF32 for matmuls unless asked */
    case PREC_TF32: return KD_TF32;
    case PREC_FP16: return KD_FP16;
    case PREC_FP8: return KD_FP8;
    default: return KD_BF16;
    }
}

/* Ratio of each math's dense peak to the FP16/BF16 tensor-core peak, from the datasheets:
 * V100 SXM2: FP32 15.7, FP16 125 TFLOPS, no TF32/BF16/FP8 (NVIDIA V100 datasheet);
 * A100 SXM4: FP32 19.5, TF32 156, FP16/BF16 312, no FP8 (A100 datasheet, dense);
 * H100 SXM5: FP32 66.9, TF32 494.7, FP16/BF16 989.4, FP8 1978.9 (H100 datasheet, dense;
 * reference hardware.md s1). Other arches take Hopper's ratios. */
/* arch is name: the first letter decides most calls without a strcmp (every GEMM asks) */
static int arch_is(const char *arch, const char *name)
{
    return arch[0] == name[0] && !strcmp(arch, name);
}

static double dtype_ratio(const char *arch, kern_dtype d)
{
    if (arch_is(arch, "cpu"))
        return 1.0;
    int volta = arch_is(arch, "volta"), ampere = arch_is(arch, "ampere");
    switch (d) {
    case KD_FP32: return volta ? 15.7 / 125 : ampere ? 19.5 / 312 : 66.9 / 989.4;
    case KD_TF32: return volta ? 0 : 0.5;
    case KD_BF16: return volta ? 0 : 1;
    case KD_FP8: return volta || ampere ? 0 : 2;
    default: return 1;
    }
}

double kern_peak(const spec_cluster *c, kern_dtype d)
{
    double p = c->gpu.peak_flops * dtype_ratio(c->gpu.arch, d);
    if (d == KD_FP32 && c->gpu.peak_fp32_flops > 0)
        p = c->gpu.peak_fp32_flops;
    if (d == KD_TF32 && c->gpu.peak_tf32_flops > 0)
        p = c->gpu.peak_tf32_flops;
    if (d == KD_FP8 && c->gpu.peak_fp8_flops > 0)
        p = c->gpu.peak_fp8_flops;
    return p * (c->gpu.clock_ratio > 0 ? c->gpu.clock_ratio : 1.0);
}

int kern_sms(const kern_calib *k, const spec_cluster *c)
{
    if (c->gpu.sms > 0)
        return c->gpu.sms;
    if (k->sms > 0)
        return k->sms;
    /* datasheets: V100 80 SMs, A100 108, H100 SXM5 132 (hardware.md s1 "Clocks") */
    const char *a = c->gpu.arch;
    return arch_is(a, "volta") ? 80 : arch_is(a, "ampere") ? 108 : arch_is(a, "cpu") ? 1 : 132;
}

void kern_defaults(const char *arch, kern_calib *k)
{
    memset(k, 0, sizeof *k);
    int volta = arch_is(arch, "volta"), ampere = arch_is(arch, "ampere");
    /* GEMM, fitted in docs/COMPUTE.md (model of kernels.h) to:
     * H100: torch.matmul BF16 squares 4096^3 788.7 and 8192^3 797.5 TFLOPS
     *   (zzc0721/torch-performance-test-data#79) and the MAMF best 794.5 at 2048x2048x13312
     *   (stas00/ml-engineering compute/accelerator) -> eff 0.843 (k0 0); the fixed cost from
     *   #79's 2048^3 676.6 TFLOPS -> 4.15 us (1024^3, CPU-launch-bound in torch, held out);
     * A100: MAMF 271.2 at 1024x10240x5120 (stas00) with H100's k0 and fixed -> 0.8895;
     * V100: best square FP16 88.92 TFLOPS on a V100S (130 TF, 80 SMs) (zzc0721 database.md)
     *   -> 0.684. Per math: H100 TF32 402.2 at 4096^3 (#79) -> 0.8485, FP32 51.9 best square
     *   (hardware.md s1b) -> 0.80, FP8 MAMF 1402.6 (stas00) -> 0.735; A100 FP32 19.18
     *   (zzc0721 database.md, A100 SXM4 80GB) -> 0.9855; V100S FP32 13.55 of 16.4 -> 0.8265. */
    k->gemm_k0 = 0;
    k->gemm_fixed_s = 4.15e-6;
    if (volta) {
        k->gemm_eff = 0.684;
        k->gemm_eff_dtype[KD_FP32] = 0.8265;
    } else if (ampere) {
        k->gemm_eff = 0.8895;
        k->gemm_eff_dtype[KD_FP32] = 0.9855;
    } else {
        k->gemm_eff = 0.843;
        k->gemm_eff_dtype[KD_FP32] = 0.80;
        k->gemm_eff_dtype[KD_TF32] = 0.8485;
        k->gemm_eff_dtype[KD_FP8] = 0.735;
    }
    /* Fused attention, fitted to:
     * A100 FlashAttention-2 forward, head dim 128, (batch, seq, heads) (16, 1024, 32) 177.67
     *   and (1, 4096, 32) 185.64 TFLOPS, causal 143.70 / 156.27 (liangan1/GPU_travel
     *   performance/flash-attn/README.md) -> eff 0.6495, s0 142, causal 0.901; backward:
     *   H100 FA2's backward/forward ratio (0.308 / 0.392) [transferred];
     * H100 FA2 and FA3 at head dim 128, seq 8192, 16 heads x 2 (Dao-AILab/flash-attention
     *   PR #1791, hopper/benchmark_attn.py): FA2 fwd 369.9, causal 284.1, bwd 290.6, causal
     *   287.1; FA3 fwd 659.1, causal 630.0, bwd 553.9, causal 531.6 TFLOPS -> FA2 0.392 /
     *   0.3152 (with the backward ramp below), causal 0.784 (fwd; bwd ~1); FA3 0.7125 / 0.5985, causal ~1; FA3's s0 302 from
     *   its 512-token point 430.32 TFLOPS (pytorch/benchmark PR #2391);
     * head dim 64: H100 FA2 306.62 TFLOPS at seq 8192 (flash-attention PR #2688) vs the
     *   head-dim-128 model -> 0.829, applied to every version [transferred];
     * FA2 backward: H100 d128 s8192 290.6 (PR #1791), d64 s8192 299.81 and d64 s512 189.25
     *   TFLOPS (PR #2688) fitted together -> efficiency 0.3152, head-dim-64 factor 1.032 (no
     *   loss), ramp s0 332; A100 and V100 backward = forward x 0.3152 / 0.392 with the same
     *   ramp [transferred: no published A100 backward table found].
     * V100 has no FlashAttention-2 (sm80+); "fused" there is xformers' memory-efficient
     *   kernel, taken at A100 FA2's efficiency x V100/A100 GEMM efficiency [extrapolated]. */
    k->fa_hd64 = 0.829;
    k->fa_hd64_bwd = 1.032;
    k->fa_s0_bwd = 332;
    if (volta) {
        k->fa_version = 1;
        k->fa_fwd_eff = 0.6495 * 0.684 / 0.8895;
        k->fa_bwd_eff = k->fa_fwd_eff * 0.3152 / 0.392;
        k->fa_causal = 0.901;
        k->fa_s0 = 142;
    } else if (ampere) {
        k->fa_version = 2;
        k->fa_fwd_eff = 0.6495;
        k->fa_bwd_eff = 0.6495 * 0.3152 / 0.392;
        k->fa_causal = 0.901;
        k->fa_s0 = 142;
    } else {
        k->fa_version = 2;
        k->fa_fwd_eff = 0.392;
        k->fa_bwd_eff = 0.3152;
        k->fa_causal = 0.784;
        k->fa_s0 = 142;
        k->fa3_fwd_eff = 0.7125;
        k->fa3_bwd_eff = 0.5985;
        k->fa3_causal = 1.0;
        k->fa3_s0 = 302;
    }
    /* Launch / inter-kernel gap of a small kernel on a busy stream: 2.5 us [recall: NVIDIA
     * "Getting Started with CUDA Graphs" (A. Gray, 2019): a few us per kernel launch]. */
    k->launch_s = 2.5e-6;
}

/* The tile shapes (bm x bn) and each one's rel = sqrt(I / I(256x128)), I = bm bn / (bm + bn)
 * its arithmetic intensity: sqrt(1), sqrt(0.75), sqrt(0.5), sqrt(0.375), computed once here
 * (the doubles sqrt returns, in hex so no digit is lost) instead of six sqrt per GEMM. */
static const double TILES[][3] = {{256, 128, 0x1p+0},
                                  {128, 256, 0x1p+0},
                                  {128, 128, 0x1.bb67ae8584caap-1},
                                  {128, 64, 0x1.6a09e667f3bcdp-1},
                                  {64, 128, 0x1.6a09e667f3bcdp-1},
                                  {64, 64, 0x1.3988e1409212ep-1}};

double kern_gemm_time(const kern_calib *k, const spec_cluster *c, kern_dtype d, double m, double n, double kk,
                      double batch, double elem_bytes, double hbm_Bps)
{
    if (m <= 0 || n <= 0 || kk <= 0 || batch <= 0)
        return 0;
    int sms = kern_sms(k, c);
    double peak = kern_peak(c, d);
    if (peak <= 0) { /* refused at the edge (spec_training_check); a library caller gets the
                        nearest math the GPU has: 16-bit tensor cores, FP32 for TF32 */
        d = d == KD_TF32 ? KD_FP32 : KD_FP16;
        peak = kern_peak(c, d);
    }
    double eff = k->gemm_eff_dtype[d] > 0 ? k->gemm_eff_dtype[d] : k->gemm_eff;
    double per_sm = peak / sms * eff, best = INFINITY;
    for (size_t i = 0; i < sizeof TILES / sizeof TILES[0]; i++) {
        double bm = TILES[i][0], bn = TILES[i][1];
        double nt = ceil(m / bm) * ceil(n / bn) * batch;
        double waves = ceil(nt / sms);
        double t = waves * 2.0 * bm * bn * (kk + k->gemm_k0) / (per_sm * TILES[i][2]);
        if (t < best)
            best = t;
    }
    double bytes = (m * kk + kk * n + m * n) * batch * elem_bytes;
    if (hbm_Bps > 0 && bytes / hbm_Bps > best)
        best = bytes / hbm_Bps;
    return k->gemm_fixed_s + best;
}

double kern_attn_flops(double bh, double s, double d, int causal, int bwd)
{
    double f = 4.0 * bh * s * s * d * (causal ? 0.5 : 1.0);
    return bwd ? 2.5 * f : f;
}

static double flash_time(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                         int bwd, double fwd_eff, double bwd_eff, double cfac, double s0, double s0_bwd)
{
    if (bh <= 0 || s <= 0)
        return 0;
    int sms = kern_sms(k, c);
    double eff = bwd ? bwd_eff : fwd_eff;
    if (causal && !bwd)
        eff *= cfac;
    if (d <= 64)
        eff *= bwd && k->fa_hd64_bwd > 0 ? k->fa_hd64_bwd : k->fa_hd64;
    if (bwd && s0_bwd > 0)
        s0 = s0_bwd;
    eff *= s / (s + s0 * (causal ? 2.2 : 1.0));
    double blocks = bh * ceil(s / 128.0), waves = ceil(blocks / sms);
    eff *= blocks / (waves * sms);
    double peak = kern_peak(c, KD_BF16) > 0 ? kern_peak(c, KD_BF16) : kern_peak(c, KD_FP16);
    return k->launch_s + kern_attn_flops(bh, s, d, causal, bwd) / (peak * eff);
}

double kern_flash_time(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                       int bwd)
{
    return flash_time(k, c, bh, s, d, causal, bwd, k->fa_fwd_eff, k->fa_bwd_eff, k->fa_causal, k->fa_s0,
                      k->fa_s0_bwd);
}

double kern_flash3_time(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                        int bwd)
{
    if (k->fa3_fwd_eff <= 0)
        return kern_flash_time(k, c, bh, s, d, causal, bwd);
    return flash_time(k, c, bh, s, d, causal, bwd, k->fa3_fwd_eff, k->fa3_bwd_eff, k->fa3_causal, k->fa3_s0, 0);
}

double kern_mem_time(const kern_calib *k, double bytes, int kernels, double hbm_Bps)
{
    if (bytes <= 0 && kernels <= 0)
        return 0;
    return kernels * k->launch_s + bytes / hbm_Bps;
}

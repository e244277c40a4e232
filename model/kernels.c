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

/* arch_is for a cluster's arch (spec_gpu.arch is char[16]): its first sizeof NAME bytes, the
 * terminator included, compared without a library call (strcmp's answer; kern_peak and
 * kern_sms ask for every GEMM rate and fused attention call) */
#define ARCH16_IS(arch16, NAME) (!memcmp((arch16), NAME, sizeof NAME))
_Static_assert(sizeof(((const spec_cluster *)0)->gpu.arch) >= sizeof "ampere", "arch holds the names compared");

static double dtype_ratio(const char arch[16], kern_dtype d)
{
    if (ARCH16_IS(arch, "cpu"))
        return 1.0;
    int volta = ARCH16_IS(arch, "volta"), ampere = ARCH16_IS(arch, "ampere");
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
    return ARCH16_IS(a, "volta") ? 80 : ARCH16_IS(a, "ampere") ? 108 : ARCH16_IS(a, "cpu") ? 1 : 132;
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
     *   (zzc0721 database.md, A100 SXM4 80GB) -> 0.9855; V100S FP32 13.55 of 16.4 -> 0.8265.
     * Hopper's 16-bit GEMMs take the lent H100's sustained K sweep (kern_gemm_kfactor, issue 27
     * tok35), and its fixed cost is #79's 2048^3 refitted with it: 25.391 us - 22.587 us ->
     * 2.804 us (the other arches keep 4.15 us, the value before the K sweep). */
    k->gemm_k0 = 0;
    k->gemm_fixed_s = 4.15e-6;
    if (arch_is(arch, "hopper")) {
        k->gemm_ksweep = 1;
        k->gemm_fixed_s = 2.804e-6;
        k->gemm_streamk = 1; /* cooperative (stream-K capable) kernels: see streamk_time */
    }
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
        /* liangan1/GPU_travel's A100 ran FA2 at ~1200 of 1410 MHz (its README) */
        k->fa_clock = 0.851; /* 1200 / 1410 */
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
        /* Attention's own sustained rate at the 700 W cap: fwd+bwd d128 causal ~10 s back to
         * back over the same backend's 0.25-s rate, lent H200 SXM (bench/gpu-results/
         * 2026-11-27-h200/attn_sustained.json over attention.json): cuDNN 537.1 / 558.2 = 0.962
         * (32k), 535.9 / 547.8 = 0.978 (128k); FA2 322.0 / 324.0 = 0.994, 321.1 / 328.7 = 0.977;
         * mean 0.978 (H100 SXM: the same GH100 die and cap [transferred]); the same run's
         * dense 8192^3 GEMM: 666.7 TFLOP/s (mean of its three 2-s spans) / the model's burst
         * 807.1 = 0.826, the clock below which attention is scaled down with the cluster's */
        k->attn_sustained = 0.978;
        k->attn_clock = 0.826;
    }
    /* Launch / inter-kernel gap of a small kernel on a busy stream: 2.5 us [recall: NVIDIA
     * "Getting Started with CUDA Graphs" (A. Gray, 2019): a few us per kernel launch]. */
    k->launch_s = 2.5e-6;
}

/* The tile shapes (bm x bn) and each one's rel = sqrt(I / I(256x128)), I = bm bn / (bm + bn)
 * its arithmetic intensity: sqrt(1), sqrt(0.75), sqrt(0.5), sqrt(0.375), computed once here
 * (the doubles sqrt returns, in hex so no digit is lost) instead of six sqrt per GEMM.
 * Tiles are in pairs of one rel: 256x128 and 128x256, 128x128 alone, 128x64 and 64x128, 64x64
 * alone; `a` and `b` index the tile's edges in EDGES (bm = EDGES[a], bn = EDGES[b]). */
static const double EDGES[3] = {256, 128, 64};
static const struct {
    int a1, b1, a2, b2; /* the pair's two tiles (a2 < 0: one tile)  */
    double rel;
} TILES[] = {{0, 1, 1, 0, 0x1p+0},
             {1, 1, -1, -1, 0x1.bb67ae8584caap-1},
             {1, 2, 2, 1, 0x1.6a09e667f3bcdp-1},
             {2, 2, -1, -1, 0x1.3988e1409212ep-1}};

/* Time = waves x 2 bm bn (K + k0) / (per-SM rate x rel), the least over the six tiles. The
 * cost per GEMM is kept low without changing a bit of the result: ceil(m / bm) is taken once
 * per edge (x / 256 is x x 2^-8 exactly), and of a pair of tiles with the same rel and the same
 * bm bn only the one with fewer waves is divided out (ceil, / sms, x and / round monotonically,
 * so the smaller count gives the smaller time, and an equal count the same bits). What depends
 * on the calibration, the GPU and the math only is kern_gemm_rate_of's. */
void kern_gemm_rate_of(const kern_calib *k, const spec_cluster *c, kern_dtype d, kern_gemm_rate *r)
{
    int sms = kern_sms(k, c);
    double peak = kern_peak(c, d);
    if (peak <= 0) { /* refused at the edge (spec_training_check); a library caller gets the
                        nearest math the GPU has: 16-bit tensor cores, FP32 for TF32 */
        d = d == KD_TF32 ? KD_FP32 : KD_FP16;
        peak = kern_peak(c, d);
    }
    double eff = k->gemm_eff_dtype[d] > 0 ? k->gemm_eff_dtype[d] : k->gemm_eff;
    double per_sm = peak / sms * eff;
    r->sms = sms;
    r->inv_sms = 1.0 / sms;
    for (int i = 0; i < 4; i++) {
        r->den[i] = per_sm * TILES[i].rel;
        r->inv_den[i] = 1.0 / r->den[i];
    }
    /* the den half of least_time's normal-range test (den[3] is the least, den[0] the largest) */
    r->den_normal = r->den[3] > 0x1p-900 && r->den[0] < 0x1p900;
    r->k0 = k->gemm_k0;
    r->fixed_s = k->gemm_fixed_s;
    r->ksweep = k->gemm_ksweep && (d == KD_BF16 || d == KD_FP16);
    r->streamk = k->gemm_streamk;
}

/* The lent H100 SXM's sustained bf16 GEMMs at M = N = 8192 by K (randn operands, 700 W cap,
 * ~1350 MHz; bench/gpu-results/2026-11-27-h100-sxm/sustained_gemm.json "k-sweep" rows,
 * TFLOP/s): 608.9 / 616.7 / 627.0 / 651.8 / 666.7 / 679.1 at K 768 / 1024 / 2048 / 4096 /
 * 8192 / 16384. The factor is each over the K = 8192 point, the K the GEMM constants and the
 * cluster's clock_ratio stand for (the 8192^3 fit point). Measured for bf16 only: FP8 and
 * TF32 GEMMs do not take it (no sweep). */
static const double KSWEEP_K[] = {768, 1024, 2048, 4096, 8192, 16384};
static const double KSWEEP_TF[] = {608.948, 616.684, 626.950, 651.837, 666.666, 679.142};
#define KSWEEP_N ((int)(sizeof KSWEEP_K / sizeof KSWEEP_K[0]))
#define KSWEEP_REF 4 /* K = 8192 */

double kern_gemm_kfactor(double kk)
{
    if (!(kk > KSWEEP_K[0]))
        return KSWEEP_TF[0] / KSWEEP_TF[KSWEEP_REF];
    if (kk >= KSWEEP_K[KSWEEP_N - 1])
        return KSWEEP_TF[KSWEEP_N - 1] / KSWEEP_TF[KSWEEP_REF];
    int i = 0;
    while (kk > KSWEEP_K[i + 1])
        i++;
    /* the fraction of the way from K_i to K_i+1 in log2: one log2 per call (every interval but
     * the first, 768 -> 1024, is one doubling) */
    double x = log2(kk / KSWEEP_K[i]) / (i == 0 ? log2(1024.0 / 768.0) : 1.0);
    return (KSWEEP_TF[i] + x * (KSWEEP_TF[i + 1] - KSWEEP_TF[i])) / KSWEEP_TF[KSWEEP_REF];
}

/* The lent H200's Transformer Engine chunk measurement (bench/gpu/ub_chunks.py; bench/gpu-results/
 * 2026-11-27-h200/ub_chunks.json, bf16, randn, sustained clock, no communication): a GEMM run as
 * 4 chunks of m / 4 one after another over the same GEMM whole, at m 2048 / 4096 / 8192 (chunk
 * rows 512 / 1024 / 2048), the median over the ten TE-chunked GEMM shapes measured (GPT-3 175B
 * qkv / proj / fc1 / fc2 fprop and proj / fc2 dgrad, Llama-3 70B qkv / proj / fc1 / fc2 fprop,
 * t = 4): 1.0657 / 1.0238 / 1.0055 (serial_over_whole; each model's own median within 0.024 of
 * it). The H200's dense GEMM rate equals the H100's (666 vs 668 TFLOP/s sustained, 132 SMs
 * both; bench/RESULTS.md): taken for Hopper [transfer H200 -> H100]. FP8 GEMMs, which TE chunks
 * the same way, take the bf16 factor [transfer bf16 -> fp8: FP8 chunks not measured]; more chunks
 * than the 4 measured (ring_exchange at t = 8) take it by their rows, below 512 clamped. */
static const double UBCH_ROWS[] = {512, 1024, 2048};
static const double UBCH_RATIO[] = {1.0657, 1.0238, 1.0055};

double kern_gemm_chunk_factor(const spec_cluster *c, double rows)
{
    if (!ARCH16_IS(c->gpu.arch, "hopper"))
        return 1;
    if (!(rows > UBCH_ROWS[0]))
        return UBCH_RATIO[0];
    if (rows >= UBCH_ROWS[2])
        return UBCH_RATIO[2];
    const int i = rows > UBCH_ROWS[1];
    const double x = log2(rows / UBCH_ROWS[i]); /* each interval one doubling */
    return UBCH_RATIO[i] + x * (UBCH_RATIO[i + 1] - UBCH_RATIO[i]);
}

/* ceil(x / 256), ceil(x / 128), ceil(x / 64) for x > 0: in integers when x is a whole number
 * below 2^52 (the usual shapes; (i + 2^s - 1) >> s is the ceil of i / 2^s), else as written. */
static void tile_counts(double x, double cnt[3])
{
    if (x < 0x1p52) {
        const long long i = (long long)x;
        if ((double)i == x) {
            cnt[0] = (double)((i + 255) >> 8);
            cnt[1] = (double)((i + 127) >> 7);
            cnt[2] = (double)((i + 63) >> 6);
            return;
        }
    }
    for (int e = 0; e < 3; e++)
        cnt[e] = ceil(x / EDGES[e]);
}

/* ceil(nt / sms) for nt > 0. When nt is a whole number below 2^52 the quotient nt / sms,
 * if not whole, lies at least 1 / sms from every integer while its rounding moves it by at
 * most nt / sms x 2^-53 < 1 / sms: its ceil is the integer ceil of nt / sms, found here from
 * a first guess by multiplication, corrected in integers (no division). */
/* ceil(t / sms) for a whole t in [1, 2^52) without a division. The guess t x (1 / sms) is within
 * 1 / sms of x = t / sms (two roundings of relative 2^-53 on a quotient below 2^52 / sms; exact
 * for sms = 1). So g, its floor, is x - 1 or x where x is whole, and floor(x) where it is not
 * (x then lies at least 1 / sms from either integer): rem = t - g sms is sms or 0 in the first
 * case, in (0, sms) in the second, and the ceil is g + (rem > 0) (perfan36: this replaces two
 * correcting loops; the same integers). */
static long long waves_int(const kern_gemm_rate *r, long long t)
{
    const long long g = (long long)((double)t * r->inv_sms), rem = t - g * r->sms;
    return g + (rem > 0);
}

static double waves_of(const kern_gemm_rate *r, double nt)
{
    if (nt < 0x1p52) {
        const long long t = (long long)nt;
        if ((double)t == nt)
            return (double)waves_int(r, t);
    }
    return ceil(nt / r->sms);
}

/* The four pair numerators (waves x 2 bm bn x K) for whole m, n and batch below 2^31 whose
 * finest tile count m64 n64 batch is below 2^52 (the usual shapes): the tile counts, the pairs'
 * least and the waves in integers, unrolled (perfan36: ~40 % of the GEMM's instructions were
 * the general loop's table lookups and double conversions). The same bits as the general path:
 * every count is below 2^52, so its products in doubles were exact and equal these; waves_of is
 * waves_int there; and waves x 2 bm bn is exact either way (a power of two), so one rounding, by
 * K, in both. Returns 0 (num untouched) outside that range. */
static int gemm_nums_whole(const kern_gemm_rate *r, double m, double n, double batch, double K, double num[4])
{
    if (!(m < 0x1p31 && n < 0x1p31 && batch < 0x1p31))
        return 0;
    const long long mi = (long long)m, ni = (long long)n, bi = (long long)batch;
    if ((double)mi != m || (double)ni != n || (double)bi != batch)
        return 0;
    const long long m8 = (mi + 255) >> 8, m7 = (mi + 127) >> 7, m6 = (mi + 63) >> 6;
    const long long n8 = (ni + 255) >> 8, n7 = (ni + 127) >> 7, n6 = (ni + 63) >> 6;
    const long long t3 = m6 * n6; /* < 2^50; the coarser tiles' counts are no larger */
    if (!((double)t3 * batch < 0x1p52))
        return 0;
    const long long a0 = m8 * n7, b0 = m7 * n8, a2 = m7 * n6, b2 = m6 * n7;
    num[0] = (double)waves_int(r, (a0 < b0 ? a0 : b0) * bi) * 65536.0 * K; /* 2 x 256 x 128 */
    num[1] = (double)waves_int(r, m7 * n7 * bi) * 32768.0 * K;              /* 2 x 128 x 128 */
    num[2] = (double)waves_int(r, (a2 < b2 ? a2 : b2) * bi) * 16384.0 * K; /* 2 x 128 x 64 */
    num[3] = (double)waves_int(r, t3 * bi) * 8192.0 * K;                    /* 2 x 64 x 64 */
    return 1;
}

/* The least of the four pair times num / den. Each is first estimated as num x (1 / den),
 * within 3 ulp of the quotient where the numbers are normal; a tile whose estimate exceeds the
 * least estimate by more than 1e-12 (relative) has a larger quotient, hence a rounded time no
 * smaller than the least one's, so only the tiles within the margin (almost always one) are
 * divided out; the least of those is the least of all four, bit for bit. Outside the normal
 * range every tile is divided. */
static double least_time(const kern_gemm_rate *r, const double num[4])
{
    const double e0 = num[0] * r->inv_den[0], e1 = num[1] * r->inv_den[1], e2 = num[2] * r->inv_den[2],
                 e3 = num[3] * r->inv_den[3];
    double emin = e0 < e1 ? e0 : e1;
    emin = e2 < emin ? e2 : emin;
    emin = e3 < emin ? e3 : emin;
    if (!(emin > 0x1p-900 && emin < 0x1p900 && r->den_normal)) { /* every tile divided out */
        double best = INFINITY;
        for (int i = 0; i < 4; i++) {
            const double t = num[i] / r->den[i];
            best = t < best ? t : best;
        }
        return best;
    }
    /* unrolled (an32b: the loop over an array of the four estimates cost ~40 instructions a
     * GEMM); the same tiles divided, the same least */
    const double cut = emin * (1 + 1e-12);
    double best = INFINITY, t;
    if (e0 <= cut && (t = num[0] / r->den[0]) < best)
        best = t;
    if (e1 <= cut && (t = num[1] / r->den[1]) < best)
        best = t;
    if (e2 <= cut && (t = num[2] / r->den[2]) < best)
        best = t;
    if (e3 <= cut && (t = num[3] / r->den[3]) < best)
        best = t;
    return best;
}

/* Stream-K (issue 27 smallm27). The GEMMs the lent H100 and H200 profiled at the model's layer
 * shapes ran cuBLAS's cooperative Hopper kernels (bench/gpu-results/2026-11-27-h100-sxm/ and
 * 2026-11-27-h200/eager_block.json top_kernels: nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA,
 * 128x256 coopA, 320x128 coopB, 192x192 coopB; K tile 64), and its chunked GEMMs ran faster than
 * any data-parallel wave of tiles allows: 512 x 3072 x 12288 (48 tiles of 256x128 on 132 SMs) at
 * 588 TFLOP/s, 512 x 9216 x 12288 at 650 (2026-11-27-h200/ub_chunks.json), where one wave of
 * 128x128 tiles caps them at ~425 and ~435: the K loop is split over the idle SMs. The split
 * follows CUTLASS's sm90 stream-K scheduler (NVIDIA/cutlass@0046e366
 * include/cutlass/gemm/kernel/tile_scheduler_params.h, PersistentTileSchedulerSm90StreamKParams:
 * get_num_sk_tiles, get_num_sk_units; min_iters_per_sk_unit_ = 8): no split when the tiles fill
 * whole waves, when a tile has at most 8 k-tiles, or when the last wave is at least half full
 * (its "Heuristic" mode); else all but one of the full waves stay data-parallel and the rest,
 * s tiles x kt k-tiles, go to u = min(SMs, floor(kt s / 8)) units, the busiest taking
 * ceil(kt s / u) k-tiles. Fixup [estimated, no measurement]: each unit writes one fp32 partial
 * tile and reads one (the reduction workspace holds accumulator_bits x bm x bn per tile, same
 * file, get_reduction_workspace_size), all SMs at once through HBM at the achieved rate:
 * 8 bm bn SMs / hbm_Bps (12.9 us for 256x128 on 132 SMs at 2.68 TB/s). cuBLAS's own choice is
 * not public: this is CUTLASS's rule, checked against our measurements (docs/COMPUTE.md). The
 * six tiles are taken one by one (a pair's two tiles may differ in their last wave). Returns
 * the least of `best` (the data-parallel time) and the stream-K times (ksweep applied to the
 * compute, not the fixup). */
static const struct {
    int a, b;  /* bm = EDGES[a], bn = EDGES[b] */
    int pair;  /* index into kern_gemm_rate's den (TILES) */
} SK_TILES[6] = {{0, 1, 0}, {1, 0, 0}, {1, 1, 1}, {1, 2, 2}, {2, 1, 2}, {2, 2, 3}};

/* The split's two tests on T tiles: not whole waves, last wave under half full. For a whole T
 * below 2^52 one integer division gives both (T / S then is within 2^-52 relative of the true
 * quotient, which lies at least 1 / S from an integer unless whole: the same floor and ceil), the
 * same answers as the doubles of kernels.h; else as written there. */
static int streamk_splits(double T, double S)
{
    if (T < 0x1p52) {
        const long long t = (long long)T, sms = (long long)S;
        if ((double)t == T) {
            const long long rem = t % sms;
            return rem != 0 && 2 * rem < sms;
        }
    }
    const double full = floor(T / S);
    return ceil(T / S) > full && 2 * (T - full * S) < S;
}

static double streamk_time(const kern_gemm_rate *r, double m, double n, double kk, double batch, double K,
                           double kf, double hbm_Bps, double best)
{
    const double S = r->sms, kt = ceil(kk / 64);
    double cm[3], cn[3], inv_kf = 0;
    if (!(kt > 8))
        return best;
    tile_counts(m, cm); /* ceil(m / 256), ceil(m / 128), ceil(m / 64): the same doubles */
    tile_counts(n, cn);
    for (int i = 0; i < 6; i++) {
        const double bm = EDGES[SK_TILES[i].a], bn = EDGES[SK_TILES[i].b];
        const double T = cm[SK_TILES[i].a] * cn[SK_TILES[i].b] * batch;
        if (!streamk_splits(T, S))
            continue; /* whole waves, or a last wave at least half full: data-parallel */
        const double full = floor(T / S);
        const double dp = full > 1 ? full - 1 : 0, sk = T - dp * S, units = fmin(S, floor(kt * sk / 8));
        if (!(units >= 1))
            continue;
        const double fix = hbm_Bps > 0 ? 8.0 * bm * bn * S / hbm_Bps : 0, work = 2.0 * bm * bn * K;
        /* waves >= dp + sk / S: a tile whose bound, estimated by products (a few ulp), exceeds the
         * best so far by 1e-12 cannot win; the rest are divided out as kernels.h writes them */
        if (inv_kf == 0)
            inv_kf = 1 / kf;
        if ((dp + sk * r->inv_sms) * work * r->inv_den[SK_TILES[i].pair] * inv_kf + fix > best * (1 + 1e-12))
            continue;
        const double waves = dp + ceil(kt * sk / units) / kt;
        const double t = waves * work / r->den[SK_TILES[i].pair] / kf + fix;
        best = t < best ? t : best;
    }
    return best;
}

double kern_gemm_time_r(const kern_gemm_rate *r, double m, double n, double kk, double batch, double elem_bytes,
                        double hbm_Bps)
{
    if (m <= 0 || n <= 0 || kk <= 0 || batch <= 0)
        return 0;
    double K = kk + r->k0, cm[3], cn[3], num[4];
    if (!gemm_nums_whole(r, m, n, batch, K, num)) {
        tile_counts(m, cm);
        tile_counts(n, cn);
        for (int i = 0; i < 4; i++) {
            double nt = cm[TILES[i].a1] * cn[TILES[i].b1] * batch;
            if (TILES[i].a2 >= 0) {
                double nt2 = cm[TILES[i].a2] * cn[TILES[i].b2] * batch;
                nt = nt2 < nt ? nt2 : nt;
            }
            num[i] = waves_of(r, nt) * 2.0 * EDGES[TILES[i].a1] * EDGES[TILES[i].b1] * K;
        }
    }
    double best = least_time(r, num);
    const double kf = r->ksweep ? kern_gemm_kfactor(kk) : 1;
    if (r->ksweep)
        best /= kf;
    if (r->streamk) {
        best = streamk_time(r, m, n, kk, batch, K, kf, hbm_Bps, best);
    }
    double bytes = (m * kk + kk * n + m * n) * batch * elem_bytes;
    if (hbm_Bps > 0 && bytes / hbm_Bps > best)
        best = bytes / hbm_Bps;
    return r->fixed_s + best;
}

double kern_gemm_time(const kern_calib *k, const spec_cluster *c, kern_dtype d, double m, double n, double kk,
                      double batch, double elem_bytes, double hbm_Bps)
{
    if (m <= 0 || n <= 0 || kk <= 0 || batch <= 0)
        return 0;
    kern_gemm_rate r;
    kern_gemm_rate_of(k, c, d, &r);
    return kern_gemm_time_r(&r, m, n, kk, batch, elem_bytes, hbm_Bps);
}

double kern_attn_flops(double bh, double s, double d, int causal, int bwd)
{
    double f = 4.0 * bh * s * s * d * (causal ? 0.5 : 1.0);
    return bwd ? 2.5 * f : f;
}

/* The fused kernel's forward (out[0]) and backward (out[1]) times, those asked in `want` (bit 0
 * forward, bit 1 backward), the shape's occupancy and the peak taken once for both. */
typedef struct flash_effs {
    double fwd, bwd, cfac, s0, s0_bwd; /* efficiencies, causal factor, half-saturation lengths */
} flash_effs;

static void flash_times(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                        const flash_effs *e, int want, double out[2])
{
    if (bh <= 0 || s <= 0) {
        out[0] = out[1] = 0;
        return;
    }
    int sms = kern_sms(k, c);
    double blocks = bh * ceil(s / 128.0), waves = ceil(blocks / sms);
    double peak = kern_peak(c, KD_BF16); /* asked once: the same bits as asking again */
    if (!(peak > 0))
        peak = kern_peak(c, KD_FP16);
    /* peak is the datasheet's x clk; attention runs at its own sustained fraction `a` where the
     * calibration measured one (attn_sustained; below the measuring run's dense clock, a lower
     * power cap, in proportion to the cluster's clk [assumed: no measurement below 700 W]), else
     * at clk, relative to the clock its fa_* benchmarks ran at (absent: the same operations, so
     * the same bits, as before) */
    double clk = c->gpu.clock_ratio > 0 ? c->gpu.clock_ratio : 1.0, at = k->fa_clock > 0 ? k->fa_clock : 1.0;
    double a = clk;
    if (k->attn_sustained > 0)
        a = k->attn_sustained * (k->attn_clock > clk ? clk / k->attn_clock : 1.0);
    peak *= (a < at ? a : at) / (at * clk);
    for (int bwd = 0; bwd < 2; bwd++) {
        if (!(want >> bwd & 1))
            continue;
        double eff = bwd ? e->bwd : e->fwd, s0 = e->s0;
        if (causal && !bwd)
            eff *= e->cfac;
        if (d <= 64)
            eff *= bwd && k->fa_hd64_bwd > 0 ? k->fa_hd64_bwd : k->fa_hd64;
        if (bwd && e->s0_bwd > 0)
            s0 = e->s0_bwd;
        eff *= s / (s + s0 * (causal ? 2.2 : 1.0));
        eff *= blocks / (waves * sms);
        out[bwd] = k->launch_s + kern_attn_flops(bh, s, d, causal, bwd) / (peak * eff);
    }
}

/* FlashAttention-2's constants, or FlashAttention-3's where the calibration has them (fa3 = 1). */
static flash_effs flash_effs_of(const kern_calib *k, int fa3)
{
    if (fa3 && k->fa3_fwd_eff > 0)
        return (flash_effs){k->fa3_fwd_eff, k->fa3_bwd_eff, k->fa3_causal, k->fa3_s0, 0};
    return (flash_effs){k->fa_fwd_eff, k->fa_bwd_eff, k->fa_causal, k->fa_s0, k->fa_s0_bwd};
}

static double flash_one(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                        int bwd, int fa3)
{
    const flash_effs e = flash_effs_of(k, fa3);
    double out[2];
    flash_times(k, c, bh, s, d, causal, &e, 1 << bwd, out);
    return out[bwd];
}

double kern_flash_time(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                       int bwd)
{
    return flash_one(k, c, bh, s, d, causal, bwd, 0);
}

double kern_flash3_time(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                        int bwd)
{
    return flash_one(k, c, bh, s, d, causal, bwd, 1);
}

double kern_mem_time(const kern_calib *k, double bytes, int kernels, double hbm_Bps)
{
    if (bytes <= 0 && kernels <= 0)
        return 0;
    return kernels * k->launch_s + bytes / hbm_Bps;
}

/* ---- attention kernel generations --------------------------------------------------------
 * A kernel other than FA2/FA3 is timed as FA2's (or FA3's) model at the same shape x the
 * published ratio of the two kernels' fwd+bwd rates at that sequence length, piecewise linear
 * in log2(s), clamped at the ends. For FA1 and the 2022 Triton kernel, whose benchmark did not
 * print FA2 beside them in text, the ratio's denominator is the shipped FA2 model itself at the
 * benchmark's shape (A100 defaults, batch 16k/s, 16 heads, d 128, causal, fwd+bwd:
 * 75.6/104.3/128.6/145.6/155.9/161.6 TFLOPS at 512..16k; test_kernels.c recomputes them), so
 * on an A100 at those shapes the kernel runs at its published rate. One row per point. */
typedef struct ak_row {
    double s;      /* sequence length                                       */
    double pub;    /* the kernel's published rate (TFLOPS), or the ratio    */
    double ref;    /* FA2 rate it is divided by (TFLOPS; 1 = pub is a ratio) */
    const char *source;
} ak_row;

/* FlashAttention-1 (CUDA), A100 causal d128 fwd+bwd (arXiv 2307.08691 Fig. 4; reference
 * fidelity-compute.md item 1); the 16k point (batch 1 x 16 heads) is FA1's collapse, kept
 * apart below. */
static const ak_row FA1_ROWS[] = {
    {512, 53, 75.6, "arXiv 2307.08691 Fig. 4 (A100, causal, d128, fwd+bwd)"},
    {1024, 72, 104.3, "arXiv 2307.08691 Fig. 4"},
    {2048, 81, 128.6, "arXiv 2307.08691 Fig. 4"},
    {4096, 87, 145.6, "arXiv 2307.08691 Fig. 4"},
    {8192, 91, 155.9, "arXiv 2307.08691 Fig. 4"},
};
/* FA1 parallelises over batch x heads only (arXiv 2307.08691 s3.2); at 16k with bh = 16 it
 * fell to 19 TFLOPS (Fig. 4) while bh = 32 at 8k did not collapse (91): the collapse is
 * applied where bh <= 16, the published collapsed shape, as 19 / 161.6 over the 8k ratio. */
static const ak_row FA1_COLLAPSE = {16384, 19, 161.6, "arXiv 2307.08691 Fig. 4 (16k, 16 heads)"};
/* The 2022 Triton FlashAttention, A100 causal d128 fwd+bwd (arXiv 2307.08691 Fig. 4;
 * Dao-AILab/flash-attention@eff9fe6b flash_attn/flash_attn_triton.py: "overall slightly
 * slower than CUDA" FA1) */
static const ak_row TRITON_ROWS[] = {
    {512, 28, 75.6, "arXiv 2307.08691 Fig. 4 (A100, causal, d128, fwd+bwd)"},
    {1024, 61, 104.3, "arXiv 2307.08691 Fig. 4"},
    {2048, 74, 128.6, "arXiv 2307.08691 Fig. 4"},
    {4096, 80, 145.6, "arXiv 2307.08691 Fig. 4"},
    {8192, 83, 155.9, "arXiv 2307.08691 Fig. 4"},
    {16384, 92, 161.6, "arXiv 2307.08691 Fig. 4"},
};
/* xformers' CUTLASS memory-efficient kernel (also SDPA's efficient backend), fwd+bwd ratio to
 * FA2 in the same run: causal d64, (4, 4096) 30.63 / 52.27 and (2, 8192) 26.34 / 54.58
 * TFLOPS (Dao-AILab/flash-attention#416, benchmark_flash_attention.py; GPU not named: only
 * the ratio is used) [weak: one run] */
static const ak_row XF_ROWS[] = {
    {4096, 30.63, 52.27, "Dao-AILab/flash-attention#416 (causal d64, fwd+bwd, same run as FA2)"},
    {8192, 26.34, 54.58, "Dao-AILab/flash-attention#416"},
};
/* Measured on the lent H100 SXM (main@10bd884, bench/gpu-results/2026-11-27-h100-sxm/attention.json: PyTorch 2.11 SDPA, cuDNN
 * 9.19, FA2 paper protocol: hidden 2048, 16k tokens, d 128, causal; each backend beside SDPA's
 * flash backend = FA2 kernels in the same run): cuDNN and the memory-efficient (xformers-class)
 * backend over flash, forward and backward apart. The memory-efficient kernel has no Hopper
 * (wgmma) path, so these efficient-backend ratios apply on Hopper only; elsewhere the #416
 * ratios above. cuDNN off Hopper runs at FA2's rate [assumed: no published A100 table]. */
static const ak_row CUDNN_FWD[] = {
    {512, 316.2, 183.0, "bench/gpu-results/2026-11-27-h100-sxm/attention.json (H100 SXM, d128 causal, fwd: cuDNN / flash)"},
    {1024, 408.7, 239.0, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {2048, 472.4, 273.2, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {4096, 515.7, 295.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {8192, 545.7, 307.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {16384, 554.1, 297.9, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {32768, 551.4, 309.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {65536, 573.4, 323.3, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
};
static const ak_row CUDNN_BWD[] = {
    {512, 122.6, 86.7, "bench/gpu-results/2026-11-27-h100-sxm/attention.json (H100 SXM, d128 causal, bwd: cuDNN / flash)"},
    {1024, 215.7, 135.9, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {2048, 311.5, 190.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {4096, 391.4, 235.3, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {8192, 451.5, 269.8, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {16384, 511.6, 294.2, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {32768, 536.7, 291.7, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {65536, 467.7, 299.6, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
};
static const ak_row EFF_FWD[] = {
    {512, 119.4, 183.0, "bench/gpu-results/2026-11-27-h100-sxm/attention.json (H100 SXM, d128 causal, fwd: efficient / flash)"},
    {1024, 139.8, 239.0, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {2048, 152.1, 273.2, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {4096, 158.8, 295.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {8192, 163.3, 307.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {16384, 167.3, 297.9, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {32768, 165.0, 309.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {65536, 168.4, 323.3, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
};
static const ak_row EFF_BWD[] = {
    {512, 57.9, 86.7, "bench/gpu-results/2026-11-27-h100-sxm/attention.json (H100 SXM, d128 causal, bwd: efficient / flash)"},
    {1024, 80.2, 135.9, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {2048, 99.2, 190.4, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {4096, 113.8, 235.3, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {8192, 122.7, 269.8, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {16384, 125.6, 294.2, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {32768, 130.7, 291.7, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
    {65536, 130.4, 299.6, "bench/gpu-results/2026-11-27-h100-sxm/attention.json"},
};

static double ak_ratio(const ak_row *r, size_t n, double s)
{
    if (s <= r[0].s)
        return r[0].pub / r[0].ref;
    for (size_t i = 1; i < n; i++)
        if (s <= r[i].s) {
            double f = log2(s / r[i - 1].s) / log2(r[i].s / r[i - 1].s);
            return (1 - f) * r[i - 1].pub / r[i - 1].ref + f * r[i].pub / r[i].ref;
        }
    return r[n - 1].pub / r[n - 1].ref;
}

#define AK_N_ROWS(a) (sizeof(a) / sizeof((a)[0]))

double kern_attn_ratio(int ak, double bh, double s, int bwd, int hopper)
{
    switch (ak) {
    case AK_FA1: {
        double r = ak_ratio(FA1_ROWS, AK_N_ROWS(FA1_ROWS), s);
        if (bh <= 16) /* the collapse, relative to the clamped 8k ratio */
            r *= (FA1_COLLAPSE.pub / FA1_COLLAPSE.ref) / (FA1_ROWS[4].pub / FA1_ROWS[4].ref);
        return r;
    }
    case AK_TRITON2022: return ak_ratio(TRITON_ROWS, AK_N_ROWS(TRITON_ROWS), s);
    case AK_XFORMERS:
    case AK_SDPA_EFFICIENT:
        if (hopper)
            return bwd ? ak_ratio(EFF_BWD, AK_N_ROWS(EFF_BWD), s) : ak_ratio(EFF_FWD, AK_N_ROWS(EFF_FWD), s);
        return ak_ratio(XF_ROWS, AK_N_ROWS(XF_ROWS), s);
    case AK_SDPA_CUDNN:
        if (!hopper)
            return 1.0;
        return bwd ? ak_ratio(CUDNN_BWD, AK_N_ROWS(CUDNN_BWD), s) : ak_ratio(CUDNN_FWD, AK_N_ROWS(CUDNN_FWD), s);
    default: return 1.0;
    }
}

int kern_attn_resolve(int ak, const char *arch)
{
    if (ak != AK_DEFAULT)
        return ak;
    return arch_is(arch, "volta") ? AK_XFORMERS : AK_FA2;
}

/* kern_attn_time's forward (out[0]) and backward (out[1]), those asked in `want` (bit 0, bit 1). */
static void attn_times(const kern_calib *k, const spec_cluster *c, int ak, double bh, double s, double d, int causal,
                       int want, double out[2])
{
    int hopper = ARCH16_IS(c->gpu.arch, "hopper");
    /* FA1-class kernels: the calibration's own fused kernel already is xformers' on Volta
     * (fa_version 1): no further ratio there */
    const int fa2 = ak == AK_DEFAULT || ak == AK_FA2 || ak == AK_SDPA_FLASH ||
                    (ak != AK_FA3 && k->fa_version == 1 && (ak == AK_XFORMERS || ak == AK_SDPA_EFFICIENT));
    const flash_effs e = flash_effs_of(k, ak == AK_FA3);
    flash_times(k, c, bh, s, d, causal, &e, want, out);
    if (fa2 || ak == AK_FA3)
        return;
    for (int bwd = 0; bwd < 2; bwd++)
        if (want >> bwd & 1)
            out[bwd] = k->launch_s + (out[bwd] - k->launch_s) / kern_attn_ratio(ak, bh, s, bwd, hopper);
}

double kern_attn_time(const kern_calib *k, const spec_cluster *c, int ak, double bh, double s, double d, int causal,
                      int bwd)
{
    double out[2];
    attn_times(k, c, ak, bh, s, d, causal, 1 << bwd, out);
    return out[bwd];
}

void kern_attn_times(const kern_calib *k, const spec_cluster *c, int ak, double bh, double s, double d, int causal,
                     double *fwd, double *bwd)
{
    double out[2];
    attn_times(k, c, ak, bh, s, d, causal, (fwd ? 1 : 0) | (bwd ? 2 : 0), out);
    if (fwd)
        *fwd = out[0];
    if (bwd)
        *bwd = out[1];
}

int kern_attn_rows(int ak, int hopper, const char **source, double *s, double *ratio, int max)
{
    int xf = ak == AK_XFORMERS || ak == AK_SDPA_EFFICIENT;
    const ak_row *r = ak == AK_FA1 ? FA1_ROWS : ak == AK_TRITON2022 ? TRITON_ROWS
                    : xf ? (hopper ? EFF_FWD : XF_ROWS)
                    : ak == AK_SDPA_CUDNN && hopper ? CUDNN_FWD : NULL;
    size_t n = ak == AK_FA1 ? AK_N_ROWS(FA1_ROWS) : ak == AK_TRITON2022 ? AK_N_ROWS(TRITON_ROWS)
             : xf ? (hopper ? AK_N_ROWS(EFF_FWD) : AK_N_ROWS(XF_ROWS))
             : ak == AK_SDPA_CUDNN && hopper ? AK_N_ROWS(CUDNN_FWD) : 0;
    int i = 0;
    for (; r && i < (int)n && i < max; i++) {
        source[i] = r[i].source;
        s[i] = r[i].s;
        ratio[i] = r[i].pub / r[i].ref;
    }
    if (ak == AK_FA1 && i < max) {
        source[i] = FA1_COLLAPSE.source;
        s[i] = FA1_COLLAPSE.s;
        ratio[i++] = FA1_COLLAPSE.pub / FA1_COLLAPSE.ref;
    }
    return i;
}

/* kernels.h — how long the kernels of a transformer layer take on one GPU: GEMMs timed from
 * their shape (output tiles, waves over the SMs, efficiency by tile and K, peak by dtype),
 * fused attention (FlashAttention-2/-3) by sequence, head dim, heads and mask, the unfused
 * attention path, and the memory-bound kernels (norms, rotary, activations, dropout, residuals,
 * loss, optimizer) from the bytes they move at the achieved HBM rate plus a launch cost.
 * Not here: which kernels a layer runs (model/workload) or overlap with communication (engines). */
#ifndef SC_KERNELS_H
#define SC_KERNELS_H

#include "spec.h"

/* Math a GEMM runs in. */
typedef enum { KD_FP32, KD_TF32, KD_FP16, KD_BF16, KD_FP8, KD_N } kern_dtype;

/* Per-GPU kernel calibration (configs/calibrations/<x>.json "kernels"; built-in per-arch
 * defaults otherwise, same values and sources as the shipped files). */
typedef struct kern_calib {
    int sms;                 /* streaming multiprocessors (0 = the cluster's or the arch's)  */
    double gemm_eff;         /* large-tile (256x128) tensor-core GEMM efficiency at large K   */
    double gemm_eff_dtype[KD_N]; /* efficiency in that math where it differs (0 = gemm_eff)  */
    double gemm_k0;          /* K elements of pipeline fill: a tile runs K / (K + k0)         */
    double gemm_fixed_s;     /* launch + prologue/epilogue per GEMM, s                         */
    int gemm_ksweep;         /* 1: 16-bit GEMMs run at the measured sustained rate by K
                                (kern_gemm_kfactor, Hopper), 0: no K dependence but k0         */
    int gemm_streamk;        /* 1: a GEMM whose last wave is under half full may run as
                                stream-K (kern_gemm_time; Hopper's cooperative kernels), 0: data-
                                parallel waves only                                           */
    double fa_fwd_eff;       /* fused attention forward, fraction of 16-bit peak, head dim 128 */
    double fa_bwd_eff;       /* backward (FLOPs counted as 2.5 x forward, FlashAttention's)    */
    double fa_causal;        /* efficiency factor with a causal mask                           */
    double fa_hd64;          /* efficiency factor at head dim 64 relative to 128 (forward)     */
    double fa_hd64_bwd;      /* the same for the backward (0 = fa_hd64)                        */
    double fa_s0;            /* sequence ramp: efficiency x s / (s + s0) (x2.2 s0 causal)      */
    double fa_s0_bwd;        /* the backward's ramp (0 = fa_s0)                                */
    int fa_version;          /* the fused kernel these describe: 1 (xformers), 2 (FA2), 3 (FA3) */
    /* FlashAttention-3 (Hopper only; 0 = none): same meaning as the fa_* above            */
    double fa3_fwd_eff, fa3_bwd_eff, fa3_causal, fa3_s0;
    double fa_clock;         /* clock / datasheet clock at which the fa_* were measured (0 = 1):
                                attention slows only where its sustained clock is lower         */
    double attn_sustained;   /* fused attention's own sustained rate under the power cap over
                                its short-run rate (0 = none: the cluster's clock_ratio, the
                                dense GEMMs', stands for attention's sustained clock too)      */
    double attn_clock;       /* the dense clock_ratio of the run that measured attn_sustained
                                (0 = none): a cluster whose clock_ratio is lower (a lower power
                                cap) scales attn_sustained by clock_ratio / attn_clock          */
    double launch_s;         /* one memory-bound kernel's launch / gap, s                      */
} kern_calib;

/* Defaults for an arch ("volta", "ampere", "hopper", ...; see kernels.c for the sources). */
void kern_defaults(const char *arch, kern_calib *k);

/* SM count of the cluster's GPU: the cluster's "sms" key, else the calibration's, else the
 * arch's datasheet value (V100 80, A100 108, H100 SXM 132). */
int kern_sms(const kern_calib *k, const spec_cluster *c);
/* Peak FLOP/s of the GPU in a math (0 = the GPU lacks it), scaled by the sustained clock. */
double kern_peak(const spec_cluster *c, kern_dtype d);
/* The GEMM math a training precision runs its matmuls in. */
kern_dtype kern_gemm_dtype(spec_precision p);
const char *kern_dtype_str(kern_dtype d);

/* With gemm_ksweep, a 16-bit GEMM's compute time is divided by this factor of its inner
 * dimension K: the lent H100's sustained bf16 K sweep at M = N = 8192 over its K = 8192 point
 * (bench/gpu-results/2026-11-27-h100-sxm/sustained_gemm.json), piecewise linear in log2 K
 * between the measured K (768 .. 16384), clamped at the ends: 0.913 at K <= 768, 0.940 at 2048,
 * 0.978 at 4096, 1 at 8192, 1.019 at K >= 16384. */
double kern_gemm_kfactor(double kk);
/* A GEMM that Transformer Engine's userbuffers run as chunks of `rows` rows one after another
 * (workload.h wl_ub_chunks) takes this factor times the whole GEMM's time: the lent H200's
 * measured chunked / whole ratio by chunk rows (kernels.c: 1.0657 / 1.0238 / 1.0055 at 512 /
 * 1024 / 2048 rows), piecewise linear in log2 rows, clamped at the ends; on Hopper only (1
 * elsewhere: not measured). Not the kernel model's own chunks: its data-parallel waves put 4
 * chunks of 512 rows at 1.16-1.40x the whole GEMM where the GPU measured 1.05-1.08x; with
 * stream-K (smallm27) they come closer but not within the factor's own held-out spread (median
 * |model - measured| 0.034 vs 0.020 on the Llama-3 70B rows; docs/COMPUTE.md). */
double kern_gemm_chunk_factor(const spec_cluster *c, double rows);
/* One GEMM C[m x n] = A[m x k] B[k x n], `batch` copies: the best of the tile shapes
 * (bm x bn) in {256x128, 128x256, 128x128, 128x64, 64x128, 64x64}: waves =
 * ceil(ceil(m/bm) ceil(n/bn) batch / SMs), each wave one tile's time
 * 2 bm bn (k + k0) / (peak/SMs x eff x rel(tile)), rel = sqrt(I(tile) / I(256x128)) with
 * I = bm bn / (bm + bn) (arithmetic intensity); bounded below by its bytes at the achieved
 * HBM rate; plus the fixed cost. With gemm_ksweep (16-bit maths) the tile time is divided by
 * kern_gemm_kfactor(k) before the HBM bound. hbm_Bps: achieved HBM B/s.
 * With gemm_streamk a tile shape whose T tiles leave a last wave under half full (T not a
 * multiple of SMs, 2 (T - floor(T/SMs) SMs) < SMs) and whose k-tiles kt = ceil(k / 64) exceed
 * 8 may instead run stream-K (CUTLASS's sm90 heuristic, kernels.c): max(floor(T/SMs) - 1, 0)
 * data-parallel waves, then the remaining s tiles' kt s k-tiles split over
 * u = min(SMs, floor(kt s / 8)) units, the busiest ceil(kt s / u): waves = dp + ceil(kt s /
 * u) / kt at the same tile time (divided by kern_gemm_kfactor), plus the fixup: each unit
 * writes and reads one fp32 partial tile, 8 bm bn SMs / hbm_Bps (0 where hbm_Bps is 0). The
 * least of every data-parallel and stream-K time is taken. */
double kern_gemm_time(const kern_calib *k, const spec_cluster *c, kern_dtype d, double m, double n, double kk,
                      double batch, double elem_bytes, double hbm_Bps);
/* The same split in two, for a caller that times several GEMMs of one math on one GPU: what
 * depends on (calibration, GPU, math) only, taken once by kern_gemm_rate_of, and the GEMM's
 * time from it (kern_gemm_time_r: the same bits as kern_gemm_time). Plain data, no pointers. */
typedef struct kern_gemm_rate {
    int sms;          /* SMs the tiles are spread over                                    */
    double inv_sms;   /* 1 / sms (a first guess of the waves, checked in integers)        */
    double den[4];    /* per-SM rate x rel of each tile pair (kernels.c TILES), FLOP/s     */
    double inv_den[4];/* 1 / den (to rank the tiles; the winner is divided exactly)       */
    int den_normal;   /* every den in (2^-900, 2^900): least_time's estimates are good     */
    double k0;        /* gemm_k0                                                          */
    double fixed_s;   /* gemm_fixed_s                                                     */
    int ksweep;       /* gemm_ksweep and a 16-bit math: divide by kern_gemm_kfactor(k)    */
    int streamk;      /* gemm_streamk: stream-K candidates too                            */
} kern_gemm_rate;
void kern_gemm_rate_of(const kern_calib *k, const spec_cluster *c, kern_dtype d, kern_gemm_rate *r);
double kern_gemm_time_r(const kern_gemm_rate *r, double m, double n, double kk, double batch, double elem_bytes,
                        double hbm_Bps);

/* Fused attention over bh = batch x heads (query heads), sequence s, head dim d:
 * forward FLOPs 4 bh s^2 d (half with a causal mask), backward 2.5x (FlashAttention's
 * benchmark convention, recompute included); time = launch + FLOPs / (peak16 x eff), eff =
 * fa_*_eff x (causal ? fa_causal : 1) x (d <= 64 ? fa_hd64 : 1) x s / (s + s0') x wave
 * utilisation of bh x ceil(s/128) row blocks over the SMs. peak16 is the datasheet peak x
 * min(a, fa_clock) / fa_clock, a = attention's sustained fraction: attn_sustained where the
 * calibration measured one (x clock_ratio / attn_clock where the cluster's clock_ratio is below
 * the measuring run's attn_clock), else the cluster's clock_ratio (every attention generation
 * takes FA2's or FA3's time, so this one rule applies to all of them). */
double kern_attn_flops(double bh, double s, double d, int causal, int bwd);
double kern_flash_time(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                       int bwd);
/* The same with FlashAttention-3 where the calibration has it (else FlashAttention-2's). */
double kern_flash3_time(const kern_calib *k, const spec_cluster *c, double bh, double s, double d, int causal,
                        int bwd);
/* Attention by kernel generation (spec_attn_kernel): FA2 / SDPA-flash = kern_flash_time, FA3 =
 * kern_flash3_time, FA1 / 2022 Triton / xformers / SDPA-efficient / SDPA-cuDNN = FA2's time /
 * their published or measured ratio to FA2 at s (FA1 collapsing where bh <= 16; efficient and
 * cuDNN on Hopper from the lent H100, forward and backward apart; kernels.c lists every row
 * with its source). */
double kern_attn_time(const kern_calib *k, const spec_cluster *c, int ak, double bh, double s, double d, int causal,
                      int bwd);
/* Its forward into *fwd and backward into *bwd (NULL: not asked) at once, the same bits. */
void kern_attn_times(const kern_calib *k, const spec_cluster *c, int ak, double bh, double s, double d, int causal,
                     double *fwd, double *bwd);
/* The ratio to FA2 (FA3 for cuDNN) kern_attn_time divides by (1 for FA2/FA3). */
double kern_attn_ratio(int ak, double bh, double s, int bwd, int hopper);
/* AK_DEFAULT made concrete for an arch: FA2, or xformers on Volta. */
int kern_attn_resolve(int ak, const char *arch);
/* The rows of a kernel's table (forward where they differ): up to max (source, s, ratio);
 * returns how many. */
int kern_attn_rows(int ak, int hopper, const char **source, double *s, double *ratio, int max);
/* Bytes a memory-bound kernel pass moves through HBM, at hbm_Bps plus one launch each. */
double kern_mem_time(const kern_calib *k, double bytes, int kernels, double hbm_Bps);

#endif

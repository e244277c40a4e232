/* test_memory.c — bytes per GPU of each layout against the ZeRO paper's formulas
 * (Rajbhandari et al. 2020 §3, Fig. 1: mixed-precision Adam keeps 2 + 2 + 12 = 16 bytes per
 * parameter; ZeRO-1/2/3 divide 12, 2 + 12, 2 + 2 + 12 of them by N; MiCS/HSDP divide by p),
 * and the fits / smallest-MiCS-group arithmetic. Ψ is the parameter count from the workload.
 * Not here: parameter/activation counts themselves (test_workload.c). */
#include "suites.h"

#include "../model/memory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GiB 1073741824.0
#define REL 1e-12
#define ck_assert_rel(a, b) ck_assert_double_eq_tol((a), (b), REL * fabs((double)(b)) + 1e-300)

/* GPT-3 175B on 16 p4d.24xlarge nodes (N = 128 A100-40GB), defaults: bf16, micro-batch 1,
 * checkpointing, flash attention, prefetch 1, 25 MB buckets, 2 GiB reserve.
 * Hand numbers (test_workload.c derives them):
 *   Ψ = 174604259328, largest layer (a block) 1812099072 params,
 *   activations = head input 2 s h + 96 checkpoints 2 s h + the larger of the loss's peak
 *   (the default loss: the fp32 logits 4 s V = 411705344) and one block's recompute 34 s h
 *   (855638016), not live at once (memory.c)
 *               = 50331648 + 4831838208 + 855638016 = 5737807872 B. */
#define PSI 174604259328.0
#define MAXLAYER 1812099072.0
#define ACT 5737807872.0
#define N 128

typedef struct fixture {
    spec_model m;
    spec_cluster c;
    spec_training t;
    wl w;
} fixture;

static void setup(fixture *f, spec_precision p)
{
    char msg[600];
    sc_err err;
    ck_assert_msg(spec_load_model("configs/models/gpt3-175b.json", &f->m, &err) == 0, "%s",
                  sc_err_str(&err, msg, sizeof msg));
    ck_assert_msg(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &f->c, &err) == 0, "%s",
                  sc_err_str(&err, msg, sizeof msg));
    spec_training_defaults(&f->t);
    f->t.precision = p;
    wl_build(&f->m, &f->t, &f->w);
    ck_assert_double_eq(f->w.params, PSI);
}

static mem_breakdown plan(const fixture *f, const char *layout, int n_ranks)
{
    spec_layout l;
    sc_err err;
    mem_breakdown b;
    ck_assert_int_eq(spec_layout_parse(layout, &l, &err), 0);
    mem_plan(&f->w, &f->t, &l, n_ranks, &f->c, &b);
    /* the total is the sum of its parts, and fits/short_by follow from it */
    ck_assert_rel(b.total, b.params + b.grads + b.optim + b.activations + b.gathered + b.buckets + b.reserve);
    ck_assert_double_eq(b.hbm, f->c.gpu.hbm_bytes);
    ck_assert_int_eq(b.fits, b.total <= b.hbm);
    ck_assert_double_eq(b.short_by, b.fits ? 0 : b.total - b.hbm);
    return b;
}

START_TEST(test_state_bytes)
{
    double p, g, o;
    /* ZeRO §3: fp16/bf16 params 2, grads 2, fp32 master + momentum + variance 12 */
    mem_state_bytes(PREC_BF16, &p, &g, &o);
    ck_assert_double_eq(p, 2);
    ck_assert_double_eq(g, 2);
    ck_assert_double_eq(o, 12);
    mem_state_bytes(PREC_FP16, &p, &g, &o);
    ck_assert_double_eq(p + g + o, 16);
    /* fp32: params 4, grads 4, momentum + variance 8: also 16 */
    mem_state_bytes(PREC_FP32, &p, &g, &o);
    ck_assert_double_eq(p, 4);
    ck_assert_double_eq(g, 4);
    ck_assert_double_eq(o, 8);
}
END_TEST

START_TEST(test_ddp)
{
    /* DDP replicates everything: 2Ψ + 2Ψ + 12Ψ = 16Ψ = 2793668149248 B (2.6 TiB: far from
     * fitting 40 GiB). Buckets: one reducing + one filling, 2 x 25 MB. No gathered layers. */
    fixture f;
    setup(&f, PREC_BF16);
    mem_breakdown b = plan(&f, "ddp", N);
    ck_assert_double_eq(b.params, 2 * PSI);
    ck_assert_double_eq(b.grads, 2 * PSI);
    ck_assert_double_eq(b.optim, 12 * PSI);
    ck_assert_double_eq(b.params + b.grads + b.optim, 16 * PSI);
    ck_assert_double_eq(b.params + b.grads + b.optim, 2793668149248.0);
    ck_assert_double_eq(b.buckets, 50e6);
    ck_assert_double_eq(b.gathered, 0);
    ck_assert_double_eq(b.activations, ACT);
    ck_assert_double_eq(b.reserve, 2 * GiB);
    /* total = 16Ψ + act + buckets + reserve = 2793668149248 + 5737807872 + 5e7 + 2147483648
     *       = 2801603440768; short by that minus 40 GiB (42949672960) = 2758653767808 */
    ck_assert_double_eq(b.total, 2801603440768.0);
    ck_assert_int_eq(b.fits, 0);
    ck_assert_double_eq(b.short_by, 2758653767808.0);
}
END_TEST

START_TEST(test_zero1)
{
    /* optimizer states sharded: 2Ψ + 2Ψ + 12Ψ/N = 4Ψ + 12Ψ/N */
    fixture f;
    setup(&f, PREC_BF16);
    mem_breakdown b = plan(&f, "zero1", N);
    ck_assert_double_eq(b.params, 2 * PSI);
    ck_assert_double_eq(b.grads, 2 * PSI);
    ck_assert_rel(b.optim, 12 * PSI / N);
    ck_assert_rel(b.params + b.grads + b.optim, 4 * PSI + 12 * PSI / N);
    ck_assert_double_eq(b.buckets, 50e6);
    ck_assert_double_eq(b.gathered, 0);
}
END_TEST

START_TEST(test_zero2)
{
    /* gradients and optimizer states sharded: 2Ψ + 14Ψ/N */
    fixture f;
    setup(&f, PREC_BF16);
    mem_breakdown b = plan(&f, "zero2", N);
    ck_assert_double_eq(b.params, 2 * PSI);
    ck_assert_rel(b.grads, 2 * PSI / N);
    ck_assert_rel(b.optim, 12 * PSI / N);
    ck_assert_rel(b.params + b.grads + b.optim, 2 * PSI + 14 * PSI / N);
    ck_assert_double_eq(b.buckets, 50e6);
}
END_TEST

START_TEST(test_zero3)
{
    /* everything sharded: 16Ψ/N = Ψ/8 = 21825532416 B.
     * gathered = (1 + prefetch) x largest layer x 2 B (current + prefetched bf16 params)
     *          + largest layer x 2 B (its full bf16 gradient before the reduce-scatter)
     *          = 2 * 1812099072 * 2 + 1812099072 * 2 = 10872594432 B.
     * No DDP buckets. Total = 21825532416 + 5737807872 + 10872594432 + 2147483648
     * = 40583418368 B, which fits 40 GiB (42949672960) with 2366254592 B to spare. */
    fixture f;
    setup(&f, PREC_BF16);
    mem_breakdown b = plan(&f, "zero3", N);
    ck_assert_rel(b.params, 2 * PSI / N);
    ck_assert_rel(b.grads, 2 * PSI / N);
    ck_assert_rel(b.optim, 12 * PSI / N);
    ck_assert_rel(b.params + b.grads + b.optim, 16 * PSI / N);
    ck_assert_double_eq(b.params + b.grads + b.optim, 21825532416.0);
    ck_assert_double_eq(b.gathered, (1 + 1) * MAXLAYER * 2 + MAXLAYER * 2);
    ck_assert_double_eq(b.gathered, 10872594432.0);
    ck_assert_double_eq(b.buckets, 0);
    ck_assert_double_eq(b.total, 40583418368.0);
    ck_assert_int_eq(b.fits, 1);
    ck_assert_double_eq(b.short_by, 0);
    ck_assert_double_eq(b.hbm - b.total, 2366254592.0);
}
END_TEST

START_TEST(test_gathered_prefetch)
{
    /* prefetch 3 layers: (1 + 3) * 2 + 2 = 10 bytes per largest-layer parameter */
    fixture f;
    setup(&f, PREC_BF16);
    f.t.prefetch_layers = 3;
    ck_assert_double_eq(plan(&f, "zero3", N).gathered, 10 * MAXLAYER);
    /* no prefetch: current layer + its gradient, 4 bytes per parameter */
    f.t.prefetch_layers = 0;
    ck_assert_double_eq(plan(&f, "mics:p=8", N).gathered, 4 * MAXLAYER);
}
END_TEST

START_TEST(test_mics)
{
    /* MiCS shards over the partition group only: 16Ψ/p; p = 8 -> 2Ψ = 349208518656 B */
    fixture f;
    setup(&f, PREC_BF16);
    const int ps[] = {8, 16, 32, 64};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        char s[32];
        snprintf(s, sizeof s, "mics:p=%d", ps[i]);
        mem_breakdown b = plan(&f, s, N);
        ck_assert_rel(b.params + b.grads + b.optim, 16 * PSI / ps[i]);
        ck_assert_rel(b.optim, 12 * PSI / ps[i]);
        ck_assert_double_eq(b.gathered, 6 * MAXLAYER);
        ck_assert_double_eq(b.buckets, 0);
    }
    ck_assert_double_eq(plan(&f, "mics:p=8", N).params + plan(&f, "mics:p=8", N).grads +
                            plan(&f, "mics:p=8", N).optim,
                        349208518656.0);
    /* HSDP shards the same way within its group */
    mem_breakdown h = plan(&f, "hsdp:p=64", N);
    ck_assert_rel(h.params + h.grads + h.optim, 16 * PSI / 64);
}
END_TEST

START_TEST(test_mics_p_equals_n_is_zero3)
{
    /* a MiCS group of all N ranks is ZeRO-3: every component identical, exactly */
    fixture f;
    setup(&f, PREC_BF16);
    mem_breakdown z = plan(&f, "zero3", N), m = plan(&f, "mics:p=128", N);
    ck_assert_double_eq(m.params, z.params);
    ck_assert_double_eq(m.grads, z.grads);
    ck_assert_double_eq(m.optim, z.optim);
    ck_assert_double_eq(m.activations, z.activations);
    ck_assert_double_eq(m.gathered, z.gathered);
    ck_assert_double_eq(m.buckets, z.buckets);
    ck_assert_double_eq(m.reserve, z.reserve);
    ck_assert_double_eq(m.total, z.total);
    ck_assert_int_eq(m.fits, z.fits);
    ck_assert_double_eq(m.short_by, z.short_by);
}
END_TEST

START_TEST(test_zeropp)
{
    /* ZeRO++ hpZ (Wang et al. 2023 §3.2): ZeRO-3 plus a secondary bf16 copy of the params
     * sharded over hpz ranks: + 2Ψ/hpz = + 2Ψ/8 = + 43651064832 B; nothing else changes */
    fixture f;
    setup(&f, PREC_BF16);
    mem_breakdown z = plan(&f, "zero3", N), p = plan(&f, "zeropp:hpz=8", N);
    ck_assert_rel(p.params, z.params + 2 * PSI / 8);
    ck_assert_double_eq(p.params - z.params, 43651064832.0);
    ck_assert_double_eq(p.grads, z.grads);
    ck_assert_double_eq(p.optim, z.optim);
    ck_assert_double_eq(p.gathered, z.gathered);
    ck_assert_rel(p.total, z.total + 2 * PSI / 8);
    /* 40583418368 + 43651064832 = 84234483200 > 40 GiB: short by 41284810240 */
    ck_assert_int_eq(p.fits, 0);
    ck_assert_double_eq(p.short_by, 84234483200.0 - 40 * GiB);
    /* issue 26: FSDP2's reshard_after_forward=8 holds every layer's post-forward shard (2Ψ/8 in
     * all at the backward's start): the same + 43651064832 B (layout_dp.c) */
    mem_breakdown r = plan(&f, "raf:p=8", N);
    ck_assert_double_eq(r.params - z.params, 43651064832.0);
    ck_assert_double_eq(r.total, p.total);
}
END_TEST

START_TEST(test_fp32)
{
    /* fp32 Adam: 4Ψ + 4Ψ + 8Ψ = 16Ψ replicated; ZeRO-3 16Ψ/N; gathered in 4-byte elements:
     * (1 + 1) * 4 + 4 = 12 bytes per largest-layer parameter */
    fixture f;
    setup(&f, PREC_FP32);
    mem_breakdown d = plan(&f, "ddp", N);
    ck_assert_double_eq(d.params, 4 * PSI);
    ck_assert_double_eq(d.grads, 4 * PSI);
    ck_assert_double_eq(d.optim, 8 * PSI);
    ck_assert_double_eq(d.params + d.grads + d.optim, 16 * PSI);
    mem_breakdown z = plan(&f, "zero3", N);
    ck_assert_rel(z.params + z.grads + z.optim, 16 * PSI / N);
    ck_assert_double_eq(z.gathered, 12 * MAXLAYER);
}
END_TEST

START_TEST(test_activations_and_reserve)
{
    /* without checkpointing every block keeps its full stash: 96 x 34 s h + head 2 s h + logits
     * = 96 * 855638016 + 50331648 + 411705344 = 82603286528 B */
    fixture f;
    setup(&f, PREC_BF16);
    ck_assert_double_eq(plan(&f, "zero3", N).activations, ACT);
    f.t.act_ckpt = 0;
    wl_build(&f.m, &f.t, &f.w);
    ck_assert_double_eq(plan(&f, "zero3", N).activations, 82603286528.0);
    /* the reserve is passed through */
    f.t.reserve_bytes = 0;
    ck_assert_double_eq(plan(&f, "zero3", N).reserve, 0);
}
END_TEST

START_TEST(test_fits_boundary)
{
    /* fits is total <= hbm: an HBM of exactly the ZeRO-3 total fits, 1 MiB less is short by 1 MiB */
    fixture f;
    setup(&f, PREC_BF16);
    f.c.gpu.hbm_bytes = 40583418368.0;
    mem_breakdown b = plan(&f, "zero3", N);
    ck_assert_int_eq(b.fits, 1);
    ck_assert_double_eq(b.short_by, 0);
    f.c.gpu.hbm_bytes = 40583418368.0 - 1048576;
    b = plan(&f, "zero3", N);
    ck_assert_int_eq(b.fits, 0);
    ck_assert_double_eq(b.short_by, 1048576);
}
END_TEST

START_TEST(test_smallest_mics_p_p4d)
{
    /* 16 p4d nodes: candidate p = 1, 2, 4, ..., 128. Totals from 16Ψ/p + act + gathered + reserve:
     * p = 64: 43651064832 + 5737807872 + 10872594432 + 2147483648 = 62408950784 > 40 GiB;
     * p = 128: 40583418368 <= 42949672960. So 128. */
    fixture f;
    setup(&f, PREC_BF16);
    ck_assert_int_eq(mem_smallest_mics_p(&f.w, &f.t, N, &f.c, 1), 128);
    /* on 80 GiB GPUs (85899345920 B): p = 32 gives 16Ψ/32 = 87302129664 alone: no;
     * p = 64: 62408950784 fits. So 64. */
    f.c.gpu.hbm_bytes = 80 * GiB;
    ck_assert_int_eq(mem_smallest_mics_p(&f.w, &f.t, N, &f.c, 0), 64);
}
END_TEST

START_TEST(test_smallest_mics_p_alignment)
{
    /* 3 nodes x 8 GPUs = 24 ranks. Valid p: divides 24 and divides or is a multiple of 8:
     * 1, 2, 4, 8, 24 (3, 6, 12 divide 24 but straddle nodes). The part of the total that does
     * not depend on p is fixed = act + gathered + reserve (taken from the ZeRO-3 plan, whose
     * parts test_zero3 checks), so total(p) = fixed + 16Ψ/p. */
    fixture f;
    setup(&f, PREC_BF16);
    const int n = 24;
    mem_breakdown z = plan(&f, "zero3", n);
    const double fixed = z.activations + z.gathered + z.reserve;
    /* HBM for 16Ψ/10: needs p >= 10; 12 is not aligned, so 24 */
    f.c.gpu.hbm_bytes = fixed + 16 * PSI / 10;
    ck_assert_int_eq(mem_smallest_mics_p(&f.w, &f.t, n, &f.c, 1), 24);
    /* HBM for 16Ψ/5: needs p >= 5 (6 is not aligned): 8 */
    f.c.gpu.hbm_bytes = fixed + 16 * PSI / 5;
    ck_assert_int_eq(mem_smallest_mics_p(&f.w, &f.t, n, &f.c, 1), 8);
    /* HBM for everything replicated: p = 1 */
    f.c.gpu.hbm_bytes = fixed + 16 * PSI;
    ck_assert_int_eq(mem_smallest_mics_p(&f.w, &f.t, n, &f.c, 1), 1);
    /* 1 GiB GPUs: not even the 2 GiB reserve fits: 0 */
    f.c.gpu.hbm_bytes = 1 * GiB;
    ck_assert_int_eq(mem_smallest_mics_p(&f.w, &f.t, n, &f.c, 1), 0);
}
END_TEST

START_TEST(test_smallest_mics_p_tiny_cluster)
{
    /* a hand-made cluster: 2 nodes of 4 GPUs with 16 GiB each; GPT-3 175B's ZeRO-3 share on
     * 8 ranks alone is 16Ψ/8 = 349208518656 B, so nothing fits: 0 */
    fixture f;
    setup(&f, PREC_BF16);
    spec_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "tiny");
    c.gpus_per_node = 4;
    c.gpu.hbm_bytes = 16 * GiB;
    ck_assert_int_eq(mem_smallest_mics_p(&f.w, &f.t, 8, &c, 1), 0);
}
END_TEST

/* The kinds table's memory columns (model/spec_layout.c) on N = 128 GPUs, by hand from ZeRO §3
 * Fig. 1 (stage k divides the first k of optimizer, gradient, parameter states by the group),
 * Megatron-LM (t ways; tp's default zero1=1 splits Adam's over all N) and AxoNN (x y z):
 * divisors {params, grads, optim}, sharded, keep_full. */
START_TEST(test_layout_state_columns)
{
    static const struct {
        const char *layout;
        double p, g, o;
        int sharded, keep_full;
    } want[] = {
        {"ddp", 1, 1, 1, 0, 0},
        {"zero1", 1, 1, N, 0, 0},
        {"zero1:p=8", 1, 1, 8, 0, 0},
        {"zero2", 1, N, N, 0, 0},
        {"zero2:p=8", 1, 8, 8, 0, 0},
        {"zero3", N, N, N, 1, 0},
        {"mics:p=16", 16, 16, 16, 1, 0},
        {"hsdp:p=8", 8, 8, 8, 1, 0},
        {"zeropp:hpz=8", N, N, N, 1, 0},
        {"tp:t=8", 8, 8, N, 0, 0},
        {"tp:t=8,zero1=0", 8, 8, 8, 0, 0},
        {"axonn:x=2,y=2,z=2", 8, 8, 8, 1, 0},
        {"axonn:x=2,y=4,z=1", 8, 8, 8, 0, 0},
        {"zero3-offload", N, 1, 1, 1, 0},
        {"luwu", 1, 1, 1, 1, 0},
        {"shard_grad_op", N, N, N, 1, 1},
        {"hybrid_shard_zero2:p=8", 8, 8, 8, 1, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        spec_layout l;
        sc_err err;
        ck_assert_msg(spec_layout_parse(want[i].layout, &l, &err) == 0, "%s: %s", want[i].layout, err.text);
        spec_layout_states st;
        spec_layout_states_of(&l, N, &st);
        ck_assert_msg(st.div[0] == want[i].p && st.div[1] == want[i].g && st.div[2] == want[i].o &&
                          st.sharded == want[i].sharded && st.keep_full == want[i].keep_full,
                      "%s: {%g, %g, %g} sharded %d keep_full %d", want[i].layout, st.div[0], st.div[1], st.div[2],
                      st.sharded, st.keep_full);
    }
}
END_TEST

START_TEST(test_plan_by_accum)
{
    /* mem_plan_by_accum (memory.h): memory.c's own plan reads no grad_accum, so the sweep memo
     * keeps it across grad_accum (model/analytic.c, memo32). Each layout whose flag is 0 must plan
     * the same bytes at grad-accum 1 and 8; the pipelined megatron:t=2,p=2 (memory_pipe.c: 1F1B
     * keeps min(p, m) micro-batches' activations in flight, 1 at m = 1, 2 at m = 8 on its
     * first stage) must be flagged, and its plans differ, so a flag that lied would fail here. */
    fixture f;
    setup(&f, PREC_BF16);
    static const char *const gen[] = {"ddp", "zero1", "zero2", "zero3", "mics:p=8", "hsdp:p=8", "zeropp:hpz=8",
                                      "zero3-offload", "zero2-offload", "tp:t=8", "axonn:x=2,y=2,z=2"};
    static const char *const byacc[] = {"megatron:t=2,p=2"};
    for (int g = 0; g < 2; g++)
        for (size_t i = 0; i < (g ? sizeof byacc : sizeof gen) / sizeof gen[0]; i++) {
            const char *name = g ? byacc[i] : gen[i];
            spec_layout l;
            sc_err err;
            ck_assert_msg(spec_layout_parse(name, &l, &err) == 0, "%s", name);
            ck_assert_msg(mem_plan_by_accum(&l) == g, "%s: flag %d", name, mem_plan_by_accum(&l));
            mem_breakdown a, b;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            spec_training t = f.t;
            t.grad_accum = 1;
            mem_plan(&f.w, &t, &l, N, &f.c, &a);
            t.grad_accum = 8;
            mem_plan(&f.w, &t, &l, N, &f.c, &b);
            ck_assert_msg(!memcmp(&a, &b, sizeof a) == !g, "%s: plans at grad-accum 1 and 8 %s", name,
                          g ? "equal" : "differ");
        }
}
END_TEST

/* The loss over the vocabulary by implementation (memory_states.c mem_loss_bytes), on a tiny
 * rank: 16 tokens x 128 vocabulary entries = E = 2048 entries, the fp32 logits 4E = 8192 B,
 * bf16 logits (e = 2) unless fp32 training. By hand, per entry (kept / peak):
 *   torch F.cross_entropy on pred.float() (torchtitan without TP, Hugging Face): kept the
 *     log_softmax output 4; forward e + 4 + 4 = 10, backward saved + nll's dense gradient +
 *     log_softmax's backward output 3 x 4 = 12: 8192 / 24576 B;
 *   torchtitan loss_parallel (fsdp2, t = 2): forward e + 4 + 4 + 4 = 14, backward 4 x 4 = 16:
 *     8192 / 32768; pipelined too (p = 2): the same, and the last stage holds every micro-batch's
 *     output (e a entry) to the step's end: m = 4 x 2 x 2048 = 16384 B held (0 without stages);
 *   Megatron's vocab_parallel_cross_entropy (framework megatron's default, fused or not): kept
 *     the fp32 softmax 4, peak 4 + e = 6: 8192 / 12288; fp32 training, no cast: 4 / 4: 8192 /
 *     8192;
 *   16-bit eager (loss_fp32 off): kept e, peak 3e: 4096 / 12288;
 *   the default (deepspeed, no key): the fp32 logits, 8192 / 8192;
 *   Liger's fused linear cross-entropy: logits_bytes as wl_logits_bytes gives it, both. */
static void expect_loss(const char *layout, const spec_training *t, double kept, double peak)
{
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse(layout, &l, &err), 0);
    wl w;
    memset(&w, 0, sizeof w);
    w.logits_bytes = 4 * 16 * 128; /* the rank's fp32 logits, E = 16 x 128 entries */
    mem_loss o;
    mem_loss_bytes(&w, t, &l, &o);
    ck_assert_double_eq(o.kept, kept);
    ck_assert_double_eq(o.peak, peak);
}

START_TEST(test_loss_by_implementation)
{
    spec_training t;
    spec_training_defaults(&t);
    t.precision = PREC_BF16, t.framework = FW_FSDP2, t.loss_fp32 = 1;
    expect_loss("zero3", &t, 8192, 24576);
    t.execution = EXEC_COMPILED; /* torchtitan compiles the blocks, not the loss: the same */
    expect_loss("zero3", &t, 8192, 24576);
    expect_loss("fsdp2:dp=2,t=2", &t, 8192, 32768);
    expect_loss("fsdp2:dp=1,t=2,p=2", &t, 8192, 32768);
    t.grad_accum = 4;
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse("fsdp2:dp=1,t=2,p=2", &l, &err), 0);
    wl w;
    memset(&w, 0, sizeof w);
    w.logits_bytes = 4 * 16 * 128;
    mem_loss o;
    mem_loss_bytes(&w, &t, &l, &o);
    ck_assert_double_eq(o.held, 16384);
    ck_assert_int_eq(spec_layout_parse("fsdp2:dp=2,t=2", &l, &err), 0);
    mem_loss_bytes(&w, &t, &l, &o);
    ck_assert_double_eq(o.held, 0);
    t.grad_accum = 1;
    t.loss_fp32 = 0, t.execution = EXEC_EAGER;
    expect_loss("zero3", &t, 4096, 12288);
    spec_training_defaults(&t);
    t.precision = PREC_BF16, t.framework = FW_MEGATRON;
    expect_loss("megatron:t=1,p=1", &t, 8192, 12288);
    t.loss_fusion = 1;
    expect_loss("megatron:t=1,p=1", &t, 8192, 12288);
    t.precision = PREC_FP32;
    expect_loss("megatron:t=1,p=1", &t, 8192, 8192);
    spec_training_defaults(&t);
    t.precision = PREC_BF16, t.framework = FW_DEEPSPEED;
    expect_loss("zero3", &t, 8192, 8192);
    /* Liger: wl_logits_bytes's fused form (test_workload.c derives 17028 for T 1, V 64, h 128) */
    ck_assert_int_eq(spec_layout_parse("zero3", &l, &err), 0);
    w.fused_ce = 1, w.logits_bytes = wl_logits_bytes(1, 64, 128, 2, 1);
    o.held = 12345; /* a stale value: mem_plan_megatron adds held on every last stage */
    mem_loss_bytes(&w, &t, &l, &o);
    ck_assert_double_eq(o.kept, 17028);
    ck_assert_double_eq(o.peak, 17028);
    ck_assert_double_eq(o.held, 0); /* nothing held: no stages' outputs kept (Liger returned early, held unset) */
}
END_TEST

Suite *memory_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *z = tcase_create("zero");
    tcase_add_test(z, test_state_bytes);
    tcase_add_test(z, test_layout_state_columns);
    tcase_add_test(z, test_ddp);
    tcase_add_test(z, test_zero1);
    tcase_add_test(z, test_zero2);
    tcase_add_test(z, test_zero3);
    tcase_add_test(z, test_gathered_prefetch);
    tcase_add_test(z, test_mics);
    tcase_add_test(z, test_mics_p_equals_n_is_zero3);
    tcase_add_test(z, test_zeropp);
    tcase_add_test(z, test_fp32);
    tcase_add_test(z, test_activations_and_reserve);
    tcase_add_test(z, test_plan_by_accum);
    tcase_add_test(z, test_loss_by_implementation);
    suite_add_tcase(s, z);
    TCase *fit = tcase_create("fit");
    tcase_add_test(fit, test_fits_boundary);
    tcase_add_test(fit, test_smallest_mics_p_p4d);
    tcase_add_test(fit, test_smallest_mics_p_alignment);
    tcase_add_test(fit, test_smallest_mics_p_tiny_cluster);
    suite_add_tcase(s, fit);
    return s;
}

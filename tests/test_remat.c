/* test_remat.c — MaxText's named remat policies (checkpointing save_dot_except_mlpwi and
 * save_qkv_proj, model/workload.c maxtext_sac) against bytes and FLOPs derived by hand, and
 * memory-plan properties the memory audit (brief mem36) relies on: activations monotone in the
 * micro-batch and in what a policy keeps, MiCS at p = N equal to ZeRO-3 on N GPUs, and the
 * bf16 optimizer state (training optimizer_state_dtype, model/memory_states.c).
 * Not here: torchtitan's op SAC (test_impl.c) or the pipeline's stage peaks (test_pipe.c). */
#include "suites.h"

#include "../model/layout.h"
#include "../model/memory.h"
#include "../model/workload.h"

#include <math.h>
#include <string.h>

#define ck_assert_rel(a, b) ck_assert_double_eq_tol((a), (b), 1e-12 * fabs((double)(b)) + 1e-300)

/* Llama-2-70B (configs/models/llama2-70b.json): 80 layers, h 8192, 64 heads (d 128), 8 KV heads
 * (kv width 1024), ffn 28672 SwiGLU, seq 4096, vocab 32000. */
static spec_model llama2_70b(void)
{
    char msg[600];
    sc_err err;
    spec_model m;
    ck_assert_msg(spec_load_model("configs/models/llama2-70b.json", &m, &err) == 0, "%s",
                  sc_err_str(&err, msg, sizeof msg));
    return m;
}

static spec_cluster dgx_h100(void)
{
    char msg[600];
    sc_err err;
    spec_cluster c;
    ck_assert_msg(spec_load_cluster("configs/clusters/dgx-h100.json", &c, &err) == 0, "%s",
                  sc_err_str(&err, msg, sizeof msg));
    return c;
}

static const wl_layer *find(const wl *w, wl_kind k)
{
    for (int i = 0; i < w->n_layers; i++)
        if (w->layer[i].kind == k)
            return &w->layer[i];
    ck_abort_msg("no such layer");
    return NULL;
}

/* Activations of zero3 on 128 GPUs (the dgxc-maxtext 128-GPU case's layout) under ckpt, mb. */
static double acts(const spec_model *m, int ckpt, int mb)
{
    spec_training t;
    spec_training_defaults(&t);
    t.act_ckpt = ckpt, t.micro_batch = mb, t.flash_attention = 1;
    wl w;
    wl_build(m, &t, &w);
    spec_cluster c = dgx_h100();
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse("zero3", &l, &err), 0);
    mem_breakdown o;
    mem_plan(&w, &t, &l, 128, &c, &o);
    return o.activations;
}

/* save_dot_except_mlpwi, b = 2 (the v24.11.1 recipe's MBS), T = 8192 tokens, e = 2 (bf16):
 * saved per block q (8192) + k (1024) + v (1024) + out_proj (8192) + mlpwo (8192) = 26624
 * elements per token: 8192 x 2 x 26624 = 436,207,616 B. Recomputed: gate_up, 2 T h 2f =
 * 2 x 8192 x 8192 x 57344 = 7,696,581,394,432 FLOP, and the attention core's forward, scores +
 * context: 2 x (2 s s d b a) = 2 x 2 x 4096^2 x 128 x 128 = 1,099,511,627,776 FLOP.
 * Activations: 80 x (input T h e = 134,217,728 + 436,207,616) + the head's input + one block's
 * whole stash (larger than the fp32 logits, not live with it). */
START_TEST(test_dots_llama2_70b)
{
    spec_model m = llama2_70b();
    spec_training t;
    spec_training_defaults(&t);
    t.act_ckpt = CKPT_MT_DOTS, t.micro_batch = 2, t.flash_attention = 1;
    wl w;
    wl_build(&m, &t, &w);
    const wl_layer *B = find(&w, WL_BLOCK);
    ck_assert_rel(B->op_act_bytes, 436207616.0);
    ck_assert_rel(B->ckpt_bytes, 134217728.0);
    ck_assert_rel(wl_recompute_flops(B), 7696581394432.0 + 1099511627776.0);
    /* the default loss's fp32 logits (4 x 8192 x 32000 = 1048576000 B) and the recomputed
     * block's stash are not live at once (memory.c): the larger, the stash */
    ck_assert(w.logits_bytes == 1048576000.0 && B->act_bytes > w.logits_bytes);
    double want = 80 * (134217728.0 + 436207616.0) + B->act_bytes + find(&w, WL_HEAD)->act_bytes;
    ck_assert_rel(acts(&m, CKPT_MT_DOTS, 2), want);
}
END_TEST

/* save_qkv_proj, b = 2, T = 8192, e = 2: q + k + v = 8192 + 2048 = 10240 elements per token:
 * 8192 x 2 x 10240 = 167,772,160 B. Recomputed: every linear but qkv, 2 T (h h + 3 h f) =
 * 2 x 8192 x (67,108,864 + 704,643,072) = 12,644,383,719,424 FLOP, plus the core's forward
 * 1,099,511,627,776 FLOP (as above). */
START_TEST(test_qkv_llama2_70b)
{
    spec_model m = llama2_70b();
    spec_training t;
    spec_training_defaults(&t);
    t.act_ckpt = CKPT_MT_QKV, t.micro_batch = 2, t.flash_attention = 1;
    wl w;
    wl_build(&m, &t, &w);
    const wl_layer *B = find(&w, WL_BLOCK);
    ck_assert_rel(B->op_act_bytes, 167772160.0);
    ck_assert_rel(wl_recompute_flops(B), 12644383719424.0 + 1099511627776.0);
    ck_assert(w.hw_flops > w.model_flops);
}
END_TEST

/* Properties: for every checkpointing mode, activations grow with the micro-batch (1, 2, 4);
 * at one micro-batch, what each mode keeps orders them: full (inputs) < save_qkv_proj (+ q, k,
 * v) < save_dot_except_mlpwi (+ out_proj, mlpwo) < none (everything). */
START_TEST(test_acts_monotone)
{
    spec_model m = llama2_70b();
    const int modes[] = {CKPT_FULL, CKPT_MT_QKV, CKPT_MT_DOTS, CKPT_NONE, CKPT_SELECTIVE, CKPT_OP};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        double a1 = acts(&m, modes[i], 1), a2 = acts(&m, modes[i], 2), a4 = acts(&m, modes[i], 4);
        ck_assert_msg(a1 > 0 && a1 < a2 && a2 < a4, "mode %d: %g %g %g", modes[i], a1, a2, a4);
    }
    ck_assert(acts(&m, CKPT_FULL, 2) < acts(&m, CKPT_MT_QKV, 2));
    ck_assert(acts(&m, CKPT_MT_QKV, 2) < acts(&m, CKPT_MT_DOTS, 2));
    ck_assert(acts(&m, CKPT_MT_DOTS, 2) < acts(&m, CKPT_NONE, 2));
}
END_TEST

/* MiCS with its partition group the whole job (p = N = 128) shards every state over the same
 * 128 GPUs as ZeRO-3 (MiCS paper: ZeRO-3 is the p = N case): equal parameter, gradient and
 * optimizer bytes, 16 B/param x 68.98e9 / 128 in all. */
START_TEST(test_mics_pn_is_zero3)
{
    spec_model m = llama2_70b();
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(&m, &t, &w);
    spec_cluster c = dgx_h100();
    spec_layout z, mi;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse("zero3", &z, &err), 0);
    ck_assert_int_eq(spec_layout_parse("mics:p=128", &mi, &err), 0);
    mem_breakdown a, b;
    mem_plan(&w, &t, &z, 128, &c, &a);
    mem_plan(&w, &t, &mi, 128, &c, &b);
    ck_assert_rel(b.params, a.params);
    ck_assert_rel(b.grads, a.grads);
    ck_assert_rel(b.optim, a.optim);
    ck_assert_rel(a.params + a.grads + a.optim, 16 * w.params / 128);
}
END_TEST

/* optimizer_state_dtype bf16 (NeMo's distributed_fused_adam, optim dtype bf16, store_params
 * False): m and v in bf16, no fp32 master: 4 B/param against 12. ZeRO-3 on 128 GPUs: optim =
 * 4 x params / 128, a third of the default's; fp32 training keeps its 8 B (m, v; the
 * parameters are the master). Megatron t4 p4 on 16 GPUs (dp 1, the SFT case): the stage's
 * optimizer bytes a third as well, parameters and gradients unchanged. */
START_TEST(test_opt_state_bf16)
{
    spec_model m = llama2_70b();
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(&m, &t, &w);
    spec_cluster c = dgx_h100();
    spec_layout z, mg;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse("zero3", &z, &err), 0);
    ck_assert_int_eq(spec_layout_parse("megatron:t=4,p=4", &mg, &err), 0);
    mem_breakdown a, b, pa, pb;
    mem_plan(&w, &t, &z, 128, &c, &a);
    mem_plan(&w, &t, &mg, 16, &c, &pa);
    ck_assert_rel(a.optim, 12 * w.params / 128);
    t.opt_state_bf16 = 1;
    mem_plan(&w, &t, &z, 128, &c, &b);
    mem_plan(&w, &t, &mg, 16, &c, &pb);
    ck_assert_rel(b.optim, 4 * w.params / 128);
    ck_assert_rel(pb.optim, pa.optim / 3);
    ck_assert_rel(pb.params, pa.params);
    ck_assert_rel(pb.grads, pa.grads);
    t.precision = PREC_FP32;
    ck_assert_rel(mem_optim_bytes(&t), 8);
}
END_TEST

Suite *remat_suite(void)
{
    Suite *s = suite_create("remat");
    TCase *a = tcase_create("maxtext");
    tcase_add_test(a, test_dots_llama2_70b);
    tcase_add_test(a, test_qkv_llama2_70b);
    tcase_add_test(a, test_acts_monotone);
    tcase_add_test(a, test_mics_pn_is_zero3);
    tcase_add_test(a, test_opt_state_bf16);
    suite_add_tcase(s, a);
    return s;
}

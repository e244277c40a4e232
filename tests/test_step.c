/* test_step.c — calibrate/step.h, the one description of the harness's step: a layer's four
 * GEMMs, their weights' offsets and the layer's parameters; the workload built from it; the op
 * graph validate predicts (no optimizer boundary, pipelines refused). Not here: timing the step
 * (the harness; golden tests run it) or reading measurements (test_fit.c). */
#include "suites.h"

#include "../calibrate/step.h"

#include <string.h>

START_TEST(test_step_layer)
{
    /* h = 64, f = 256: qkv W is h x 3h (12288), proj h x h (4096), fc1 h x f (16384), fc2 f x h
     * (16384), stored in that order: offsets 0, 12288, 16384, 32768; 4h^2 + 2hf = 49152 */
    cal_step_gemm g[CAL_STEP_GEMMS];
    ck_assert_uint_eq(cal_step_layer(64, 256, g), 49152);
    const char *names[] = {"qkv", "proj", "fc1", "fc2"};
    const size_t n[] = {192, 64, 256, 64}, k[] = {64, 64, 64, 256}, off[] = {0, 12288, 16384, 32768};
    for (int i = 0; i < CAL_STEP_GEMMS; i++) {
        ck_assert_str_eq(g[i].name, names[i]);
        ck_assert_uint_eq(g[i].n, n[i]);
        ck_assert_uint_eq(g[i].k, k[i]);
        ck_assert_uint_eq(g[i].w_off, off[i]);
    }
    /* each GEMM's input is the width the one before it produced, except proj, which reads X */
    ck_assert_uint_eq(g[CAL_STEP_FC1].k, g[CAL_STEP_PROJ].n);
    ck_assert_uint_eq(g[CAL_STEP_FC2].k, g[CAL_STEP_FC1].n);
}
END_TEST

START_TEST(test_step_workload)
{
    /* 2 layers, h 64, f 256, seq 32 x micro-batch 2: T = 64 tokens. Forward FLOPs of a layer
     * 2 T (sum of n k) = 2 x 64 x 49152 = 6291456; backward twice that; model FLOPs 3 x fwd x
     * layers = 37748736; parameters 2 x 49152 = 98304. */
    cal_step_shape s = {2, 64, 256, 32, 2, 1};
    ck_assert_uint_eq(cal_step_tokens(&s), 64);
    wl w;
    cal_step_workload(&s, 4, &w);
    ck_assert_int_eq(w.n_layers, 1);
    const wl_layer *L = &w.layer[0];
    ck_assert_int_eq(L->kind, WL_BLOCK);
    ck_assert_int_eq(L->n_gemm, CAL_STEP_GEMMS);
    ck_assert_double_eq(L->count, 2);
    ck_assert_double_eq(L->params, 49152);
    ck_assert_double_eq(L->fwd_flops, 6291456);
    ck_assert_double_eq(L->bwd_flops, 12582912);
    ck_assert_double_eq(w.params, 98304);
    ck_assert_double_eq(w.model_flops, 37748736);
    ck_assert_double_eq(w.hw_flops, w.model_flops);
    ck_assert_double_eq(w.tokens, 64);
    ck_assert_double_eq(w.elem_bytes, 4);
    ck_assert_int_eq(w.micro_batch, 2);
    ck_assert_int_eq(w.model.seq_len, 32);
    ck_assert_int_eq(L->gemm_dtype, KD_FP32); /* the CPU backend's fp32 step */
    /* the GPU harness's bf16 step: its GEMMs are bf16 math (they read as fp32 before: 15x slow) */
    wl w2;
    cal_step_workload(&s, 2, &w2);
    ck_assert_int_eq(w2.layer[0].gemm_dtype, KD_BF16);
    ck_assert_double_eq(w2.elem_bytes, 2);
    for (int i = 0; i < L->n_gemm; i++) {
        ck_assert_double_eq(L->gemm[i].m, 64);
        ck_assert_double_eq(L->gemm[i].batch, 1);
    }
}
END_TEST

START_TEST(test_step_graph)
{
    spec_cluster c;
    sc_err e;
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &e), 0);
    cal_step_shape s = {2, 256, 1024, 128, 1, 2};
    spec_layout l;
    ck_assert_int_eq(spec_layout_parse("zero3", &l, &e), 0);
    wl w;
    static lo_graph g;
    ck_assert_msg(cal_step_graph(&s, 2, &l, &c, 2, "m.json", &w, &g, &e) == 0, "%s", e.text);
    ck_assert_int_eq(g.pipelined, 0);
    for (int b = 0; b < g.n_boundary; b++)
        ck_assert_int_eq(g.boundary[b].is_optimizer, 0);
    /* the same layout built as a training step has an optimizer boundary: the filter did work */
    spec_training tr;
    spec_training_defaults(&tr);
    tr.micro_batch = 1;
    tr.grad_accum = 2;
    static lo_graph full;
    layout_build(&w, &tr, &l, &c, 2, &full);
    int opt = 0;
    for (int b = 0; b < full.n_boundary; b++)
        opt += full.boundary[b].is_optimizer;
    ck_assert_int_gt(opt, 0);
    ck_assert_int_eq(g.n_boundary, full.n_boundary - opt);
    /* a pipeline is refused, naming the file and $.layout */
    ck_assert_int_eq(spec_layout_parse("megatron:t=1,p=2", &l, &e), 0);
    ck_assert_int_eq(cal_step_graph(&s, 2, &l, &c, 2, "m.json", &w, &g, &e), SC_EINPUT);
    ck_assert_str_eq(e.source, "m.json");
    ck_assert_str_eq(e.path, "$.layout");
    ck_assert_ptr_nonnull(strstr(e.text, "pipelined"));
}
END_TEST

Suite *step_suite(void)
{
    Suite *s = suite_create("step");
    TCase *t = tcase_create("harness step");
    tcase_add_test(t, test_step_layer);
    tcase_add_test(t, test_step_workload);
    tcase_add_test(t, test_step_graph);
    suite_add_tcase(s, t);
    return s;
}

/* test_accuracy.c — the published-accuracy suite (predict/accuracy): FLOP conventions and metric
 * conversions against hand-derived values (validation/README.md formulas), case loading and its
 * errors (file, JSON path, expected/found), statuses of cases that cannot run, the statistics
 * (MAPE, median bias, Spearman, layout order) on hand-made rows, and the committed-figures check.
 * Not here: the engines' predictions themselves (test_analytic.c, test_exec.c). */
#include "suites.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/analytic.h"
#include "../model/workload.h"
#include "../predict/accuracy.h"
#include "../predict/accuracy_compile.h"
#include "../predict/accuracy_floor.h"
#include "support.h"

#define REL 1e-12
#define ck_assert_rel(a, b) ck_assert_double_eq_tol((a), (b), REL * fabs((double)(b)) + 1e-300)

static const char *const ROOTS[] = {"configs"};
static const acc_paths FIX = {"tests/fixtures/validation", ROOTS, 1, NULL};

/* ---- FLOP conventions ---------------------------------------------------------------------- */

/* test_tiny_model(2): L 2, h 64, 1 head, ffn 256, s 16, V 128, no biases, LayerNorm, untied,
 * rotary. P = embedding V h 8192 + 2 blocks x (4 h^2 16384 + 2 h ffn 32768 + 2 norms x 2h 256 =
 * 49408) + head (norm 2h 128 + V h 8192) = 8192 + 98816 + 8320 = 115328. */
#define TINY_P 115328.0

START_TEST(tiny_params)
{
    spec_model m = test_tiny_model(2);
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(&m, &t, &w);
    ck_assert_double_eq(w.params, TINY_P);
}
END_TEST

START_TEST(conventions)
{
    spec_model m = test_tiny_model(2);
    /* 6N: 6 x 115328 = 691968 */
    ck_assert_rel(acc_flops_per_token(ACC_FLOPS_6N, &m, TINY_P, 0), 691968.0);
    /* 6N+attn: + 12 L h s = 12 x 2 x 64 x 16 = 24576 -> 716544 */
    ck_assert_rel(acc_flops_per_token(ACC_FLOPS_6N_ATTN, &m, TINY_P, 0), 716544.0);
    /* megatron: 96 L h^2 = 786432; x (1 + 16/384 + 128/(16 x 2 x 64)) = 786432 + 32768 + 49152 = 868352 */
    ck_assert_rel(acc_flops_per_token(ACC_FLOPS_MEGATRON, &m, TINY_P, 0), 868352.0);
    /* megatron-norecompute: 72 L h^2 = 589824; x (1 + 1/24 + 128/1536) = 589824 + 24576 + 49152 = 663552 */
    ck_assert_rel(acc_flops_per_token(ACC_FLOPS_MEGATRON_NORECOMPUTE, &m, TINY_P, 0), 663552.0);
    ck_assert_rel(acc_flops_per_token(ACC_FLOPS_EXPLICIT, &m, TINY_P, 1.5e9), 1.5e9);
    ck_assert_double_eq(acc_flops_per_token(ACC_FLOPS_NONE, &m, TINY_P, 0), 0.0);
    /* the sequence length enters 6N+attn and the megatron forms: s = 32 -> 6N+attn 691968 + 49152 */
    m.seq_len = 32;
    ck_assert_rel(acc_flops_per_token(ACC_FLOPS_6N_ATTN, &m, TINY_P, 0), 741120.0);
}
END_TEST

START_TEST(metrics)
{
    acc_measured x = {0};
    /* 16 GPUs, seq 2048, one step = 262144 tokens */
    x.metric = ACC_TOKENS_PER_S_PER_GPU, x.value = 777;
    ck_assert_rel(acc_tokens_per_s_per_gpu(&x, 2048, 16, 262144, 0), 777.0);
    x.metric = ACC_TOKENS_PER_S, x.value = 98304; /* / 16 */
    ck_assert_rel(acc_tokens_per_s_per_gpu(&x, 2048, 16, 262144, 0), 6144.0);
    x.metric = ACC_SAMPLES_PER_S, x.value = 40; /* x 2048 / 16 */
    ck_assert_rel(acc_tokens_per_s_per_gpu(&x, 2048, 16, 262144, 0), 5120.0);
    x.metric = ACC_STEP_S, x.value = 2.0; /* 262144 / 2 / 16 */
    ck_assert_rel(acc_tokens_per_s_per_gpu(&x, 2048, 16, 262144, 0), 8192.0);
    x.metric = ACC_TFLOPS_PER_GPU, x.value = 150; /* 150e12 / 1e9 */
    ck_assert_rel(acc_tokens_per_s_per_gpu(&x, 2048, 16, 262144, 1e9), 150000.0);
    x.metric = ACC_MFU, x.value = 0.5, x.peak_flops = 312e12; /* 0.5 x 312e12 / 868352 (megatron, tiny) */
    ck_assert_rel(acc_tokens_per_s_per_gpu(&x, 2048, 16, 262144, 868352.0), 156e12 / 868352.0);
}
END_TEST

/* ---- loading cases --------------------------------------------------------------------------- */

/* A valid case on the fixture directory, with up to two substitutions (from -> to) in its text. */
static const char CASE[] =
    "{\"schema\": \"shardcast-case/1\", \"name\": \"t1\", \"source_id\": \"src\", \"source\": \"test\",\n"
    " \"date\": \"2024-05\", \"confidence\": \"none\", \"framework\": \"deepspeed\", \"cluster\": \"p4d.24xlarge\",\n"
    " \"nodes\": 2, \"model\": \"models/tiny-1b.json\", \"training\": {\"micro_batch\": 4, \"grad_accum\": 2},\n"
    " \"layout\": \"zero3\", \"measured\": {\"metric\": \"samples_per_s\", \"value\": 64}}";

static void subst(char *text, size_t n, const char *from, const char *to)
{
    if (!from)
        return;
    char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "fixture text lacks %s", from);
    char tail[4096];
    snprintf(tail, sizeof tail, "%s", at + strlen(from));
    snprintf(at, n - (size_t)(at - text), "%s%s", to, tail);
}

static int load_with2(const char *f1, const char *t1, const char *f2, const char *t2, acc_case *c, sc_err *err)
{
    char text[4096];
    snprintf(text, sizeof text, "%s", CASE);
    subst(text, sizeof text, f1, t1);
    subst(text, sizeof text, f2, t2);
    return acc_case_load(text, "tests/fixtures/validation/src/t1.json", &FIX, c, err);
}

static int load_with(const char *from, const char *to, acc_case *c, sc_err *err)
{
    return load_with2(from, to, NULL, NULL, c, err);
}

static acc_case C; /* large: static */

START_TEST(load_ok)
{
    sc_err err;
    char msg[600];
    int rc = load_with(NULL, NULL, &C, &err);
    ck_assert_msg(rc == 0, "%s", sc_err_str(&err, msg, sizeof msg));
    ck_assert_int_eq(C.gpus, 16);
    ck_assert_str_eq(C.model.name, "tiny-1b");
    ck_assert_int_eq(C.training.micro_batch, 4);
    ck_assert_int_eq(C.training.grad_accum, 2);
    ck_assert_int_eq(C.layout_ok, 1);
    /* 64 samples/s x 1024 tokens / 16 GPUs = 4096 */
    ck_assert_rel(C.measured_tps, 4096.0);
    /* p4d.24xlarge has a shipped calibration */
    ck_assert_str_eq(C.calib_path, "configs/calibrations/p4d.24xlarge.json");
    /* tiny-1b: P = 32000 x 1024 + 2 x (4 x 1024^2 + 2 x 1024 x 4096 + 4096) + 2048 + 32000 x 1024 = 90712064 */
    ck_assert_double_eq(C.params, 90712064.0);

    /* seq_len overrides the model's: 64 x 2048 / 16 = 8192 */
    ck_assert_int_eq(load_with("\"nodes\": 2,", "\"nodes\": 2, \"seq_len\": 2048,", &C, &err), 0);
    ck_assert_int_eq(C.model.seq_len, 2048);
    ck_assert_rel(C.measured_tps, 8192.0);

    /* step_s: 4 x 2 x 16 x 1024 = 131072 tokens per step; / 0.5 s / 16 = 16384 */
    ck_assert_int_eq(load_with("\"metric\": \"samples_per_s\", \"value\": 64",
                               "\"metric\": \"step_s\", \"value\": 0.5", &C, &err), 0);
    ck_assert_rel(C.measured_tps, 16384.0);
    /* megatron counts micro_batch per model replica of t x p GPUs: on 16 GPUs with t=2, p=2 there
     * are 4 replicas, 4 x 2 x 4 x 1024 = 32768 tokens per step; / 0.5 s / 16 = 4096 */
    ck_assert_int_eq(load_with2("\"metric\": \"samples_per_s\", \"value\": 64", "\"metric\": \"step_s\", \"value\": 0.5",
                                "\"zero3\"", "\"megatron:t=2,p=2\"", &C, &err), 0);
    ck_assert_rel(C.measured_tps, 4096.0);

    /* megatron TFLOPS on tiny-1b: 96 x 2 x 1024^2 = 201326592 x (1 + 1024/6144 + 32000/32768)
     * = 201326592 + 33554432 + 196608000 = 431489024 FLOP/token; 100e12 / 431489024 */
    ck_assert_int_eq(load_with("\"metric\": \"samples_per_s\", \"value\": 64",
                               "\"metric\": \"tflops_per_gpu\", \"value\": 100, \"flop_convention\": \"megatron\"", &C,
                               &err), 0);
    ck_assert_rel(C.flops_per_token, 431489024.0);
    ck_assert_rel(C.measured_tps, 100e12 / 431489024.0);

    /* an inline model object, and a derived cluster file relative to the directory (no shipped
     * calibration of that name: built-in defaults) */
    ck_assert_int_eq(load_with("\"model\": \"models/tiny-1b.json\"",
                               "\"model\": {\"name\": \"in\", \"source\": \"t\", \"layers\": 2, \"hidden\": 64, "
                               "\"heads\": 1, \"ffn\": 256, \"seq_len\": 16, \"vocab\": 128}",
                               &C, &err), 0);
    ck_assert_str_eq(C.model_ref, "inline:in");
    ck_assert_int_eq(load_with("\"cluster\": \"p4d.24xlarge\"", "\"cluster\": \"clusters/p4d-fixture-slow.json\"", &C,
                               &err), 0);
    ck_assert_str_eq(C.calib_path, "");
    ck_assert_double_eq(C.cluster.nic_bw_Bps, 50e9 / 8);
}
END_TEST

/* An edit that must fail: the message names the file, the path, and contains `text`. */
static void bad(const char *from, const char *to, const char *path, const char *text)
{
    sc_err err;
    char msg[600];
    int rc = load_with(from, to, &C, &err);
    ck_assert_msg(rc == SC_EINPUT, "%s -> %s: expected an input error, got %d", from, to, rc);
    ck_assert_str_eq(err.source, "tests/fixtures/validation/src/t1.json");
    ck_assert_msg(!strcmp(err.path, path), "path %s, expected %s (%s)", err.path, path, sc_err_str(&err, msg, sizeof msg));
    ck_assert_msg(strstr(err.text, text) != NULL, "\"%s\" lacks \"%s\"", err.text, text);
}

START_TEST(load_errors)
{
    bad("\"nodes\": 2,", "\"nodes\": 2, \"gpus\": 16,", "$.gpus", "unknown key");
    bad("\"metric\": \"samples_per_s\", ", "", "$.measured.metric", "missing required key");
    bad("\"samples_per_s\", \"value\": 64", "\"tflops_per_gpu\", \"value\": 64", "$.measured.flop_convention",
        "missing required key");
    bad("\"samples_per_s\", \"value\": 64", "\"mfu\", \"value\": 0.4, \"flop_convention\": \"6N\"",
        "$.measured.peak_tflops", "missing required key");
    bad("\"samples_per_s\", \"value\": 64", "\"mfu\", \"value\": 40, \"flop_convention\": \"6N\", \"peak_tflops\": 312",
        "$.measured.value", "a fraction from 0 to 1");
    bad("\"value\": 64", "\"value\": 64, \"flop_convention\": \"6N\", \"flops_per_token\": 1e9",
        "$.measured.flops_per_token", "only with flop_convention \"explicit\"");
    bad("\"value\": 64", "\"value\": 64, \"flop_convention\": \"explicit\"", "$.measured.flops_per_token",
        "missing required key");
    bad("\"value\": 64", "\"value\": -3", "$.measured.value", "expected a positive number, got -3");
    bad("\"p4d.24xlarge\"", "\"p9z.huge\"", "$.cluster", "expected a shipped cluster name");
    bad("\"p4d.24xlarge\"", "\"clusters/nosuch.json\"", "$.cluster", "relative to tests/fixtures/validation");
    bad("\"models/tiny-1b.json\"", "{\"name\": \"in\", \"source\": \"t\", \"layers\": 2, \"hidden\": 64, \"heads\": 7, "
                                   "\"ffn\": 256, \"seq_len\": 16, \"vocab\": 128}",
        "$.model.heads", "expected a divisor of hidden (64), got 7");
    bad("\"micro_batch\": 4", "\"micro_batch\": 0", "$.training.micro_batch", "expected an integer from 1");
    bad("\"training\": {\"micro_batch\": 4, \"grad_accum\": 2},", "", "$.training", "missing required key");
    bad("\"name\": \"t1\"", "\"name\": \"t2\"", "$.name", "expected the file name without .json");
    bad("\"source_id\": \"src\"", "\"source_id\": \"other\"", "$.source_id", "expected the folder name");
    bad("\"2024-05\"", "\"May 2024\"", "$.date", "a date YYYY or YYYY-MM");
    bad("\"deepspeed\"", "\"colossal\"", "$.framework", "expected one of");
    bad("\"shardcast-case/1\"", "\"shardcast-case/2\"", "$.schema", "\"shardcast-case/1\"");
}
END_TEST

/* ---- statuses ---------------------------------------------------------------------------------- */

START_TEST(statuses)
{
    sc_err err;
    acc_outcome o;
    /* a layout shardcast does not model (PaddleNLP's sharding stage 2 with pipeline stages; with
     * TP alone it is modelled since layouts27): loaded, then unsupported with why */
    ck_assert_int_eq(load_with("\"zero3\"", "\"megatron:t=2,p=2,sp=0,zero2=1\"", &C, &err), 0);
    ck_assert_int_eq(C.layout_ok, 0);
    acc_run_case(&C, PRED_MODEL, &o);
    ck_assert_int_eq(o.status, ACC_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(o.why, "megatron:t=2,p=2,sp=0,zero2=1"));
    ck_assert_int_eq(load_with("\"zero3\"", "\"megatron:t=2,p=1,sp=0,zero2=1\"", &C, &err), 0);
    ck_assert_int_eq(C.layout_ok, 1);
    /* ZeRO-2 with the optimizer on the host is modelled (layout_offload.c): it loads */
    ck_assert_int_eq(load_with("\"zero3\"", "\"zero2-offload\"", &C, &err), 0);
    ck_assert_int_eq(C.layout_ok, 1);
    /* FSDP2 with pipeline stages is modelled (layout_pipe.c): it loads */
    ck_assert_int_eq(load_with("\"zero3\"", "\"fsdp2:dp=4,t=8,p=2\"", &C, &err), 0);
    ck_assert_int_eq(C.layout_ok, 1);
    /* context parallelism is modelled (model/cp.h): such a case is no longer set aside */
    ck_assert_int_eq(load_with("\"zero3\"", "\"megatron:t=8,p=4,cp=2\"", &C, &err), 0);
    ck_assert_int_eq(C.layout_ok, 1);
    ck_assert_ptr_null(strstr(C.unsupported, "context parallelism")); /* (deepspeed runs no megatron) */
    /* fp8 training loads (FP8 GEMMs, model/kernels); on p4d's A100s it cannot run: impossible,
     * naming the precision; other precisions are errors */
    ck_assert_int_eq(load_with("\"micro_batch\": 4,", "\"micro_batch\": 4, \"precision\": \"fp8\",", &C, &err), 0);
    ck_assert_int_eq(C.training.precision, PREC_FP8);
    ck_assert_int_eq(C.training.fp8_recipe, -1); /* unset: delayed (workload.c fp8_casts) */
    acc_run_case(&C, PRED_SIM, &o);
    ck_assert_int_eq(o.status, ACC_IMPOSSIBLE);
    ck_assert_ptr_nonnull(strstr(o.why, "fp8"));
    /* the case's framework schedules the layout: Megatron-LM runs ZeRO-3 as Megatron-FSDP
     * (layouts27), not MiCS */
    ck_assert_int_eq(load_with("\"framework\": \"deepspeed\"", "\"framework\": \"megatron\"", &C, &err), 0);
    ck_assert_int_eq(C.training.framework, FW_MEGATRON);
    acc_run_case(&C, PRED_MODEL, &o);
    ck_assert_int_eq(o.status, ACC_OK);
    ck_assert_int_eq(load_with2("\"framework\": \"deepspeed\"", "\"framework\": \"megatron\"", "\"zero3\"",
                                "\"mics:p=8\"", &C, &err), 0);
    acc_run_case(&C, PRED_MODEL, &o);
    ck_assert_int_eq(o.status, ACC_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(o.why, "megatron does not run layout mics:p=8"));
    bad("\"micro_batch\": 4,", "\"micro_batch\": 4, \"precision\": \"fp6\",", "$.training.precision", "expected one of");
    /* the FP8 scaling recipe: delayed or current (spec.h fp8_recipe), nothing else */
    ck_assert_int_eq(load_with("\"micro_batch\": 4,", "\"micro_batch\": 4, \"fp8_recipe\": \"current\",", &C, &err), 0);
    ck_assert_int_eq(C.training.fp8_recipe, FP8_CURRENT);
    bad("\"micro_batch\": 4,", "\"micro_batch\": 4, \"fp8_recipe\": \"mxfp8\",", "$.training.fp8_recipe", "expected one of");
    /* mics:p=16 on 3 nodes x 8 GPUs: 16 does not divide 24 */
    ck_assert_int_eq(load_with2("\"nodes\": 2,", "\"nodes\": 3,", "\"zero3\"", "\"mics:p=16\"", &C, &err), 0);
    acc_run_case(&C, PRED_MODEL, &o);
    ck_assert_int_eq(o.status, ACC_IMPOSSIBLE);
    /* more nodes than the cluster can have (p4d: 512) */
    ck_assert_int_eq(load_with("\"nodes\": 2,", "\"nodes\": 100000,", &C, &err), 0);
    acc_run_case(&C, PRED_SIM, &o);
    ck_assert_int_eq(o.status, ACC_IMPOSSIBLE);
    ck_assert_ptr_nonnull(strstr(o.why, "$.nodes"));
    /* GPT-3 175B with DDP on 40 GB GPUs: 16 B x 174.6e9 per GPU, OOM */
    ck_assert_int_eq(load_with2("\"models/tiny-1b.json\"", "\"gpt3-175b\"", "\"zero3\"", "\"ddp\"", &C, &err), 0);
    acc_run_case(&C, PRED_MODEL, &o);
    ck_assert_int_eq(o.status, ACC_OOM);
    ck_assert_ptr_nonnull(strstr(o.why, "GiB"));
    /* a normal case: both engines predict, the error is predicted / measured - 1 */
    ck_assert_int_eq(load_with(NULL, NULL, &C, &err), 0);
    for (int e = 0; e < PRED_N_ENGINES; e++) {
        acc_run_case(&C, (pred_engine)e, &o);
        ck_assert_int_eq(o.status, ACC_OK);
        ck_assert(o.predicted_tps > 0 && isfinite(o.predicted_tps));
        ck_assert_rel(o.error, o.predicted_tps / 4096.0 - 1);
        /* predicted tokens/s per GPU = micro_batch x grad_accum x seq / step = 4 x 2 x 1024 / step */
        ck_assert_rel(o.predicted_tps, 8192.0 / o.step_s);
    }
}
END_TEST

/* ---- statistics on hand-made rows -------------------------------------------------------------- */

/* source A: errors +0.10 (110/100), -0.10 (180/200), -0.4333 (170/300), and one not run;
 * source B: +0.20 (60/50), -0.20 (40/50). Groups g1 = A1 zero3, A2 mics, A3 zero3, A4 ddp;
 * g2 = B1 zero3, B2 mics (a measured tie). */
static const acc_row ROWS[] = {
    {"A1", "A", "g1", "zero3", 1, 110, 100, NULL, NULL, 0}, {"A2", "A", "g1", "mics:p=8", 1, 180, 200, NULL, NULL, 0},
    {"A3", "A", "g1", "zero3", 1, 170, 300, NULL, NULL, 0}, {"A4", "A", "g1", "ddp", 0, 0, 400, NULL, NULL, 0},
    {"B1", "B", "g2", "zero3", 1, 60, 50, NULL, NULL, 0},   {"B2", "B", "g2", "mics:p=8", 1, 40, 50, NULL, NULL, 0},
};

START_TEST(statistics)
{
    acc_summary s;
    sc_err err;
    ck_assert_int_eq(acc_summarize(ROWS, 6, &s, &err), 0);
    ck_assert_int_eq(s.n_sources, 2);
    const acc_stats *a = &s.sources[0], *b = &s.sources[1];
    ck_assert_str_eq(a->source_id, "A");
    /* A: MAPE (10 + 10 + 43.333) / 3 = 21.111; bias median(-43.3, -10, +10) = -10 */
    ck_assert_int_eq(a->n, 3);
    ck_assert_int_eq(a->n_not_run, 1);
    ck_assert_double_eq_tol(a->mape_pct, (10 + 10 + 100.0 * 130 / 300) / 3, 1e-9);
    ck_assert_double_eq_tol(a->bias_pct, -10.0, 1e-9);
    /* Spearman: predicted ranks (1, 3, 2) vs measured (1, 2, 3): 1 - 6 x 2 / (3 x 8) = 0.5 */
    ck_assert_double_eq_tol(a->spearman, 0.5, 1e-12);
    /* B: MAPE 20, bias median(-20, +20) = 0, too few for Spearman */
    ck_assert_int_eq(b->n, 2);
    ck_assert_double_eq_tol(b->mape_pct, 20.0, 1e-9);
    ck_assert_double_eq_tol(b->bias_pct, 0.0, 1e-9);
    ck_assert(isnan(b->spearman));
    /* overall: MAPE (10 + 10 + 43.333 + 20 + 20) / 5 = 20.667; bias: median of
     * (-43.3, -20, -10, +10, +20) = -10 */
    ck_assert_int_eq(s.overall.n, 5);
    ck_assert_int_eq(s.overall.n_not_run, 1);
    ck_assert_double_eq_tol(s.overall.mape_pct, (60 + 100.0 * 130 / 300) / 5, 1e-9);
    ck_assert_double_eq_tol(s.overall.bias_pct, -10.0, 1e-9);
    ck_assert(isnan(s.overall.spearman));
    /* pairs: g1 (A1,A2) right (100 < 200, 110 < 180); (A1,A3) same layout, not a pair;
     * (A1,A4) not run; (A2,A3) wrong (200 < 300 but 180 > 170); (A2,A4), (A3,A4) not run;
     * g2 (B1,B2) a measured tie */
    ck_assert_int_eq(s.n_pairs, 6);
    ck_assert_int_eq(s.pairs[0].a, 0);
    ck_assert_int_eq(s.pairs[0].b, 1);
    ck_assert_int_eq(s.pairs[0].state, ACC_PAIR_RIGHT);
    ck_assert_double_eq_tol(s.pairs[0].measured_ratio, 0.5, 1e-12);
    ck_assert_double_eq_tol(s.pairs[0].predicted_ratio, 110.0 / 180, 1e-12);
    ck_assert_int_eq(s.pairs[1].state, ACC_PAIR_NOT_RUN);
    ck_assert_int_eq(s.pairs[2].a, 1);
    ck_assert_int_eq(s.pairs[2].b, 2);
    ck_assert_int_eq(s.pairs[2].state, ACC_PAIR_WRONG);
    ck_assert_int_eq(s.pairs[5].state, ACC_PAIR_TIE);
    ck_assert_int_eq(a->pairs, 2);
    ck_assert_int_eq(a->pairs_right, 1);
    ck_assert_int_eq(b->pairs, 0);
    ck_assert_int_eq(s.overall.pairs, 2);
    ck_assert_int_eq(s.overall.pairs_right, 1);
    acc_summary_free(&s);

    /* one group of 7 layouts: 7 x 6 / 2 = 21 pairs (more than the first allocation), all right
     * since predicted = 2 x measured keeps every order */
    static const char *const lay[7] = {"ddp", "zero1", "zero2", "zero3", "mics:p=2", "mics:p=4", "mics:p=8"};
    acc_row many[7];
    for (int i = 0; i < 7; i++)
        many[i] = (acc_row){lay[i], "S", "g", lay[i], 1, 2.0 * (i + 1), i + 1.0, NULL, NULL, 0};
    ck_assert_int_eq(acc_summarize(many, 7, &s, &err), 0);
    ck_assert_int_eq(s.n_pairs, 21);
    ck_assert_int_eq(s.overall.pairs_right, 21);
    ck_assert_double_eq_tol(s.sources[0].spearman, 1.0, 1e-12);
    ck_assert_double_eq_tol(s.overall.mape_pct, 100.0, 1e-9);
    acc_summary_free(&s);

    /* nothing predicted: counts, no numbers */
    acc_row none[1] = {{"X", "X", "", "zero3", 0, 0, 10, NULL, NULL, 0}};
    ck_assert_int_eq(acc_summarize(none, 1, &s, &err), 0);
    ck_assert_int_eq(s.overall.n, 0);
    ck_assert_int_eq(s.overall.n_not_run, 1);
    ck_assert(isnan(s.overall.mape_pct) && isnan(s.overall.bias_pct));
    acc_summary_free(&s);
    /* a non-finite prediction is an error naming the case */
    acc_row inf[1] = {{"Y", "Y", "", "zero3", 1, INFINITY, 10, NULL, NULL, 0}};
    ck_assert_int_eq(acc_summarize(inf, 1, &s, &err), SC_ERUNTIME);
    ck_assert_str_eq(err.source, "Y");
}
END_TEST

/* ---- committed figures ------------------------------------------------------------------------- */

START_TEST(figures)
{
    acc_summary s;
    sc_err err;
    ck_assert_int_eq(acc_summarize(ROWS, 6, &s, &err), 0);
    pred_engine e = PRED_MODEL;
    const acc_summary *ss = &s;
    char *text = acc_figures_dump(&e, &ss, 1);
    ck_assert_ptr_nonnull(text);
    char path[] = "/tmp/shardcast-test-figures-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    char report[2048];
    int worse;
    /* the same figures: nothing worse */
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_int_eq(worse, 0);
    /* 0.4 points worse overall: within tolerance; 0.6 points worse for source A: one finding */
    s.overall.mape_pct += 0.4;
    s.sources[0].mape_pct += 0.6;
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_int_eq(worse, 1);
    ck_assert_msg(strstr(report, "source A: MAPE") && strstr(report, "worse by 0.60 points"), "%s", report);
    /* fewer cases run for B, and a committed source gone */
    s.sources[0].mape_pct -= 0.6;
    s.sources[1].n = 1;
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_int_eq(worse, 1);
    ck_assert_msg(strstr(report, "source B: 1 cases run, committed 2"), "%s", report);
    s.n_sources = 1;
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_msg(strstr(report, "source B: no cases now"), "%s", report);
    /* figures of another engine only */
    ck_assert_int_eq(acc_figures_check(path, PRED_SIM, &s, 0.5, report, sizeof report, &worse, &err), SC_EINPUT);
    ck_assert_str_eq(err.path, "$.engines.sim");
    s.n_sources = 2;
    acc_summary_free(&s);
    remove(path);
}
END_TEST

/* ---- the field's view: macro bias, sequence bands, pick/best (accuracy_field) ------------------- */

/* Source P (fsdp, stack torchtitan, 2k): errors +0.10, +0.20, +0.30; source Q (fsdp, no stack,
 * 4k): -0.10; source R (deepspeed, 32k): +0.50 and one not run. */
static const acc_row FIELD[] = {
    {"P1", "P", "", "zero3", 1, 110, 100, "fsdp", "torchtitan", 2048},
    {"P2", "P", "", "zero3", 1, 120, 100, "fsdp", "torchtitan", 2048},
    {"P3", "P", "", "zero3", 1, 130, 100, "fsdp", "torchtitan", 2048},
    {"Q1", "Q", "", "zero3", 1, 90, 100, "fsdp", "", 4096},
    {"R1", "R", "", "zero3", 1, 150, 100, "deepspeed", "deepspeed", 32768},
    {"R2", "R", "", "zero3", 0, 0, 100, "deepspeed", "deepspeed", 32768},
};

START_TEST(field_macro)
{
    acc_summary s;
    sc_err err;
    ck_assert_int_eq(acc_summarize(FIELD, 6, &s, &err), 0);
    /* by framework: fsdp = sources P (median +20, MAPE 20) and Q (-10, 10): macro bias
     * (20 - 10) / 2 = +5, macro MAPE (20 + 10) / 2 = 15, pooled median of (-10, 10, 20, 30) = 15;
     * deepspeed: R alone, +50, one not run */
    ck_assert_int_eq(s.n_by_framework, 2);
    const acc_macro *fs = &s.by_framework[0], *ds = &s.by_framework[1];
    ck_assert_str_eq(fs->key, "fsdp");
    ck_assert_int_eq(fs->n, 4);
    ck_assert_int_eq(fs->n_sources, 2);
    ck_assert_double_eq_tol(fs->bias_macro_pct, 5.0, 1e-9);
    ck_assert_double_eq_tol(fs->mape_macro_pct, 15.0, 1e-9);
    ck_assert_double_eq_tol(fs->bias_pooled_pct, 15.0, 1e-9);
    ck_assert_str_eq(ds->key, "deepspeed");
    ck_assert_int_eq(ds->n, 1);
    ck_assert_int_eq(ds->n_not_run, 1);
    ck_assert_double_eq_tol(ds->bias_macro_pct, 50.0, 1e-9);
    /* by stack: torchtitan (P: +20), unrecorded (Q: -10), deepspeed (R: +50) */
    ck_assert_int_eq(s.n_by_stack, 3);
    ck_assert_str_eq(s.by_stack[0].key, "torchtitan");
    ck_assert_double_eq_tol(s.by_stack[0].bias_macro_pct, 20.0, 1e-9);
    ck_assert_str_eq(s.by_stack[1].key, "unrecorded");
    ck_assert_double_eq_tol(s.by_stack[1].bias_macro_pct, -10.0, 1e-9);
    /* sequence bands: <= 2k P (3 cases, median +20), (2k, 4k] Q (-10), (4k, 16k) none,
     * >= 16k R1 (+50; R2 not run) */
    ck_assert_int_eq(s.seq_bands[0].n, 3);
    ck_assert_int_eq(s.seq_bands[0].n_sources, 1);
    ck_assert_double_eq_tol(s.seq_bands[0].median_pct, 20.0, 1e-9);
    ck_assert_double_eq_tol(s.seq_bands[1].median_pct, -10.0, 1e-9);
    ck_assert_int_eq(s.seq_bands[2].n, 0);
    ck_assert(isnan(s.seq_bands[2].median_pct));
    ck_assert_int_eq(s.seq_bands[3].n, 1);
    ck_assert_double_eq_tol(s.seq_bands[3].mape_pct, 50.0, 1e-9);
    /* no compare group: nothing judged */
    ck_assert_int_eq(s.decisions.n_groups, 0);
    ck_assert_int_eq(s.decisions.overall.groups, 0);
    ck_assert(isnan(s.decisions.overall.median));
    acc_summary_free(&s);
}
END_TEST

/* Group d1 (source X): X1 predicted fastest (100) but measured 80; X2 measured best of those
 * run (100); X3 measured 120 is not run, so it cannot be the best: pick/best 80 / 100 = 0.8.
 * d2 (Y): Y1 predicted and measured fastest: 1.0. d3 (Y): one case run, not judged. */
static const acc_row DEC[] = {
    {"X1", "X", "d1", "zero3", 1, 100, 80, "fsdp", "", 2048},
    {"X2", "X", "d1", "ddp", 1, 90, 100, "fsdp", "", 2048},
    {"X3", "X", "d1", "zero2", 0, 0, 120, "fsdp", "", 2048},
    {"Y1", "Y", "d2", "zero3", 1, 50, 50, "deepspeed", "", 2048},
    {"Y2", "Y", "d2", "zero1", 1, 40, 30, "deepspeed", "", 2048},
    {"Y3", "Y", "d3", "zero3", 1, 40, 30, "deepspeed", "", 2048},
};

START_TEST(field_decisions)
{
    acc_summary s;
    sc_err err;
    ck_assert_int_eq(acc_summarize(DEC, 6, &s, &err), 0);
    const acc_decisions *d = &s.decisions;
    ck_assert_int_eq(d->n_groups, 3);
    ck_assert_str_eq(d->groups[0].group, "d1");
    ck_assert_int_eq(d->groups[0].n, 3);
    ck_assert_int_eq(d->groups[0].n_run, 2);
    ck_assert_int_eq(d->groups[0].pick, 0);
    ck_assert_int_eq(d->groups[0].best, 1);
    ck_assert_double_eq_tol(d->groups[0].pick_best, 0.8, 1e-12);
    ck_assert_double_eq_tol(d->groups[1].pick_best, 1.0, 1e-12);
    ck_assert(isnan(d->groups[2].pick_best));
    /* overall: groups judged 2, median (0.8 + 1.0) / 2 = 0.9, min 0.8; per source X 0.8, Y 1.0 */
    ck_assert_int_eq(d->overall.groups, 2);
    ck_assert_double_eq_tol(d->overall.median, 0.9, 1e-12);
    ck_assert_double_eq_tol(d->overall.min, 0.8, 1e-12);
    ck_assert_int_eq(d->n_sources, 2);
    ck_assert_str_eq(d->sources[1].source_id, "Y");
    ck_assert_int_eq(d->sources[1].groups, 1);
    ck_assert_double_eq_tol(d->sources[1].min, 1.0, 1e-12);

    /* the guard: the figures of this run pass; a median 0.894 (below the committed 0.9 by more than 0.005) and
     * 1 group judged (committed 2) fail with two findings; a median 0.896 is within the tolerance */
    char path[] = "/tmp/shardcast-test-decisions-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    pred_engine e = PRED_MODEL;
    const acc_summary *ss = &s;
    char *text = acc_figures_dump(&e, &ss, 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "\"decisions\""));
    fputs(text, f);
    fclose(f);
    free(text);
    char report[2048];
    int worse;
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_int_eq(worse, 0);
    s.decisions.overall.median = 0.9 - 0.006;
    s.decisions.overall.groups = 1;
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_int_eq(worse, 2);
    ck_assert_msg(strstr(report, "pick/best overall: 1 compare groups judged, committed 2") &&
                      strstr(report, "median pick/best 0.894, committed 0.900"),
                  "%s", report);
    s.decisions.overall.median = 0.896;
    s.decisions.overall.groups = 2;
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_int_eq(worse, 0);
    /* a source's minimum lower by more than 0.005 */
    s.decisions.sources[0].min = 0.79;
    ck_assert_int_eq(acc_figures_check(path, PRED_MODEL, &s, 0.5, report, sizeof report, &worse, &err), 0);
    ck_assert_int_eq(worse, 1);
    ck_assert_msg(strstr(report, "pick/best of source X: lowest pick/best 0.790, committed 0.800"), "%s", report);
    acc_summary_free(&s);
    remove(path);
}
END_TEST

/* ---- a directory --------------------------------------------------------------------------------- */

START_TEST(fixture_dir)
{
    acc_suite *s;
    sc_err err;
    char msg[600];
    int rc = acc_load_dir(&FIX, &s, &err);
    ck_assert_msg(rc == 0, "%s", sc_err_str(&err, msg, sizeof msg));
    /* 4 cases of fix-alpha then 4 of fix-beta, each folder in name order; clusters/ and models/
     * hold specs, not cases */
    ck_assert_int_eq(acc_n_cases(s), 8);
    ck_assert_str_eq(acc_case_at(s, 0)->name, "alpha-2n-ddp");
    ck_assert_str_eq(acc_case_at(s, 4)->source_id, "fix-beta");
    /* the notes of the fixtures derive these */
    ck_assert_rel(acc_case_at(s, 0)->measured_tps, 8192.0);
    ck_assert_rel(acc_case_at(s, 1)->measured_tps, 6144.0);
    ck_assert_rel(acc_case_at(s, 2)->measured_tps, 5120.0);
    ck_assert_rel(acc_case_at(s, 3)->measured_tps, 3200.0);
    ck_assert_rel(acc_case_at(s, 6)->measured_tps, 0.4 * 312e12 / 544272384.0);
    ck_assert_rel(acc_case_at(s, 7)->measured_tps, 150000.0);
    acc_run(s, PRED_MODEL, NULL, NULL);
    ck_assert_int_eq(acc_outcome_at(s, 4, PRED_MODEL)->status, ACC_OOM);
    ck_assert_int_eq(acc_outcome_at(s, 5, PRED_MODEL)->status, ACC_UNSUPPORTED);
    ck_assert_int_eq(acc_outcome_at(s, 0, PRED_MODEL)->status, ACC_OK);
    ck_assert_int_eq(acc_outcome_at(s, 0, PRED_SIM)->ran, 0);
    acc_row rows[8];
    acc_suite_rows(s, PRED_MODEL, rows);
    acc_summary sum;
    ck_assert_int_eq(acc_summarize(rows, 8, &sum, &err), 0);
    ck_assert_int_eq(sum.overall.n, 6);
    ck_assert_int_eq(sum.overall.n_not_run, 2);
    acc_summary_free(&sum);
    acc_suite_free(s);

    acc_paths beta = {"tests/fixtures/validation", ROOTS, 1, "fix-beta"};
    ck_assert_int_eq(acc_load_dir(&beta, &s, &err), 0);
    ck_assert_int_eq(acc_n_cases(s), 4);
    ck_assert_str_eq(acc_case_at(s, 0)->source_id, "fix-beta");
    acc_suite_free(s);
    beta.only_source = "fix-gamma";
    ck_assert_int_eq(acc_load_dir(&beta, &s, &err), SC_EINPUT);
    ck_assert_str_eq(err.source, "--source");

    acc_paths none = {"tests/fixtures/no-such-dir", ROOTS, 1, NULL};
    ck_assert_int_eq(acc_load_dir(&none, &s, &err), SC_EINPUT);
    ck_assert_str_eq(err.source, "tests/fixtures/no-such-dir");
}
END_TEST

/* ---- the front door (predict/eval) ------------------------------------------------------------- */

START_TEST(front_door)
{
    sc_err err;
    spec_cluster c;
    spec_model m;
    char path[1024];
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &err), 0);
    ck_assert_int_eq(spec_load_model("configs/models/gpt3-1.3b.json", &m, &err), 0);
    spec_training t;
    spec_training_defaults(&t);
    spec_layout l;
    ck_assert_int_eq(spec_layout_parse("mics:p=8", &l, &err), 0);
    cost_calib cal;
    ck_assert_int_eq(pred_calib_load(&c, NULL, ROOTS, 1, &cal, path, sizeof path, &err), 0);
    ck_assert_str_eq(path, "configs/calibrations/p4d.24xlarge.json");
    pred_input in = {&c, &m, &t, 2, &l, &cal, NULL};
    /* the analytical engine is an_predict */
    pred_result r;
    ck_assert_int_eq(pred_eval(&in, PRED_MODEL, NULL, &r, &err), 0);
    wl w;
    wl_build(&m, &t, &w);
    an_result a;
    an_predict(&w, &t, &l, &c, 2, &cal, &a);
    ck_assert_double_eq(r.r.step_s, a.step_s);
    ck_assert_double_eq(r.r.tokens_per_s, a.tokens_per_s);
    ck_assert_double_eq(r.r.compute_s, a.compute_s);
    ck_assert_double_eq(r.r.comm_bytes, a.comm_bytes);
    ck_assert_double_eq(r.r.mem.total, a.mem.total);
    ck_assert_int_eq(r.gpus, 16);
    ck_assert_int_eq(r.engine, PRED_MODEL);
    /* the simulator fills the same result type; throughput follows from its step time */
    pred_result q;
    ck_assert_int_eq(pred_eval(&in, PRED_SIM, NULL, &q, &err), 0);
    ck_assert_rel(q.r.step_s, q.sim.step_s);
    ck_assert_rel(q.r.tokens_per_s, 16.0 * t.micro_batch * t.grad_accum * m.seq_len / q.sim.step_s);
    ck_assert_double_eq(q.r.mem.total, a.mem.total);
    /* a straggler beyond the ranks, a layout that does not fit the point */
    exec_opts so = {0};
    so.seed = 1;
    so.n_stragglers = 1;
    so.straggler_rank[0] = 16;
    so.straggler_factor[0] = 2;
    ck_assert_int_eq(pred_eval(&in, PRED_SIM, &so, &q, &err), SC_EINPUT);
    ck_assert_str_eq(err.source, "--straggler");
    in.nodes = 3;
    ck_assert_int_eq(spec_layout_parse("mics:p=16", &l, &err), 0);
    ck_assert_int_eq(pred_eval(&in, PRED_MODEL, NULL, &q, &err), SC_EINPUT);
    ck_assert_int_eq(pred_check(&in, "x", &err), SC_EINPUT);
    /* a cluster without a shipped calibration gets the built-in defaults */
    snprintf(c.name, sizeof c.name, "no-such-cluster");
    ck_assert_int_eq(pred_calib_load(&c, NULL, ROOTS, 1, &cal, path, sizeof path, &err), 0);
    ck_assert_str_eq(path, "");
    pred_engine e;
    ck_assert_int_eq(pred_engine_parse("analytic", &e), 0);
    ck_assert_int_eq(e, PRED_MODEL);
    ck_assert_int_eq(pred_engine_parse("warp", &e), -1);
    ck_assert_str_eq(pred_engine_name(PRED_SIM), "sim");
}
END_TEST

/* ---- what the source ran, written into training (predict/accuracy_ran.c) -------------------- */

START_TEST(ran_table)
{
    /* hand-checked rows: the suite's names against model/spec.c's */
    ck_assert_str_eq(acc_ran_engine_name(ACC_RAN_AK, "fa1-triton"), "triton2022"); /* renamed */
    ck_assert_str_eq(acc_ran_engine_name(ACC_RAN_AK, "fa2"), "fa2");
    ck_assert_str_eq(acc_ran_engine_name(ACC_RAN_AK, "sdpa-cudnn"), "sdpa-cudnn");
    ck_assert_ptr_null(acc_ran_engine_name(ACC_RAN_AK, "sdpa"));                   /* backend unstated */
    ck_assert_ptr_null(acc_ran_engine_name(ACC_RAN_AK, "te-cudnn"));
    ck_assert_ptr_null(acc_ran_engine_name(ACC_RAN_AK, "megatron-fused-softmax"));
    ck_assert_str_eq(acc_ran_engine_name(ACC_RAN_AK, "unstated"), "");
    ck_assert_str_eq(acc_ran_engine_name(ACC_RAN_RD, "fp32"), "fp32");
    ck_assert_str_eq(acc_ran_engine_name(ACC_RAN_RD, "bf16"), "bf16");
    ck_assert_str_eq(acc_ran_engine_name(ACC_RAN_CKPT, "op"), "op");
    ck_assert_ptr_null(acc_ran_engine_name(ACC_RAN_CKPT, "partial"));
    ck_assert_ptr_null(acc_ran_engine_name(ACC_RAN_AK, "no-such-kernel"));
    /* property: every engine name the table gives for a kernel a case may name is one the engine
     * parses */
    int mapped = 0;
    for (int i = 0; ACC_ATTENTION_KERNELS[i]; i++) {
        const char *e = acc_ran_engine_name(ACC_RAN_AK, ACC_ATTENTION_KERNELS[i]);
        if (e && e[0]) {
            ck_assert_int_gt(spec_attn_kernel_parse(e), 0);
            mapped++;
        }
    }
    ck_assert_int_eq(mapped, 9); /* 13 names less sdpa, te-cudnn, megatron-fused-softmax, unstated */
    /* DeepSpeed releases in free text */
    char v[32];
    ck_assert_int_eq(acc_ran_deepspeed_version("DeepSpeed 0.6.2 (Megatron-DeepSpeed recipes)", v, sizeof v), 0);
    ck_assert_str_eq(v, "0.6.2");
    ck_assert_int_eq(acc_ran_deepspeed_version("torch 2.13.0, deepspeed 0.19", v, sizeof v), 0);
    ck_assert_str_eq(v, "0.19");
    ck_assert_int_eq(acc_ran_deepspeed_version("deepspeed@0.5.", v, sizeof v), 0);
    ck_assert_str_eq(v, "0.5"); /* the trailing dot is not part of it */
    ck_assert_int_eq(acc_ran_deepspeed_version("Megatron-LM-v1.1.5-ZeRO3 (DeepSpeedExamples)", v, sizeof v), -1);
    /* the two 2020-21 sources' texts (validation/deepspeed-zero-tutorials, ds-autotuning-hf) */
    ck_assert_int_eq(acc_ran_deepspeed_version("deepspeed 0.3.0 (DeepSpeedExamples Megatron-LM GPT-2 of 2020-09)", v, sizeof v), 0);
    ck_assert_str_eq(v, "0.3.0");
    ck_assert_int_eq(acc_ran_deepspeed_version("deepspeed 0.5.7, transformers 4.12 (run_clm.py)", v, sizeof v), 0);
    ck_assert_str_eq(v, "0.5.7");
    ck_assert_int_eq(acc_ran_deepspeed_version("unstated", v, sizeof v), -1);
    ck_assert_int_eq(acc_ran_deepspeed_version("deepspeed 0.11.0", v, 4), -1); /* does not fit */
}
END_TEST

START_TEST(ran_stack_families)
{
    /* ran.stack -> bundle, by the rows of predict/accuracy_ran.c ALIASES (the validation texts) */
    ck_assert_str_eq(acc_ran_stack_bundle("megatron-deepspeed", "DeepSpeed 0.6.2 (Megatron-DeepSpeed recipes)", "", ""),
                     "megatron-deepspeed-2022");
    ck_assert_str_eq(acc_ran_stack_bundle("megatron-lm", "Megatron-LM 2021-04 (SC'21)", "", ""), "megatron-lm-2021");
    /* other releases of the same family: no bundle yet (2020 DeepSpeedExamples, 2023, FlagScale) */
    ck_assert_ptr_null(acc_ran_stack_bundle("megatron-deepspeed", "deepspeed 0.3.0 (DeepSpeedExamples Megatron-LM GPT-2 of 2020-09)", "", ""));
    ck_assert_ptr_null(acc_ran_stack_bundle("megatron-deepspeed", "deepspeed 0.11.0, Megatron-DeepSpeed@11f2d9342", "", ""));
    ck_assert_ptr_null(acc_ran_stack_bundle("megatron-deepspeed", "unstated", "", ""));
    ck_assert_ptr_null(acc_ran_stack_bundle("megatron-lm", "FlagScale@6fc099c (a Megatron-LM fork)", "", ""));
    ck_assert_str_eq(acc_ran_stack_bundle("lightning", "unstated (PyTorch Lightning; the README asks for PyTorch 1.12+, CUDA 11.8)", "compiled", ""),
                     "flash-attn-training-2022"); /* one bundle for either execution */
    /* torchtitan: by execution, then by the stated bundle, else eager (compile defaults off) */
    const char *tt = "torchtitan at torchtitan@157a12c";
    ck_assert_str_eq(acc_ran_stack_bundle("torchtitan", tt, "compiled", ""), "torchtitan-compile");
    ck_assert_str_eq(acc_ran_stack_bundle("torchtitan", tt, "eager", "torchtitan-compile"), "torchtitan-eager");
    ck_assert_str_eq(acc_ran_stack_bundle("torchtitan", tt, "", "torchtitan-compile"), "torchtitan-compile");
    ck_assert_str_eq(acc_ran_stack_bundle("torchtitan", tt, "", "torchtitan-eager"), "torchtitan-eager");
    ck_assert_str_eq(acc_ran_stack_bundle("torchtitan", tt, "", ""), "torchtitan-eager");
    /* unknown families */
    ck_assert_ptr_null(acc_ran_stack_bundle("olmo-core", "OLMo-core@7e58d128 (torch.compile)", "", ""));
    ck_assert_ptr_null(acc_ran_stack_bundle("torchtitan-eager", tt, "", "")); /* a bundle name is no family */
}
END_TEST

static int any_bundle(const char *name, const void *ctx)
{
    (void)ctx;
    return !strcmp(name, "torchtitan-eager") || !strcmp(name, "torchtitan-compile") || !strcmp(name, "megatron-lm-2021");
}

START_TEST(ran_apply_family)
{
    acc_ran ran = {1, "torchtitan", "torchtitan at torchtitan@d4c86e3", "sdpa", "unstated", "none", ""};
    acc_ran_applied a;
    /* the case names the compiled bundle itself: agrees, nothing written */
    json_t *tr = json_pack("{s:s}", "stack", "torchtitan-compile");
    ck_assert_int_eq(acc_ran_apply(&ran, "fsdp2", tr, any_bundle, NULL, &a), 0);
    ck_assert_int_eq(a.fate[ACC_RAN_STACK], ACC_RAN_AGREES);
    ck_assert_str_eq(a.value[ACC_RAN_STACK], "torchtitan-compile");
    json_decref(tr);
    /* compiled execution and no stack: the compiled bundle written */
    tr = json_pack("{s:s}", "execution", "compiled");
    ck_assert_int_eq(acc_ran_apply(&ran, "fsdp2", tr, any_bundle, NULL, &a), 0);
    ck_assert_int_eq(a.fate[ACC_RAN_STACK], ACC_RAN_MAPPED);
    ck_assert_str_eq(json_string_value(json_object_get(tr, "stack")), "torchtitan-compile");
    json_decref(tr);
    /* a release with no bundle: unmapped under the family's name, nothing written */
    ran = (acc_ran){1, "megatron-lm", "FlagScale@6fc099c (a Megatron-LM fork)", "unstated", "unstated", "none", ""};
    tr = json_object();
    ck_assert_int_eq(acc_ran_apply(&ran, "megatron", tr, any_bundle, NULL, &a), 0);
    ck_assert_int_eq(a.fate[ACC_RAN_STACK], ACC_RAN_UNMAPPED);
    ck_assert_str_eq(a.value[ACC_RAN_STACK], "megatron-lm");
    ck_assert_ptr_null(json_object_get(tr, "stack"));
    json_decref(tr);
}
END_TEST

static int only_nanotron(const char *name, const void *ctx)
{
    (void)ctx;
    return !strcmp(name, "nanotron");
}

START_TEST(ran_apply)
{
    acc_ran ran = {1, "nanotron", "deepspeed 0.10.3", "sdpa-flash", "fp32", "selective", ""};
    acc_ran_applied a;
    /* an empty training object: everything written; nanotron's bundle exists */
    json_t *tr = json_object();
    ck_assert_int_eq(acc_ran_apply(&ran, "deepspeed", tr, only_nanotron, NULL, &a), 0);
    ck_assert_str_eq(json_string_value(json_object_get(tr, "attention_kernel")), "sdpa-flash");
    ck_assert_str_eq(json_string_value(json_object_get(tr, "reduce_dtype")), "fp32");
    ck_assert_str_eq(json_string_value(json_object_get(tr, "checkpointing")), "selective");
    ck_assert_str_eq(json_string_value(json_object_get(tr, "framework_version")), "0.10.3");
    ck_assert_str_eq(json_string_value(json_object_get(tr, "stack")), "nanotron");
    for (int k = 0; k < ACC_RAN_N_KEYS; k++)
        ck_assert_int_eq(a.fate[k], ACC_RAN_MAPPED);
    json_decref(tr);
    /* the object says otherwise: flash_attention true with unfused, checkpointing false for full,
     * its own reduce dtype; the training's framework (fsdp) beats the case's for the version */
    ran = (acc_ran){1, "torchtitan", "deepspeed 0.10.3", "unfused", "fp32", "full", ""};
    tr = json_pack("{s:b, s:b, s:s, s:s}", "flash_attention", 1, "activation_checkpointing", 0, "reduce_dtype", "param",
                   "framework", "fsdp");
    ck_assert_int_eq(acc_ran_apply(&ran, "deepspeed", tr, only_nanotron, NULL, &a), 0);
    ck_assert_int_eq(a.fate[ACC_RAN_AK], ACC_RAN_KEPT);
    ck_assert_int_eq(a.fate[ACC_RAN_RD], ACC_RAN_KEPT);
    ck_assert_int_eq(a.fate[ACC_RAN_CKPT], ACC_RAN_KEPT);
    ck_assert_int_eq(a.fate[ACC_RAN_FV], ACC_RAN_NONE);
    ck_assert_int_eq(a.fate[ACC_RAN_STACK], ACC_RAN_UNMAPPED);
    ck_assert_str_eq(a.value[ACC_RAN_STACK], "torchtitan");
    ck_assert_int_eq((int)json_object_size(tr), 4); /* nothing written */
    json_decref(tr);
    /* agreeing: flash_attention false is unfused, activation_checkpointing true is full */
    tr = json_pack("{s:b, s:b}", "flash_attention", 0, "activation_checkpointing", 1);
    ck_assert_int_eq(acc_ran_apply(&ran, "megatron", tr, only_nanotron, NULL, &a), 0);
    ck_assert_int_eq(a.fate[ACC_RAN_AK], ACC_RAN_AGREES);
    ck_assert_int_eq(a.fate[ACC_RAN_CKPT], ACC_RAN_AGREES);
    ck_assert_int_eq(a.fate[ACC_RAN_FV], ACC_RAN_NONE); /* not DeepSpeed */
    ck_assert_ptr_null(json_object_get(tr, "checkpointing")); /* both keys would be an error */
    json_decref(tr);
    /* no "ran": nothing */
    acc_ran none = {0};
    tr = json_object();
    ck_assert_int_eq(acc_ran_apply(&none, "deepspeed", tr, only_nanotron, NULL, &a), 0);
    ck_assert_int_eq((int)json_object_size(tr), 0);
    json_decref(tr);
}
END_TEST

/* The fixture cases (tests/fixtures/validation-ran) as loaded: what the engine is given. */
START_TEST(ran_fixture)
{
    sc_err err;
    acc_suite *s;
    acc_paths p = {"tests/fixtures/validation-ran", ROOTS, 1, NULL};
    ck_assert_int_eq(acc_load_dir(&p, &s, &err), 0);
    ck_assert_int_eq(acc_n_cases(s), 3);
    const acc_case *m = NULL, *k = NULL;
    for (int i = 0; i < 3; i++) {
        const acc_case *c = acc_case_at(s, i);
        if (!strcmp(c->name, "ran-mapped"))
            m = c;
        if (!strcmp(c->name, "ran-kept"))
            k = c;
    }
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(k);
    /* ran's kernel beats the hf-trainer-deepspeed bundle's sdpa-flash; the bundle's eager stays */
    ck_assert_int_eq(m->training.attn_kernel, AK_TRITON2022);
    ck_assert_int_eq(m->training.reduce_dtype, REDUCE_FP32);
    ck_assert_int_eq(m->training.act_ckpt, CKPT_OP);
    ck_assert_int_eq(m->training.framework_version, 602); /* 0.6.2: 0 x 10000 + 6 x 100 + 2 */
    ck_assert_str_eq(m->training.stack, "hf-trainer-deepspeed");
    ck_assert_int_eq(m->training.execution, EXEC_EAGER);
    ck_assert_int_eq(m->training.framework, FW_DEEPSPEED);
    /* the training object's own values */
    ck_assert_int_eq(k->training.flash_attention, 0); /* flash_attention: false (the default kernel off) */
    ck_assert_int_eq(k->training.attn_kernel, AK_DEFAULT);
    ck_assert_int_eq(k->training.act_ckpt, CKPT_FULL);
    ck_assert_int_eq(k->training.reduce_dtype, REDUCE_PARAM);
    ck_assert_str_eq(k->training.stack, "");
    acc_suite_free(s);
}
END_TEST

/* The decision-quality floor (issue 30): three judged groups at 0.95, 0.87 and 1.0 and one not
 * judged (NAN), median 0.95. Floor 0.9 / 0.98: 0.87 unlisted -> 1 breach, median 0.95 < 0.98 -> 1
 * more; listing g2 -> only the median; listing g1 (0.95 >= 0.9: stale) and a group no run judged
 * (g4, NAN) -> 2 breaches besides g2's. */
START_TEST(floor_check)
{
    acc_decision g[4] = {{"g1", "s", 2, 2, 0, 1, 0.95}, {"g2", "s", 2, 2, 0, 1, 0.87},
                         {"g3", "t", 2, 2, 0, 0, 1.0}, {"g4", "t", 2, 1, -1, -1, NAN}};
    acc_decisions d;
    memset(&d, 0, sizeof d);
    d.n_groups = 4;
    d.groups = g;
    d.overall.groups = 3;
    d.overall.median = 0.95;
    d.overall.min = 0.87;
    acc_floor f;
    memset(&f, 0, sizeof f);
    f.min = 0.9;
    f.median = 0.98;
    char rep[2048];
    int worse = 0;
    rep[0] = 0;
    acc_floor_check(&f, &d, rep, sizeof rep, &worse);
    ck_assert_int_eq(worse, 2);
    ck_assert_ptr_nonnull(strstr(rep, "pick/best of group g2 (s) is 0.870, under the floor 0.900"));
    ck_assert_ptr_nonnull(strstr(rep, "overall median pick/best 0.950, under the floor 0.980"));
    f.median = 0.95; /* at the floor: no breach */
    snprintf(f.below[f.n_below++], sizeof f.below[0], "g2");
    worse = 0;
    rep[0] = 0;
    acc_floor_check(&f, &d, rep, sizeof rep, &worse);
    ck_assert_int_eq(worse, 0);
    snprintf(f.below[f.n_below++], sizeof f.below[0], "g1");
    snprintf(f.below[f.n_below++], sizeof f.below[0], "g4");
    worse = 0;
    rep[0] = 0;
    acc_floor_check(&f, &d, rep, sizeof rep, &worse);
    ck_assert_int_eq(worse, 2);
    ck_assert_ptr_nonnull(strstr(rep, "group g1 is listed below the floor but its pick/best is 0.950"));
    ck_assert_ptr_nonnull(strstr(rep, "group g4 is listed below the floor but no run judged it"));
}
END_TEST

/* The torch.compile pairs (predict/accuracy_compile.h): three hand-made cases of one source, eager
 * 1000 tokens/s measured / 1100 predicted, compiled 1160 / 1298, and a compiled one at another
 * micro-batch (no partner). Measured gain 1160 / 1000 - 1 = +16.0 %, predicted 1298 / 1100 - 1
 * = +18.0 %: +2.0 points. Another source's compiled twin does not pair; a compiled case without
 * a prediction leaves the predicted gain NAN (not judged). */
START_TEST(compile_pairs)
{
    static acc_case c[4];
    memset(c, 0, sizeof c);
    acc_row rows[4];
    memset(rows, 0, sizeof rows);
    const double meas[4] = {1000, 1160, 1200, 1160}, pred[4] = {1100, 1298, 1300, 1290};
    for (int i = 0; i < 4; i++) {
        snprintf(c[i].source_id, sizeof c[i].source_id, "%s", i == 3 ? "other" : "src");
        snprintf(c[i].layout_str, sizeof c[i].layout_str, "zero3");
        spec_training_defaults(&c[i].training);
        c[i].training.execution = i ? EXEC_COMPILED : EXEC_EAGER;
        c[i].model.seq_len = 8192;
        c[i].nodes = 1;
        rows[i].ok = 1, rows[i].measured = meas[i], rows[i].predicted = pred[i];
    }
    c[2].training.micro_batch = 2;
    const acc_case *cs[4] = {&c[0], &c[1], &c[2], &c[3]};
    acc_compile_pair p[4];
    ck_assert_int_eq(acc_compile_pairs(cs, rows, 4, p, 4), 1);
    ck_assert_int_eq(p[0].eager, 0);
    ck_assert_int_eq(p[0].compiled, 1);
    ck_assert_rel(p[0].measured_gain_pct, 16.0);
    ck_assert_rel(p[0].predicted_gain_pct, 18.0);
    ck_assert_rel(p[0].diff_pts, 2.0);
    rows[1].ok = 0;
    ck_assert_int_eq(acc_compile_pairs(cs, rows, 4, p, 4), 1);
    ck_assert(isnan(p[0].predicted_gain_pct) && isnan(p[0].diff_pts));
    ck_assert_int_eq(acc_compile_pairs(cs, rows, 4, p, 0), 1); /* counted, none written */
}
END_TEST

/* review16 finding 4: the shipped ATorch ds_3d case (framework megatron, the atorch stack's
 * loss_fp32 on: ds_3d_llama2.py calls logits.float() then vocab_parallel_cross_entropy,
 * dlrover@11bf2fbf) and FlagPerf's PaddleNLP runs under tensor parallelism (ParallelCrossEntropy
 * on astype("float32"): c_softmax_with_cross_entropy, Megatron's algorithm) resolve to Megatron's
 * vocab-parallel path, the one both the step time and the memory plan price; FlagPerf's run
 * without tensor parallelism (framework other) stays torch-style fp32 cross-entropy. */
START_TEST(loss_impl_of_shipped_cases)
{
    static const char *const roots[] = {"configs"};
    const acc_paths p = {"validation", roots, 1, NULL};
    static const struct {
        const char *file;
        wl_loss_impl impl;
    } want[] = {
        {"validation/dlrover-atorch-llama2/atorch-llama2-7b-ds3d-t2p2d4.json", WL_LOSS_MEGATRON},
        {"validation/flagperf-nvidia/flagperf-paddle-llama1-7b-80g-tp2pp1sh1sp4.json", WL_LOSS_MEGATRON},
        {"validation/flagperf-nvidia/flagperf-paddle-llama1-7b-80g-tp1pp1sh2sp8.json", WL_LOSS_TORCH_FP32},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        sc_err err;
        char msg[600];
        ck_assert_msg(acc_case_load(NULL, want[i].file, &p, &C, &err) == 0, "%s", sc_err_str(&err, msg, sizeof msg));
        ck_assert_int_eq(C.training.loss_fp32, 1); /* the stacks' loss_fp32 on reached the training */
        ck_assert_int_eq(wl_loss_impl_of(&C.training, &C.layout), want[i].impl);
    }
}
END_TEST

Suite *accuracy_suite(void)
{
    Suite *s = suite_create("accuracy");
    TCase *tc = tcase_create("accuracy");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tiny_params);
    tcase_add_test(tc, conventions);
    tcase_add_test(tc, metrics);
    tcase_add_test(tc, load_ok);
    tcase_add_test(tc, loss_impl_of_shipped_cases);
    tcase_add_test(tc, load_errors);
    tcase_add_test(tc, statuses);
    tcase_add_test(tc, statistics);
    tcase_add_test(tc, figures);
    tcase_add_test(tc, field_macro);
    tcase_add_test(tc, field_decisions);
    tcase_add_test(tc, fixture_dir);
    tcase_add_test(tc, front_door);
    tcase_add_test(tc, ran_table);
    tcase_add_test(tc, ran_apply);
    tcase_add_test(tc, ran_stack_families);
    tcase_add_test(tc, ran_apply_family);
    tcase_add_test(tc, ran_fixture);
    tcase_add_test(tc, floor_check);
    tcase_add_test(tc, compile_pairs);
    suite_add_tcase(s, tc);
    return s;
}

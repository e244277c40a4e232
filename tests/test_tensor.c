/* test_tensor.c — the tensor-parallel layouts (model/layout_tensor.c, layout_kind_localize): bytes per
 * axis against hand-derived volumes, the degenerate grids that must equal data parallelism and
 * ZeRO-3, the overlap switch, placement, tile quantization of narrow GEMMs.
 * (Analytical = simulated for these layouts: test_exec.c's agreement grids include them.) */
#include "suites.h"
#include "support.h"

#include "../model/analytic.h"
#include "../model/cost.h"
#include "../model/layout.h"
#include "../model/layout_kind.h"
#include "../model/memory.h"
#include "../model/spec.h"
#include "../model/workload.h"
#include "../sim/exec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Suite *tensor_suite(void);

typedef struct cfg {
    spec_cluster c;
    spec_model m;
    spec_training tr;
    cost_calib k;
    wl w;
} cfg;

/* The tiny model (hidden 64, 1 head, ffn 256, seq 16, vocab 128, 2 blocks) on the 2-GPU duo
 * cluster, micro-batch 1, bf16, no checkpointing, one micro-step, tiny calibration. */
static void tiny_cfg(cfg *x)
{
    x->c = test_duo_cluster("duo", 5e10, 1e10);
    x->m = test_tiny_model(2);
    spec_training_defaults(&x->tr);
    x->tr.act_ckpt = 0;
    x->tr.grad_accum = 1;
    x->k = test_tiny_calib();
    wl_build(&x->m, &x->tr, &x->w);
}

/* p4d.24xlarge with its built-in default calibration (overlap slowdown 0), a shipped model,
 * the tiny configuration's training (checkpointing as given). */
static void p4d_cfg(cfg *x, const char *model, int act_ckpt)
{
    tiny_cfg(x);
    char path[128];
    sc_err err;
    ck_assert_msg(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &x->c, &err) == 0, "%s", err.text);
    snprintf(path, sizeof path, "configs/models/%s.json", model);
    ck_assert_msg(spec_load_model(path, &x->m, &err) == 0, "%s: %s", path, err.text);
    cost_calib_defaults(&x->c, &x->k);
    x->tr.act_ckpt = act_ckpt;
    wl_build(&x->m, &x->tr, &x->w);
}

static lo_graph *graph(const cfg *x, const char *layout, int nodes)
{
    spec_layout l;
    sc_err err;
    ck_assert_msg(spec_layout_parse(layout, &l, &err) == 0, "%s: %s", layout, err.text);
    ck_assert_msg(spec_layout_check(&l, &x->c, nodes, &err) == 0, "%s: %s", layout, err.text);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&x->w, &x->tr, &l, &x->c, nodes, g);
    return g;
}

static double step(const cfg *x, const lo_graph *g)
{
    an_timed t;
    an_result r;
    memset(&r, 0, sizeof r);
    an_time(g, &x->w, &x->k, &x->c, &t);
    an_run(&t, &r);
    return r.step_s;
}

/* Parameters of the tiny model (test_workload.c derives them): a block 4 h^2 attention +
 * 2 h f MLP + 2 LayerNorms (2 h each) = 16384 + 32768 + 256 = 49408; embedding V h = 8192;
 * head LayerNorm + V h = 8320; 2 blocks: 115328. */
#define BLOCK 49408.0
#define EMBED 8192.0
#define HEAD 8320.0

START_TEST(test_axonn_bytes_per_axis)
{
    /* axonn:x=2,y=2,z=2 on 4 duo nodes (8 GPUs, d = 1), T = 16 tokens per GPU, e = 2 B.
     * Ring factors on 2 ranks: all-gather / reduce-scatter 1/2, all-reduce 1.
     * z: each layer's gathered block W = params / (X Y) x e, all-gathered forward and backward
     *    and reduce-scattered: 3 x W / 2 per copy:
     *    blocks 2 x 3 x (49408 / 4 x 2) / 2 = 74112, embedding 3 x 4096 / 2 = 6144,
     *    head 3 x 4160 / 2 = 6240; total 86496.
     * x: forward all-reduce of qkv and fc1 outputs [m/Z, n/Y], m = XYZ T: X T (3h + f) e =
     *    2 x 16 x 448 x 2 = 28672; backward of proj and fc2 input gradients X T (h + f) e =
     *    2 x 16 x 320 x 2 = 20480; per block 49152, 2 blocks 98304; head forward X T V e =
     *    2 x 16 x 128 x 2 = 8192; total 106496.
     * y: forward proj and fc2 outputs Y T 2h e = 8192, backward qkv and fc1 input gradients
     *    8192; 2 blocks 32768; head backward Y T h e = 4096; total 36864.
     * d: one replica, nothing. */
    cfg x;
    tiny_cfg(&x);
    lo_graph *g = graph(&x, "axonn:x=2,y=2,z=2", 4);
    double by[N_GROUPS];
    double tot = layout_comm_bytes_by_group(g, by);
    ck_assert_double_eq_tol(by[GRP_AX2], 86496, 1e-6);
    ck_assert_double_eq_tol(by[GRP_AX0], 106496, 1e-6);
    ck_assert_double_eq_tol(by[GRP_AX1], 36864, 1e-6);
    ck_assert_double_eq(by[GRP_AX3], 0);
    ck_assert_double_eq_tol(tot, 86496 + 106496 + 36864, 1e-6);
    ck_assert_double_eq_tol(layout_comm_bytes(g, NULL), tot, 1e-6);
    /* placement: x inside a node (stride 1), y across 2 nodes (stride 2), z (stride 4) */
    ck_assert_int_eq(g->group[GRP_AX0].k, 1);
    ck_assert_int_eq(g->group[GRP_AX1].k, 2);
    ck_assert_int_eq(g->group[GRP_AX2].k, 2);
    int mem[8];
    ck_assert_int_eq(layout_group_members(g, GRP_AX1, 5, mem), 2);
    ck_assert_int_eq(mem[0], 5);
    ck_assert_int_eq(mem[1], 7);
    ck_assert_int_eq(layout_group_members(g, GRP_AX2, 5, mem), 2);
    ck_assert_int_eq(mem[0], 1);
    ck_assert_int_eq(mem[1], 5);
    free(g);
}
END_TEST

START_TEST(test_tp_bytes_per_axis)
{
    /* tp:t=2 on 2 duo nodes: tensor axis inside a node, 2 replicas across nodes. A replica runs
     * t T = 32 tokens; one [tokens, h] activation is 32 x 64 x 2 = 4096 B.
     * x (all-reduce factor 1): per block 2 forward + 2 backward all-reduces = 4 x 4096 = 16384,
     *   2 blocks 32768; embedding forward 4096; head backward 4096; total 40960.
     * d (ZeRO-1 over 2 replicas, factor 1/2): reduce-scatter of the rank's 115328 / 2 = 57664
     *   parameters' gradients (115328 B) = 57664, all-gather of the updated slice after the
     *   step = 57664; total 115328. */
    cfg x;
    tiny_cfg(&x);
    lo_graph *g = graph(&x, "tp:t=2", 2);
    double by[N_GROUPS];
    layout_comm_bytes_by_group(g, by);
    ck_assert_double_eq_tol(by[GRP_AX0], 40960, 1e-6);
    ck_assert_double_eq_tol(by[GRP_AX3], 115328, 1e-6);
    ck_assert_int_eq(g->group[GRP_AX0].k, 1);
    ck_assert_int_eq(g->group[GRP_AX3].k, 2);
    /* the optimizer updates 1/t of the parameters over 1/dp: 115328 / 4 */
    ck_assert_int_eq(g->boundary[0].is_optimizer, 1);
    ck_assert_double_eq_tol(g->boundary[0].opt_params, 28832, 1e-9);
    free(g);
}
END_TEST

START_TEST(test_tp_selective_recompute_comm)
{
    /* tp:t=2 on 2 duo nodes, as test_tp_bytes_per_axis (x: 40960 B without checkpointing).
     * Full recompute re-runs each block's forward in its backward copy, its 2 all-reduces of
     * 4096 B included: + 2 blocks x 2 x 4096 = 16384 -> 57344 B. Selective recompute re-runs
     * attention's core alone (Megatron _checkpointed_attention_forward), which holds no
     * collective: 40960 B, as without checkpointing. */
    static const int ck[3] = {CKPT_NONE, CKPT_FULL, CKPT_SELECTIVE};
    static const double want[3] = {40960, 57344, 40960};
    for (int i = 0; i < 3; i++) {
        cfg x;
        tiny_cfg(&x);
        x.tr.act_ckpt = ck[i];
        wl_build(&x.m, &x.tr, &x.w);
        lo_graph *g = graph(&x, "tp:t=2", 2);
        double by[N_GROUPS];
        layout_comm_bytes_by_group(g, by);
        ck_assert_msg(fabs(by[GRP_AX0] - want[i]) < 1e-6, "ckpt %d: %.1f B, want %.1f", ck[i], by[GRP_AX0], want[i]);
        free(g);
    }
}
END_TEST

START_TEST(test_axonn_selective_recompute_comm)
{
    /* axonn:x=2,y=2,z=2 on 4 duo nodes, as test_axonn_bytes_per_axis (x 106496 B, y 36864 B
     * without checkpointing). AxoNN's forward all-reduces sit inside AsyncLinear.forward
     * (layout_ops.c lo_fwd_comm_rerun): a full recompute re-runs them in each block's backward
     * copy, x: + 2 blocks x 28672 = 163840 B, y: + 2 x 8192 = 53248 B; selective recompute
     * re-runs attention's core alone, no linear: 106496 and 36864 B, as without checkpointing
     * (before the one rule, AxoNN's builder re-ran them under selective too: 163840 / 53248).
     * The z all-gathers / reduce-scatters (weights) do not change with checkpointing: 86496. */
    static const int ck[3] = {CKPT_NONE, CKPT_FULL, CKPT_SELECTIVE};
    static const double want_x[3] = {106496, 163840, 106496}, want_y[3] = {36864, 53248, 36864};
    for (int i = 0; i < 3; i++) {
        cfg x;
        tiny_cfg(&x);
        x.tr.act_ckpt = ck[i];
        wl_build(&x.m, &x.tr, &x.w);
        lo_graph *g = graph(&x, "axonn:x=2,y=2,z=2", 4);
        double by[N_GROUPS];
        layout_comm_bytes_by_group(g, by);
        ck_assert_msg(fabs(by[GRP_AX0] - want_x[i]) < 1e-6, "ckpt %d: x %.1f B, want %.1f", ck[i], by[GRP_AX0], want_x[i]);
        ck_assert_msg(fabs(by[GRP_AX1] - want_y[i]) < 1e-6, "ckpt %d: y %.1f B, want %.1f", ck[i], by[GRP_AX1], want_y[i]);
        ck_assert_double_eq_tol(by[GRP_AX2], 86496, 1e-6);
        free(g);
    }
}
END_TEST

START_TEST(test_megatron_sp_selective_recompute_comm)
{
    /* megatron:t=2 (sequence parallel) on 2 duo nodes, micro-batch 1 per replica: one [tokens,
     * hidden] activation act = 16 x 64 x 2 = 2048 B; all-gathers and reduce-scatters move
     * (t - 1) / t = 1/2 of their size. Per block forward 2 all-gathers + 2 reduce-scatters of
     * act (8192 B, 4096 moved), backward the same; the embedding's forward reduce-scatter and
     * the head's forward all-gather and backward reduce-scatter, 1024 moved each:
     * 2 x (4096 + 4096) + 3 x 1024 = 19456 B; the backward's re-gathers of the column-parallel
     * linears' sequence-split saved inputs (sp_item): per block qkv's and fc1's, 2 x 2048 B
     * (2048 moved), the head's one (1024 moved): + 2 x 2048 + 1024 = 24576 B. Full recompute
     * re-runs the blocks' forward collectives: + 2 x 4096 = 32768 B (the re-gathers stay: the
     * recomputed forward saves the shard again); selective (attention's core only): 24576 B. */
    static const int ck[3] = {CKPT_NONE, CKPT_FULL, CKPT_SELECTIVE};
    static const double want[3] = {24576, 32768, 24576};
    for (int i = 0; i < 3; i++) {
        cfg x;
        tiny_cfg(&x);
        x.tr.act_ckpt = ck[i];
        wl_build(&x.m, &x.tr, &x.w);
        lo_graph *g = graph(&x, "megatron:t=2,p=1", 2);
        double by[N_GROUPS];
        layout_comm_bytes_by_group(g, by);
        ck_assert_msg(fabs(by[GRP_AX0] - want[i]) < 1e-6, "ckpt %d: %.1f B, want %.1f", ck[i], by[GRP_AX0], want[i]);
        free(g);
    }
}
END_TEST

START_TEST(test_tp_reduce_dtype_fp32)
{
    /* tp:t=2 on 2 duo nodes (test_tp_bytes_per_axis: d = 57664 B reduce-scatter + 57664 B
     * all-gather). Gradients reduced in fp32 (reduce_dtype fp32; Megatron-LM with --bf16 sets
     * accumulate_allreduce_grads_in_fp32) double the reduce-scatter, 115328 B; the all-gather
     * of the updated bf16 parameters stays 57664 B: 172992 B. */
    cfg x;
    tiny_cfg(&x);
    x.tr.reduce_dtype = REDUCE_FP32;
    lo_graph *g = graph(&x, "tp:t=2", 2);
    double by[N_GROUPS];
    layout_comm_bytes_by_group(g, by);
    ck_assert_double_eq_tol(by[GRP_AX3], 172992, 1e-6);
    ck_assert_double_eq_tol(by[GRP_AX0], 40960, 1e-6); /* activations: unchanged */
    free(g);
}
END_TEST

START_TEST(test_megatron_zero2_bytes)
{
    /* megatron:t=2,p=1,sp=0,zero2=1 (PaddleNLP sharding stage 2 beside TP 2; layout_tensor.c
     * stage2_reduce) on 2 duo nodes: TP inside a node, dp = 2 across. Each rank holds
     * 115328 / 2 = 57664 parameters (test_tp_bytes_per_axis), S = 115328 B of gradients.
     * zero1=1: one reduce-scatter of S on the last micro-step (S / 2 = 57664 per rank) and the
     * updated slice all-gathered (57664): 115328. zero2=1 with 2 micro-steps: every micro-step
     * each layer's gradients dist.reduce'd to their owners, a ring Reduce moving the whole
     * S per rank (priced as a reduce-scatter of S n / (n - 1) = 2 S at factor 1/2): 2 x 115328,
     * plus the all-gather 57664: 288320. The reduces inline (the backward waits: sync_op), as
     * tails (exposed whole, even where the copy's TP all-reduce overlaps the wgrad GEMMs),
     * one call per parameter tensor (the tiny block: 4 linears + 2 x 2 LayerNorm tensors = 8),
     * gradients kept 1/dp (memory_pipe.c). */
    cfg x;
    tiny_cfg(&x);
    x.tr.grad_accum = 2;
    lo_graph *g = graph(&x, "megatron:t=2,p=1,sp=0,zero1=1", 2);
    double by[N_GROUPS];
    layout_comm_bytes_by_group(g, by);
    ck_assert_double_eq_tol(by[GRP_AX3], 115328, 1e-6);
    free(g);
    g = graph(&x, "megatron:t=2,p=1,sp=0,zero2=1", 2);
    layout_comm_bytes_by_group(g, by);
    ck_assert_double_eq_tol(by[GRP_AX3], 288320, 1e-6);
    int seen = 0;
    for (int i = 0; i < g->micro.n_items; i++) {
        const lo_item *it = &g->micro.item[i];
        for (int j = 0; j < it->n_inline; j++)
            if (it->inl[j].group == GRP_AX3) {
                ck_assert_int_eq(it->pass, LO_BWD);
                ck_assert_int_eq(it->inl[j].kind, COLL_REDUCESCATTER);
                /* exposed whole (a tail), not hidden in the TP all-reduce's weight-gradient window */
                ck_assert_uint_ne(it->inline_tail & (1u << j), 0);
                if (x.w.layer[it->layer].kind == WL_BLOCK)
                    ck_assert_int_eq(it->inl[j].chunks, 8);
                seen++;
            }
        for (int j = 0; j < it->n_reduce; j++)
            ck_assert_int_ne(it->reduce[j].group, GRP_AX3);
    }
    ck_assert_int_eq(seen, 3); /* embedding, block, head: in the micro-steps before the last too */
    free(g);
    /* memory: the gradients 1/dp of zero1's */
    spec_layout l1, l2;
    sc_err err;
    mem_breakdown m1, m2;
    ck_assert(spec_layout_parse("megatron:t=2,p=1,sp=0,zero1=1", &l1, &err) == 0);
    ck_assert(spec_layout_parse("megatron:t=2,p=1,sp=0,zero2=1", &l2, &err) == 0);
    mem_plan(&x.w, &x.tr, &l1, 4, &x.c, &m1);
    mem_plan(&x.w, &x.tr, &l2, 4, &x.c, &m2);
    ck_assert_double_eq_tol(m2.grads, m1.grads / 2, 1e-6);
    ck_assert_double_eq_tol(m2.optim, m1.optim, 1e-6);
    /* the spelling: canonical round trip, and the refusals */
    char buf[96];
    ck_assert_str_eq(spec_layout_str(&l2, buf, sizeof buf), "megatron:t=2,p=1,sp=0,zero2=1");
    ck_assert_int_eq(spec_layout_parse("megatron:t=2,p=1,zero1=0,zero2=1", &l2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"megatron:t=2,p=1,zero1=0,zero2=1\": zero2=1 shards the gradients and the "
                               "optimizer states; it needs zero1=1");
    ck_assert_int_eq(spec_layout_parse("megatron:t=2,p=2,zero2=1", &l2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"megatron:t=2,p=2,zero2=1\": zero2=1 is modelled without pipeline stages or "
                               "context parallelism (p = 1, cp = 1), as PaddleNLP runs sharding stage 2");
    ck_assert_int_eq(spec_layout_parse("megatron:t=2,p=1,cp=2,zero2=1", &l2, &err), SC_EINPUT);
    ck_assert_int_eq(spec_layout_parse("megatron:t=2,p=1,zero2=2", &l2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"megatron:t=2,p=1,zero2=2\": expected zero2=0 or zero2=1, got \"2\"");
    ck_assert_int_eq(spec_layout_parse("tp:t=2,zero2=1", &l2, &err), SC_EINPUT); /* megatron's key only */
}
END_TEST

START_TEST(test_tp_across_nodes)
{
    /* tp:t=4 on 2 duo nodes (2 GPUs each): one tensor group of 4 ranks, 2 per node, over both
     * nodes. A replica runs t T = 4 x 16 = 64 tokens: one activation all-reduce is 64 x 64 x 2 B
     * = 8192 B; 2 blocks x 4 + embedding forward + head backward = 10 of them = 81920 B, each
     * rank moving the busbw factor 2 (n-1)/n = 1.5 of it: 122880 B.
     * Ring all-reduce (nccl-tests): busbw factor 1.5, so 12288 B over each rank's
     * busiest edge; the edge that crosses nodes runs at the node's one NIC, 1e10 B/s (NVLink
     * 2 x 5e10 inside is faster; the tiny calibration's efficiencies are 1, latency 0):
     * 12288 / 1e10 = 1.2288 us per all-reduce. Inside a node (tp:t=2) the same bytes ride
     * NVLink: 2 (1/2) 8192 / 1e11 = 81.92 ns. */
    cfg x;
    tiny_cfg(&x);
    lo_graph *g = graph(&x, "tp:t=4", 2);
    double by[N_GROUPS];
    layout_comm_bytes_by_group(g, by);
    ck_assert_double_eq_tol(by[GRP_AX0], 122880, 1e-6);
    const cost_group *q = &g->group[GRP_AX0];
    ck_assert_int_eq(q->n, 4);
    ck_assert_int_eq(q->k, 2);
    ck_assert_int_eq(q->m, 2);
    ck_assert_double_eq_tol(cost_coll_time(&x.k, COLL_ALLREDUCE, ALGO_RING, 8192, 1, q), 1.2288e-6, 1e-15);
    lo_graph *in = graph(&x, "tp:t=2", 2);
    ck_assert_double_eq_tol(cost_coll_time(&x.k, COLL_ALLREDUCE, ALGO_RING, 8192, 1, &in->group[GRP_AX0]), 8.192e-8,
                            1e-16);
    ck_assert_int_eq(spec_layout_tp_nodes(&g->layout, x.c.gpus_per_node), 2);
    ck_assert_int_eq(spec_layout_tp_nodes(&in->layout, x.c.gpus_per_node), 1);
    free(g);
    free(in);
}
END_TEST

START_TEST(test_degenerate_grid_is_ddp)
{
    /* axonn 1 x 1 x 1 x D is plain data parallelism, tp:t=1,zero1=0 too, and tp:t=1 is ZeRO-1:
     * same step time, same bytes per collective kind, same memory. */
    cfg x;
    tiny_cfg(&x);
    x.tr.grad_accum = 3;
    wl_build(&x.m, &x.tr, &x.w);
    const char *pairs[][2] = {{"axonn:x=1,y=1,z=1", "ddp"}, {"tp:t=1,zero1=0", "ddp"}, {"tp:t=1", "zero1"}};
    for (int i = 0; i < 3; i++) {
        lo_graph *a = graph(&x, pairs[i][0], 2), *b = graph(&x, pairs[i][1], 2);
        ck_assert_msg(fabs(step(&x, a) - step(&x, b)) <= 1e-12 * step(&x, b), "%s: %.17g vs %.17g", pairs[i][0],
                      step(&x, a), step(&x, b));
        double ka[N_COLLS], kb[N_COLLS];
        layout_comm_bytes(a, ka);
        layout_comm_bytes(b, kb);
        for (int k = 0; k < N_COLLS; k++)
            ck_assert_double_eq_tol(ka[k], kb[k], 1e-6);
        spec_layout la, lb;
        ck_assert_int_eq(spec_layout_parse(pairs[i][0], &la, NULL), 0);
        ck_assert_int_eq(spec_layout_parse(pairs[i][1], &lb, NULL), 0);
        mem_breakdown ma, mb;
        mem_plan(&x.w, &x.tr, &la, 4, &x.c, &ma);
        mem_plan(&x.w, &x.tr, &lb, 4, &x.c, &mb);
        ck_assert_double_eq_tol(ma.total, mb.total, 1e-6);
        free(a);
        free(b);
    }
}
END_TEST

START_TEST(test_depth_axis_is_zero3)
{
    /* Z = all 4 GPUs, X = Y = D = 1: weight sharding on that axis, all-gathered forward and
     * backward and reduce-scattered: ZeRO-3's volume, kind by kind, and its model states. */
    cfg x;
    tiny_cfg(&x);
    lo_graph *a = graph(&x, "axonn:x=1,y=1,z=4", 2), *b = graph(&x, "zero3", 2);
    double ka[N_COLLS], kb[N_COLLS];
    layout_comm_bytes(a, ka);
    layout_comm_bytes(b, kb);
    for (int k = 0; k < N_COLLS; k++)
        ck_assert_double_eq_tol(ka[k], kb[k], 1e-6);
    ck_assert_double_eq(ka[COLL_ALLREDUCE], 0);
    spec_layout la, lb;
    ck_assert_int_eq(spec_layout_parse("axonn:x=1,y=1,z=4", &la, NULL), 0);
    ck_assert_int_eq(spec_layout_parse("zero3", &lb, NULL), 0);
    mem_breakdown ma, mb;
    mem_plan(&x.w, &x.tr, &la, 4, &x.c, &ma);
    mem_plan(&x.w, &x.tr, &lb, 4, &x.c, &mb);
    ck_assert_double_eq_tol(ma.params + ma.grads + ma.optim, mb.params + mb.grads + mb.optim, 1e-6);
    ck_assert_double_eq_tol(ma.gathered, mb.gathered, 1e-6);
    free(a);
    free(b);
}
END_TEST

START_TEST(test_overlap_switch)
{
    /* Turning overlap off can only slow a step (every collective becomes blocking, nothing is
     * prefetched); on gpt3-1.3b over 2 p4d nodes it must cost something. */
    cfg x;
    p4d_cfg(&x, "gpt3-1.3b", 1);
    const char *on[] = {"tp:t=8", "tp:t=4,zero1=0", "axonn:x=2,y=2,z=2", "axonn:x=4,y=2,z=2", "axonn:x=1,y=1,z=8"};
    for (int i = 0; i < 5; i++) {
        char off[64];
        snprintf(off, sizeof off, "%s,overlap=0", on[i]);
        lo_graph *a = graph(&x, on[i], 2), *b = graph(&x, off, 2);
        double ta = step(&x, a), tb = step(&x, b);
        ck_assert_msg(tb > ta * 1.01, "%s: overlap on %.6g s, off %.6g s", on[i], ta, tb);
        free(a);
        free(b);
    }
}
END_TEST

START_TEST(test_placement_nvlink)
{
    /* axonn:x=4 on 2 p4d nodes: the x all-reduces (blocking activations) over NVLink
     * (placement xyzd: x innermost) beat the same grid with x across the nodes (dxyz: the two
     * replicas inside each node, x strided over both nodes), in both engines. */
    cfg x;
    sc_err err;
    p4d_cfg(&x, "gpt3-1.3b", 0);
    lo_graph *in = graph(&x, "axonn:x=4,y=1,z=1", 2), *out = graph(&x, "axonn:x=4,y=1,z=1,placement=dxyz", 2);
    ck_assert_int_eq(in->group[GRP_AX0].k, 1);
    ck_assert_int_eq(out->group[GRP_AX0].k, 2);
    double ti = step(&x, in), to = step(&x, out);
    ck_assert_msg(ti < to, "inside %.6g s, across %.6g s", ti, to);
    an_timed t;
    exec_result r;
    exec_opts o;
    memset(&o, 0, sizeof o);
    an_time(out, &x.w, &x.k, &x.c, &t);
    ck_assert(exec_run(out, &t, &x.k, &x.c, &o, &r, &err) == 0);
    ck_assert_msg(r.step_s >= to * (1 - 1e-9), "sim %.9g < model %.9g", r.step_s, to);
    free(in);
    free(out);
}
END_TEST

START_TEST(test_blocking_collectives_no_interference)
{
    /* tp:t=8,overlap=0 on one p4d node: every collective is inline with nothing beside it (the
     * data axis has one rank), so no compute ever runs next to an NCCL kernel: a 0.3 slowdown
     * must change nothing, in either engine (review finding: the analytical bound once counted
     * the inline all-reduces as overlappable). */
    cfg x;
    sc_err err;
    p4d_cfg(&x, "gpt3-1.3b", 0);
    lo_graph *g = graph(&x, "tp:t=8,overlap=0", 1);
    double base = step(&x, g);
    x.k.overlap_slowdown.v = 0.3;
    ck_assert_double_eq_tol(step(&x, g), base, 1e-12 * base);
    an_timed t;
    exec_result r;
    exec_opts o;
    memset(&o, 0, sizeof o);
    an_time(g, &x.w, &x.k, &x.c, &t);
    ck_assert(exec_run(g, &t, &x.k, &x.c, &o, &r, &err) == 0);
    ck_assert_double_eq_tol(r.step_s, base, 1e-9 * base);
    free(g);
}
END_TEST

START_TEST(test_gemm_tile_quantization)
{
    /* Tiny calibration (efficiency 1, no overhead, peak 1e12, HBM 1e12 B/s) with 64-wide tiles:
     * a 65 x 65 x 64 GEMM runs as 128 x 128 x 64: 2 x 128 x 128 x 64 = 2097152 FLOP = 2.097152 us
     * (its 3 x ~4160 x 2 B of traffic take 0.025 us: compute-bound). Without tiles: 540800 FLOP. */
    cost_calib k = test_tiny_calib();
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    wl_gemm g = {.name = "t", .m = 65, .n = 65, .k = 64, .batch = 1};
    ck_assert_double_eq_tol(cost_gemm_time(&k, &c, &g, 2), 540800e-12, 1e-18);
    k.gemm_tile.v = 64;
    ck_assert_double_eq_tol(cost_gemm_time(&k, &c, &g, 2), 2097152e-12, 1e-18);
}
END_TEST

START_TEST(test_narrow_gemms_slower)
{
    /* gpt3-13b (hidden 5120, ffn 20480) on p4d's shipped calibration (128-wide tiles, 9.45 us
     * per GEMM): a 16 x 16 grid gives 320-wide blocks (run as 384: 5/6 efficiency) and the
     * same FLOPs per GPU, so the block's forward takes longer than data parallelism's. */
    cfg x;
    sc_err err;
    p4d_cfg(&x, "gpt3-13b", 0);
    ck_assert_msg(cost_calib_load("configs/calibrations/p4d.24xlarge.json", &x.k, &err) == 0, "%s", err.text);
    ck_assert_double_eq(x.k.gemm_tile.v, 128);
    x.c.gpu.clock_ratio = 1; /* the derivation above is at the datasheet clock (p4d ships 0.93) */
    wl_build(&x.m, &x.tr, &x.w);
    spec_layout l;
    ck_assert_int_eq(spec_layout_parse("axonn:x=16,y=16,z=1", &l, NULL), 0);
    wl buf;
    const wl *lw = layout_kind_localize(&x.w, &l, 256, &buf);
    ck_assert_ptr_eq(lw, &buf);
    const wl_layer *dp = &x.w.layer[1], *ax = &lw->layer[1];
    ck_assert_int_eq(dp->kind, WL_BLOCK);
    double fd = 0, fa = 0, td = 0, ta = 0;
    for (int i = 0; i < dp->n_gemm; i++) {
        if (!strcmp(dp->gemm[i].name, "scores") || !strcmp(dp->gemm[i].name, "context"))
            continue; /* attention is repeated on the x ranks: not the point here */
        fd += 2 * dp->gemm[i].m * dp->gemm[i].n * dp->gemm[i].k;
        fa += 2 * ax->gemm[i].m * ax->gemm[i].n * ax->gemm[i].k;
        td += cost_gemm_time(&x.k, &x.c, &dp->gemm[i], 2);
        ta += cost_gemm_time(&x.k, &x.c, &ax->gemm[i], 2);
    }
    ck_assert_double_eq_tol(fa, fd, 1e-6 * fd); /* same FLOPs per GPU */
    ck_assert_msg(ta > td * 1.1, "axonn %.6g s vs dp %.6g s", ta, td);
}
END_TEST

START_TEST(test_layout_errors)
{
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    const struct {
        const char *s;
        int nodes;
        const char *text;
    } k[] = {
        /* across nodes t must be a multiple of the node's GPUs that divides all of them */
        {"tp:t=4", 1, "tp:t=4: expected t dividing 2 GPUs per node, or a multiple of it dividing the 2 GPUs, got 4"},
        {"tp:t=3", 3, "tp:t=3: expected t dividing 2 GPUs per node, or a multiple of it dividing the 6 GPUs, got 3"},
        {"axonn:x=2,y=2,z=2", 2, "axonn:x=2,y=2,z=2: expected x*y*z = 8 to divide the 4 GPUs"},
        {"axonn:x=1,y=1,z=2,d=4", 2, "axonn:x=1,y=1,z=2,d=4: expected x*y*z*d to equal the 4 GPUs, got 8"},
        {"axonn:x=3,y=1,z=1", 3,
         "axonn:x=3,y=1,z=1: placement xyzd puts 3 ranks in the innermost axes; expected a divisor or multiple of "
         "the 2 GPUs per node"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        spec_layout l;
        sc_err err;
        ck_assert_int_eq(spec_layout_parse(k[i].s, &l, &err), 0);
        ck_assert_int_eq(spec_layout_check(&l, &c, k[i].nodes, &err), SC_EINPUT);
        ck_assert_str_eq(err.text, k[i].text);
    }
    const struct {
        const char *s, *text;
    } p[] = {
        {"tp", "\"tp\" needs its group size, e.g. \"tp:t=8\""},
        {"axonn:x=2,y=2", "in \"axonn:x=2,y=2\": missing z=N (e.g. \"axonn:x=2,y=2,z=2\")"},
        {"axonn:x=2,y=2,z=2,placement=xxyz",
         "in \"axonn:x=2,y=2,z=2,placement=xxyz\": expected placement to order the axes x, y, z, d from inside a node "
         "outwards (a permutation of \"xyzd\", e.g. placement=xyzd), got \"xxyz\""},
        {"tp:t=2,overlap=2", "in \"tp:t=2,overlap=2\": expected overlap=0 or overlap=1, got \"2\""},
        {"tp:t=2,p=2", "in \"tp:t=2,p=2\": unknown option \"p\" (expected t, zero1, overlap)"},
        {"luwu:p=2", "\"luwu\" takes no options, got \"luwu:p=2\""},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        spec_layout l;
        sc_err err;
        ck_assert_int_eq(spec_layout_parse(p[i].s, &l, &err), SC_EINPUT);
        ck_assert_str_eq(err.text, p[i].text);
    }
    /* canonical strings round-trip */
    const char *ok[] = {"tp:t=8", "tp:t=4,zero1=0,overlap=0", "axonn:x=2,y=4,z=1", "axonn:x=2,y=2,z=2,d=4",
                        "axonn:x=2,y=2,z=2,placement=zyxd,overlap=0", "zero3-offload", "luwu"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        spec_layout l;
        char buf[96];
        ck_assert_int_eq(spec_layout_parse(ok[i], &l, NULL), 0);
        ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), ok[i]);
    }
}
END_TEST

Suite *tensor_suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *t = tcase_create("tensor");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_axonn_bytes_per_axis);
    tcase_add_test(t, test_tp_bytes_per_axis);
    tcase_add_test(t, test_tp_across_nodes);
    tcase_add_test(t, test_tp_selective_recompute_comm);
    tcase_add_test(t, test_axonn_selective_recompute_comm);
    tcase_add_test(t, test_tp_reduce_dtype_fp32);
    tcase_add_test(t, test_megatron_sp_selective_recompute_comm);
    tcase_add_test(t, test_degenerate_grid_is_ddp);
    tcase_add_test(t, test_depth_axis_is_zero3);
    tcase_add_test(t, test_overlap_switch);
    tcase_add_test(t, test_placement_nvlink);
    tcase_add_test(t, test_blocking_collectives_no_interference);
    tcase_add_test(t, test_gemm_tile_quantization);
    tcase_add_test(t, test_narrow_gemms_slower);
    tcase_add_test(t, test_layout_errors);
    tcase_add_test(t, test_megatron_zero2_bytes);
    suite_add_tcase(s, t);
    return s;
}

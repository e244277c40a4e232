/* test_cp.c — context parallelism (model/cp.c, megatron:...,cp=C): one rank's workload against
 * hand-derived FLOPs, the ring's bytes and group, the rank order, the checks, and the
 * properties: cp = 1 is today's layout bit for bit, more cp never raises activation memory per
 * GPU, the two engines agree where nothing contends. */
#include "suites.h"
#include "support.h"

#include "../model/analytic.h"
#include "../model/cost.h"
#include "../model/cp.h"
#include "../model/framework.h"
#include "../model/layout.h"
#include "../model/layout_kind.h"
#include "../model/memory.h"
#include "../model/spec.h"
#include "../model/workload.h"
#include "../sim/exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

Suite *cp_suite(void);

static spec_layout parse(const char *s)
{
    spec_layout l;
    sc_err err;
    ck_assert_msg(spec_layout_parse(s, &l, &err) == 0, "%s: %s", s, err.text);
    return l;
}

/* The tiny model (hidden 64, 1 head, 1 kv head, ffn 256 GeLU, seq 16, vocab 128, 2 blocks),
 * micro-batch 1, bf16, no checkpointing, one micro-step. */
static void tiny(spec_model *m, spec_training *tr, wl *w)
{
    *m = test_tiny_model(2);
    spec_training_defaults(tr);
    tr->act_ckpt = 0;
    tr->grad_accum = 1;
    wl_build(m, tr, w);
}

static const lo_item *first_block(const lo_micro *mi, const wl *w, lo_pass pass)
{
    for (int i = 0; i < mi->n_items; i++)
        if (mi->item[i].pass == pass && w->layer[mi->item[i].layer].kind == WL_BLOCK)
            return &mi->item[i];
    return NULL;
}

START_TEST(test_localize_flops)
{
    /* Tiny block forward, T = 16 tokens: qkv 2*16*192*64 = 393216, scores 2*16*16*64 = 32768,
     * context 32768, proj 2*16*64*64 = 131072, fc1 and fc2 2*16*256*64 = 524288 each: 1638400.
     * cp = 2: linear rows 8 (half); scores [8 x 8] x 2 problems = 2*8*8*64*2 = 16384 (half):
     * 819200 in all, the backward twice that. Tokens 8, activations and logits halved. */
    spec_model m;
    spec_training tr;
    wl w, lw, lw1;
    tiny(&m, &tr, &w);
    spec_layout l = parse("megatron:t=1,p=1,cp=2");
    layout_kind_localize(&w, &l, 2, &lw);
    const wl_layer *B = &lw.layer[1], *B0 = &w.layer[1];
    ck_assert_int_eq(B->kind, WL_BLOCK);
    ck_assert_double_eq_tol(B0->fwd_flops, 1638400.0, 1e-6);
    ck_assert_double_eq_tol(B->fwd_flops, 819200.0, 1e-6);
    ck_assert_double_eq_tol(B->bwd_flops, 1638400.0, 1e-6);
    ck_assert_double_eq_tol(lw.tokens, 8.0, 1e-12);
    ck_assert_double_eq_tol(B->act_bytes, B0->act_bytes / 2, 1e-9);
    ck_assert_double_eq_tol(lw.logits_bytes, w.logits_bytes / 2, 1e-9);
    ck_assert(B->params == B0->params); /* weights are whole on every cp rank */
    ck_assert(lw.model_flops == w.model_flops); /* the replica's */
    /* scores: [8 x 8] per problem, 2 problems per head */
    for (int i = 0; i < B->n_gemm; i++)
        if (!strcmp(B->gemm[i].name, "scores")) {
            ck_assert(B->gemm[i].m == 8);
            ck_assert(B->gemm[i].n == 8);
            ck_assert(B->gemm[i].batch == 2);
        }
    /* cp = 1: nothing changes, bit for bit */
    lw1 = w;
    cp_localize(&lw1, 1);
    ck_assert(memcmp(&lw1, &w, sizeof w) == 0);
}
END_TEST

START_TEST(test_core_fraction)
{
    /* causal core 32768 + 32768 FLOPs, halved by the mask: 32768; linear 1572864:
     * 32768 / 1605632 = 0.0204082 (1/49) */
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    ck_assert_double_eq_tol(cp_core_fraction(&w.layer[1]), 1.0 / 49.0, 1e-12);
}
END_TEST

START_TEST(test_ring_bytes_and_groups)
{
    /* megatron:t=2,p=1,cp=2 on 4 duo nodes (8 GPUs): tensor ranks adjacent (x: {0,1}), the cp
     * pair t = 2 apart (y: {0,2}), the gradient group all 4 t-strided ranks (d = dp x cp:
     * {0,2,4,6}). Ring: K and V of the whole sequence for the rank's kv heads (2 heads of 32,
     * one per tensor rank): 2 x 16 tokens x 32 x 2 B = 2048 B per pass; forward 1 pass, backward (K/V and dK/dV) 2. */
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    m.heads = m.kv_heads = 2; /* heads split t = 2 ways; the same FLOPs (head dim 32) */
    wl_build(&m, &tr, &w);
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    spec_layout l = parse("megatron:t=2,p=1,cp=2");
    sc_err err;
    ck_assert_msg(spec_layout_check(&l, &c, 4, &err) == 0, "%s", err.text);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, 4, g);
    int mem[8];
    ck_assert_int_eq(layout_group_members(g, GRP_AX1, 0, mem), 2);
    ck_assert_int_eq(mem[1], 2);
    ck_assert_int_eq(layout_group_members(g, GRP_AX1, 3, mem), 2);
    ck_assert_int_eq(mem[0], 1);
    ck_assert_int_eq(mem[1], 3);
    ck_assert_int_eq(layout_group_members(g, GRP_AX3, 0, mem), 4);
    ck_assert_int_eq(mem[3], 6);
    ck_assert_int_eq(layout_group_members(g, GRP_AX0, 0, mem), 2);
    ck_assert_int_eq(mem[1], 1);
    wl loc;
    layout_kind_localize(&w, &l, 8, &loc);
    const lo_item *f = first_block(&g->last, &loc, LO_FWD), *b = first_block(&g->last, &loc, LO_BWD);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(b);
    const lo_coll *rf = &f->inl[f->n_inline - 1], *rb = &b->inl[b->n_inline - 1];
    ck_assert_int_eq(rf->group, GRP_AX1);
    ck_assert_int_eq(rf->kind, COLL_ALLGATHER);
    ck_assert_double_eq_tol(rf->bytes, 2048.0, 1e-9);
    ck_assert_double_eq_tol(rb->bytes, 4096.0, 1e-9);
    ck_assert_int_eq(rb->chunks, 2);
    /* the forward's overlap: sequence-parallel collectives none (0) + the core's 1/49 share
     * of the t-split block (the split keeps the ratio) */
    ck_assert_double_eq_tol(f->inline_overlap, 1.0 / 49.0, 1e-12);
    free(g);
}
END_TEST

START_TEST(test_cp1_is_today)
{
    /* megatron:t=2,p=2 and megatron:t=2,p=2,cp=1: the same graph, byte for byte */
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    tr.grad_accum = 2;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    spec_layout a = parse("megatron:t=2,p=2"), b = parse("megatron:t=2,p=2,cp=1");
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    lo_graph *ga = calloc(1, sizeof *ga), *gb = calloc(1, sizeof *gb);
    ck_assert_ptr_nonnull(ga);
    ck_assert_ptr_nonnull(gb);
    layout_build(&w, &tr, &a, &c, 2, ga);
    layout_build(&w, &tr, &b, &c, 2, gb);
    ck_assert(memcmp(ga, gb, sizeof *ga) == 0);
    free(ga);
    free(gb);
}
END_TEST

START_TEST(test_more_cp_less_activation)
{
    /* Property: on 2 p4d nodes, llama3-8b at its 8192 tokens, activation memory per GPU never
     * grows with cp, with and without a pipeline, with and without checkpointing */
    static const char *const L[][4] = {
        {"megatron:t=1,p=1", "megatron:t=1,p=1,cp=2", "megatron:t=1,p=1,cp=4", "megatron:t=1,p=1,cp=8"},
        {"megatron:t=2,p=2", "megatron:t=2,p=2,cp=2", "megatron:t=2,p=2,cp=4", NULL},
    };
    spec_cluster c;
    spec_model m;
    sc_err err;
    test_p4d_llama3_8b(&c, &m, NULL);
    for (int ck = 0; ck < 2; ck++)
        for (int r = 0; r < 2; r++) {
            spec_training tr;
            spec_training_defaults(&tr);
            tr.act_ckpt = ck;
            tr.grad_accum = 4;
            wl w;
            wl_build(&m, &tr, &w);
            double prev = INFINITY;
            for (int i = 0; i < 4 && L[r][i]; i++) {
                spec_layout l = parse(L[r][i]);
                ck_assert_msg(spec_layout_check(&l, &c, 2, &err) == 0, "%s", err.text);
                mem_breakdown mb;
                mem_plan(&w, &tr, &l, 16, &c, &mb);
                ck_assert_msg(mb.activations <= prev, "%s: %g > %g", L[r][i], mb.activations, prev);
                ck_assert_msg(mb.activations > 0, "%s", L[r][i]);
                prev = mb.activations;
            }
        }
}
END_TEST

START_TEST(test_engines_agree)
{
    /* megatron:t=1,p=1,cp=2 on one p4d node (NVLink only, default calibration: no overlap
     * slowdown): the simulator and the analytical engine give the same step */
    spec_cluster c;
    spec_model m;
    sc_err err;
    cost_calib k;
    test_p4d_llama3_8b(&c, &m, &k);
    spec_training tr;
    spec_training_defaults(&tr);
    tr.grad_accum = 2;
    wl w;
    wl_build(&m, &tr, &w);
    spec_layout l = parse("megatron:t=1,p=1,cp=2");
    ck_assert_int_eq(spec_layout_check(&l, &c, 1, &err), 0);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, 1, g);
    an_timed t;
    an_result ar;
    exec_result r;
    an_time(g, &w, &k, &c, &t);
    test_engines_run(g, &t, &k, &c, &ar, &r);
    ck_assert_msg(fabs(r.step_s / ar.step_s - 1) < 1e-3, "sim %.9g model %.9g", r.step_s, ar.step_s);
    /* the ring's bytes are in the volume: more than the same layout without cp */
    spec_layout l1 = parse("megatron:t=1,p=1");
    lo_graph *g1 = malloc(sizeof *g1);
    ck_assert_ptr_nonnull(g1);
    layout_build(&w, &tr, &l1, &c, 1, g1);
    double by1[N_GROUPS], by2[N_GROUPS];
    layout_comm_bytes_by_group(g1, by1);
    layout_comm_bytes_by_group(g, by2);
    ck_assert(by1[GRP_AX1] == 0 && by2[GRP_AX1] > 0);
    free(g);
    free(g1);
}
END_TEST

START_TEST(test_checks)
{
    spec_cluster c;
    spec_model m;
    sc_err err;
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &err), 0);
    spec_layout l = parse("megatron:t=2,p=1,cp=3"); /* 6 does not divide 16 */
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "megatron:t=2,p=1,cp=3: expected t*p*cp = 6 to divide the 16 GPUs");
    l = parse("megatron:t=2,p=1,cp=3"); /* 3 nodes: 24 GPUs, a cp group of 6 ranks in 8-GPU nodes */
    ck_assert_int_eq(spec_layout_check(&l, &c, 3, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "megatron:t=2,p=1,cp=3: a context-parallel group spans t*cp = 6 ranks; expected a "
                               "divisor or multiple of the 8 GPUs per node");
    l = parse("megatron:t=8,p=1,cp=2"); /* a cp group of 16 ranks over 2 nodes: fine */
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), 0);
    /* the sequence cut into 2 cp chunks */
    ck_assert_int_eq(spec_load_model("configs/models/llama3-8b.json", &m, &err), 0);
    m.seq_len = 8190;
    l = parse("megatron:t=1,p=1,cp=2");
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "cuts the sequence into 2 x cp = 4 chunks"));
    m.seq_len = 8192;
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), 0);
}
END_TEST

START_TEST(test_zero3_cp)
{
    /* torchtitan's spelling parses to zero3 with cp, prints back; composites with TP / PP are
     * refused by name */
    spec_layout l = parse("fsdp2:dp=4,cp=2");
    char buf[64];
    sc_err err;
    ck_assert_int_eq(l.kind, LAYOUT_ZERO3);
    ck_assert_int_eq(l.cp, 2);
    ck_assert_int_eq(l.dp, 4);
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "fsdp2:dp=4,cp=2");
    l = parse("zero3:cp=2");
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "zero3:cp=2");
    l = parse("zero3");
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "zero3");
    l = parse("fsdp2:dp=4,cp=2,p=2"); /* with pipeline stages (tests/test_fsdp2pp.c) */
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "fsdp2:dp=4,cp=2,t=1,p=2,schedule=1f1b");
    ck_assert_int_eq(spec_layout_parse("fsdp2:cp=2", &l, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"fsdp2:cp=2\": missing dp=D (e.g. \"fsdp2:dp=4,cp=2\")");
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    l = parse("fsdp2:dp=2,cp=2"); /* 4 GPUs on 2 duo nodes */
    ck_assert_int_eq(spec_layout_check(&l, &duo, 1, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "fsdp2:dp=2,cp=2: expected dp x cp = 2 GPUs, got 2 x 2");
    ck_assert_int_eq(spec_layout_check(&l, &duo, 2, &err), 0);
    ck_assert_int_eq(fw_check(FW_DEEPSPEED, &l, &err), SC_EINPUT);
    ck_assert_int_eq(fw_check(FW_FSDP2, &l, &err), 0);

    /* zero3:cp=2 on one duo node: the cp pair {0,1}; ring forward 2 x 8 local tokens x 2 x
     * 64 (the kv width) x 2 B = 4096 B beside the first of the 2 steps: paired with attention's
     * core, 1 of its 2 chunks (no window of the item's own) */
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    l = parse("zero3:cp=2");
    lo_graph *g = malloc(sizeof *g), *g0 = calloc(1, sizeof *g0), *g1 = calloc(1, sizeof *g1);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_nonnull(g0);
    ck_assert_ptr_nonnull(g1);
    layout_build(&w, &tr, &l, &duo, 1, g);
    int mem[4];
    ck_assert_int_eq(layout_group_members(g, GRP_AX1, 1, mem), 2);
    ck_assert_int_eq(mem[0], 0);
    const lo_item *f = first_block(&g->last, &w, LO_FWD);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(f->n_inline, 1);
    ck_assert_double_eq_tol(f->inl[0].bytes, 4096.0, 1e-9);
    ck_assert(f->inline_overlap == 0);
    ck_assert_int_eq(f->n_pair, 1);
    ck_assert_int_eq(f->pair[0].coll, 0);
    ck_assert_int_eq(f->pair[0].role, WL_G_SCORES);
    ck_assert_int_eq(f->pair[0].pass, LO_PAIR_FWD);
    ck_assert_int_eq(f->pair[0].chunks, 2);
    ck_assert_int_eq(f->pair[0].bare, 1);
    /* zero3:cp=1 is zero3, byte for byte */
    spec_layout a = parse("zero3"), b = parse("zero3:cp=1");
    layout_build(&w, &tr, &a, &duo, 1, g0);
    layout_build(&w, &tr, &b, &duo, 1, g1);
    ck_assert(memcmp(g0, g1, sizeof *g0) == 0);
    free(g);
    free(g0);
    free(g1);
}
END_TEST

START_TEST(test_zero3_cp_properties)
{
    /* one p4d node, llama3-8b: activation memory never grows with cp; engines agree */
    spec_cluster c;
    spec_model m;
    sc_err err;
    cost_calib k;
    test_p4d_llama3_8b(&c, &m, &k);
    spec_training tr;
    spec_training_defaults(&tr);
    tr.grad_accum = 2;
    wl w;
    wl_build(&m, &tr, &w);
    static const char *const L[] = {"zero3", "zero3:cp=2", "zero3:cp=4", "zero3:cp=8"};
    double prev = INFINITY;
    for (int i = 0; i < 4; i++) {
        spec_layout l = parse(L[i]);
        ck_assert_int_eq(spec_layout_check(&l, &c, 1, &err), 0);
        mem_breakdown mb;
        mem_plan(&w, &tr, &l, 8, &c, &mb);
        ck_assert_msg(mb.activations <= prev, "%s: %g > %g", L[i], mb.activations, prev);
        prev = mb.activations;
    }
    /* the engines agree with PyTorch's ring in both directions (checkpointing's recompute, the
     * backward's fp32 dK / dV and its tail on the cp stream), K / V as they are and repeated */
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    static const char *const R[] = {"zero3:cp=2", "zero3:cp=8"};
    for (int rep = 0; rep < 2; rep++)
        for (int i = 0; i < 2; i++) {
            tr.repeat_kv = rep;
            wl_build(&m, &tr, &w);
            spec_layout l = parse(R[i]);
            layout_build(&w, &tr, &l, &c, 1, g);
            an_timed t;
            an_result ar;
            exec_result r;
            an_time(g, &w, &k, &c, &t);
            test_engines_run(g, &t, &k, &c, &ar, &r);
            ck_assert_msg(fabs(r.step_s / ar.step_s - 1) < 1e-3, "%s repeat %d: sim %.9g model %.9g", R[i], rep,
                          r.step_s, ar.step_s);
        }
    free(g);
}
END_TEST

/* PyTorch's ring (cp.c torch_ring_item) on the tiny model (hidden 64, 1 head of 64, seq 16),
 * bf16, on duo nodes (2 GPUs each), hand-derived per block copy:
 *   zero3:cp=2 (one node), 8 local tokens: K / V all-gather output S = 2 x 8 x 2 x 64 x 2 B =
 *   4096; dK / dV of the sequence in fp32 D = 2 x 8 x 2 x 64 x 4 = 8192; its last transfer,
 *   D / (cp - 1) = 8192, a tail. Backward without checkpointing: ring S + D = 12288 in cp + 0 = 2
 *   launches, paired with the core (no window of the item's own): K / V beside backward step 0
 *   (share 2, the e-byte elements; 1 of cp chunks), dK / dV beside steps 1..cp-1 (share 4, fp32;
 *   cp - 1 of cp chunks). With checkpointing's recompute: 2 S + D = 16384 in 3, the recompute's
 *   K / V first, beside its step 0 (share 2). Both on stream 2, the cp group's own.
 *   zero3:cp=4 (two nodes), 4 local tokens: S = 2 x 4 x 4 x 64 x 2 = 4096, D = 8192, the tail
 *   8192 / 3 = 2730.67 (one rank's 2 x 4 x 64 x 4 = 2048 B moved by an all-gather of 4 x 2048 / 3). */
START_TEST(test_zero3_cp_backward_ring)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    static const struct {
        const char *layout;
        int nodes, ckpt, chunks;
        double ring, tail;
    } C[] = {
        {"zero3:cp=2", 1, 0, 2, 12288, 8192},
        {"zero3:cp=2", 1, 1, 3, 16384, 8192},
        {"zero3:cp=4", 2, 0, 4, 12288, 8192.0 / 3},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        tr.act_ckpt = C[i].ckpt;
        wl_build(&m, &tr, &w);
        spec_layout l = parse(C[i].layout);
        sc_err err;
        ck_assert_msg(spec_layout_check(&l, &duo, C[i].nodes, &err) == 0, "%s", err.text);
        layout_build(&w, &tr, &l, &duo, C[i].nodes, g);
        const lo_item *b = first_block(&g->last, &w, LO_BWD);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->recompute, C[i].ckpt);
        ck_assert_int_eq(b->n_inline, 2);
        ck_assert_int_eq(b->inl[0].kind, COLL_ALLGATHER);
        ck_assert_int_eq(b->inl[0].group, GRP_AX1);
        ck_assert_double_eq_tol(b->inl[0].bytes, C[i].ring, 1e-9);
        ck_assert_int_eq(b->inl[0].chunks, C[i].chunks);
        ck_assert_double_eq_tol(b->inl[1].bytes, C[i].tail, 1e-9);
        ck_assert_int_eq(b->inline_tail, 2u); /* the second, the last dK / dV transfer */
        ck_assert_int_eq(b->inl[0].stream, 2);
        ck_assert_int_eq(b->inl[1].stream, 2);
        ck_assert(b->inline_overlap == 0);
        const int cp = l.cp, np = 2 + C[i].ckpt;
        static const int pass[3] = {LO_PAIR_REC, LO_PAIR_DGRAD, LO_PAIR_DGRAD}, share[3] = {2, 2, 4};
        ck_assert_int_eq(b->n_pair, np);
        for (int q = 0; q < np; q++) {
            const int r = q + 1 - C[i].ckpt; /* without the recompute: from the backward's K / V */
            const lo_pair *p = &b->pair[q];
            ck_assert_int_eq(p->coll, 0);
            ck_assert_int_eq(p->role, WL_G_SCORES);
            ck_assert_int_eq(p->pass, pass[r]);
            ck_assert_int_eq(p->share, share[r]);
            ck_assert_int_eq(p->chunks, cp);
            ck_assert_int_eq(p->bare, r < 2 ? cp - 1 : 1);
        }
    }
    /* the recompute calls the ring again only where it runs the core again: with fused attention,
     * op checkpointing saves it (op_rec 0) and selective recomputes nothing of it: the ring of no
     * checkpointing (S + D = 12288 in 2, two pairs) beside a recompute; full: 16384 in 3 (above) */
    tr.flash_attention = 1;
    static const int ck[2] = {CKPT_OP, CKPT_SELECTIVE};
    for (int i = 0; i < 2; i++) {
        tr.act_ckpt = ck[i];
        wl_build(&m, &tr, &w);
        spec_layout l = parse("zero3:cp=2");
        layout_build(&w, &tr, &l, &duo, 1, g);
        const lo_item *b = first_block(&g->last, &w, LO_BWD);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(b->recompute, 1);
        ck_assert_double_eq_tol(b->inl[0].bytes, 12288, 1e-9);
        ck_assert_int_eq(b->inl[0].chunks, 2);
        ck_assert_int_eq(b->n_pair, 2);
        ck_assert_int_eq(b->pair[0].pass, LO_PAIR_DGRAD);
    }
    free(g);
}
END_TEST

/* The ring's all-gathers hide behind step 0 of their pass only (cp.c torch_ring_item's pairs with
 * the core, analytic.c pair_hidden), hand-derived: the tiny model (hidden 64, 1 head of 64, seq
 * 16), bf16, full checkpointing, zero3:cp=2 on one duo node (2 GPUs, 2 NVSwitch links each), the
 * tiny roofline calibration (a GEMM 2 m n k / 1e12 s above its bytes at 1e12 B/s, no latency, no
 * interference). A rank's 8 tokens: scores [8 x 8] from k = 64 in 2 problems, 2 x 8 x 8 x 64 x 2
 * = 16384 FLOPs, context the same: the core's forward 3.2768e-8 s, its backward twice that
 * (roof_fwd's rule) 6.5536e-8 s. Step 0 is 1/2 of each: 1.6384e-8 s (forward, recompute),
 * 3.2768e-8 s (backward); the backward's steps 1.. the other 3.2768e-8 s. An all-gather of B on
 * 2 ranks receives B / 2 at 2 x link_Bps. Forward: S = 4096 B. Backward: 2 S + D = 16384 B split
 * 2 : 2 : 4 (test_zero3_cp_backward_ring): 1/4 the recompute's K / V, 1/4 the backward's, 1/2
 * dK / dV. The compute beside them (inl_f x comp) is the sum of min(part, its step(s)):
 *   (a) link_Bps 1e10: forward 2048 / 2e10 = 1.024e-7 s against 1.6384e-8: 1.6384e-8 beside, 8.6016e-8
 *       exposed; backward 8192 / 2e10 = 4.096e-7 s: 1.024e-7 (recompute) against 1.6384e-8,
 *       1.024e-7 against 3.2768e-8, 2.048e-7 against 3.2768e-8: 8.192e-8 beside (the pooled window
 *       before cpdead hid the recompute's behind the whole backward core);
 *   (b) link_Bps 1e12: forward 2048 / 2e12 = 1.024e-9 s, backward 4.096e-9 s (1.024e-9, 1.024e-9, 2.048e-9), each
 *       shorter than its step: all beside, nothing exposed.
 * The engines agree within 1 ns in both. */
START_TEST(test_torch_ring_step0_exposed)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    tr.act_ckpt = 1;
    wl_build(&m, &tr, &w);
    cost_calib k = test_tiny_calib();
    static const struct {
        double link, fwd_in, fwd_beside, bwd_in, bwd_beside;
    } C[] = {
        {1e10, 1.024e-7, 1.6384e-8, 4.096e-7, 8.192e-8},
        {1e12, 1.024e-9, 1.024e-9, 4.096e-9, 4.096e-9},
    };
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        spec_cluster duo = test_duo_cluster("duo", C[i].link, 1e10);
        spec_layout l = parse("zero3:cp=2");
        layout_build(&w, &tr, &l, &duo, 1, g);
        an_timed t;
        an_time(g, &w, &k, &duo, &t);
        const lo_item *f = first_block(&g->last, &w, LO_FWD), *b = first_block(&g->last, &w, LO_BWD);
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(b);
        const wl_layer *B = &g->lw[f->layer];
        ck_assert_double_eq_tol(cost_layer_core_time(&k, &duo, B, 0, 2), 3.2768e-8, 1e-9 * 3.2768e-8);
        ck_assert_double_eq_tol(cost_layer_core_time(&k, &duo, B, 1, 2), 6.5536e-8, 1e-9 * 6.5536e-8);
        const an_titem *of = &t.last[f - g->last.item], *ob = &t.last[b - g->last.item];
        ck_assert(of->overlap_s == 0 && ob->overlap_s == 0);
        ck_assert_double_eq_tol(of->in[0], C[i].fwd_in, 1e-9 * C[i].fwd_in);
        ck_assert_double_eq_tol(of->inl_f * of->comp, C[i].fwd_beside, 1e-9 * C[i].fwd_beside);
        ck_assert_double_eq_tol(ob->in[0], C[i].bwd_in, 1e-9 * C[i].bwd_in);
        ck_assert_double_eq_tol(ob->inl_f * ob->comp, C[i].bwd_beside, 1e-9 * C[i].bwd_beside);
        an_result ar;
        exec_result r;
        test_engines_run(g, &t, &k, &duo, &ar, &r);
        ck_assert_msg(fabs(r.step_s - ar.step_s) < 1e-9, "link %g: sim %.12g model %.12g", C[i].link, r.step_s,
                      ar.step_s); /* within 1 ns (0.08 ns apart in (a)) */
    }
    free(g);
}
END_TEST

/* The width of the K / V PyTorch's ring moves is what SDPA gets: the tiny model with 2 heads of
 * 32 and 1 KV head, zero3:cp=2 on one duo node, forward: kv 1 x 32 as it is (S = 2 x 8 x 2 x
 * 32 x 2 = 2048 B), 2 x 32 when repeat_kv expands it (torchtitan): 4096 B. Megatron's P2P ring
 * (Transformer Engine, GQA K / V unexpanded) keeps kv_heads' 2048 either way. */
START_TEST(test_torch_ring_repeat_kv_width)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    m.heads = 2;
    m.kv_heads = 1;
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    for (int rep = 0; rep < 2; rep++) {
        tr.repeat_kv = rep;
        wl_build(&m, &tr, &w);
        ck_assert_int_eq(w.kv_repeat, rep);
        spec_layout l = parse("zero3:cp=2");
        layout_build(&w, &tr, &l, &duo, 1, g);
        const lo_item *f = first_block(&g->last, &w, LO_FWD);
        ck_assert_ptr_nonnull(f);
        ck_assert_double_eq_tol(f->inl[f->n_inline - 1].bytes, rep ? 4096.0 : 2048.0, 1e-9);
        l = parse("megatron:t=1,p=1,cp=2");
        layout_build(&w, &tr, &l, &duo, 1, g);
        wl loc;
        layout_kind_localize(&w, &l, 2, &loc);
        f = first_block(&g->last, &loc, LO_FWD);
        ck_assert_ptr_nonnull(f);
        ck_assert_double_eq_tol(f->inl[f->n_inline - 1].bytes, 2048.0, 1e-9);
    }
    free(g);
}
END_TEST

START_TEST(test_torch_ring_bytes)
{
    /* cp.c cp_torch_ring_*_bytes by hand, T = 8 tokens, q = kv = 64, e = 2, cp = 2 (n = 1):
     * forward: casts (2 + 4) at step 0, 0.75 x 6 at step 1 (half the steps from 1 on run half
     * the queries), the merge's 28 B on average, the cast back 6: 8 x 64 x (6 + 4.5 + 28 + 6)
     * = 22784, plus the K / V cat of step 0: 1 x 4 x 2 x 8 x 64 = 4096 -> 26880.
     * backward: add = 4 + 2 + 4 = 10, partial = 10 / 2 + 8 = 13, average 11.5; dQ: zeros 4 +
     * step 0 10 + 11.5 + cast 6 = 31.5 per element; dK, dV each 4 + 10 + 11.5 + cat 8 + cast 6
     * = 39.5, and the step-1 cats 2 x 8: 2 x 39.5 + 16 = 95; K / V cat 4096:
     * 512 x 31.5 + 512 x 95 + 4096 = 16128 + 48640 + 4096 = 68864.
     * Each direction also copies K and V once (contiguous(): read + write 2 B each): 4 x 2 x 8 x
     * 64 = 4096 -> 30976 and 72960. */
    ck_assert_double_eq_tol(cp_torch_ring_fwd_bytes(8, 64, 64, 2, 2), 30976, 1e-9);
    ck_assert_double_eq_tol(cp_torch_ring_bwd_bytes(8, 64, 64, 2, 2), 72960, 1e-9);
    ck_assert_double_eq(cp_torch_ring_fwd_bytes(8, 64, 64, 2, 1), 0);
    ck_assert_double_eq(cp_torch_ring_bwd_bytes(8, 64, 64, 2, 1), 0);
    /* per local token, more steps never cost less */
    for (int c = 2; c < 16; c *= 2) {
        ck_assert(cp_torch_ring_fwd_bytes(8, 64, 16, 2, 2 * c) > cp_torch_ring_fwd_bytes(8, 64, 16, 2, c));
        ck_assert(cp_torch_ring_bwd_bytes(8, 64, 16, 2, 2 * c) > cp_torch_ring_bwd_bytes(8, 64, 16, 2, c));
    }

    /* on the tiny model's fused blocks (one head: q = kv = 64) after cp_localize(2), 8 local
     * tokens: exactly those bytes added, 6 launches per step each way and the 2 copies; cp = 1 and unfused
     * attention untouched, bit for bit */
    spec_model m;
    spec_training tr;
    wl w, w0;
    tiny(&m, &tr, &w);
    tr.flash_attention = 1;
    wl_build(&m, &tr, &w);
    w0 = w;
    cp_torch_ring(&w, 1);
    ck_assert(memcmp(&w, &w0, sizeof w) == 0);
    cp_localize(&w, 2);
    w0 = w;
    cp_torch_ring(&w, 2);
    for (int i = 0; i < w.n_layers; i++) {
        const wl_layer *L = &w.layer[i], *L0 = &w0.layer[i];
        double df = L->kind == WL_BLOCK ? 30976 : 0, db = L->kind == WL_BLOCK ? 72960 : 0;
        ck_assert_double_eq_tol(L->ew_fwd_bytes - L0->ew_fwd_bytes, df, 1e-6);
        ck_assert_double_eq_tol(L->ew_bwd_bytes - L0->ew_bwd_bytes, db, 1e-6);
        ck_assert_int_eq(L->ew_fwd_kernels - L0->ew_fwd_kernels, L->kind == WL_BLOCK ? 14 : 0);
    }
    tr.flash_attention = 0;
    wl_build(&m, &tr, &w);
    cp_localize(&w, 2);
    w0 = w;
    cp_torch_ring(&w, 2);
    ck_assert(memcmp(&w, &w0, sizeof w) == 0);

    /* GQA (llama3-8b: 32 heads, 8 KV heads of 128): the ring handles K / V at the width SDPA
     * gets them, 1024 as they are, 4096 when repeat_kv expands them (torchtitan) */
    sc_err err;
    ck_assert_int_eq(spec_load_model("configs/models/llama3-8b.json", &m, &err), 0);
    spec_training_defaults(&tr);
    tr.flash_attention = 1;
    for (int rep = 0; rep < 2; rep++) {
        tr.repeat_kv = rep;
        wl_build(&m, &tr, &w);
        ck_assert_int_eq(w.kv_repeat, rep);
        cp_localize(&w, 4);
        w0 = w;
        cp_torch_ring(&w, 4);
        const wl_layer *L = &w.layer[1], *L0 = &w0.layer[1];
        ck_assert_int_eq(L->kind, WL_BLOCK);
        double T = w.tokens, kv = rep ? 4096 : 1024;
        ck_assert_double_eq_tol(L->ew_fwd_bytes - L0->ew_fwd_bytes, cp_torch_ring_fwd_bytes(T, 4096, kv, 2, 4),
                                1e-3);
        ck_assert_double_eq_tol(L->ew_bwd_bytes - L0->ew_bwd_bytes, cp_torch_ring_bwd_bytes(T, 4096, kv, 2, 4),
                                1e-3);
    }
}
END_TEST

START_TEST(test_optimizer_group_dp_x_cp)
{
    /* Megatron-Core's distributed optimizer shards over the data-parallel group with cp: on 8
     * duo GPUs megatron:t=1,p=2,cp=2 has dp 2 x cp 2 = 4 ranks per stage, as megatron:t=1,p=2
     * has dp 4: the same stage parameters over the same 4 ranks, so the same optimizer bytes,
     * and the pipeline's gradient group (pipe.dp) is 4 in both (a regression of the merge with
     * the one-replica formula, which gave N / (t p cp) = 2) */
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    tr.grad_accum = 2;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    spec_layout a = parse("megatron:t=1,p=2"), b = parse("megatron:t=1,p=2,cp=2");
    sc_err err;
    ck_assert_msg(spec_layout_check(&b, &c, 4, &err) == 0, "%s", err.text);
    mem_breakdown ma, mb;
    mem_plan(&w, &tr, &a, 8, &c, &ma);
    mem_plan(&w, &tr, &b, 8, &c, &mb);
    ck_assert_double_eq_tol(mb.optim, ma.optim, 1e-9 * ma.optim);
    ck_assert(mb.activations < ma.activations);
    lo_graph *g = calloc(1, sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &b, &c, 4, g);
    ck_assert_int_eq(g->pipe.dp, 4);
    ck_assert_int_eq(g->ax_size[3], 4);
    free(g);
}
END_TEST

START_TEST(test_fused_ce_head_grad_kept)
{
    /* Liger's fused loss (wl_logits_bytes) on the tiny model, e = 2, T = 16, V = 128, h = 64:
     * chunk rows next_pow2(ceil(16 / ceil(128 / 64))) = 8: 8*128*6 + 16*64*2 + 128*64*2 + 4*16
     * = 6144 + 2048 + 16384 + 64 = 24640. cp = 2, T = 8: chunk 4: 3072 + 1024 + 16384 + 32 =
     * 20512 (the head gradient [V, h], 16384, stays whole; halving all of it gave 12320). The
     * unfused fp32 logits 4*16*128 = 8192 halve to 4096. */
    spec_model m;
    spec_training tr;
    wl w;
    tiny(&m, &tr, &w);
    tr.fused_linear_ce = 1;
    wl_build(&m, &tr, &w);
    ck_assert_double_eq(w.logits_bytes, 24640);
    cp_localize(&w, 2);
    ck_assert_double_eq(w.logits_bytes, 20512);
    tr.fused_linear_ce = 0;
    wl_build(&m, &tr, &w);
    ck_assert_double_eq(w.logits_bytes, 8192);
    cp_localize(&w, 2);
    ck_assert_double_eq(w.logits_bytes, 4096);
}
END_TEST

START_TEST(test_autocast_casts_per_param)
{
    /* autocast's weight casts are 6 B per block parameter each pass (workload.c amp_core),
     * whatever the tokens: with FlashAttention (no s x s part) the flag adds exactly 6 P to a
     * block's ew bytes. Under cp = 2 every rank casts the same weights: still 6 P (halving them
     * with the tokens gave 3 P); under megatron t = 2 without sp a rank casts its half: 3 P. */
    spec_model m;
    spec_training tr;
    wl off, on, a, b;
    tiny(&m, &tr, &off);
    tr.flash_attention = 1;
    tr.execution = EXEC_EAGER;
    tr.precision = PREC_BF16;
    wl_build(&m, &tr, &off);
    tr.autocast = 1;
    wl_build(&m, &tr, &on);
    const int k = 1; /* embed, block, head */
    ck_assert_int_eq(on.layer[k].kind, WL_BLOCK);
    const double P = on.layer[k].params;
    ck_assert_double_eq_tol(on.layer[k].ew_fwd_bytes - off.layer[k].ew_fwd_bytes, 6 * P, 1e-6);
    a = off, b = on;
    cp_localize(&a, 2);
    cp_localize(&b, 2);
    ck_assert_double_eq_tol(b.layer[k].ew_fwd_bytes - a.layer[k].ew_fwd_bytes, 6 * P, 1e-6);
    ck_assert_double_eq_tol(b.layer[k].ew_bwd_bytes - a.layer[k].ew_bwd_bytes, 6 * P, 1e-6);
    spec_layout l = parse("megatron:t=2,p=1,sp=0");
    wl_localize_megatron(&off, &l, &a);
    wl_localize_megatron(&on, &l, &b);
    ck_assert_double_eq_tol(b.layer[k].ew_fwd_bytes - a.layer[k].ew_fwd_bytes, 3 * P, 1e-6);
}
END_TEST

START_TEST(test_fp8_weight_copy_per_param)
{
    /* torchao FP8 (fsdp2, workload.c fp8_casts) on the tiny model, h = 64, kv = 64, f = 256
     * GeLU, T = 16: backward casts 7 B of every linear input (qkv h + proj h + fc1 h + fc2 f =
     * 448) and output gradient (qkv 3h + proj h + fc1 f + fc2 h = 576) per token,
     * 7 x 1024 x 16 = 114688, plus the weight copy 2 B per weight (3h^2 + h^2 + hf + fh =
     * 49152): 98304; 212992 in all. Under cp = 2 the per-token part halves (57344) and every
     * rank copies the same weights: 155648 (halving all of it gave 106496). */
    spec_model m;
    spec_training tr;
    wl w16, w8;
    tiny(&m, &tr, &w16);
    tr.framework = FW_FSDP2;
    tr.precision = PREC_BF16;
    wl_build(&m, &tr, &w16);
    tr.precision = PREC_FP8;
    wl_build(&m, &tr, &w8);
    const int k = 1; /* embed, block, head */
    ck_assert_int_eq(w8.layer[k].kind, WL_BLOCK);
    ck_assert_double_eq_tol(w8.layer[k].ew_bwd_bytes - w16.layer[k].ew_bwd_bytes, 212992, 1e-6);
    cp_localize(&w16, 2);
    cp_localize(&w8, 2);
    ck_assert_double_eq_tol(w8.layer[k].ew_bwd_bytes - w16.layer[k].ew_bwd_bytes, 155648, 1e-6);
}
END_TEST

/* The ring's memory (cp.c cp_*_ring_peak_bytes), hand-derived on the tiny model (hidden 64, one
 * head of 64, one kv head: q = kv = 64 wide, hq = 1), bf16 (e = 2):
 *   PyTorch's, zero3:cp=2 (one duo node), T = 8 local tokens: gathered K / V 2 x 2 x 8 x 64 x 2
 *   = 4096; forward + fp32 out and lse 4 x 8 x (64 + 1) = 2080: 6176; backward + fp32 dQ
 *   4 x 8 x 64 = 2048 + fp32 dK / dV sent and received 2 x 2 x 8 x 64 x 4 = 8192: 14336, the
 *   larger.
 *   Transformer Engine's, cp = 2, T = 8: forward p2p_comm_buffers 2 x 2 x 8 x 64 x 2 = 4096 +
 *   out_per_step 2 x 2 x 8 x 64 = 2048 + lse (2 + 1) x 4 x 8 = 96: 6240; backward the step's
 *   dq_ 2 x 8 x 64 = 1024 and dkv_ 2 x 8 x 64 x 2 = 2048 + three (kv) halves of the two (2, kv)
 *   buffers 3 x 2048 = 6144: 9216, the larger. cp = 4, T = 4: forward 2 x 4 x 4 x 64 x 2 = 4096
 *   + 4 x 2 x 4 x 64 = 2048 + 5 x 4 x 4 = 80: 6224; backward 512 + 8 x 4 x 64 x 2 = 4608: 6224,
 *   the forward. cp = 1: nothing. */
START_TEST(test_ring_memory_hand)
{
    ck_assert_double_eq_tol(cp_torch_ring_peak_bytes(8, 64, 64, 1, 2, 2), 14336.0, 1e-9);
    ck_assert_double_eq_tol(cp_te_ring_peak_bytes(8, 64, 64, 1, 2, 2), 9216.0, 1e-9);
    ck_assert_double_eq_tol(cp_te_ring_peak_bytes(4, 64, 64, 1, 2, 4), 6224.0, 1e-9);
    ck_assert(cp_torch_ring_peak_bytes(8, 64, 64, 1, 2, 1) == 0);
    ck_assert(cp_te_ring_peak_bytes(8, 64, 64, 1, 2, 1) == 0);
    /* the plans take it once, beside the per-block bytes: the tiny model without checkpointing
     * keeps every block's whole stash and the head's input, plus the larger of the loss's peak
     * (the default loss: the fp32 logits, 4 x 8 x 128 = 4096 B a rank) and the ring, which are
     * not live at once (memory.c): the ring */
    spec_model m;
    spec_training tr;
    wl w, lw;
    tiny(&m, &tr, &w);
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    static const char *const L[] = {"zero3:cp=2", "megatron:t=1,p=1,cp=2"};
    static const double ring[] = {14336.0, 9216.0};
    for (int i = 0; i < 2; i++) {
        spec_layout l = parse(L[i]);
        const wl *p = layout_kind_localize(&w, &l, 2, &lw);
        ck_assert_double_eq_tol(cp_ring_mem_bytes(p, &l), ring[i], 1e-9);
        double kept = 0;
        ck_assert_double_eq_tol(p->logits_bytes, 4096.0, 1e-9);
        for (int j = 0; j < p->n_layers; j++)
            kept += p->layer[j].kind == WL_BLOCK ? p->layer[j].count * mem_block_kept(&p->layer[j], 0)
                    : p->layer[j].kind == WL_HEAD ? p->layer[j].act_bytes : 0;
        mem_breakdown mb;
        mem_plan(&w, &tr, &l, 2, &duo, &mb);
        ck_assert_double_eq_tol(mb.activations, kept + ring[i], 1e-6);
    }
}
END_TEST

/* Property: at a fixed local length (the sequence 8192 x cp, as torchtitan's CP rows grow it),
 * llama3-8b on one p4d node: the ring's bytes grow with cp's gathered length, both rings,
 * repeated K / V or not, and the plan's activations never shrink (the ring sits beside the
 * block's recompute, in the larger-of with the loss's peak: memory.c; here the 4.2 GB of fp32
 * logits stay the larger); cp = 1 plans byte for byte as the layout without cp, the ring
 * adding nothing. */
START_TEST(test_ring_memory_grows_with_cp)
{
    spec_cluster c;
    spec_model m;
    sc_err err;
    test_p4d_llama3_8b(&c, &m, NULL);
    static const char *const L[][4] = {
        {"zero3:cp=1", "zero3:cp=2", "zero3:cp=4", "zero3:cp=8"},
        {"megatron:t=1,p=1,cp=1", "megatron:t=1,p=1,cp=2", "megatron:t=1,p=1,cp=4", "megatron:t=1,p=1,cp=8"},
    };
    static const char *const base[] = {"zero3", "megatron:t=1,p=1"};
    const int seq0 = m.seq_len;
    for (int rep = 0; rep < 2; rep++)
        for (int r = 0; r < 2; r++) {
            double prev_ring = 0, prev_act = 0;
            for (int i = 0; i < 4; i++) {
                spec_training tr;
                spec_training_defaults(&tr);
                tr.repeat_kv = rep;
                tr.grad_accum = 1;
                m.seq_len = seq0 << i;
                wl w, lw;
                wl_build(&m, &tr, &w);
                spec_layout l = parse(L[r][i]);
                ck_assert_msg(spec_layout_check(&l, &c, 1, &err) == 0, "%s", err.text);
                const double ringb = cp_ring_mem_bytes(layout_kind_localize(&w, &l, 8, &lw), &l);
                mem_breakdown mb, m0;
                memset(&mb, 0, sizeof mb);
                memset(&m0, 0, sizeof m0);
                mem_plan(&w, &tr, &l, 8, &c, &mb);
                if (i == 0) {
                    spec_layout b = parse(base[r]);
                    mem_plan(&w, &tr, &b, 8, &c, &m0);
                    ck_assert(ringb == 0);
                    ck_assert(memcmp(&mb, &m0, sizeof mb) == 0);
                } else {
                    ck_assert_msg(ringb > prev_ring, "%s repeat %d: %g <= %g", L[r][i], rep, ringb, prev_ring);
                    ck_assert_msg(mb.activations >= prev_act, "%s repeat %d: %g < %g", L[r][i], rep, mb.activations,
                                  prev_act);
                }
                prev_ring = ringb;
                prev_act = mb.activations;
            }
        }
    m.seq_len = seq0;
}
END_TEST

Suite *cp_suite(void)
{
    Suite *s = suite_create("cp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_localize_flops);
    tcase_add_test(tc, test_core_fraction);
    tcase_add_test(tc, test_ring_bytes_and_groups);
    tcase_add_test(tc, test_cp1_is_today);
    tcase_add_test(tc, test_fp8_weight_copy_per_param);
    tcase_add_test(tc, test_more_cp_less_activation);
    tcase_add_test(tc, test_engines_agree);
    tcase_add_test(tc, test_checks);
    tcase_add_test(tc, test_zero3_cp);
    tcase_add_test(tc, test_zero3_cp_properties);
    tcase_add_test(tc, test_torch_ring_bytes);
    tcase_add_test(tc, test_zero3_cp_backward_ring);
    tcase_add_test(tc, test_torch_ring_repeat_kv_width);
    tcase_add_test(tc, test_optimizer_group_dp_x_cp);
    tcase_add_test(tc, test_fused_ce_head_grad_kept);
    tcase_add_test(tc, test_autocast_casts_per_param);
    tcase_add_test(tc, test_ring_memory_hand);
    tcase_add_test(tc, test_ring_memory_grows_with_cp);
    tcase_add_test(tc, test_torch_ring_step0_exposed);
    suite_add_tcase(s, tc);
    return s;
}

/* test_pipe.c — Megatron-LM 3D (megatron:t=T,p=P[,vp=V]; model/layout_pipe.c,
 * model/analytic_pipe.c, model/memory_pipe.c, model/workload_megatron.c, sim/pipe.c): layout
 * strings, the schedules' bubble against the closed form, micro-batches in flight, sequence
 * parallelism's activation bytes against Korthikanti et al. 2022 Table 2, pp = 1 against tp,
 * and the two engines against each other where nothing contends. */
#include "suites.h"
#include "support.h"

#include "../model/analytic.h"
#include "../model/analytic_pipe.h"
#include "../model/cost.h"
#include "../model/layout.h"
#include "../model/layout_kind.h"
#include "../model/memory.h"
#include "../model/spec.h"
#include "../model/workload.h"
#include "../sim/exec.h"
#include "../traces/read.h"
#include "../traces/schema.h"
#include "../traces/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Suite *pipe_suite(void);

static spec_layout parse(const char *s)
{
    spec_layout l;
    sc_err err;
    ck_assert_msg(spec_layout_parse(s, &l, &err) == 0, "%s: %s", s, err.text);
    return l;
}

START_TEST(test_parse)
{
    spec_layout l = parse("megatron:t=8,p=8,vp=12");
    ck_assert_int_eq(l.kind, LAYOUT_MEGATRON);
    ck_assert_int_eq(l.t, 8);
    ck_assert_int_eq(l.pp, 8);
    ck_assert_int_eq(l.vp, 12);
    ck_assert_int_eq(l.sp, 1);    /* Megatron-LM recipes run sequence parallelism with TP */
    ck_assert_int_eq(l.zero1, 1); /* distributed optimizer */
    ck_assert_int_eq(l.sched, PIPE_1F1B);
    char buf[96];
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "megatron:t=8,p=8,vp=12");
    l = parse("megatron:t=2,p=4,sp=0,zero1=0,sched=gpipe");
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "megatron:t=2,p=4,sp=0,zero1=0,sched=gpipe");

    sc_err err;
    spec_layout bad;
    ck_assert_int_eq(spec_layout_parse("megatron:t=8", &bad, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"megatron:t=8\": missing p=P (e.g. \"megatron:t=8,p=4\")");
    ck_assert_int_eq(spec_layout_parse("megatron:t=8,p=2,sched=zb", &bad, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"megatron:t=8,p=2,sched=zb\": expected sched=1f1b or sched=gpipe, got \"zb\"");

    /* context parallelism (model/cp.h, tests/test_cp.c): t x p x cp = 8 GPUs on 4 duo nodes
     * pass; on 2 nodes (4 GPUs) they do not divide */
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    l = parse("megatron:t=2,p=2,cp=2");
    ck_assert_int_eq(l.cp, 2);
    ck_assert_int_eq(spec_layout_check(&l, &c, 4, &err), 0);
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "megatron:t=2,p=2,cp=2: expected t*p*cp = 8 to divide the 4 GPUs");
    l = parse("megatron:t=2,p=2,vp=2,sched=gpipe");
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    l = parse("megatron:t=2,p=3");
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT); /* 6 does not divide 4 GPUs */
    l = parse("megatron:t=2,p=2");
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), 0);
}
END_TEST

/* Uniform stages: forward F and backward B per micro-batch and stage, no sends, no boundary. */
static double run(int p, int v, int m, spec_pipe_sched sched, double F, double B, double X, an_result *r)
{
    an_pipe_timed *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->pipe = (lo_pipe){.p = p, .v = v, .m = m, .sched = sched, .n_vstages = p * v};
    for (int k = 0; k < p * v; k++) {
        t->fwd[k].dur = t->fwd[k].busy = F / v;
        t->bwd[k].dur = t->bwd[k].busy = B / v;
    }
    t->p2p_s = X;
    memset(r, 0, sizeof *r);
    ck_assert_int_eq(an_pipe_run(t, r), 0);
    free(t);
    return r->step_s;
}

/* The step of t by the closed form (an_pipe_run), checked equal to the walk; frees t. */
static double run_checked(an_pipe_timed *t)
{
    an_result r, w;
    ck_assert_int_eq(an_pipe_run(t, &r), 0);
    ck_assert_int_eq(an_pipe_walk(t, &w), 0);
    ck_assert_double_eq_tol(r.step_s, w.step_s, 1e-12 * w.step_s);
    free(t);
    return r.step_s;
}

/* run() with blocking sends: each op that sends on holds its stage for `hold` after it. */
static double run_hold(int p, int m, double F, double B, double X, double hold)
{
    an_pipe_timed *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->pipe = (lo_pipe){.p = p, .v = 1, .m = m, .sched = PIPE_1F1B, .n_vstages = p};
    for (int k = 0; k < p; k++) {
        t->fwd[k].dur = t->fwd[k].busy = F;
        t->bwd[k].dur = t->bwd[k].busy = B;
    }
    t->p2p_s = X;
    t->p2p_hold_s = hold;
    return run_checked(t);
}

START_TEST(test_blocking_sends_hand)
{
    /* 1F1B, p = 2, m = 4, F = 1, B = 2, sends X = 0.1. Orders: stage 0 F0 F1 B0 F2 B1 F3 B2 B3,
     * stage 1 F0 B0 F1 B1 F2 B2 F3 B3. Overlapped sends (hold 0): S0 F0 0-1, F1 1-2; S1 F0
     * 1.1-2.1, B0 2.1-4.1; S0 B0 4.2-6.2; S1 F1 4.1-5.1, B1 5.1-7.1; S0 F2 6.2-7.2, B1
     * 7.2-9.2; S1 F2 7.3-8.3, B2 8.3-10.3; S0 F3 9.2-10.2, B2 10.4-12.4; S1 F3 10.3-11.3, B3
     * 11.3-13.3; S0 B3 13.4-15.4: step 15.4.
     * Blocking (Megatron's wait + synchronize), hold H = X + sync = 0.15 after every op that
     * sends on (stage 0's forwards, stage 1's backwards): S0 F0 0-1 (free 1.15), F1 1.15-2.15
     * (free 2.30); S1 F0 1.1-2.1, B0 2.1-4.1 (free 4.25); S0 B0 4.2-6.2; S1 F1 4.25-5.25, B1
     * 5.25-7.25 (free 7.40); S0 F2 6.2-7.2 (free 7.35), B1 7.35-9.35; S1 F2 7.40-8.40, B2
     * 8.40-10.40 (free 10.55); S0 F3 9.35-10.35 (free 10.50), B2 10.50-12.50; S1 F3
     * 10.55-11.55, B3 11.55-13.55; S0 B3 13.65-15.65: step 15.65. */
    ck_assert_double_eq_tol(run_hold(2, 4, 1, 2, 0.1, 0), 15.4, 1e-12);
    ck_assert_double_eq_tol(run_hold(2, 4, 1, 2, 0.1, 0.15), 15.65, 1e-12);
    /* the closed form (past its probes) still equals the walk with holds: run_hold checks */
    run_hold(4, 200, 1, 2, 0.1, 0.15);
}
END_TEST

/* Interleaved p = 2, v = 2, m = 2 with per-virtual-stage times: forwards F = 1 on every
 * virtual stage, backwards 2 on stage 0's (k 0, 2) and 4 on stage 1's (k 1, 3), sends X = 1,
 * hold H (p2p_hold_s), hold_edges `edges`. Walk and closed form agree. */
static double run_edges(double H, int edges)
{
    an_pipe_timed *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->pipe = (lo_pipe){.p = 2, .v = 2, .m = 2, .sched = PIPE_1F1B, .n_vstages = 4};
    for (int k = 0; k < 4; k++) {
        t->fwd[k].dur = t->fwd[k].busy = 1;
        t->bwd[k].dur = t->bwd[k].busy = k % 2 ? 4 : 2;
    }
    t->p2p_s = 1;
    t->p2p_hold_s = H;
    t->hold_edges = edges;
    return run_checked(t);
}

START_TEST(test_edge_holds_hand)
{
    /* Orders (layout_pipe_order, groups of p = 2): stage 0 (warm-up min(2 + 2, 4) = 4: every
     * forward first) F(0,k0) F(1,k0) F(0,k2) F(1,k2) B(0,k2) B(1,k2) B(0,k0) B(1,k0); stage 1
     * (warm-up 2) F(0,k1) F(1,k1) F(0,k3) B(0,k3) F(1,k3) B(1,k3) B(0,k1) B(1,k1).
     * Overlapped (H = 0): S0 F(0,k0) 0-1, F(1,k0) 1-2; S1 F(0,k1) 2-3, F(1,k1) 3-4; S0 F(0,k2)
     * 4-5, F(1,k2) 5-6; S1 F(0,k3) 6-7, B(0,k3) 7-11, F(1,k3) 11-12, B(1,k3) 12-16; S0 B(0,k2)
     * 12-14, B(1,k2) 17-19; S1 B(0,k1) 16-20, B(1,k1) 20-24; S0 B(0,k0) 21-23, B(1,k0) 25-27:
     * step 27.
     * Edge holds (H = 1 after stage 0's ops 0-3 (n < 4) and any n >= 8 - 4 - 1 = 3, i.e. every
     * op; stage 1's n < 2 and n >= 8 - 2 - 1 = 5, where the op sends: not B(.,k0) nor F(.,k3)):
     * S0 F(0,k0) 0-1 (free 2), F(1,k0) 2-3 (free 4); S1 F(0,k1) 2-3 (free 4), F(1,k1) 4-5 (free
     * 6); S0 F(0,k2) 4-5 (free 6), F(1,k2) 6-7 (free 8); S1 F(0,k3) 6-7, B(0,k3) 7-11, F(1,k3)
     * 11-12, B(1,k3) 12-16 (free 17); S0 B(0,k2) 12-14 (free 15), B(1,k2) 17-19 (free 20); S1
     * B(0,k1) 17-21 (free 22), B(1,k1) 22-26; S0 B(0,k0) 22-24, B(1,k0) 27-29: step 29.
     * Holding after every op that sends (Megatron-LM v2.x) adds stage 1's n = 3 (B(0,k3)): its
     * B(1,k1) ends 27, not 26, and the step is 30. */
    ck_assert_double_eq_tol(run_edges(0, 1), 27, 1e-12);
    ck_assert_double_eq_tol(run_edges(1, 1), 29, 1e-12);
    ck_assert_double_eq_tol(run_edges(1, 0), 30, 1e-12);
}
END_TEST

/* How many ops of a stage hold its stream (an_pipe_op_holds, hold_edges): its w warm-up forwards
 * (w = min((p - s - 1) 2 + (v - 1) p, m v), Megatron-Core schedules.py L549-551 at core_v0.7.0),
 * the last steady backward and the w cool-down backwards: 2 w + 1 of the 2 m v, or all 2 m v when
 * every forward is in the warm-up (w = m v). E.g. p = 8, v = 12, m = 64: stage 0 w = 14 + 88 =
 * 102, 205 of 1536; stage 7 w = 88, 177. v = 6: stage 0 w = 14 + 40 = 54, 109 of 768. */
START_TEST(test_edge_hold_count)
{
    an_pipe_timed *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->p2p_hold_s = 1;
    t->hold_edges = 1;
    static const int cases[][5] = {/* p, v, m, s, holds */
                                   {8, 12, 64, 0, 205}, {8, 12, 64, 7, 177}, {8, 6, 64, 0, 109},
                                   {4, 2, 8, 1, 2 * (4 + 4) + 1}, {2, 2, 2, 0, 8}, {2, 2, 2, 1, 5}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        lo_pipe pp = {.p = cases[c][0], .v = cases[c][1], .m = cases[c][2], .sched = PIPE_1F1B};
        pp.n_vstages = pp.p * pp.v;
        int n = 0;
        for (int i = 0; i < 2 * pp.m * pp.v; i++)
            n += an_pipe_op_holds(t, &pp, cases[c][3], i);
        ck_assert_msg(n == cases[c][4], "p %d v %d m %d stage %d: %d holds, expected %d", pp.p, pp.v, pp.m,
                      cases[c][3], n, cases[c][4]);
    }
    t->hold_edges = 0; /* blocking frameworks: every op */
    lo_pipe pp = {.p = 4, .v = 2, .m = 8, .sched = PIPE_1F1B, .n_vstages = 8};
    for (int i = 0; i < 32; i++)
        ck_assert_int_eq(an_pipe_op_holds(t, &pp, 2, i), 1);
    t->p2p_hold_s = 0; /* overlapped: none */
    ck_assert_int_eq(an_pipe_op_holds(t, &pp, 2, 0), 0);
    free(t);
}
END_TEST

/* Which Megatron releases and schedules block on their sends (fw_mg_p2p_blocking). */
START_TEST(test_blocking_predicate)
{
    spec_training tr;
    spec_training_defaults(&tr);
    spec_layout l = parse("megatron:t=8,p=4,sp=0");
    double sync;
    int div;
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &l, &sync, &div), 0); /* framework ideal */
    tr.framework = FW_MEGATRON; /* Megatron-Core, unversioned: 1F1B blocks, with the sync */
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &l, &sync, &div), 1);
    ck_assert_double_eq(sync, FW_DS_SYNC_S);
    ck_assert_int_eq(div, 1);
    /* interleaved: overlap_p2p_comm in the steady phase, the warm-up's and cool-down's sends
     * waited for (FW_P2P_BLOCK_EDGES), no synchronize (batch_p2p_comm off), whole [s/t, b, h] */
    spec_layout li = parse("megatron:t=8,p=4,vp=2,sp=0");
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &li, &sync, &div), FW_P2P_BLOCK_EDGES);
    ck_assert_double_eq(sync, 0);
    ck_assert_int_eq(div, 1);
    tr.framework_version = 800; /* core 0.8: the same */
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &li, &sync, &div), FW_P2P_BLOCK_EDGES);
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &l, &sync, &div), 1);
    tr.framework_version = FW_MG_LM25; /* Megatron-LM v2.5: every schedule, scatter-gather 1/t */
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &li, &sync, &div), 1);
    ck_assert_int_eq(div, 8);
    ck_assert_double_eq(sync, FW_DS_SYNC_S);
    spec_layout ls = parse("megatron:t=8,p=4"); /* sequence parallel: already 1/t */
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &ls, &sync, &div), 1);
    ck_assert_int_eq(div, 1);
    tr.framework_version = FW_MG_LM2; /* v2.0: wait, no synchronize, whole tensors */
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &li, &sync, &div), 1);
    ck_assert_double_eq(sync, 0);
    ck_assert_int_eq(div, 1);
    spec_layout l1 = parse("megatron:t=8,p=1");
    ck_assert_int_eq(fw_mg_p2p_blocking(&tr, &l1, &sync, &div), 0); /* no pipeline */
}
END_TEST

START_TEST(test_bubble)
{
    an_result r;
    /* 1F1B, p = 4, m = 8, F = 1, B = 2 (Narayanan et al. SC'21 §2.2): the step is
     * (m + p - 1)(F + B) = 11 x 3 = 33; each stage is busy m (F + B) = 24, idle 9, a bubble of
     * (p - 1) / (m + p - 1) = 3/11 of the step. */
    ck_assert_double_eq_tol(run(4, 1, 8, PIPE_1F1B, 1, 2, 0, &r), 33, 1e-12);
    ck_assert_double_eq_tol(r.idle_s / r.step_s, 3.0 / 11, 1e-12);
    ck_assert_double_eq_tol(r.bubble_frac, 3.0 / 11, 1e-12);
    ck_assert_double_eq_tol(layout_pipe_bubble(4, 1, 8), 3.0 / 11, 1e-15);
    /* GPipe: the same time, (m + p - 1)(F + B) */
    ck_assert_double_eq_tol(run(4, 1, 8, PIPE_GPIPE, 1, 2, 0, &r), 33, 1e-12);
    /* interleaved, v = 2 chunks of F / 2 and B / 2: the bubble shrinks v-fold (SC'21 §2.2.2),
     * step (m + (p - 1) / v)(F + B) = 9.5 x 3 = 28.5, bubble (p - 1) / (v m + p - 1) = 3/19. */
    ck_assert_double_eq_tol(run(4, 2, 8, PIPE_1F1B, 1, 2, 0, &r), 28.5, 1e-12);
    ck_assert_double_eq_tol(r.idle_s / r.step_s, 3.0 / 19, 1e-12);
    ck_assert_double_eq_tol(layout_pipe_bubble(4, 2, 8), 3.0 / 19, 1e-15);
    /* GPipe with sends of X: the first forward reaches the last stage after (p - 1)(F + X), it
     * runs m forwards and m backwards back to back, and the last backward returns to stage 0
     * after (p - 1)(B + X): (m + p - 1)(F + B) + 2 (p - 1) X = 33 + 0.6 */
    ck_assert_double_eq_tol(run(4, 1, 8, PIPE_GPIPE, 1, 2, 0.1, &r), 33.6, 1e-12);
    /* one stage: no bubble */
    ck_assert_double_eq_tol(run(1, 1, 5, PIPE_1F1B, 1, 2, 0, &r), 15, 1e-12);
    ck_assert_double_eq(r.idle_s, 0);
}
END_TEST

START_TEST(test_schedules_complete)
{
    /* every schedule the layout accepts runs to the end (no stage waits for ever), with sends:
     * 1F1B and GPipe for any m, interleaved for m a multiple of p (Megatron-LM's groups of p;
     * spec_layout_check_training rejects the rest) */
    an_result r;
    for (int p = 1; p <= 8; p++)
        for (int m = 1; m <= 3 * p; m++) {
            run(p, 1, m, PIPE_1F1B, 1, 2, 0.05, &r);
            run(p, 1, m, PIPE_GPIPE, 1, 2, 0.05, &r);
            for (int v = 2; v <= 4 && p > 1; v++)
                if (m % p == 0)
                    run(p, v, m, PIPE_1F1B, 1, 2, 0.05, &r);
        }
    spec_layout l = parse("megatron:t=1,p=4,vp=2");
    spec_training tr;
    spec_training_defaults(&tr);
    tr.grad_accum = 6;
    sc_err err;
    ck_assert_int_eq(spec_layout_check_training(&l, &tr, &err), SC_EINPUT);
    tr.grad_accum = 8;
    ck_assert_int_eq(spec_layout_check_training(&l, &tr, &err), 0);
}
END_TEST

/* test_reduce_overlap's pipeline: p = 2, v = 2, m = 2, 1F1B, each chunk's forward 0.5 and backward
 * 1 (busy the same), no sends, reduces or gathers; calloc'd, the caller frees it. */
static an_pipe_timed *pipe_2x2x2(void)
{
    an_pipe_timed *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->pipe = (lo_pipe){.p = 2, .v = 2, .m = 2, .sched = PIPE_1F1B, .n_vstages = 4};
    for (int k = 0; k < 4; k++) {
        t->fwd[k].dur = t->fwd[k].busy = 0.5;
        t->bwd[k].dur = t->bwd[k].busy = 1;
    }
    return t;
}

START_TEST(test_reduce_overlap)
{
    /* p = 2, v = 2, m = 2, chunk forward 0.5, backward 1, no sends, by hand (k = c p + s):
     * stage 0 forwards k0 mb 0, 1 at 0-1, k2 mb 0 at 1-1.5 (after k1 mb 0 on stage 1 at
     * 0.5-1), mb 1 at 1.5-2; stage 1: k1 at 0.5-1.5, k3 mb 0 at 1.5-2, backward 2-3, k3 mb 1
     * 3-3.5, backward 3.5-4.5; stage 0 backward k2 mb 0 3-4, mb 1 4.5-5.5; stage 1 backward k1
     * 4.5-5.5, 5.5-6.5; stage 0 backward k0 5.5-6.5, 6.5-7.5: the step is 7.5.
     * Reduces of 0.75 per chunk: stage 0 reduces k2 after its last backward, 5.5-6.25, beside
     * the compute, and k0 at 7.5-8.25: step 8.25 (not 7.5 + 2 x 0.75 = 9); exposed 0.75 on each
     * stage (stage 1: k3 4.5-5.25, k1 6.5-7.25). */
    an_pipe_timed *t = pipe_2x2x2();
    an_result r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(an_pipe_run(t, &r), 0);
    ck_assert_double_eq_tol(r.step_s, 7.5, 1e-12);
    t->reduce_kind = COLL_REDUCESCATTER;
    for (int k = 0; k < 4; k++)
        t->reduce_s[k] = 0.75;
    ck_assert_int_eq(an_pipe_run(t, &r), 0);
    ck_assert_double_eq_tol(r.step_s, 8.25, 1e-12);
    ck_assert_double_eq_tol(r.exposed_s[COLL_REDUCESCATTER], 0.75, 1e-12);
    free(t);
}
END_TEST

/* A pipeline of p stages x v chunks with durations drawn from `seed` (forward 0.5-1.5, backward
 * 1-3 per virtual stage, first and last heavier as embedding and head make them, exposed
 * tensor-parallel time, sends, reduces, Adam and all-gather per stage). */
static an_pipe_timed *random_pipe(int p, int v, int m, spec_pipe_sched sched, unsigned seed)
{
    an_pipe_timed *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->pipe = (lo_pipe){.p = p, .v = v, .m = m, .sched = sched, .n_vstages = p * v};
    srand(seed);
    for (int k = 0; k < p * v; k++) {
        double f = 0.5 + (double)rand() / RAND_MAX, b = 1 + 2 * (double)rand() / RAND_MAX;
        if (k == 0 || k == p * v - 1)
            f *= 1.5, b *= 1.5;
        t->fwd[k] = (an_pipe_op_t){.dur = f, .busy = 0.9 * f, .exposed = {0, 0, 0.1 * f}};
        t->bwd[k] = (an_pipe_op_t){.dur = b, .busy = 0.8 * b, .exposed = {0.05 * b, 0.15 * b, 0}};
        t->reduce_s[k] = 3 * (double)rand() / RAND_MAX;
    }
    t->p2p_s = seed % 3 ? 0.01 * (seed % 7) : 0;
    if (seed % 5 == 1 || seed % 5 == 2) { /* sends that hold: after every op, or (interleaved)
                                             around the steady phase (an_pipe_op_holds) */
        t->p2p_hold_s = t->p2p_s + 0.02;
        t->hold_edges = seed % 5 == 2 && v > 1;
    }
    t->reduce_kind = seed % 2 ? COLL_REDUCESCATTER : COLL_ALLREDUCE;
    for (int s = 0; s < p; s++) {
        t->opt_s[s] = 0.2 + 0.1 * s;
        t->gather_s[s] = seed % 2 ? 0.3 : 0;
    }
    /* a tied head's embedding all-reduce (stages 0 and p - 1 meet before stepping) on a third */
    t->emb_s = seed % 3 == 0 && p > 1 ? 0.05 + 0.4 * (double)rand() / RAND_MAX : 0;
    return t;
}

static void near(double got, double want, double tol, const char *what, int p, int v, int m, int sched)
{
    ck_assert_msg(fabs(got - want) <= tol * fabs(want) + 1e-300, "%s p=%d v=%d m=%d sched=%d: %.17g vs walked %.17g",
                  what, p, v, m, sched, got, want);
}

START_TEST(test_closed_form_equals_walk)
{
    /* The steady state in closed form (an_pipe_closed: one probe walked until its steady phase is
     * periodic, then extrapolated by the groups it did not walk) against the walk of every op
     * (an_pipe_walk), on random stage times: 1F1B, interleaved (v 2-4, m a multiple of p) and
     * GPipe (always walked), p 1-16, m 100-4096, with and without holding sends (every op, or
     * interleaved around the steady phase) and a tied head's embedding all-reduce (its max over
     * stages 0 and p - 1 shifts with the rest: max-plus). Every field to 1e-9 relative: the period is
     * checked to 1e-12 of the step, and the walk's own sums of up to 2 p v m terms round at
     * about m x 1e-16. (A first version that extrapolated the step from four probes' totals
     * failed here: p 4, m 4096 gave 17976 against 18483, the probes' slope being the fill's, not
     * the bottleneck's, which takes over later.) Also counts how many
     * points took the closed form (most must), so the test cannot pass by always walking. */
    static const int ps[] = {1, 2, 3, 4, 8, 16};
    static const int ms[] = {100, 257, 1024, 4096};
    int closed = 0, n = 0;
    for (int pi = 0; pi < 6; pi++)
        for (int mi = 0; mi < 4; mi++)
            for (int v = 1; v <= 4; v++)
                for (int sc = 0; sc < 2; sc++) {
                    const int p = ps[pi], m = ms[mi] - (v > 1 ? ms[mi] % p : 0);
                    const spec_pipe_sched sched = sc ? PIPE_GPIPE : PIPE_1F1B;
                    if ((v > 1 && (p == 1 || sched == PIPE_GPIPE)) || m < 1)
                        continue;
                    an_pipe_timed *t = random_pipe(p, v, m, sched, (unsigned)(97 * n + 13));
                    an_result a, b;
                    memset(&a, 0, sizeof a);
                    memset(&b, 0, sizeof b);
                    int rc = an_pipe_closed(t, &a);
                    ck_assert_int_ge(rc, 0);
                    closed += rc;
                    if (!rc)
                        ck_assert_int_eq(an_pipe_run(t, &a), 0);
                    ck_assert_int_eq(an_pipe_walk(t, &b), 0);
                    near(a.step_s, b.step_s, 1e-9, "step", p, v, m, sc);
                    near(a.compute_s, b.compute_s, 1e-9, "compute", p, v, m, sc);
                    near(a.optimizer_s, b.optimizer_s, 1e-9, "optimizer", p, v, m, sc);
                    near(a.idle_s, b.idle_s, 1e-9 * b.step_s / (b.idle_s > 0 ? b.idle_s : 1), "idle", p, v, m, sc);
                    for (int q = 0; q < N_COLLS; q++)
                        near(a.exposed_s[q], b.exposed_s[q], 1e-9, "exposed", p, v, m, sc);
                    ck_assert(a.bubble_frac == b.bubble_frac);
                    n++;
                    free(t);
                }
    ck_assert_int_gt(n, 100);
    ck_assert_int_gt(closed, n / 2);
}
END_TEST

START_TEST(test_closed_form_cost_flat)
{
    /* 2^24 micro-batches through 8 stages x 4 chunks: walking them would take 2^24 x 64 op
     * steps and 2 GiB for the ends alone (minutes, over the test's timeout); the closed form
     * walks probes of tens of micro-batches. The step is m (F + B) plus the fill and drain,
     * here uniform F = 1, B = 2 by chunk: (m + (p - 1) / v)(F + B) (Narayanan et al. SC'21
     * §2.2.2), checked to 1e-12. */
    an_result r;
    const int p = 8, v = 4, m = 1 << 24;
    double step = run(p, v, m, PIPE_1F1B, 1, 2, 0, &r);
    ck_assert_double_eq_tol(step / ((m + (p - 1.0) / v) * 3), 1, 1e-12);
    ck_assert_double_eq_tol(r.bubble_frac, (p - 1.0) / (v * (double)m + p - 1), 1e-15);
}
END_TEST

START_TEST(test_stage_peak_cut)
{
    /* The memory model walks a stage's order only to 4p micro-batches (congruent to m mod q):
     * the steady phase repeats each group and the cool-down only frees, so the peak is the
     * whole walk's. Checked: 10 blocks over p x v = 4 or 8 virtual stages (uneven chunks, the
     * embedding and the head on the ends), 1F1B, interleaved and GPipe, checkpointing off and
     * on: activations at m = 4p + q .. 1024 are exactly those at m = 4p (walked whole). GPipe,
     * which keeps all m in flight, is walked whole and grows with m. */
    static const char *const lays[] = {"megatron:t=1,p=4", "megatron:t=1,p=4,vp=2", "megatron:t=1,p=2,vp=4"};
    spec_model m = test_tiny_model(10);
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    for (int li = 0; li < 3; li++)
        for (int ck = 0; ck < 2; ck++) {
            spec_layout l = parse(lays[li]);
            spec_training tr;
            spec_training_defaults(&tr);
            tr.act_ckpt = ck;
            tr.flash_attention = 0;
            tr.micro_batch = 1;
            const int q = l.vp > 1 ? l.pp : 1;
            double ref = -1;
            for (int ga = 4 * l.pp; ga <= 1024; ga += ga < 64 ? q : 256) {
                tr.grad_accum = ga;
                wl w;
                wl_build(&m, &tr, &w);
                mem_breakdown mb;
                mem_plan(&w, &tr, &l, 4, &c, &mb);
                if (ref < 0)
                    ref = mb.activations;
                ck_assert_msg(mb.activations == ref, "%s ckpt %d m %d: %.17g vs %.17g", lays[li], ck, ga,
                              mb.activations, ref);
            }
            ck_assert_double_gt(ref, 0);
        }
    spec_layout g = parse("megatron:t=1,p=4,sched=gpipe");
    spec_training tr;
    spec_training_defaults(&tr);
    tr.flash_attention = 0;
    tr.act_ckpt = 0;
    double prev = 0;
    for (int ga = 8; ga <= 128; ga *= 2) {
        tr.grad_accum = ga;
        wl w;
        wl_build(&m, &tr, &w);
        mem_breakdown mb;
        mem_plan(&w, &tr, &g, 4, &c, &mb);
        ck_assert_double_gt(mb.activations, prev);
        prev = mb.activations;
    }
}
END_TEST

/* The most ops stage s has forwarded and not yet backwarded, over its order. */
static int in_flight(int p, int v, int m, spec_pipe_sched sched, int s)
{
    lo_pipe pp = {.p = p, .v = v, .m = m, .sched = sched, .n_vstages = p * v};
    lo_pipe_op *ops = malloc(sizeof *ops * (size_t)(2 * m * v));
    ck_assert_ptr_nonnull(ops);
    int n = layout_pipe_order(&pp, s, ops), cur = 0, peak = 0;
    ck_assert_int_eq(n, 2 * m * v);
    for (int i = 0; i < n; i++) {
        cur += ops[i].bwd ? -1 : 1;
        peak = cur > peak ? cur : peak;
    }
    free(ops);
    return peak;
}

START_TEST(test_in_flight)
{
    /* 1F1B: stage s holds min(p - s, m) micro-batches (p - s - 1 warm-up forwards + the one of
     * the steady state); GPipe all m; interleaved (p - s - 1) x 2 + (v - 1) p + 1 chunks
     * (Megatron-LM schedules.py warm-up + 1): stage 0 of p = 4, v = 2: 6 + 4 + 1 = 11. */
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(in_flight(4, 1, 8, PIPE_1F1B, s), 4 - s);
    ck_assert_int_eq(in_flight(4, 1, 2, PIPE_1F1B, 0), 2);
    ck_assert_int_eq(in_flight(4, 1, 8, PIPE_GPIPE, 0), 8);
    ck_assert_int_eq(in_flight(4, 2, 8, PIPE_1F1B, 0), 11);
    ck_assert_int_eq(in_flight(4, 2, 8, PIPE_1F1B, 3), 5);
}
END_TEST

/* The tiny model with 4 heads (t up to 4 divides them), no fused attention. */
static void tiny4(spec_model *m, spec_training *tr, int layers)
{
    *m = test_tiny_model(layers);
    m->heads = m->kv_heads = 4;
    spec_training_defaults(tr);
    tr->act_ckpt = 0;
    tr->flash_attention = 0;
    tr->micro_batch = 1;
    tr->grad_accum = 8;
}

static double block_act(const wl *w)
{
    for (int i = 0; i < w->n_layers; i++)
        if (w->layer[i].kind == WL_BLOCK)
            return w->layer[i].act_bytes;
    return -1;
}

START_TEST(test_sp_activations)
{
    /* Korthikanti et al. 2022 Table 2, bf16, s = 16, b = 1, h = 64, a = 4 (sbh = 1024,
     * 5as/h = 5): no parallelism sbh (34 + 5) = 39936; t = 4 without sequence parallelism
     * sbh (10 + 24/4 + 5/4) = 17664; with it sbh (34/4 + 5/4) = 9984. */
    spec_model m;
    spec_training tr;
    tiny4(&m, &tr, 8);
    wl w, lw;
    wl_build(&m, &tr, &w);
    ck_assert_double_eq_tol(block_act(&w), 39936, 1e-9);
    spec_layout l = parse("megatron:t=4,p=2,sp=0");
    ck_assert_double_eq_tol(block_act(layout_kind_localize(&w, &l, 8, &lw)), 17664, 1e-9);
    l = parse("megatron:t=4,p=2");
    ck_assert_double_eq_tol(block_act(layout_kind_localize(&w, &l, 8, &lw)), 9984, 1e-9);
}
END_TEST

START_TEST(test_stage_memory)
{
    /* megatron:t=1,p=4 over 8 blocks (2 per stage), 1F1B, m = 8, bf16, no checkpointing, one
     * head (a = 1: block activations sbh (34 + 5 x 1 x 16 / 64) = 1024 x 35.25 = 36096 B).
     * Stage 0 holds p = 4 micro-batches of its 2 blocks: 4 x 2 x 36096 = 288768 B; the last
     * stage 1 micro-batch of 2 blocks + the head's input 2048 + fp32 logits 4 x 16 x 128 =
     * 8192: 82432 B; the first stage needs the most (its embedding's 8192 parameters against
     * the head's 8320 change the states by 2 KB). States: 16 B per parameter of stage 0
     * (embedding 8192 + 2 blocks of 49408), Adam over all of them (dp = 1). */
    spec_model m = test_tiny_model(8);
    spec_training tr;
    spec_training_defaults(&tr);
    tr.act_ckpt = 0;
    tr.flash_attention = 0;
    tr.micro_batch = 1;
    tr.grad_accum = 8;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    wl w;
    wl_build(&m, &tr, &w);
    spec_layout l = parse("megatron:t=1,p=4");
    mem_breakdown mb;
    mem_plan(&w, &tr, &l, 4, &c, &mb);
    ck_assert_double_eq_tol(mb.activations, 288768, 1e-9);
    ck_assert_double_eq_tol(mb.params + mb.grads + mb.optim, 16 * (8192 + 2 * 49408.0), 1e-6);
    /* GPipe keeps all m = 8 on every stage; the last needs the most: 8 x 82432 */
    l = parse("megatron:t=1,p=4,sched=gpipe");
    mem_plan(&w, &tr, &l, 4, &c, &mb);
    ck_assert_double_eq_tol(mb.activations, 8 * 82432.0, 1e-9);
}
END_TEST

/* Selective checkpointing under pipeline stages (mem14; review14 found it planned as full).
 * tiny4: h 64, 4 heads (kv 64), f 256, s 16, b 1, bf16, unfused attention, dropout on, t = 1.
 * A block's stash sbh (34 + 5 a s / h) = 1024 x (34 + 5) = 39936 B (test_sp_activations), of it
 * the attention core 5 a s^2 b = 5 x 4 x 256 = 5120 B (scores 2, softmax 2, mask 1 byte per
 * element: Korthikanti et al. 2022 Table 2); the checkpointed input 2 sbh = 2048 B.
 * Per block kept: none 39936, selective 39936 - 5120 = 34816 (all but the core), full 2048;
 * during one block's backward also recomputed: none 0, selective its core 5120, full its whole
 * stash 39936.
 * 1F1B, megatron:t=1,p=4 over 16 blocks (4 a stage), m = 8: stage 0 holds p = 4 micro-batches of
 * 4 blocks = 16 block-stashes: none 16 x 39936 = 638976; selective 16 x 34816 + 5120 = 562176;
 * full 16 x 2048 + 39936 = 72704 (the last stage holds 1 x 4 blocks + head input 2048 + fp32
 * logits 8192: never the most). Interleaved vp = 2 (2 blocks a chunk): stage 0 holds
 * (p - 1) x 2 + (v - 1) p + 1 = 6 + 4 + 1 = 11 chunks = 22 blocks (test_in_flight): none
 * 22 x 39936 = 878592, selective 22 x 34816 + 5120 = 771072, full 22 x 2048 + 39936 = 84992.
 * Before the fix selective planned as full (72704 / 84992). */
START_TEST(test_stage_memory_selective)
{
    static const struct {
        const char *layout;
        int ckpt;
        double act;
    } want[] = {
        {"megatron:t=1,p=4", CKPT_NONE, 638976},     {"megatron:t=1,p=4", CKPT_SELECTIVE, 562176},
        {"megatron:t=1,p=4", CKPT_FULL, 72704},      {"megatron:t=1,p=4,vp=2", CKPT_NONE, 878592},
        {"megatron:t=1,p=4,vp=2", CKPT_SELECTIVE, 771072}, {"megatron:t=1,p=4,vp=2", CKPT_FULL, 84992},
    };
    spec_model m;
    spec_training tr;
    tiny4(&m, &tr, 16);
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tr.act_ckpt = want[i].ckpt;
        wl w;
        wl_build(&m, &tr, &w);
        spec_layout l = parse(want[i].layout);
        mem_breakdown mb;
        mem_plan(&w, &tr, &l, 4, &c, &mb);
        ck_assert_msg(fabs(mb.activations - want[i].act) < 1e-6, "%s ckpt %d: %.0f, want %.0f", want[i].layout,
                      want[i].ckpt, mb.activations, want[i].act);
    }
    /* with FlashAttention there is no s x s core: selective keeps what none keeps */
    tr.flash_attention = 1;
    mem_breakdown none, sel;
    spec_layout l = parse("megatron:t=1,p=4,vp=2");
    wl w;
    tr.act_ckpt = CKPT_NONE;
    wl_build(&m, &tr, &w);
    mem_plan(&w, &tr, &l, 4, &c, &none);
    tr.act_ckpt = CKPT_SELECTIVE;
    wl_build(&m, &tr, &w);
    mem_plan(&w, &tr, &l, 4, &c, &sel);
    ck_assert_double_eq_tol(sel.activations, none.activations, 1e-9);
}
END_TEST

/* The last stage's peak taken at each backward (memory_pipe.c stage_peak), not at the walk's peak
 * less the loss's kept bytes: interleaved, the walk may peak before a backward of another chunk,
 * when no loss is held, and that backward's recompute comes on top. tiny4 with 6 blocks, vocab
 * 256, s 256, selective, no flash, torchtitan's loss_fp32 (fsdp2), m = 8,
 * fsdp2:dp=1,t=1,p=2,schedule=interleaved-1f1b (v = 2): layout_pipe_split puts 1, 2, 2, 1 blocks
 * on virtual stages 0-3; the last stage holds 1 (2 blocks) and 3 (1 block and the head).
 * By hand: a block keeps act - core = 1867776 - 1310720 = bk 557056 (core 5 a s^2 = 1310720, the
 * recompute rec); the head's input 2 s h = 32768; E = s V = 65536 entries: the loss keeps 4E =
 * 262144, peaks at 12E = 786432 (memory_states.h), held m e E = 8 x 2 x 65536 = 1048576.
 * Chunk bytes: A = 2 bk = 1114112, B = bk + 32768 + 262144 = 851968. The last stage's order
 * (warm-up 2): F1 F1, then F3 B3 F3 B3 F1 B1 ...: before B3 2A + B = 3080192, the loss's
 * backward then the recompute: - 262144 + max(786432, 1310720) = 4128768; before B1 3A =
 * 3342336, + rec = 4653056; + held = 5701632. Stage 0 (chunks of 1 and 2 blocks, warm-up 4:
 * 6 bk, then F0 to 7 bk = 3899392, + rec before B2 = 5210112) holds less; its parameters
 * differ by the embedding 16384 against the head 16512 (x 16 B). The walk's peak 3342336 -
 * 262144 + 1310720 + held = 5439488 was the plan before: a loss's kept bytes taken off a moment
 * that held none. */
START_TEST(test_last_stage_other_chunk_peak)
{
    spec_model m;
    spec_training tr;
    tiny4(&m, &tr, 6);
    m.vocab = 256, m.seq_len = 256;
    tr.framework = FW_FSDP2;
    tr.loss_fp32 = 1;
    tr.act_ckpt = CKPT_SELECTIVE;
    tr.grad_accum = 8;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    wl w;
    wl_build(&m, &tr, &w);
    ck_assert_double_eq(w.layer[1].act_bytes - w.layer[1].act_core_bytes, 557056);
    spec_layout l = parse("fsdp2:dp=1,t=1,p=2,schedule=interleaved-1f1b");
    ck_assert_int_eq(l.vp, 2);
    mem_breakdown mb;
    mem_plan(&w, &tr, &l, 2, &c, &mb);
    ck_assert_msg(mb.activations == 5701632, "activations %.0f, want 5701632", mb.activations);
}
END_TEST

/* The attention core a tensor-parallel rank keeps is its heads' / t (Korthikanti et al. 2022
 * Table 2's 5as/(ht), with and without sequence parallelism): tiny4's 5 a s^2 b = 5120 B is
 * 1280 B at t = 4. Before mem14 wl_localize_megatron left it whole, so selective's kept bytes
 * (act_bytes - act_core_bytes) went negative on a rank: 9984 - 5120 with sp. */
START_TEST(test_core_localized)
{
    spec_model m;
    spec_training tr;
    tiny4(&m, &tr, 8);
    wl w, lw;
    wl_build(&m, &tr, &w);
    const char *lay[] = {"megatron:t=4,p=2", "megatron:t=4,p=2,sp=0"};
    for (int i = 0; i < 2; i++) {
        spec_layout l = parse(lay[i]);
        const wl *r = layout_kind_localize(&w, &l, 8, &lw);
        for (int j = 0; j < r->n_layers; j++)
            if (r->layer[j].kind == WL_BLOCK)
                ck_assert_double_eq_tol(r->layer[j].act_core_bytes, 1280, 1e-9);
    }
}
END_TEST

/* The dgxc v24.11 Nemotron-4 340B rows (validation/nvidia-dgxc-benchmarking/dgxc-v24111-n340-*):
 * megatron:t=8,p=8,vp=12 on 128 H100 80 GB (dp 2), m = 16, selective, flash attention, sequence
 * parallel, dropout 0, bf16; Apex DistributedFusedAdam with optim dtype bf16 (optimizer_state_dtype
 * bf16: m and v, 4 B/param over dp; the case note cites the recipe and NeMo). They ran, so the plan
 * must fit. By hand, per layer and micro-batch (h 18432, kv 8 x 192 = 1536, f 73728, s 4096):
 * 2 B x (6h + 2kv + 2f) / t x s = 2 x 261120 / 8 x 4096 = 267386880 B (no s x s core to drop);
 * stage 0 holds (8 - 1) x 2 + 11 x 8 + 1 = 103 one-layer chunks: 27540848640 B = 25.65 GiB.
 * Stage 0's parameters: 12 blocks of (2h^2 + 2h kv + 2hf) / 8 = 431751168 each (the norms'
 * 4h, replicated or split, change it by < 1e-4) + the embedding 256000 x 18432 / 8 = 589824000:
 * P = 5770838016; states (2 + 2 + 4 / 2) P = 34625028096 B = 32.25 GiB. */
START_TEST(test_n340_fits)
{
    spec_model m;
    spec_cluster c;
    sc_err err;
    ck_assert_msg(spec_load_model("validation/models/nemo-nemotron4-340b.json", &m, &err) == 0, "%s", err.text);
    ck_assert_msg(spec_load_cluster("configs/clusters/dgx-h100.json", &c, &err) == 0, "%s", err.text);
    spec_training tr;
    spec_training_defaults(&tr);
    tr.framework = FW_MEGATRON;
    tr.micro_batch = 1;
    tr.grad_accum = 16;
    tr.act_ckpt = CKPT_SELECTIVE;
    tr.flash_attention = 1;
    tr.hidden_dropout = tr.attention_dropout = 0;
    tr.opt_state_bf16 = 1;
    wl w;
    wl_build(&m, &tr, &w);
    spec_layout l = parse("megatron:t=8,p=8,vp=12");
    mem_breakdown mb;
    mem_plan(&w, &tr, &l, 128, &c, &mb);
    ck_assert_msg(fabs(mb.activations / 27540848640.0 - 1) < 1e-9, "activations %.0f", mb.activations);
    ck_assert_msg(fabs((mb.params + mb.grads + mb.optim) / 34625028096.0 - 1) < 1e-4, "states %.0f",
                  mb.params + mb.grads + mb.optim);
    ck_assert_int_eq(mb.fits, 1);
}
END_TEST

START_TEST(test_pp1_equals_tp)
{
    /* megatron:t=2,p=1,sp=0 at a micro-batch of 2 (the replica's) is tp:t=2 at 1 per GPU:
     * the same GEMMs, collectives, activations and global batch, so the same prediction. */
    spec_model m;
    spec_training a, b;
    tiny4(&m, &a, 2);
    a.grad_accum = 2;
    b = a;
    b.micro_batch = 2;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    cost_calib k = test_tiny_calib();
    wl wa, wb;
    wl_build(&m, &a, &wa);
    wl_build(&m, &b, &wb);
    spec_layout lt = parse("tp:t=2"), lm = parse("megatron:t=2,p=1,sp=0");
    an_result ra, rb;
    an_predict(&wa, &a, &lt, &c, 2, &k, &ra);
    an_predict(&wb, &b, &lm, &c, 2, &k, &rb);
    ck_assert_double_eq_tol(rb.step_s, ra.step_s, 1e-12 * ra.step_s);
    ck_assert_double_eq_tol(rb.samples_per_s, ra.samples_per_s, 1e-9 * ra.samples_per_s);
    ck_assert_double_eq_tol(rb.model_tflops_per_gpu, ra.model_tflops_per_gpu, 1e-9 * ra.model_tflops_per_gpu);
    ck_assert_double_eq_tol(rb.mem.total, ra.mem.total, 1e-6);
    ck_assert_double_eq_tol(rb.mem.activations, ra.mem.activations, 1e-6);
}
END_TEST

/* Analytical and simulated step of a layout string on the duo cluster (NIC nic_Bps), scheduled
 * by framework fw at release ver (0: unversioned). */
static void both_fw(const char *layout, int nodes, int m, double nic_Bps, spec_framework fw, int ver, double *an,
                    double *sim)
{
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    tr.grad_accum = m;
    tr.framework = fw;
    tr.framework_version = ver;
    tr.grad_clip = 0; /* no clip: a framework's schedule against the ideal's (test_stage_step_work prices it) */
    test_pipe_both(&mo, &tr, layout, nodes, nic_Bps, an, sim);
}

static void both(const char *layout, int nodes, int m, double nic_Bps, double *an, double *sim)
{
    both_fw(layout, nodes, m, nic_Bps, FW_IDEAL, 0, an, sim);
}

START_TEST(test_engines_agree)
{
    /* test_pipe_agree (support.h): the two engines agree where nothing contends (t = 2, p = 2
     * on 2 duo nodes), the simulator only slower where sends meet the boundary's reduce-scatter
     * (dp = 2 over 4 nodes) or each other (interleaved; on 4 nodes chunk reduces beside them) */
    test_pipe_agree(both, "megatron:t=2,p=2", "megatron:t=2,p=2,sched=gpipe", "megatron:t=2,p=2", "megatron:t=2,p=2,vp=2",
                    "megatron:t=2,p=2,vp=2");
}
END_TEST

START_TEST(test_engines_agree_blocking)
{
    /* test_engines_agree's duo setting scheduled by Megatron (1F1B: blocking sends): the
     * simulator holds the sender until its flows arrive plus the synchronize, the recurrence for
     * p2p_s + sync; nothing contends, so they agree, and each blocking step is longer than the
     * overlapped one (ideal schedule) by the holds on its critical path. */
    double an, sim, an0, sim0;
    for (int m = 1; m <= 6; m++) {
        both_fw("megatron:t=2,p=2", 2, m, 1e11, FW_MEGATRON, 0, &an, &sim);
        ck_assert_msg(fabs(sim - an) <= 1e-9 * an, "m=%d: model %.12g sim %.12g", m, an, sim);
        both("megatron:t=2,p=2", 2, m, 1e11, &an0, &sim0);
        /* m = 1: no hold is on the critical path (stage 0 waits for the gradient anyway, stage
         * 1's last hold ends before stage 0's backward does) */
        ck_assert_msg(m == 1 ? fabs(an - an0) <= 1e-12 * an0 : an > an0 + FW_DS_SYNC_S,
                      "m=%d: blocking %.12g overlapped %.12g", m, an, an0);
    }
    /* Megatron-Core's interleaved schedule holds only around its steady phase (warm-up
     * forwards, cool-down backwards): never faster than the ideal schedule; the simulator holds
     * the same ops (an_pipe_op_holds) and is never faster than the recurrence */
    both_fw("megatron:t=2,p=2,vp=2", 2, 4, 1e9, FW_MEGATRON, 0, &an, &sim);
    both("megatron:t=2,p=2,vp=2", 2, 4, 1e9, &an0, &sim0);
    ck_assert_msg(an >= an0 * (1 - 1e-12), "edges %.12g overlapped %.12g", an, an0);
    ck_assert_msg(sim >= an * (1 - 1e-9), "model %.12g sim %.12g", an, sim);
    for (int m = 2; m <= 6; m += 2) { /* a fast NIC: nothing contends, the engines agree; the
                                          holds lie on this tiny step's critical path */
        both_fw("megatron:t=2,p=2,vp=2", 2, m, 1e11, FW_MEGATRON, 0, &an, &sim);
        ck_assert_msg(fabs(sim - an) <= 1e-9 * an, "vp 2 m=%d: model %.12g sim %.12g", m, an, sim);
        both("megatron:t=2,p=2,vp=2", 2, m, 1e11, &an0, &sim0);
        ck_assert_msg(an > an0 * (1 + 1e-9), "vp 2 m=%d: edges %.12g overlapped %.12g", m, an, an0);
    }
    /* Megatron-LM v2.5 blocks there too, sending 1/t (sp=0): the simulator is never faster */
    both_fw("megatron:t=2,p=2,vp=2,sp=0", 2, 4, 1e9, FW_MEGATRON, FW_MG_LM25, &an, &sim);
    ck_assert_msg(sim >= an * (1 - 1e-9), "model %.12g sim %.12g", an, sim);
}
END_TEST

/* Gradients reduced in fp32 (reduce_dtype) on a pipeline's data-parallel boundary:
 * megatron:t=2,p=2 on 4 duo nodes (dp = 2 across nodes), NIC 1e9 B/s so the boundary counts.
 * Each stage's reduce-scatter moves twice the bytes in the same number of buckets, the
 * all-gather of the bf16 parameters the same: the step grows in both engines, by the same
 * amount where nothing contends (p = 2 stages, one per node pair: the simulator is never faster). */
static void both_rd(int rd, double *an, double *sim)
{
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    tr.grad_accum = 4;
    tr.reduce_dtype = rd;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e9);
    cost_calib k = test_tiny_calib();
    wl w;
    wl_build(&mo, &tr, &w);
    spec_layout l = parse("megatron:t=2,p=2");
    sc_err err;
    ck_assert_msg(spec_layout_check(&l, &c, 4, &err) == 0, "%s", err.text);
    an_result r;
    an_predict(&w, &tr, &l, &c, 4, &k, &r);
    *an = r.step_s;
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, 4, g);
    ck_assert_double_eq_tol(g->sched.reduce_elem_bytes, (rd == REDUCE_FP32 ? 4.0 : 2.0), 1e-12);
    exec_opts o = {0};
    o.seed = 1;
    exec_result x;
    ck_assert_msg(exec_pipe_run(g, &w, &tr, &k, &c, &o, &x, &err) == 0, "%s", err.text);
    *sim = x.step_s;
    free(g);
}

/* A given bucket_MB is bytes of the reduced gradient, as layout_tensor.c prices a tp layout's
 * reduce (fw_dp_bucket_bytes with the reduce dtype): megatron:t=2,p=2 on 4 duo nodes, fp32
 * reduce of bf16 parameters, bucket_MB 0.01 (1e4 B, given). A virtual stage's fp32 gradients S
 * are cut in ceil(S / 1e4) NCCL calls, not ceil(S / 2e4) (the bucket scaled by 4 / 2 as
 * Megatron's element-counted default is): the reduce costs cost_coll_best at that count. Failed
 * before (the pipeline scaled a given bucket too, halving the calls). */
START_TEST(test_pipe_given_bucket_is_reduce_bytes)
{
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    tr.grad_accum = 4;
    tr.reduce_dtype = REDUCE_FP32;
    tr.bucket_bytes = 1e4;
    tr.given |= SPEC_GIVEN_BUCKET;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e9);
    cost_calib k = test_tiny_calib();
    for (int a = 0; a < N_ALGOS; a++)
        k.base_lat_s[a].v = 1e-3; /* each NCCL call pays 1 ms: the call count shows */
    wl w;
    wl_build(&mo, &tr, &w);
    spec_layout l = parse("megatron:t=2,p=2");
    sc_err err;
    ck_assert_msg(spec_layout_check(&l, &c, 4, &err) == 0, "%s", err.text);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, 4, g);
    an_pipe_timed *o = malloc(sizeof *o);
    ck_assert_ptr_nonnull(o);
    an_pipe_time_comm(g, &tr, &k, &c, o);
    ck_assert_int_eq(g->pipe.dp, 2);
    for (int v = 0; v < g->pipe.n_vstages; v++) {
        double S = g->pipe.vstage_params[v] * 4.0;
        int n = (int)ceil(S / 1e4), half = (int)ceil(S / 2e4);
        ck_assert_int_gt(n, half); /* the two readings differ here */
        double want = cost_coll_best(&k, o->reduce_kind, S, n, &g->group[GRP_AX3], NULL);
        double other = cost_coll_best(&k, o->reduce_kind, S, half, &g->group[GRP_AX3], NULL);
        ck_assert(want > other); /* the reading is visible in the time */
        ck_assert_msg(o->reduce_s[v] == want, "vstage %d: %.12g want %.12g (%d calls)", v, o->reduce_s[v], want, n);
    }
    free(o);
    free(g);
}
END_TEST

START_TEST(test_pipe_reduce_dtype_fp32)
{
    double a16, s16, a32, s32;
    both_rd(REDUCE_DEFAULT, &a16, &s16);
    both_rd(REDUCE_FP32, &a32, &s32);
    ck_assert_msg(a32 > a16 * (1 + 1e-6), "model: fp32 %.9g bf16 %.9g", a32, a16);
    ck_assert_msg(s32 > s16 * (1 + 1e-6), "sim: fp32 %.9g bf16 %.9g", s32, s16);
    ck_assert_msg(fabs((s32 - s16) - (a32 - a16)) <= 0.02 * (a32 - a16), "growth: model %.9g sim %.9g", a32 - a16,
                  s32 - s16);
    ck_assert_msg(s32 >= a32 * (1 - 1e-9), "model %.12g sim %.12g", a32, s32);
}
END_TEST

/* Both engines on shipped files: p3dn.24xlarge (hybrid cube mesh, one 100 Gbps NIC) with its
 * dated 2020 calibration (NCCL's tuning model: chunk efficiency, tree on 2 nodes), gpt3-1.3b,
 * micro-batch 4, grad_accum 2. */
static void both_p3dn(const char *layout, int nodes, an_result *a, exec_result *x)
{
    spec_model mo;
    spec_training tr;
    spec_cluster c;
    cost_calib k;
    sc_err err;
    ck_assert_msg(spec_load_cluster("configs/clusters/p3dn.24xlarge.json", &c, &err) == 0, "%s", err.text);
    ck_assert_msg(cost_calib_load("configs/calibrations/p3dn.24xlarge-2020.json", &k, &err) == 0, "%s", err.text);
    ck_assert_msg(spec_load_model("configs/models/gpt3-1.3b.json", &mo, &err) == 0, "%s", err.text);
    spec_training_defaults(&tr);
    tr.micro_batch = 4;
    tr.grad_accum = 2;
    tr.precision = PREC_FP16;
    wl w;
    wl_build(&mo, &tr, &w);
    spec_layout l = parse(layout);
    ck_assert_msg(spec_layout_check(&l, &c, nodes, &err) == 0, "%s", err.text);
    an_predict(&w, &tr, &l, &c, nodes, &k, a);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, nodes, g);
    exec_opts o = {0};
    o.seed = 1;
    ck_assert_msg(exec_pipe_run(g, &w, &tr, &k, &c, &o, x, &err) == 0, "%s", err.text);
    free(g);
}

START_TEST(test_engines_agree_boundary_p3dn)
{
    /* Issue 28 (agree_grid.py): the simulator's data-parallel boundary of a pipeline moved a
     * bucketed collective as one NCCL call and ran its rings on single NVLinks in rank order,
     * while the analytical engine (and sim/exec.c) price `buckets` calls of S / buckets and
     * NCCL's rings over every link of the mesh.
     * (a) 4 nodes, megatron:t=2,p=2,zero1=0: dp = 8 ranks {0,2,..,14} over 2 nodes per stage,
     * 2 such groups per node on one NIC; stage 0's 711.4 MB all-reduce in ceil(711.4 / 25) = 29
     * buckets (framework ideal: the training's 25 MB bucket_bytes) is NCCL's tree/Simple on 2
     * nodes, S / bw per call; a 24.5 MB call runs below the 711 MB call's chunk efficiency,
     * so the one-call edge bytes were 0.58 of the 29 calls' (0.311 s against 0.538 s analytic):
     * step 1.705 s simulated against 1.927 s analytic (-11.5 %). Now 1.933 s (+0.3 %: the two
     * groups' last buckets meet the stage's last sends on the NIC in the simulator only).
     * (b) 2 nodes: one stage per node, dp = 4 ranks {0,2,4,6} inside it; on the mesh 0-2, 4-6,
     * 0-4, 2-6 are linked and 2-4, 6-0 are not, so the rank-order ring 0,2,4,6 relayed two of
     * its edges; the analytical engine's slowest copy (cost_group_make) has 2 links per member.
     * Step 1.497 s simulated against 1.418 s analytic (+5.3 %); now exact: nothing contends
     * (the boundary starts after the stage's last send). */
    static const char *const L[] = {"megatron:t=2,p=2,zero1=0", "megatron:t=2,p=2", "megatron:t=2,p=2,sched=gpipe"};
    for (int i = 0; i < 3; i++) {
        an_result a;
        exec_result x;
        both_p3dn(L[i], 2, &a, &x);
        ck_assert_msg(fabs(x.step_s - a.step_s) <= 1e-9 * a.step_s, "%s x2: model %.9f sim %.9f", L[i], a.step_s,
                      x.step_s);
        both_p3dn(L[i], 4, &a, &x);
        ck_assert_msg(fabs(x.step_s - a.step_s) <= 0.03 * a.step_s, "%s x4: model %.6f sim %.6f", L[i], a.step_s,
                      x.step_s);
        ck_assert_msg(x.step_s >= a.step_s * (1 - 1e-9), "%s x4: contention only slows: model %.9f sim %.9f", L[i],
                      a.step_s, x.step_s);
    }
}
END_TEST

/* Megatron --tp-comm-overlap (model/layout_tensor.c): the block's op graph by hand, then the two
 * engines on it where nothing contends (t = 2 inside one duo node, p = 1, dp = 1).
 * tiny4, bf16, micro-batch 1: one [tokens, hidden] activation act = 16 x 64 x 2 = 2048 B.
 * Forward block: the all-gathers before QKV and fc1, 2 act = 4096 B, by ring exchange over the
 * copy engines (offload); the reduce-scatters after proj and fc2 pipelined in 4 chunks: 3/4 of
 * 2 act = 3072 B beside the GEMMs, the last chunks 2 act / 4 = 1024 B after them (tail, bit 2).
 * Backward: all-gather 4096 B (offload), the bulk re-gather of qkv's and fc1's saved
 * sequence-split inputs 2 act = 4096 B (a kernel: not offload; spwgrad) and reduce-scatter
 * 4096 B (bulk), no tail.
 * Beside: each copy its own GEMM only (lo_pair; forward 4 pairs: the all-gathers with qkv and
 * fc1, the reduce-scatters with proj and fc2; backward 6: the all-gathers with proj's and fc2's
 * data gradients, the re-gathers with qkv's and fc1's, the reduce-scatters with qkv's and fc1's
 * weight gradients; values in test_fsdp2tp.c test_tpo_pairs), nothing else (inline_overlap 0). */
START_TEST(test_tp_comm_overlap)
{
    spec_model m;
    spec_training tr;
    tiny4(&m, &tr, 2);
    tr.grad_accum = 1;
    tr.tp_comm_overlap = 1;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    cost_calib k = test_tiny_calib();
    wl w;
    wl_build(&m, &tr, &w);
    spec_layout l = parse("megatron:t=2,p=1");
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, 1, g);
    ck_assert_int_eq(g->pipelined, 0);
    int seen = 0;
    for (int i = 0; i < g->last.n_items; i++) {
        const lo_item *it = &g->last.item[i];
        const wl_layer *L = &g->lw[it->layer];
        if (L->kind != WL_BLOCK)
            continue;
        seen |= 1 << it->pass;
        int fwd = it->pass == LO_FWD;
        ck_assert_int_eq(it->n_inline, 3);
        ck_assert_int_eq(it->inl[0].kind, COLL_ALLGATHER);
        ck_assert_int_eq(it->inl[0].offload, 1);
        ck_assert_double_eq_tol(it->inl[0].bytes, 4096, 1e-9);
        const int r = fwd ? 1 : 2; /* the reduce-scatter; backward: after the re-gather */
        if (!fwd) {
            ck_assert_int_eq(it->inl[1].kind, COLL_ALLGATHER);
            ck_assert_int_eq(it->inl[1].offload, 0);
            ck_assert_double_eq_tol(it->inl[1].bytes, 4096, 1e-9);
        }
        ck_assert_int_eq(it->inl[r].kind, COLL_REDUCESCATTER);
        ck_assert_int_eq(it->inl[r].offload, 0);
        ck_assert_double_eq_tol(it->inl[r].bytes, fwd ? 3072 : 4096, 1e-9);
        ck_assert_uint_eq(it->inline_tail, fwd ? 4u : 0u);
        if (fwd)
            ck_assert_double_eq_tol(it->inl[2].bytes, 1024, 1e-9);
        ck_assert_int_eq(it->n_pair, fwd ? 4 : 6);
        ck_assert(it->inline_overlap == 0);
    }
    ck_assert_int_eq(seen, 3);
    /* engines: no contention inside one node, so the same step */
    an_timed *t = malloc(sizeof *t);
    ck_assert_ptr_nonnull(t);
    an_time(g, &w, &k, &c, t);
    an_result a;
    memset(&a, 0, sizeof a);
    an_run(t, &a);
    exec_opts o = {0};
    o.seed = 1;
    exec_result x;
    sc_err err;
    ck_assert_msg(exec_run(g, t, &k, &c, &o, &x, &err) == 0, "%s", err.text);
    ck_assert_msg(fabs(x.step_s - a.step_s) <= 1e-9 * a.step_s, "model %.12g sim %.12g", a.step_s, x.step_s);
    /* overlap off: the same collectives inline, nothing beside them (sp_item): slower */
    tr.tp_comm_overlap = 0;
    layout_build(&w, &tr, &l, &c, 1, g);
    an_result b;
    an_predict(&w, &tr, &l, &c, 1, &k, &b);
    ck_assert_msg(b.step_s > a.step_s, "off %.12g on %.12g", b.step_s, a.step_s);
    free(t);
    free(g);
}
END_TEST

/* Megatron-Core --overlap-param-gather (framework.h fw_param_gather_overlap, an_pipe_run's
 * gather_overlap). Pipelined, by hand on test_reduce_overlap's schedule (p = 2, v = 2, m = 2,
 * forward 0.5, backward 1, step 7.5; stage 0 ends at 7.5, stage 1 at 6.5): an all-gather of 0.8
 * per stage after the optimizer (0 here) makes stage 0 end at 8.3. Overlapped, the next step
 * hides it up to the end of the stage's first op: stage 0's first forward (k0 mb 0) ends at 0.5,
 * so 0.3 stays exposed (8.3 -> 7.8); stage 1's (k1 mb 0, after k0) at 1.0 > 0.8: nothing
 * (6.5). Step 7.8, all-gather exposed (0.3 + 0) / 2 stages = 0.15. */
START_TEST(test_param_gather_overlap_pipe)
{
    an_pipe_timed *t = pipe_2x2x2();
    t->gather_s[0] = t->gather_s[1] = 0.8;
    an_result r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(an_pipe_run(t, &r), 0);
    ck_assert_double_eq_tol(r.step_s, 8.3, 1e-12);
    ck_assert_double_eq_tol(r.exposed_s[COLL_ALLGATHER], 0.8, 1e-12);
    t->gather_overlap = 1;
    ck_assert_int_eq(an_pipe_run(t, &r), 0);
    ck_assert_double_eq_tol(r.step_s, 7.8, 1e-12);
    ck_assert_double_eq_tol(r.exposed_s[COLL_ALLGATHER], 0.15, 1e-12);
    free(t);
}
END_TEST

/* Not pipelined (megatron:t=2,p=1 over 2 duo nodes: dp = 2, framework megatron, distributed
 * optimizer): with overlap_param_gather the boundary holds only the optimizer, and every forward
 * item of the last micro-step (none of the others) gathers its layer's slice, L->params x 2 B
 * over the data-parallel axis; without the distributed optimizer (zero1=0) nothing moves. The
 * step cannot get slower by overlapping (both engines). */
START_TEST(test_param_gather_overlap_layout)
{
    spec_model m;
    spec_training tr;
    tiny4(&m, &tr, 2);
    tr.grad_accum = 2;
    tr.framework = FW_MEGATRON;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    cost_calib k = test_tiny_calib();
    wl w;
    wl_build(&m, &tr, &w);
    spec_layout l = parse("megatron:t=2,p=1");
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    an_result off, on;
    an_predict(&w, &tr, &l, &c, 2, &k, &off);
    layout_build(&w, &tr, &l, &c, 2, g);
    ck_assert_int_eq(g->n_boundary, 2); /* optimizer, then the all-gather */
    tr.overlap_param_gather = 1;
    layout_build(&w, &tr, &l, &c, 2, g);
    ck_assert_int_eq(g->n_boundary, 1);
    ck_assert_int_eq(g->boundary[0].is_optimizer, 1);
    int fwd = 0;
    for (int i = 0; i < g->last.n_items; i++) {
        const lo_item *it = &g->last.item[i];
        if (it->pass != LO_FWD) {
            ck_assert_int_eq(it->n_gather, 0);
            continue;
        }
        fwd++;
        ck_assert_int_eq(it->n_gather, 1);
        ck_assert_int_eq(it->gather[0].kind, COLL_ALLGATHER);
        ck_assert_int_eq(it->gather[0].group, GRP_AX3);
        ck_assert_double_eq_tol(it->gather[0].bytes, g->lw[it->layer].params * 2, 1e-9);
    }
    ck_assert_int_eq(fwd, w.n_layers);
    for (int i = 0; i < g->micro.n_items; i++)
        ck_assert_int_eq(g->micro.item[i].n_gather, 0);
    an_predict(&w, &tr, &l, &c, 2, &k, &on);
    ck_assert_msg(on.step_s <= off.step_s * (1 + 1e-12), "on %.12g off %.12g", on.step_s, off.step_s);
    ck_assert_msg(on.exposed_s[COLL_ALLGATHER] < off.exposed_s[COLL_ALLGATHER], "on %.12g off %.12g",
                  on.exposed_s[COLL_ALLGATHER], off.exposed_s[COLL_ALLGATHER]);
    spec_layout l0 = parse("megatron:t=2,p=1,zero1=0");
    layout_build(&w, &tr, &l0, &c, 2, g);
    for (int i = 0; i < g->last.n_items; i++)
        ck_assert_int_eq(g->last.item[i].n_gather, 0);
    free(g);
}
END_TEST

/* Megatron tensor parallelism's element-wise bytes per rank (workload_local.c split_ew). tiny4
 * (h 64, f 256 GELU, 4 heads, kv 64, s 16, rotary, dropout), bf16, eager, unfused attention,
 * micro-batch 1 (T = 16), per block forward by hand (workload.c ew_block):
 *   whole: norms 2 x 2he 512 + rotary 2(h + kv)e 512 + dropout 2h(2e + 1) 640 + residuals
 *   2 x 3he 768 + GELU 2fe 1024 = 3456 B per token x 16 = 55296, + the s x s core
 *   a s^2 = 1024 elements x (2e + 2e + 2e + 1) 13 = 13312: 68608;
 *   over heads / FFN columns (ew_tp): (rotary 512 + GELU 1024) x 16 + 13312 = 37888.
 * megatron:t=2 without sp keeps the norms, dropout and residuals whole: 68608 - 37888 / 2 =
 * 49664; with sp every element-wise kernel sees half the tokens or columns: 34304. The core's
 * share (recomputed under selective checkpointing) halves either way: 6656. Backward, ew_tp
 * = (512 + GELU 3fe 1536) x 16 + (3e + 2e + 1) 11 x 1024 = 44032. */
START_TEST(test_tp_elementwise_split)
{
    spec_model m;
    spec_training tr;
    tiny4(&m, &tr, 2);
    wl w, lb;
    wl_build(&m, &tr, &w);
    const wl_layer *B = &w.layer[1];
    ck_assert_int_eq(B->kind, WL_BLOCK);
    ck_assert_double_eq_tol(B->ew_fwd_bytes, 68608, 1e-9);
    ck_assert_double_eq_tol(B->ew_tp_fwd_bytes, 37888, 1e-9);
    ck_assert_double_eq_tol(B->ew_tp_bwd_bytes, 44032, 1e-9);
    spec_layout l = parse("megatron:t=2,p=1,sp=0");
    const wl *lw = wl_localize_megatron(&w, &l, &lb);
    ck_assert_double_eq_tol(lw->layer[1].ew_fwd_bytes, 49664, 1e-9);
    ck_assert_double_eq_tol(lw->layer[1].ew_bwd_bytes, B->ew_bwd_bytes - 44032 / 2.0, 1e-9);
    ck_assert_double_eq_tol(lw->layer[1].core_ew_fwd_bytes, 6656, 1e-9);
    ck_assert_int_eq(lw->layer[1].ew_fwd_kernels, B->ew_fwd_kernels); /* every rank launches them all */
    l = parse("megatron:t=2,p=1");
    lw = wl_localize_megatron(&w, &l, &lb);
    ck_assert_double_eq_tol(lw->layer[1].ew_fwd_bytes, 34304, 1e-9);
    ck_assert_double_eq_tol(lw->layer[1].ew_bwd_bytes, B->ew_bwd_bytes / 2, 1e-9);
}
END_TEST

/* A pipeline trace follows traces/schema.h and reads back (traces/read.h): megatron:t=2,p=2 on
 * 4 duo nodes (2 GPUs each) is 8 ranks, dp = 2, S = t x dp = 4 ranks per stage (stage 0: ranks
 * 0-3 on nodes 0-1, stage 1: ranks 4-7 on nodes 2-3); m = 4 micro-batches. Every span is
 * written once per rank of its stage, on that rank's node (pid = rank / 2) and lanes
 * (TR_TID(rank % 2, stream)); the thread names carry the rank. Counts, by hand:
 *  - compute: 2 stages x (4 forward + 4 backward) x 4 ranks = 64, plus the optimizer once per
 *    stage per rank = 8 (read as "optimizer");
 *  - sends: stage 0 sends 4 activations, stage 1 4 gradients, each traced on the 4 receiving
 *    ranks: 32 (read as "other collective"), activations on comm 1, gradients on comm 2;
 *  - the boundary: per stage one gradient collective (v = 1 chunk; reduce-scatter with the
 *    distributed optimizer, then the parameter all-gather; else one all-reduce) on each rank. */
START_TEST(test_trace_reads_back)
{
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    tr.grad_accum = 4;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e11);
    cost_calib k = test_tiny_calib();
    k.base_lat_s[ALGO_RING].v = 1e-6;
    wl w;
    wl_build(&mo, &tr, &w);
    spec_layout l = parse("megatron:t=2,p=2");
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, 4, g);
    ck_assert_int_eq(g->n_ranks, 8);
    char path[] = "/tmp/sc_pipe_trace_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    sc_err err;
    tr_writer *tw;
    ck_assert_int_eq(tr_open(path, &tw, &err), 0);
    exec_opts o = {0};
    o.seed = 1;
    o.trace = tw;
    exec_result x;
    ck_assert_msg(exec_pipe_run(g, &w, &tr, &k, &c, &o, &x, &err) == 0, "%s", err.text);
    ck_assert_int_eq(tr_close(tw, &err), 0);
    tr_doc d;
    ck_assert_msg(tr_read(path, &d, &err) == 0, "%s", err.text);
    unlink(path);
    int n[TR_N_KINDS] = {0}, lane_n[TR_LANES_PER_RANK] = {0};
    for (size_t i = 0; i < d.n_spans; i++) {
        const tr_read_span *sp = &d.spans[i];
        ck_assert(sp->pid >= 0 && sp->pid < 4);
        n[sp->kind]++;
        lane_n[sp->tid % TR_LANES_PER_RANK]++;
        ck_assert_msg(sp->ts_us + sp->dur_us <= x.step_s * 1e6 + 1e-3, "a span past the step");
    }
    int zero1 = g->layout.zero1;
    ck_assert_int_eq(n[TR_K_COMPUTE], 64);
    ck_assert_int_eq(n[TR_K_OPT], 8);
    ck_assert_int_eq(n[TR_K_OTHER], 32);
    ck_assert_int_eq(n[zero1 ? TR_K_RS : TR_K_AR], 8);
    ck_assert_int_eq(n[TR_K_AG], zero1 ? 8 : 0);
    ck_assert_int_eq(lane_n[TR_STREAM_COMPUTE], 72);
    ck_assert_int_eq(lane_n[TR_STREAM_COMM], zero1 ? 16 : 8);
    ck_assert_int_eq(lane_n[TR_STREAM_COMM + 1], 16); /* activations: stage 1's 4 ranks x 4 */
    ck_assert_int_eq(lane_n[TR_STREAM_COMM + 2], 16); /* gradients: stage 0's */
    /* the thread names: rank r's lanes on node r / 2 (every rank, four lanes each) */
    int named = 0;
    for (size_t i = 0; i < d.n_names; i++, named++) {
        const tr_rank_name *nm = &d.names[i];
        ck_assert_int_eq(nm->pid, nm->rank / 2);
        ck_assert_int_eq(nm->tid / TR_LANES_PER_RANK, nm->rank % 2);
        ck_assert_int_eq(nm->stage, nm->rank / 4); /* t = 2 x d = 2: 4 ranks a stage (plot's labels) */
    }
    ck_assert_int_eq(named, 8 * 4);
    tr_doc_free(&d);
    free(g);
}
END_TEST

/* ==========================================================================================
 * Exact symmetry of pipelines (exec.h, exec_pipe_symmetry_unit): rotating every stage's nodes
 * by u maps the sends, the boundary rings and the network onto themselves, so simulating the
 * first u nodes of each stage over the quotient network gives the full run's results. Times to
 * rounding (the quotient's rate sums run over other flows in other orders: 1e-12 of the step),
 * the stage-level counts exactly.
 * ====================================================================================== */

/* Run g both ways on c; assert they agree and that the quotient ran p u nodes. Returns 1 when
 * the quotient simulated fewer ranks than the full run. */
static int pipe_sym_same(const lo_graph *g, const wl *w, const spec_training *tr, const cost_calib *k,
                         const spec_cluster *c, const char *cfg)
{
    exec_opts o = {0};
    o.seed = 1;
    o.full = 1;
    exec_result f, q;
    sc_err err;
    ck_assert_msg(exec_pipe_run(g, w, tr, k, c, &o, &f, &err) == 0, "%s: %s", cfg, err.text);
    ck_assert_int_eq(f.ranks_simulated, g->n_ranks);
    o.full = 0;
    ck_assert_msg(exec_pipe_run(g, w, tr, k, c, &o, &q, &err) == 0, "%s: %s", cfg, err.text);
    ck_assert_int_eq(q.ranks_simulated, exec_pipe_symmetry_unit(g, c, &o) * g->gpus_per_node);
    double tol = 1e-12 * f.step_s;
    ck_assert_msg(f.step_s > 0 && fabs(q.step_s - f.step_s) <= tol, "%s: step %.17g vs full %.17g", cfg, q.step_s,
                  f.step_s);
    ck_assert_msg(fabs(q.first_end_s - f.first_end_s) <= tol, "%s: first end", cfg);
    ck_assert_msg(fabs(q.compute_s - f.compute_s) <= tol, "%s: compute", cfg);
    ck_assert_msg(fabs(q.optimizer_s - f.optimizer_s) <= tol, "%s: optimizer", cfg);
    ck_assert_msg(fabs(q.idle_s - f.idle_s) <= 1e-9 * f.step_s, "%s: idle", cfg);
    for (int i = 0; i < N_COLLS; i++)
        ck_assert_msg(fabs(q.exposed_s[i] - f.exposed_s[i]) <= tol, "%s: exposed %d %.17g vs %.17g", cfg, i,
                      q.exposed_s[i], f.exposed_s[i]);
    ck_assert_msg(q.slowest_rank == f.slowest_rank && q.latest_rank == f.latest_rank, "%s: slowest rank", cfg);
    ck_assert_msg(q.collectives == f.collectives, "%s: collectives %ld vs %ld", cfg, q.collectives, f.collectives);
    if (q.ranks_simulated < g->n_ranks)
        ck_assert_msg(q.flows < f.flows, "%s: the quotient emitted %llu flows, the full run %llu", cfg,
                      (unsigned long long)q.flows, (unsigned long long)f.flows);
    return q.ranks_simulated < g->n_ranks;
}

/* Every layout of `layouts` valid on `nodes` nodes of c, at each of the grad_accum values:
 * full and symmetric runs the same. Returns the configurations run, *reduced those reduced. */
static int pipe_sym_grid(const spec_cluster *c, const cost_calib *k, const spec_model *m, int nodes,
                         const char *const *layouts, int n_layouts, int *reduced)
{
    static const int GA[] = {1, 4, 8};
    int n = 0;
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    for (int li = 0; li < n_layouts; li++)
        for (int ai = 0; ai < 3; ai++) {
            spec_training tr;
            spec_training_defaults(&tr);
            tr.act_ckpt = 0;
            tr.flash_attention = 0;
            tr.micro_batch = 1;
            tr.grad_accum = GA[ai];
            spec_layout l = parse(layouts[li]);
            if (spec_layout_check(&l, c, nodes, NULL) || spec_layout_check_training(&l, &tr, NULL))
                continue; /* interleaved at grad_accum 1 */
            wl w;
            wl_build(m, &tr, &w);
            layout_build(&w, &tr, &l, c, nodes, g);
            ck_assert_int_eq(g->pipelined, 1);
            char cfg[160];
            snprintf(cfg, sizeof cfg, "%s x%d %s ga %d", c->name, nodes, layouts[li], GA[ai]);
            *reduced += pipe_sym_same(g, &w, &tr, k, c, cfg);
            n++;
        }
    free(g);
    return n;
}

static const char *const PIPE_SYM_LAYOUTS[] = {
    "megatron:t=2,p=2",          "megatron:t=2,p=2,sched=gpipe", "megatron:t=2,p=2,vp=2", "megatron:t=2,p=2,zero1=0",
    "megatron:t=1,p=4",          "megatron:t=1,p=2,zero1=0",             "megatron:t=2,p=4,vp=2", "megatron:t=1,p=2,sched=gpipe",
};
enum { N_PIPE_SYM_LAYOUTS = sizeof PIPE_SYM_LAYOUTS / sizeof PIPE_SYM_LAYOUTS[0] };

START_TEST(test_pipe_symmetry_equals_full)
{
    /* The duo cluster (2 GPUs a node, one 1e10 B/s NIC: sends and boundary rings share it) with
     * 1 us ring latency, the tiny 4-head model of 8 layers, at 8 and 16 nodes (one leaf: every
     * node alike): 1F1B, GPipe, interleaved, zero1 on and off, t = 1 (dp rings inside a node)
     * and t = 2 (a node). */
    spec_model mo;
    spec_training tr0;
    tiny4(&mo, &tr0, 8);
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    cost_calib k = test_tiny_calib();
    k.base_lat_s[ALGO_RING].v = 1e-6;
    int n = 0, reduced = 0;
    n += pipe_sym_grid(&c, &k, &mo, 8, PIPE_SYM_LAYOUTS, N_PIPE_SYM_LAYOUTS, &reduced);
    n += pipe_sym_grid(&c, &k, &mo, 16, PIPE_SYM_LAYOUTS, N_PIPE_SYM_LAYOUTS, &reduced);
    /* every layout divides 16 and 32 GPUs (t x p <= 8, p <= 4 divides the 8 layers), x 3
     * grad_accum but 1 for the two interleaved ones (a multiple of p) */
    ck_assert_int_eq(n, 2 * (3 * N_PIPE_SYM_LAYOUTS - 2));
    ck_assert_int_eq(reduced, n); /* dp >= 2 nodes a stage everywhere: each one reduced */
}
END_TEST

START_TEST(test_pipe_symmetry_contended)
{
    /* Where the network has pods: p4d-oversub (a 4:1 fat-tree of 2-node leaves: sends between
     * stages in other pods cross the oversubscribed spine), p4d as a 2:1 rail network and as a
     * dragonfly of 2-node groups, at 16 nodes (128 GPUs), gpt3-1.3b, p4d's shipped calibration
     * (NCCL model, interference on). The unit must be whole pods (exec_pipe_symmetry_unit). */
    sc_err e;
    spec_model m;
    ck_assert_int_eq(spec_load_model("configs/models/gpt3-1.3b.json", &m, &e), 0);
    cost_calib k;
    ck_assert_int_eq(cost_calib_load("configs/calibrations/p4d.24xlarge.json", &k, &e), 0);
    static const char *const L[] = {"megatron:t=8,p=2", "megatron:t=4,p=4,vp=2", "megatron:t=8,p=2,sched=gpipe",
                                    "megatron:t=8,p=2,zero1=0", "megatron:t=2,p=8"};
    int n = 0, reduced = 0;
    spec_cluster c;
    ck_assert_int_eq(spec_load_cluster("tests/fixtures/p4d-oversub.json", &c, &e), 0);
    n += pipe_sym_grid(&c, &k, &m, 16, L, 5, &reduced);
    static const spec_net_topology topo[2] = {NET_RAIL, NET_DRAGONFLY};
    for (int ti = 0; ti < 2; ti++) {
        ck_assert_int_eq(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &e), 0);
        c.topology = topo[ti];
        c.nodes_per_leaf = 2;
        c.oversubscription = 2;
        c.max_nodes = 0;
        n += pipe_sym_grid(&c, &k, &m, 16, L, 5, &reduced);
    }
    ck_assert_int_eq(n, 3 * (5 * 3 - 1)); /* the interleaved one needs grad_accum a multiple of 4 */
    /* all but t=2,p=8, whose stages are 2 nodes, one pod: no whole pod below it (the full run,
     * still compared) */
    ck_assert_int_eq(reduced, n - 3 * 3);
}
END_TEST

START_TEST(test_pipe_symmetry_unit)
{
    /* By hand. duo (2 GPUs a node, one 16-node leaf), tiny model, 8 nodes = 16 GPUs:
     *  - megatron:t=2,p=2: a stage is 8 ranks = 4 nodes; u = 1 (2 GPUs, t = 2 divides it): 2 x 1;
     *  - megatron:t=1,p=2: the same, 8 ranks = 4 nodes a stage: 2;
     *  - megatron:t=2,p=8: a stage is one node: nothing to rotate, the full run, 8;
     *  - jitter, a straggler, a trace or o.full: the full run, 8.
     * p4d-oversub (2-node pods), 16 nodes, t=8,p=2: 8 nodes a stage, u whole pods = 2: 4. p4d
     * (16-node leaves) at 16 nodes: one leaf, no spine, every node alike: u = 1, 2; at 32 nodes
     * (two leaves under a spine) a stage is one pod, none smaller: the full run, 32. */
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    wl w;
    wl_build(&mo, &tr, &w);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    exec_opts o = {0};
    spec_layout l = parse("megatron:t=2,p=2");
    layout_build(&w, &tr, &l, &c, 8, g);
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 2);
    l = parse("megatron:t=1,p=2");
    layout_build(&w, &tr, &l, &c, 8, g);
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 2);
    l = parse("megatron:t=2,p=8");
    layout_build(&w, &tr, &l, &c, 8, g);
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 8);
    l = parse("megatron:t=2,p=2");
    layout_build(&w, &tr, &l, &c, 8, g);
    o.jitter = 0.01;
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 8);
    o = (exec_opts){0};
    o.n_stragglers = 1;
    o.straggler_rank[0] = 3;
    o.straggler_factor[0] = 1.5;
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 8);
    o = (exec_opts){0};
    o.full = 1;
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 8);
    o = (exec_opts){0};
    o.trace = (tr_writer *)1; /* only tested for NULL */
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 8);
    o = (exec_opts){0};
    /* a non-pipelined graph is exec_symmetry_unit's */
    l = parse("zero3");
    layout_build(&w, &tr, &l, &c, 8, g);
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 8);
    sc_err e;
    spec_model m;
    ck_assert_int_eq(spec_load_model("configs/models/gpt3-1.3b.json", &m, &e), 0);
    wl_build(&m, &tr, &w);
    ck_assert_int_eq(spec_load_cluster("tests/fixtures/p4d-oversub.json", &c, &e), 0);
    l = parse("megatron:t=8,p=2");
    layout_build(&w, &tr, &l, &c, 16, g);
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 4);
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p4d.24xlarge.json", &c, &e), 0);
    layout_build(&w, &tr, &l, &c, 16, g);
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 2);
    layout_build(&w, &tr, &l, &c, 32, g);
    ck_assert_int_eq(exec_pipe_symmetry_unit(g, &c, &o), 32);
    free(g);
}
END_TEST

/* Blocks per stage s of a layout over `layers` (sum of its vp chunks), via layout_pipe_split_layout. */
static int stage_blocks(const char *layout, int layers, int s, int *blocks)
{
    spec_layout l = parse(layout);
    layout_pipe_split_layout(&l, layers, blocks);
    int n = 0;
    for (int c = 0; c < (l.vp > 1 ? l.vp : 1); c++)
        n += blocks[c * l.pp + s];
    return n;
}

START_TEST(test_split_counts)
{
    int b[LO_MAX_VSTAGES];
    /* Llama-3.1-405B (126 layers), p = 8, vp = 8, split=embed+loss (Megatron-Core
     * get_num_layers_to_build): (126 + 2) / 8 = 16 per stage, 16 / 8 = 2 per virtual stage; the
     * first virtual stage (stage 0, chunk 0: k = 0) holds the embedding and 2 - 1 = 1 block, the
     * last (stage 7, chunk 7: k = 63) the loss and 1 block: stages 0 and 7 hold 1 + 7 x 2 = 15,
     * stages 1..6 16; 15 + 6 x 16 + 15 = 126 */
    const char *L = "megatron:t=8,p=8,vp=8,split=embed+loss";
    ck_assert_int_eq(stage_blocks(L, 126, 0, b), 15);
    ck_assert_int_eq(b[0], 1);
    ck_assert_int_eq(b[63], 1);
    for (int k = 1; k < 63; k++)
        ck_assert_int_eq(b[k], 2);
    ck_assert_int_eq(stage_blocks(L, 126, 7, b), 15);
    for (int s = 1; s < 7; s++)
        ck_assert_int_eq(stage_blocks(L, 126, s, b), 16);
    /* first=16,last=14 over 126, p = 8, vp = 2: the 126 - 30 = 96 middle layers over 6 stages,
     * 16 each, 8 per chunk; stage 0 8 + 8, stage 7 7 + 7 */
    L = "megatron:t=8,p=8,vp=2,first=16,last=14";
    ck_assert_int_eq(stage_blocks(L, 126, 0, b), 16);
    ck_assert_int_eq(b[0], 8);
    ck_assert_int_eq(b[8], 8);
    ck_assert_int_eq(stage_blocks(L, 126, 7, b), 14);
    ck_assert_int_eq(b[7], 7);
    ck_assert_int_eq(b[15], 7);
    for (int s = 1; s < 7; s++)
        ck_assert_int_eq(stage_blocks(L, 126, s, b), 16);
    /* last alone: 7 layers, p = 4, last = 1: (7 - 1) / 3 = 2 on stages 0..2 */
    ck_assert_int_eq(stage_blocks("megatron:t=1,p=4,last=1", 7, 3, b), 1);
    ck_assert_int_eq(b[0] + b[1] + b[2], 6);
    /* split=embed alone, 7 layers, p = 4: (7 + 1) / 4 = 2 each, the first one fewer */
    ck_assert_int_eq(stage_blocks("megatron:t=1,p=4,split=embed", 7, 0, b), 1);
    ck_assert_int_eq(b[1] + b[2] + b[3], 6);
    /* split=loss: the last one fewer */
    ck_assert_int_eq(stage_blocks("megatron:t=1,p=4,split=loss", 7, 3, b), 1);
    /* split=even: layout_pipe_split's blocks, every entry */
    int e[LO_MAX_VSTAGES];
    stage_blocks("megatron:t=8,p=8,vp=4,split=even", 100, 0, b);
    layout_pipe_split(100, 8, 4, e);
    ck_assert_int_eq(memcmp(b, e, sizeof(int) * 32), 0);
}
END_TEST

START_TEST(test_split_parse_errors)
{
    char buf[96];
    spec_layout l = parse("megatron:t=8,p=8,vp=8,cp=2,split=embed+loss");
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "megatron:t=8,p=8,vp=8,cp=2,split=embed+loss");
    l = parse("megatron:t=8,p=8,vp=2,last=14,first=16");
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "megatron:t=8,p=8,vp=2,first=16,last=14");
    l = parse("megatron:t=8,p=8,split=even");
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "megatron:t=8,p=8");
    sc_err err;
    spec_layout bad;
    ck_assert_int_eq(spec_layout_parse("megatron:t=8,p=8,split=head", &bad, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "in \"megatron:t=8,p=8,split=head\": expected split=even, embed, loss or embed+loss, got \"head\"");
    ck_assert_int_eq(spec_layout_parse("megatron:t=8,p=8,first=0", &bad, &err), SC_EINPUT);

    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    l = parse("megatron:t=2,p=2,split=embed,first=2");
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "megatron:t=2,p=2,split=embed,first=2: expected split=... or first=/last=, not both");
    l = parse("megatron:t=2,p=1,last=2");
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    spec_model m = test_tiny_model(8);
    /* 8 + 1 = 9 layers counted do not split over p = 2 */
    l = parse("megatron:t=1,p=2,split=embed");
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "megatron:t=1,p=2,split=embed: the 8 layers of tiny8 with the embedding / loss counted (9) "
                               "must split evenly over p x vp = 2");
    /* first = 3 with vp = 2: 3 chunks of 1.5 */
    l = parse("megatron:t=1,p=2,vp=2,first=3");
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "megatron:t=1,p=2,vp=2,first=3: expected first=3 divisible by vp = 2");
    /* p = 2, first = 4 and last = 2 leave 2 layers for no middle stage */
    l = parse("megatron:t=1,p=2,first=4,last=2");
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "megatron:t=1,p=2,first=4,last=2: first + last = 6 of the 8 layers of tiny8 leave 2 for 0 "
                               "middle stages");
    l = parse("megatron:t=1,p=2,first=4,last=4");
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), 0);
    l = parse("megatron:t=1,p=2,split=embed+loss"); /* 10 / 2 = 5 per stage */
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), 0);
}
END_TEST

START_TEST(test_split_engines)
{
    /* an even split spelled as first/last (8 layers, p = 2, vp = 2: 4 per stage, 2 per chunk)
     * and as split=even: the old even split bit for bit, in both engines */
    double an0, sim0, an, sim;
    both("megatron:t=2,p=2,vp=2", 2, 4, 1e11, &an0, &sim0);
    both("megatron:t=2,p=2,vp=2,first=4,last=4", 2, 4, 1e11, &an, &sim);
    ck_assert(an == an0 && sim == sim0);
    both("megatron:t=2,p=2,vp=2,split=even", 2, 4, 1e11, &an, &sim);
    ck_assert(an == an0 && sim == sim0);
    /* uneven stages (3 and 5 blocks) on test_engines_agree's uncontended duo setting: the
     * engines agree; the slower stage (5 blocks) sets the pace, so the step is longer than the
     * even split's (4 and 4) and no shorter than moving a block the other way (5 and 3) */
    double an1, sim1;
    both("megatron:t=2,p=2", 2, 6, 1e11, &an0, &sim0);
    for (int m = 1; m <= 6; m++) {
        both("megatron:t=2,p=2,first=3,last=5", 2, m, 1e11, &an, &sim);
        ck_assert_msg(fabs(sim - an) <= 1e-9 * an, "m=%d: model %.12g sim %.12g", m, an, sim);
    }
    ck_assert_msg(an > an0, "uneven %.12g even %.12g", an, an0);
    both("megatron:t=2,p=2,first=5,last=3", 2, 6, 1e11, &an1, &sim1);
    ck_assert_msg(an1 > an0, "uneven %.12g even %.12g", an1, an0);
    ck_assert_msg(fabs(sim1 - an1) <= 1e-9 * an1, "model %.12g sim %.12g", an1, sim1);
    /* split=embed+loss over 8 layers, p = 2: (8 + 2) / 2 = 5 per stage, 4 blocks each: the
     * blocks of the even split, so the same step in both engines */
    both("megatron:t=2,p=2,split=embed+loss", 2, 6, 1e11, &an, &sim);
    ck_assert(an == an0 && sim == sim0);
}
END_TEST

/* Megatron-LM v2.x (sc36): each stage's data-parallel reduces start after its last op (train_step
 * calls allreduce_gradients after forward_backward_func, training.py L360-370 at v2.5).
 * test_reduce_overlap's pipeline (p = 2, v = 2, m = 2, chunk forward 0.5, backward 1, reduces
 * 0.75 per chunk): stage 0's last op ends at 7.5, its two reduces run 7.5-9.0; stage 1's at
 * 6.5, reduces 6.5-8.0: step 9.0 (8.25 with each chunk's reduce started as its gradients end),
 * exposed (1.5 + 1.5) / 2 = 1.5 per stage. */
START_TEST(test_reduce_after_flush)
{
    an_pipe_timed *t = pipe_2x2x2();
    for (int k = 0; k < 4; k++)
        t->reduce_s[k] = 0.75;
    t->reduce_kind = COLL_ALLREDUCE;
    t->reduce_after_flush = 1;
    an_result r, w;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(an_pipe_run(t, &r), 0);
    ck_assert_double_eq_tol(r.step_s, 9.0, 1e-12);
    ck_assert_double_eq_tol(r.exposed_s[COLL_ALLREDUCE], 1.5, 1e-12);
    ck_assert_int_eq(an_pipe_walk(t, &w), 0);
    ck_assert_double_eq_tol(w.step_s, 9.0, 1e-12);
    t->reduce_after_flush = 0; /* the same pipeline with each reduce as its chunk ends */
    ck_assert_int_eq(an_pipe_run(t, &r), 0);
    ck_assert_double_eq_tol(r.step_s, 8.25, 1e-12);
    /* m = 200: the closed form itself (an_pipe_run could fall back to the walk) equals the walk */
    t->reduce_after_flush = 1;
    t->pipe.m = 200;
    ck_assert_int_eq(an_pipe_closed(t, &r), 1);
    ck_assert_int_eq(an_pipe_walk(t, &w), 0);
    ck_assert_double_eq_tol(r.step_s, w.step_s, 1e-12 * w.step_s);
    ck_assert_double_eq_tol(r.exposed_s[COLL_ALLREDUCE], w.exposed_s[COLL_ALLREDUCE], 1e-9);
    free(t);
}
END_TEST

/* The scatter-gather's all-gather on the receiver (recv_gather_s, Megatron-LM v2.5). 1F1B, p = 2,
 * m = 1, F = 1, B = 2, send X = 0.1, gather G = 0.05, no hold: S0 F0 0-1; S1 receives at 1.1,
 * gathers 1.1-1.15, F0 1.15-2.15, B0 2.15-4.15 (the last stage's backward takes no input from a
 * send: no gather); S0 receives the gradient at 4.25, gathers 4.25-4.30, B0 4.30-6.30: step
 * 6.30 (6.20 without), exposed all-gather (0.05 + 0.05) / 2 = 0.05. With m = 200 on 4 stages
 * the closed form still equals the walk. */
START_TEST(test_recv_gather_hand)
{
    an_pipe_timed *t = calloc(1, sizeof *t);
    ck_assert_ptr_nonnull(t);
    t->pipe = (lo_pipe){.p = 2, .v = 1, .m = 1, .sched = PIPE_1F1B, .n_vstages = 2};
    for (int k = 0; k < 2; k++) {
        t->fwd[k].dur = t->fwd[k].busy = 1;
        t->bwd[k].dur = t->bwd[k].busy = 2;
    }
    t->p2p_s = 0.1;
    an_result r, w;
    ck_assert_int_eq(an_pipe_walk(t, &w), 0);
    ck_assert_double_eq_tol(w.step_s, 6.2, 1e-12);
    t->recv_gather_s = 0.05;
    ck_assert_int_eq(an_pipe_walk(t, &w), 0);
    ck_assert_double_eq_tol(w.step_s, 6.3, 1e-12);
    ck_assert_double_eq_tol(w.exposed_s[COLL_ALLGATHER], 0.05, 1e-12);
    t->pipe = (lo_pipe){.p = 4, .v = 1, .m = 200, .sched = PIPE_1F1B, .n_vstages = 4};
    for (int k = 0; k < 4; k++) {
        t->fwd[k].dur = t->fwd[k].busy = 1;
        t->bwd[k].dur = t->bwd[k].busy = 2;
    }
    t->p2p_hold_s = 0.15;
    /* an_pipe_closed itself: an_pipe_run would fall back to the walk where the closed form does
     * not close, and the comparison below could not fail */
    ck_assert_int_eq(an_pipe_closed(t, &r), 1);
    ck_assert_int_eq(an_pipe_walk(t, &w), 0);
    ck_assert_double_eq_tol(r.step_s, w.step_s, 1e-12 * w.step_s);
    ck_assert_double_eq_tol(r.exposed_s[COLL_ALLGATHER], w.exposed_s[COLL_ALLGATHER], 1e-9);
    free(t);
}
END_TEST

/* Which releases run the 2021 rules (framework.h): Megatron-LM v2.x only. */
START_TEST(test_lm2_predicates)
{
    spec_training tr;
    spec_training_defaults(&tr);
    ck_assert_int_eq(fw_mg_tp_ar_async(&tr), 1); /* framework ideal */
    ck_assert_int_eq(fw_mg_reduce_after_flush(&tr), 0);
    tr.framework = FW_MEGATRON; /* Megatron-Core, unversioned */
    ck_assert_int_eq(fw_mg_tp_ar_async(&tr), 1);
    ck_assert_int_eq(fw_mg_reduce_after_flush(&tr), 0);
    tr.framework_version = 800; /* core 0.8 */
    ck_assert_int_eq(fw_mg_tp_ar_async(&tr), 1);
    ck_assert_int_eq(fw_mg_reduce_after_flush(&tr), 0);
    tr.framework_version = FW_MG_LM2; /* v2.0 */
    ck_assert_int_eq(fw_mg_tp_ar_async(&tr), 0);
    ck_assert_int_eq(fw_mg_reduce_after_flush(&tr), 1);
    tr.framework_version = FW_MG_LM25;
    ck_assert_int_eq(fw_mg_tp_ar_async(&tr), 0);
    ck_assert_int_eq(fw_mg_reduce_after_flush(&tr), 1);
    tr.framework = FW_DEEPSPEED; /* a version number of another framework means nothing here */
    ck_assert_int_eq(fw_mg_tp_ar_async(&tr), 1);
    ck_assert_int_eq(fw_mg_reduce_after_flush(&tr), 0);
}
END_TEST

/* The backward block's inline all-reduces beside the weight-gradient GEMMs: a fraction of the
 * compute for Megatron-Core (the asynchronous input-gradient all-reduce), none for Megatron-LM
 * v2.5 (synchronous); the step of megatron:t=2,p=1,sp=0 on one duo node grows by it. */
static double tp_bwd_overlap(int ver, double *step)
{
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    tr.framework = FW_MEGATRON;
    tr.framework_version = ver;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    cost_calib k = test_tiny_calib();
    wl w;
    wl_build(&mo, &tr, &w);
    spec_layout l = parse("megatron:t=2,p=1,sp=0");
    sc_err err;
    ck_assert_msg(spec_layout_check(&l, &c, 1, &err) == 0, "%s", err.text);
    an_result r;
    an_predict(&w, &tr, &l, &c, 1, &k, &r);
    *step = r.step_s;
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &c, 1, g);
    double ov = -1;
    for (int i = 0; i < g->micro.n_items; i++) {
        const lo_item *it = &g->micro.item[i];
        if (it->pass == LO_BWD && w.layer[it->layer].kind == WL_BLOCK)
            ov = it->inline_overlap;
    }
    free(g);
    return ov;
}

START_TEST(test_lm2_tp_allreduce_sync)
{
    double s_core, s_lm;
    ck_assert_double_gt(tp_bwd_overlap(0, &s_core), 0);
    ck_assert_double_eq(tp_bwd_overlap(FW_MG_LM25, &s_lm), 0);
    ck_assert_double_gt(s_lm, s_core);
}
END_TEST

/* Both engines on Megatron-LM v2.5's pipeline rules (scatter-gather all-gather on receive,
 * reduces after the flush): recv_gather_s is the tensor-parallel all-gather of one whole send
 * (cost_coll_best of p2p_bytes over GRP_AX0), only with the scatter-gather (sp = 0, t > 1);
 * where nothing contends (dp = 1) the engines agree; with dp = 2 the simulator is never faster. */
START_TEST(test_engines_agree_lm2)
{
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    tr.framework = FW_MEGATRON;
    tr.framework_version = FW_MG_LM25;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    cost_calib k = test_tiny_calib();
    wl w;
    wl_build(&mo, &tr, &w);
    static const char *const L[] = {"megatron:t=2,p=2,sp=0", "megatron:t=2,p=2"};
    for (int i = 0; i < 2; i++) {
        spec_layout l = parse(L[i]);
        lo_graph *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        layout_build(&w, &tr, &l, &c, 2, g);
        an_pipe_timed *t = malloc(sizeof *t);
        ck_assert_ptr_nonnull(t);
        an_pipe_time_comm(g, &tr, &k, &c, t);
        double want = i == 0 ? cost_coll_best(&k, COLL_ALLGATHER, g->pipe.p2p_bytes, 1, &g->group[GRP_AX0], NULL) : 0;
        ck_assert_double_eq_tol(t->recv_gather_s, want, 1e-15);
        ck_assert_int_eq(t->reduce_after_flush, 1);
        if (i == 0)
            ck_assert_double_gt(t->recv_gather_s, 0);
        free(t);
        free(g);
    }
    double an, sim;
    for (int m = 1; m <= 4; m++) {
        both_fw("megatron:t=2,p=2,sp=0", 2, m, 1e11, FW_MEGATRON, FW_MG_LM25, &an, &sim);
        ck_assert_msg(fabs(sim - an) <= 1e-9 * an, "dp 1 m=%d: model %.12g sim %.12g", m, an, sim);
        both_fw("megatron:t=2,p=2,sp=0,zero1=0", 4, m, 1e9, FW_MEGATRON, FW_MG_LM25, &an, &sim);
        ck_assert_msg(sim >= an * (1 - 1e-9), "dp 2 m=%d: model %.12g sim %.12g", m, an, sim);
    }
}
END_TEST

/* Both engines on g (layout l on 2 nodes) read the stages' optimizer times t->opt_s
 * (an_pipe_time): their optimizer means are the two stages' mean; with `same_step` (dp 1,
 * nothing contends) their steps agree. */
static void engines_read_stage_opt(const lo_graph *g, const wl *w, const spec_training *tr, const spec_layout *l,
                                   const spec_cluster *c, const cost_calib *k, const an_pipe_timed *t, int same_step)
{
    an_result r;
    an_predict(w, tr, l, c, 2, k, &r);
    exec_opts o = {0};
    o.seed = 1;
    exec_result x;
    sc_err err;
    ck_assert_msg(exec_pipe_run(g, w, tr, k, c, &o, &x, &err) == 0, "%s", err.text);
    double mean = (t->opt_s[0] + t->opt_s[1]) / 2;
    ck_assert_msg(fabs(r.optimizer_s - mean) <= 1e-12 * mean, "model %.12g want %.12g", r.optimizer_s, mean);
    ck_assert_msg(fabs(x.optimizer_s - mean) <= 1e-9 * mean, "sim %.12g want %.12g", x.optimizer_s, mean);
    if (same_step)
        ck_assert_msg(fabs(x.step_s - r.step_s) <= 1e-9 * r.step_s, "step: model %.12g sim %.12g", r.step_s, x.step_s);
}

/* optpipe: a stage's optimizer step follows the AdamW implementation and optimizer_type as the
 * step without pipelines does (cost_optimizer_impl_time), over the parameters and the parameter
 * tensors of the stage's own layers; it was fused AdamW whatever the training said.
 * tiny4 with 8 layers (hidden 64, 4 heads, ffn 256 GeLU, vocab 128, no biases, LayerNorm,
 * untied, rotary), 4 blocks per stage.
 * Tensors (fw_param_tensors): a block's qkv, proj, fc1 and fc2 weights and two norms' weight and
 * bias: 4 + 4 = 8; the embedding's table: 1; the head's final norm (2) and output: 3. Stage 0:
 * 1 + 4 x 8 = 33, stage 1: 4 x 8 + 3 = 35 (the model's 8 x 8 + 1 + 3 = 68).
 * Parameters: a block's linears 64 x 192 + 64 x 64 + 2 x 64 x 256 = 49152, norms 2 x 2 x 64 =
 * 256; embedding and output 128 x 64 = 8192 each, final norm 128.
 *  - megatron:t=2,p=2 on 2 duo nodes (dp 1): a rank holds 1 / t of every layer's parameters
 *    (wl_localize_megatron, the norms' too): block 49408 / 2 = 24704; stage 0: 4 x 24704 +
 *    8192 / 2 = 102912, stage 1: 4 x 24704 + 8320 / 2 = 102976.
 *  - fsdp2:dp=2,t=1,p=2 (torchtitan; the distributed-optimizer boundary, zero1): Adam on the
 *    1 / dp shard of a whole stage: (4 x 49408 + 8192) / 2 = 102912, (4 x 49408 + 8320) / 2 =
 *    102976.
 * Fused on the tiny calibration: P x 16 B / 1e12 B/s. Foreach and for-loop AdamW: x 80 / 28
 * (wl_opt_bytes_per_param), for-loop + 8 launches per tensor (launch_s 1e-5 here: 33 x 8 x 1e-5
 * = 2.64 ms on megatron's stage 0); SGD in bf16: x 3 x 2 / 28 (FW_SGD_BYTES_PER_PARAM), its
 * for-loop + 1 launch per tensor. Both engines read the stage times (an_pipe_time): their
 * optimizer means ((stage 0 + stage 1) / 2) agree, and with dp 1 their steps. */
START_TEST(test_stage_optimizer_impl)
{
    static const struct {
        const char *l;
        spec_framework fw;
        double P[2];
    } lay[] = {{"megatron:t=2,p=2", FW_MEGATRON, {102912, 102976}}, {"fsdp2:dp=2,t=1,p=2", FW_FSDP2, {102912, 102976}}};
    static const struct {
        int impl, sgd;
        double scale, per_tensor;
    } opt[] = {{OPT_IMPL_FUSED, 0, 1, 0},          {OPT_IMPL_FOREACH, 0, 80.0 / 28, 0}, {OPT_IMPL_FORLOOP, 0, 80.0 / 28, 8},
               {OPT_IMPL_FOREACH, 1, 6.0 / 28, 0}, {OPT_IMPL_FORLOOP, 1, 6.0 / 28, 1},  {OPT_IMPL_DEFAULT, 0, 0, 0}};
    const double T[2] = {33, 35}, launch = 1e-5;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e11);
    cost_calib k = test_tiny_calib();
    k.kern.launch_s = launch;
    lo_graph *g = malloc(sizeof *g);
    an_pipe_timed *t = malloc(sizeof *t);
    ck_assert(g && t);
    for (int li = 0; li < 2; li++)
        for (int oi = 0; oi < 6; oi++) {
            spec_model mo;
            spec_training tr;
            tiny4(&mo, &tr, 8);
            tr.grad_accum = 4;
            tr.framework = lay[li].fw;
            tr.opt_impl = opt[oi].impl;
            tr.opt_sgd = opt[oi].sgd;
            tr.grad_clip = 0; /* Megatron's clip off: the step work alone (test_stage_step_work) */
            /* the default: megatron fused, FSDP2 foreach (fw_opt_impl) */
            double scale = opt[oi].impl ? opt[oi].scale : lay[li].fw == FW_FSDP2 ? 80.0 / 28 : 1;
            wl w;
            wl_build(&mo, &tr, &w);
            spec_layout l = parse(lay[li].l);
            sc_err err;
            ck_assert_msg(spec_layout_check_training(&l, &tr, &err) == 0, "%s: %s", lay[li].l, err.text);
            layout_build(&w, &tr, &l, &c, 2, g);
            an_pipe_time_comm(g, &tr, &k, &c, t);
            for (int s = 0; s < 2; s++) {
                ck_assert_double_eq(g->pipe.stage_tensors[s], T[s]);
                ck_assert_double_eq(g->pipe.stage_params[s] / (li ? 2 : 1), lay[li].P[s]);
                double want = lay[li].P[s] * 16 / 1e12 * scale + opt[oi].per_tensor * T[s] * launch;
                ck_assert_msg(fabs(t->opt_s[s] - want) <= 1e-12 * want, "%s impl %d sgd %d stage %d: %.12g want %.12g",
                              lay[li].l, opt[oi].impl, opt[oi].sgd, s, t->opt_s[s], want);
            }
            /* the stages' launches add up to the whole model's (fw_schedule) */
            ck_assert_double_eq(opt[oi].per_tensor * (T[0] + T[1]), g->sched.opt_launches);
            engines_read_stage_opt(g, &w, &tr, &l, &c, &k, t, li == 0);
        }
    free(t);
    free(g);
}
END_TEST

/* stacks27: torch's clip in its foreach form (framework.c fw_trainer_step_shard, SPEC_CLIP_FOREACH)
 * against the per-parameter loop, bf16 (2 B) under FSDP2, no amp. Bytes: read (norm) + read and
 * write (mul_) of each gradient, 3 x 2 x psi either way. Launches, by hand from MultiTensorApply.cuh
 * (65536-element chunks, a launch per 320 blocks or 110 tensors, whichever fills first):
 *  - psi 62914560 = 960 chunks over 10 tensors: 970 blocks -> ceil(970 / 320) = 4 per pass,
 *    2 x 4 + 5 = 13 (the loop: 2 x 10 + 3 = 23);
 *  - psi 300000 over 300 tensors: 304.6 blocks -> 1 by blocks, ceil(300 / 110) = 3 by tensors:
 *    2 x 3 + 5 = 11 (the loop: 603);
 *  - off (0): nothing. */
START_TEST(test_clip_foreach)
{
    spec_training tr;
    spec_training_defaults(&tr);
    tr.framework = FW_FSDP2;
    static const struct {
        double psi, tensors, loop_k, foreach_k;
    } v[] = {{62914560, 10, 23, 13}, {300000, 300, 603, 11}};
    for (int i = 0; i < 2; i++)
        for (int form = 0; form <= SPEC_CLIP_FOREACH; form++) {
            double s, b, k;
            tr.grad_clip = form;
            fw_trainer_step_shard(&tr, 2, v[i].psi, v[i].tensors, &s, &b, &k);
            ck_assert_double_eq(s, 0);
            ck_assert_double_eq(b, form ? 6 * v[i].psi : 0);
            ck_assert_double_eq(k, form == 0 ? 0 : form == 1 ? v[i].loop_k : v[i].foreach_k);
        }
}
END_TEST

/* pipestep: a stage's trainer step work (framework.c fw_trainer_step_shard), priced in its
 * optimizer time as the step without pipelines prices it (fw_step_work_s), on the gradients the
 * stage's optimizer holds. tiny4 with 8 layers as test_stage_optimizer_impl: P = 102912 on stage 0,
 * 102976 on stage 1, both on megatron:t=2,p=2 over 2 duo nodes (dp 1: 1 / t of each layer) and on
 * megatron:t=1,p=2,zero1=1 over 2 duo nodes (dp 2: the distributed optimizer's half of a whole
 * stage). Tiny calibration: fused AdamW 16 P / 1e12 s, HBM 1e12 B/s at efficiency 1, launch_s
 * 1e-5 (set here), a round trip 2 x 1e-5 + 7.9e-6 = 27.9 us (FW_DS_SYNC_S).
 *  - bf16, Megatron's clip at its default (on): multi_tensor_l2norm reads each fp32 main grad
 *    (4 P bytes) and total_norm.item() waits once: 20 P / 1e12 + 27.9e-6; stage 0:
 *    2.05824e-6 + 27.9e-6 = 29.95824 us;
 *  - fp16: + the unscale's read + write of each main grad (8 P) and found_inf.item():
 *    28 P / 1e12 + 2 x 27.9e-6;
 *  - grad_clip 0 (--clip-grad 0), bf16: fused AdamW alone, 16 P / 1e12.
 * Both engines read the stage times: their optimizer means agree, and with dp 1 their steps.
 * Without pipelines (lo_build_tensor), megatron:t=2,p=1,zero1=1 on one duo node (dp 1) holds
 * (8 x 49408 + 8192 + 8320) / 2 = 205888 parameters: bf16 with the clip, 4 x 205888 bytes and
 * one round trip in the step's checks (fw_sched.step_hbm_bytes, step_syncs); on two nodes (dp 2)
 * half the bytes, the same round trip. Failed before: a stage's optimizer time was fused AdamW
 * alone, and lo_build_tensor added no step work. */
START_TEST(test_stage_step_work)
{
    static const char *const L[] = {"megatron:t=2,p=2", "megatron:t=1,p=2,zero1=1"};
    static const struct {
        spec_precision prec;
        int clip;
        double bytes_per_p, syncs;
    } v[] = {{PREC_BF16, -1, 4, 1}, {PREC_FP16, -1, 12, 2}, {PREC_BF16, 0, 0, 0}};
    const double P[2] = {102912, 102976}, rt = 27.9e-6;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e11);
    cost_calib k = test_tiny_calib();
    k.kern.launch_s = 1e-5;
    lo_graph *g = malloc(sizeof *g);
    an_pipe_timed *t = malloc(sizeof *t);
    ck_assert(g && t);
    for (int li = 0; li < 2; li++)
        for (int vi = 0; vi < 3; vi++) {
            spec_model mo;
            spec_training tr;
            tiny4(&mo, &tr, 8);
            tr.grad_accum = 4;
            tr.framework = FW_MEGATRON;
            tr.precision = v[vi].prec;
            tr.grad_clip = v[vi].clip;
            wl w;
            wl_build(&mo, &tr, &w);
            spec_layout l = parse(L[li]);
            sc_err err;
            ck_assert_msg(spec_layout_check_training(&l, &tr, &err) == 0, "%s: %s", L[li], err.text);
            layout_build(&w, &tr, &l, &c, 2, g);
            ck_assert_int_eq(g->pipe.dp, li ? 2 : 1);
            an_pipe_time_comm(g, &tr, &k, &c, t);
            for (int s = 0; s < 2; s++) {
                double want = (16 + v[vi].bytes_per_p) * P[s] / 1e12 + v[vi].syncs * rt;
                ck_assert_msg(fabs(t->opt_s[s] - want) <= 1e-9 * want, "%s case %d stage %d: %.12g want %.12g", L[li],
                              vi, s, t->opt_s[s], want);
            }
            engines_read_stage_opt(g, &w, &tr, &l, &c, &k, t, li == 0);
        }
    for (int nodes = 1; nodes <= 2; nodes++) {
        spec_model mo;
        spec_training tr;
        tiny4(&mo, &tr, 8);
        tr.framework = FW_MEGATRON;
        wl w;
        wl_build(&mo, &tr, &w);
        spec_layout l = parse("megatron:t=2,p=1,zero1=1");
        layout_build(&w, &tr, &l, &c, nodes, g);
        ck_assert_int_eq(g->pipelined, 0);
        ck_assert_double_eq_tol(g->sched.step_hbm_bytes, 4 * 205888.0 / nodes, 1e-6);
        ck_assert_double_eq(g->sched.step_syncs, 1);
    }
    free(t);
    free(g);
}
END_TEST

/* Tied embeddings under pipeline stages (tiedemb; layout_pipe_tied_params): Megatron keeps a copy of
 * the word embeddings on the last stage, steps it there and all-reduces its gradient with the
 * first stage's once a step. tiny4 (h 64, vocab 128, LayerNorm: a norm 2 h = 128 parameters),
 * megatron:t=2,p=2 on 4 duo nodes (dp = 2). The copy per rank: V h / t = 128 x 64 / 2 = 4096.
 * Untied, the head holds its norm and projection, (128 + 8192) / 2 = 4160 per rank; tied, its norm
 * 64 + the copy 4096 = 4160: the same stage parameters and tensors on every stage (before the fix
 * the tied last stage had 4096 fewer). The all-reduce: 4096 x 4 B (reduce_dtype fp32) between
 * ranks (p - 1) N / p = 4 apart, across nodes: 2 nodes, one rank each, the node's 2 ranks on its
 * NIC at once (as a send between stages); one NCCL call. Untied: none. */
static lo_graph *tied_graph(int tied, an_pipe_timed *o, spec_cluster *c, cost_calib *k)
{
    spec_model mo;
    spec_training tr;
    tiny4(&mo, &tr, 8);
    mo.tied_embeddings = tied;
    tr.reduce_dtype = REDUCE_FP32;
    *c = test_duo_cluster("duo", 5e10, 1e9);
    *k = test_tiny_calib();
    wl w;
    wl_build(&mo, &tr, &w);
    spec_layout l = parse("megatron:t=2,p=2");
    sc_err err;
    ck_assert_msg(spec_layout_check(&l, c, 4, &err) == 0, "%s", err.text);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, c, 4, g);
    an_pipe_time_comm(g, &tr, k, c, o);
    return g;
}

START_TEST(test_tied_last_stage)
{
    an_pipe_timed *o = malloc(2 * sizeof *o);
    ck_assert_ptr_nonnull(o);
    spec_cluster c;
    cost_calib k;
    lo_graph *gu = tied_graph(0, &o[0], &c, &k), *gt = tied_graph(1, &o[1], &c, &k);
    ck_assert_double_eq(gu->pipe.tied_params, 0);
    ck_assert_double_eq(gt->pipe.tied_params, 4096);
    ck_assert_double_eq(gt->sched.reduce_elem_bytes, 4);
    for (int s = 0; s < 2; s++) {
        ck_assert_double_eq(gt->pipe.stage_params[s], gu->pipe.stage_params[s]);
        ck_assert_double_eq(gt->pipe.stage_tensors[s], gu->pipe.stage_tensors[s]);
        ck_assert_double_eq(o[1].reduce_s[s], o[0].reduce_s[s]);
        ck_assert_double_eq(o[1].opt_s[s], o[0].opt_s[s]);
    }
    cost_group pair;
    cost_group_make(&c, 2, (int[]){0}, 1, 2, &pair);
    double want = cost_coll_best(&k, COLL_ALLREDUCE, 4096 * 4.0, 1, &pair, NULL);
    ck_assert(want > 0);
    ck_assert_double_eq(o[1].emb_s, want);
    ck_assert_double_eq(o[0].emb_s, 0);
    free(gu), free(gt), free(o);
}
END_TEST

/* The two engines on a tied pipeline where nothing contends (t = 2, p = 2 on 2 duo nodes, dp = 1:
 * no data-parallel reduce, the embedding all-reduce between the stages' nodes): they agree to
 * rounding, 1F1B, GPipe and interleaved; the tied step is the untied one plus at least the
 * all-reduce (stages 0 and p - 1 wait for each other, then all-reduce, then step: an_pipe_timed.emb_s). */
START_TEST(test_tied_engines_agree)
{
    static const char *const L[] = {"megatron:t=2,p=2", "megatron:t=2,p=2,sched=gpipe", "megatron:t=2,p=2,vp=2"};
    for (int i = 0; i < 3; i++) {
        double an[2], sim[2];
        for (int tied = 0; tied < 2; tied++) {
            spec_model mo;
            spec_training tr;
            tiny4(&mo, &tr, 8);
            mo.tied_embeddings = tied;
            tr.grad_accum = 4;
            test_pipe_both(&mo, &tr, L[i], 2, 1e9, &an[tied], &sim[tied]);
            ck_assert_msg(fabs(sim[tied] - an[tied]) <= 1e-9 * an[tied], "%s tied %d: model %.12g sim %.12g", L[i],
                          tied, an[tied], sim[tied]);
        }
        ck_assert_msg(an[1] > an[0] && sim[1] > sim[0], "%s: tied %.12g untied %.12g", L[i], an[1], an[0]);
    }
}
END_TEST

/* Memory (memory_pipe.c) of a tied head's last stage: test_stage_memory's GPipe case (tiny, a = 1,
 * megatron:t=1,p=4, 8 blocks, m = 8) with the head tied. The last stage holds its 2 blocks (49408
 * each), the head's norm 128 and the word-embedding copy V h / t = 128 x 64 = 8192: 8320 + 2 x
 * 49408, 16 B each (bf16 parameters and gradients, fp32 Adam, dp = 1), with GPipe's 8 x 82432 B
 * of activations: 1714176 + 659456 = 2373632 B against stage 0's (8192 + 2 x 49408) x 16 +
 * 8 x 2 x 36096 = 2289664, so the last stage is the plan's. Without the copy it would be
 * (128 + 2 x 49408) x 16 + 659456 = 2242560 < 2289664: stage 0 reported (activations 577536). */
START_TEST(test_tied_stage_memory)
{
    spec_model m = test_tiny_model(8);
    m.tied_embeddings = 1;
    spec_training tr;
    spec_training_defaults(&tr);
    tr.act_ckpt = 0;
    tr.flash_attention = 0;
    tr.micro_batch = 1;
    tr.grad_accum = 8;
    spec_cluster c = test_duo_cluster("duo", 5e10, 1e10);
    wl w;
    wl_build(&m, &tr, &w);
    spec_layout l = parse("megatron:t=1,p=4,sched=gpipe");
    mem_breakdown mb;
    mem_plan(&w, &tr, &l, 4, &c, &mb);
    ck_assert_double_eq_tol(mb.activations, 8 * 82432.0, 1e-9);
    ck_assert_double_eq_tol(mb.params + mb.grads + mb.optim, 16 * (8320 + 2 * 49408.0), 1e-6);
}
END_TEST

Suite *pipe_suite(void)
{
    Suite *s = suite_create("pipe");
    TCase *tc = tcase_create("megatron");
    tcase_add_test(tc, test_parse);
    tcase_add_test(tc, test_stage_step_work);
    tcase_add_test(tc, test_clip_foreach);
    tcase_add_test(tc, test_split_counts);
    tcase_add_test(tc, test_split_parse_errors);
    tcase_add_test(tc, test_split_engines);
    tcase_add_test(tc, test_bubble);
    tcase_add_test(tc, test_blocking_sends_hand);
    tcase_add_test(tc, test_edge_holds_hand);
    tcase_add_test(tc, test_edge_hold_count);
    tcase_add_test(tc, test_blocking_predicate);
    tcase_add_test(tc, test_engines_agree_blocking);
    tcase_add_test(tc, test_schedules_complete);
    tcase_add_test(tc, test_reduce_overlap);
    tcase_add_test(tc, test_closed_form_equals_walk);
    tcase_add_test(tc, test_closed_form_cost_flat);
    tcase_add_test(tc, test_stage_peak_cut);
    tcase_add_test(tc, test_last_stage_other_chunk_peak);
    tcase_add_test(tc, test_in_flight);
    tcase_add_test(tc, test_sp_activations);
    tcase_add_test(tc, test_stage_memory);
    tcase_add_test(tc, test_stage_memory_selective);
    tcase_add_test(tc, test_n340_fits);
    tcase_add_test(tc, test_core_localized);
    tcase_add_test(tc, test_pp1_equals_tp);
    tcase_add_test(tc, test_engines_agree);
    tcase_add_test(tc, test_engines_agree_boundary_p3dn);
    tcase_add_test(tc, test_pipe_reduce_dtype_fp32);
    tcase_add_test(tc, test_pipe_given_bucket_is_reduce_bytes);
    tcase_add_test(tc, test_tp_comm_overlap);
    tcase_add_test(tc, test_trace_reads_back);
    tcase_add_test(tc, test_param_gather_overlap_pipe);
    tcase_add_test(tc, test_param_gather_overlap_layout);
    tcase_add_test(tc, test_tp_elementwise_split);
    tcase_add_test(tc, test_reduce_after_flush);
    tcase_add_test(tc, test_recv_gather_hand);
    tcase_add_test(tc, test_lm2_predicates);
    tcase_add_test(tc, test_lm2_tp_allreduce_sync);
    tcase_add_test(tc, test_engines_agree_lm2);
    tcase_add_test(tc, test_stage_optimizer_impl);
    tcase_add_test(tc, test_tied_last_stage);
    tcase_add_test(tc, test_tied_engines_agree);
    tcase_add_test(tc, test_tied_stage_memory);
    suite_add_tcase(s, tc);
    TCase *sym = tcase_create("pipe_symmetry");
    tcase_set_timeout(sym, 60);
    tcase_add_test(sym, test_pipe_symmetry_unit);
    tcase_add_test(sym, test_pipe_symmetry_equals_full);
    tcase_add_test(sym, test_pipe_symmetry_contended);
    suite_add_tcase(s, sym);
    return s;
}

/* test_search.c — plan's search (predict/search): families, candidate generation on a tiny
 * cluster, ranking under each objective, folding of identical candidates, and the verdicts
 * ("too close to call", "a tie", "robust"), each derived by hand. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../predict/plan.h"
#include "../predict/ratio.h"
#include "../predict/search.h"
#include "suites.h"
#include "support.h"

static ps_cand mk(double score, double mem, int nodes)
{
    ps_cand c;
    memset(&c, 0, sizeof c);
    c.score = score;
    c.pt.r.mem.total = mem;
    c.pt.nodes = nodes;
    c.pt.r.step_s = 1;
    c.pt.training.micro_batch = 1;
    return c;
}

START_TEST(test_family_mask)
{
    /* bit k = spec_layout_kind k: ddp 0, zero1 1, zero2 2, zero3 3, mics 4 */
    ck_assert_uint_eq(ps_family_mask("ddp"), 1u);
    ck_assert_uint_eq(ps_family_mask("zero3,mics"), (1u << 3) | (1u << 4));
    ck_assert_uint_eq(ps_family_mask("all"), ~0u);
    ck_assert_uint_eq(ps_family_mask("bogus"), 0u);
    ck_assert_uint_eq(ps_family_mask("mics,bogus"), 0u); /* one unknown name: not a family list */
    ck_assert_str_eq(ps_family_name(LAYOUT_MICS), "mics");
    ck_assert_ptr_null(ps_family_name(ps_n_families()));
}
END_TEST

START_TEST(test_layouts_duo)
{
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e10);
    spec_model m = test_tiny_model(2);
    spec_layout out[64];
    unsigned mask = PS_FAM(LAYOUT_DDP) | PS_FAM(LAYOUT_ZERO1) | PS_FAM(LAYOUT_ZERO2) | PS_FAM(LAYOUT_ZERO3) |
                    PS_FAM(LAYOUT_MICS) | PS_FAM(LAYOUT_HSDP);
    /* 1 node = 2 GPUs: ddp, zero1, zero2, zero3 over all; no partition size p with 2 <= p < 2 */
    ck_assert_int_eq(ps_layouts(&c, &m, 1, mask, NULL, out, 64), 4);
    /* 2 nodes = 4 GPUs: the same 4, then p = 2 (a node; p = 3 does not divide 4): mics:p=2 (hier
     * only: p <= 2 GPUs per node), hsdp:p=2, zero1:p=2, zero2:p=2 */
    ck_assert_int_eq(ps_layouts(&c, &m, 2, mask, NULL, out, 64), 8);
    ck_assert_int_eq(out[4].kind, LAYOUT_MICS);
    ck_assert_int_eq(out[4].p, 2);
    ck_assert_int_eq(out[5].kind, LAYOUT_HSDP);
    ck_assert_int_eq(out[6].kind, LAYOUT_ZERO1);
    ck_assert_int_eq(out[6].p, 2);
    /* max caps the count */
    ck_assert_int_eq(ps_layouts(&c, &m, 2, mask, NULL, out, 3), 3);
}
END_TEST

START_TEST(test_rank_and_fold)
{
    /* best score first; equal scores: less memory first; then fewer nodes */
    ps_cand cs[5] = {mk(10, 1, 1), mk(20, 5, 1), mk(20, 3, 2), mk(20, 3, 1), mk(20, 3, 1)};
    qsort(cs, 5, sizeof cs[0], ps_cmp);
    ck_assert(cs[0].score == 20 && cs[0].pt.r.mem.total == 3 && cs[0].pt.nodes == 1);
    ck_assert(cs[2].score == 20 && cs[2].pt.nodes == 2);
    ck_assert(cs[3].pt.r.mem.total == 5);
    ck_assert(cs[4].score == 10);
    /* the two identical candidates (20, 3 B, 1 node) are one choice */
    ck_assert_uint_eq(ps_fold_twins(cs, 5), 4);
    ck_assert_int_eq(cs[0].twins, 1);
    ck_assert_int_eq(cs[1].twins, 0);
    ck_assert_int_eq(cs[1].pt.nodes, 2);
}
END_TEST

START_TEST(test_headroom)
{
    /* 70 of 80 B fits; with 15 B kept free it is short by 70 + 15 - 80 = 5 */
    ps_cand c = mk(1, 70, 1);
    c.pt.r.mem.fits = 1;
    ps_headroom(&c, 80, 15);
    ck_assert_int_eq(c.pt.r.mem.fits, 0);
    ck_assert_double_eq_tol(c.pt.r.mem.short_by, 5, 1e-12);
    /* already short by 5: by 5 + 15 = 20 */
    ps_headroom(&c, 80, 15);
    ck_assert_double_eq_tol(c.pt.r.mem.short_by, 20, 1e-12);
}
END_TEST

START_TEST(test_objectives)
{
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e9);
    c.price_usd_per_hour = 36; /* $0.01 per node-second */
    spec_model m = test_tiny_model(2);
    cost_calib k = test_tiny_calib();
    spec_training tr;
    memset(&tr, 0, sizeof tr);
    tr.micro_batch = 1;
    tr.grad_accum = 1;
    tr.precision = PREC_BF16;
    spec_layout ddp = {.kind = LAYOUT_DDP, .hier = 1};
    sc_err err;
    ps_cand one, two;
    ck_assert_int_eq(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_MODEL, 1, &ddp, &tr, &one, &err), 0);
    ck_assert_int_eq(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_MODEL, 2, &ddp, &tr, &two, &err), 0);
    /* $ per million samples = 36 $/h x nodes / 3600 s/h / (samples/s) x 1e6 */
    ck_assert_double_eq_tol(one.usd_per_msample, 1e4 / one.pt.r.samples_per_s, 1e-9 * one.usd_per_msample);
    ck_assert_double_eq_tol(two.usd_per_msample, 2e4 / two.pt.r.samples_per_s, 1e-9 * two.usd_per_msample);
    ck_assert(one.score == one.pt.r.samples_per_s);
    ck_assert(ps_merit(PS_COST, &one) == 1 / one.usd_per_msample);
    ck_assert(ps_score(PS_COST, &one) == -one.usd_per_msample);
    /* premise: 2 nodes add an all-reduce over a 1 GB/s NIC, so less than twice the samples/s;
     * then a sample costs more on 2 nodes and the cost objective ranks 1 node first */
    ck_assert(two.pt.r.samples_per_s < 2 * one.pt.r.samples_per_s);
    ps_cand cs[2] = {two, one};
    cs[0].score = ps_score(PS_COST, &cs[0]);
    cs[1].score = ps_score(PS_COST, &cs[1]);
    qsort(cs, 2, sizeof cs[0], ps_cmp);
    ck_assert_int_eq(cs[0].pt.nodes, 1);
}
END_TEST

START_TEST(test_verdicts)
{
    /* too close: a 5% change (within 10%) reorders a 5% gap */
    ck_assert_int_eq(ps_verdict_of(5, 0, 1.05, 0.10), PS_TOO_CLOSE);
    ck_assert_int_eq(ps_verdict_of(5, 0, 0.95, 0.10), PS_TOO_CLOSE);
    /* a tie: under 1% apart, and nothing within 4x (or only beyond the uncertainty) reorders */
    ck_assert_int_eq(ps_verdict_of(0.5, -1, 0, 0.10), PS_TIE);
    ck_assert_int_eq(ps_verdict_of(0.5, 1, 2.0, 0.10), PS_TIE);
    /* robust: a 50% drop (beyond 10%) or nothing within 4x */
    ck_assert_int_eq(ps_verdict_of(5, 2, 0.5, 0.10), PS_ROBUST);
    ck_assert_int_eq(ps_verdict_of(5, -1, 0, 0.10), PS_ROBUST);
    ck_assert_double_eq_tol(ps_pct_change(1.25), 25, 1e-12);
    ck_assert_double_eq_tol(ps_pct_change(0.8), 20, 1e-12);
}
END_TEST

START_TEST(test_judge_self_is_a_tie)
{
    /* a candidate against itself: gap 0, and every scaling moves both alike, so none reorders */
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e10);
    spec_model m = test_tiny_model(2);
    cost_calib k = test_tiny_calib();
    spec_training tr;
    memset(&tr, 0, sizeof tr);
    tr.micro_batch = 1;
    tr.grad_accum = 1;
    tr.precision = PREC_BF16;
    spec_layout z3 = {.kind = LAYOUT_ZERO3, .hier = 1};
    sc_err err;
    ps_cand a;
    ck_assert_int_eq(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_MODEL, 2, &z3, &tr, &a, &err), 0);
    ps_judgement j;
    ps_judge(&c, &m, &k, PS_THROUGHPUT, &a, &a, 0.10, &j);
    ck_assert_double_eq_tol(j.gap_pct, 0, 1e-12);
    ck_assert_int_eq(j.sens, -1);
    ck_assert_int_eq(j.verdict, PS_TIE);
}
END_TEST

static int keep_zero3(const ps_cand *c, const void *ctx)
{
    (void)ctx;
    return c->pt.layout.kind == LAYOUT_ZERO3;
}

START_TEST(test_fair_ratio_same_engine)
{
    /* A simulated winner (DDP) against an analytical ZeRO-3: the pair ends with both simulated,
     * and the ratio is the two simulated samples/s, never the simulated over the analytical one.
     * Without the simulator (sim_ok 0) both are analytical. Each expected number is the engine's
     * own answer for that layout, evaluated separately here. */
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e10);
    spec_model m = test_tiny_model(2);
    cost_calib k = test_tiny_calib();
    spec_training tr;
    memset(&tr, 0, sizeof tr);
    tr.micro_batch = 1;
    tr.grad_accum = 1;
    tr.precision = PREC_BF16;
    spec_layout z3 = {.kind = LAYOUT_ZERO3, .hier = 1}, dp = {.kind = LAYOUT_DDP};
    sc_err err;
    ps_cand a_sim, a_mod, b_sim, b_mod;
    ck_assert_int_eq(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_SIM, 2, &dp, &tr, &a_sim, &err), 0);
    ck_assert_int_eq(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_MODEL, 2, &dp, &tr, &a_mod, &err), 0);
    ck_assert_int_eq(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_SIM, 2, &z3, &tr, &b_sim, &err), 0);
    ck_assert_int_eq(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_MODEL, 2, &z3, &tr, &b_mod, &err), 0);
    /* the engines may agree on this small cluster: mark the inputs' own numbers (x2, x3) so that a
     * ratio taken from them, not from the re-run, shows */
    ps_cand b_in = b_mod, a_in = a_sim;
    b_in.pt.r.samples_per_s *= 2;
    a_in.pt.r.samples_per_s *= 3;
    ps_pair pr;
    ck_assert_int_eq(ps_pair_same_engine(&c, &m, &k, PS_THROUGHPUT, &a_sim, &b_in, 1, &pr, &err), 0);
    ck_assert_int_eq(pr.engine, PRED_SIM);
    ck_assert(pr.b.confirmed);
    ck_assert_double_eq_tol(pr.ratio, a_sim.pt.r.samples_per_s / b_sim.pt.r.samples_per_s, 1e-12);
    ck_assert_str_eq(ps_engine_both(pr.engine), "both simulated");
    ck_assert_int_eq(ps_pair_same_engine(&c, &m, &k, PS_THROUGHPUT, &a_in, &b_mod, 0, &pr, &err), 0);
    ck_assert_int_eq(pr.engine, PRED_MODEL);
    ck_assert_double_eq_tol(pr.ratio, a_mod.pt.r.samples_per_s / b_mod.pt.r.samples_per_s, 1e-12);
    ck_assert_str_eq(ps_engine_both(pr.engine), "both analytical");
    /* one engine already: as they are */
    ck_assert_int_eq(ps_pair_same_engine(&c, &m, &k, PS_THROUGHPUT, &a_mod, &b_mod, 1, &pr, &err), 0);
    ck_assert_int_eq(pr.engine, PRED_MODEL);
    /* best of a kind: the highest score that passes, whatever its position */
    ps_cand all[3] = {a_mod, b_mod, b_sim};
    all[1].score = 1, all[2].score = 2;
    ck_assert_ptr_eq(ps_best_where(all, 3, keep_zero3, NULL), &all[2]);
    ck_assert_ptr_null(ps_best_where(all, 1, keep_zero3, NULL));
}
END_TEST

/* The grid of a plan on the duo cluster: every family's layouts on 1, 2, 4 and 8 nodes, each at
 * micro-batch 1, 2 and 4 (grad-accum 4 / mb) where the layout runs with it; *n_out points. */
static ps_point *duo_grid(const spec_cluster *c, const spec_model *m, size_t *n_out)
{
    size_t n = 0, cap = 4096;
    ps_point *pts = calloc(cap, sizeof *pts);
    spec_layout lays[512];
    static const int NODES[] = {1, 2, 4, 8};
    for (size_t ni = 0; ni < 4; ni++) {
        int nl = ps_layouts(c, m, NODES[ni], ~0u, NULL, lays, 512);
        for (int mb = 1; mb <= 4; mb *= 2)
            for (int li = 0; li < nl && n < cap; li++) {
                ps_point *p = &pts[n++];
                p->nodes = NODES[ni];
                p->layout = lays[li];
                p->training.micro_batch = mb;
                p->training.grad_accum = 4 / mb;
                p->training.precision = PREC_BF16;
                if (spec_layout_check_training(&p->layout, &p->training, NULL)) /* as plan skips them */
                    n--;
            }
    }
    *n_out = n;
    return pts;
}

/* Two evaluations of one point are the same answer: the engine's whole result bit for bit (as
 * test_predict_memo_identical compares it), the point it names, and the scores derived from it. */
static void same_cand(const ps_cand *a, const ps_cand *b, size_t i, const char *what)
{
    char la[96], lb[96];
    ck_assert_msg(!memcmp(&a->pt.r, &b->pt.r, sizeof a->pt.r), "point %zu: %s: results differ", i, what);
    ck_assert_str_eq(spec_layout_str(&a->pt.layout, la, sizeof la), spec_layout_str(&b->pt.layout, lb, sizeof lb));
    ck_assert_int_eq(a->pt.engine, b->pt.engine);
    ck_assert_int_eq(a->pt.nodes, b->pt.nodes);
    ck_assert_int_eq(a->pt.gpus, b->pt.gpus);
    ck_assert_int_eq(a->pt.training.micro_batch, b->pt.training.micro_batch);
    ck_assert_int_eq(a->pt.training.grad_accum, b->pt.training.grad_accum);
    ck_assert_msg(a->score == b->score && a->usd_per_msample == b->usd_per_msample, "point %zu: %s: scores differ", i,
                  what);
    ck_assert_int_eq(a->confirmed, b->confirmed);
    ck_assert_int_eq(a->twins, b->twins);
}

START_TEST(test_grid_threads_identical)
{
    /* The grid on 1 and on 3 threads equals a plain loop of ps_eval (no memo) point by point:
     * every point has its own slot and a memo returns what the cost functions returned for the
     * same key (analytic.h), so neither the split nor the memos can change a bit. Called twice on
     * one grid object: the memos carried over from the first call change nothing either. */
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e10);
    c.price_usd_per_hour = 36;
    spec_model m = test_tiny_model(4);
    cost_calib k = test_tiny_calib();
    size_t n;
    ps_point *pts = duo_grid(&c, &m, &n);
    ck_assert_ptr_nonnull(pts);
    /* premise: several runs of 16 points per thread, so that 3 threads all take part */
    ck_assert_msg(n >= 6 * 16, "only %zu points", n);
    ps_cand *ref = calloc(n, sizeof *ref), *one = calloc(n, sizeof *one), *three = calloc(n, sizeof *three);
    ck_assert(ref && one && three);
    sc_err err;
    for (size_t i = 0; i < n; i++) {
        int rc = ps_eval(&c, &m, &k, PS_COST, PRED_MODEL, pts[i].nodes, &pts[i].layout, &pts[i].training, &ref[i], &err);
        ck_assert_msg(rc == 0, "point %zu: %s: %s", i, err.source, err.text);
    }
    ps_grid *g1 = ps_grid_new(1), *g3 = ps_grid_new(3);
    ck_assert(g1 && g3);
    ck_assert_int_eq(ps_grid_threads(g1), 1);
    ck_assert_int_eq(ps_grid_threads(g3), 3);
    for (int pass = 0; pass < 2; pass++) {
        size_t ok1 = 0, ok3 = 0;
        ck_assert_int_eq(ps_grid_eval(g1, &c, &m, &k, PS_COST, pts, n, one, &ok1, &err), 0);
        ck_assert_int_eq(ps_grid_eval(g3, &c, &m, &k, PS_COST, pts, n, three, &ok3, &err), 0);
        ck_assert_uint_eq(ok1, n);
        ck_assert_uint_eq(ok3, n);
        for (size_t i = 0; i < n; i++) {
            same_cand(&ref[i], &one[i], i, "1 thread");
            same_cand(&ref[i], &three[i], i, "3 threads");
        }
    }
    /* an empty grid: nothing evaluated, no error */
    size_t ok = 1;
    ck_assert_int_eq(ps_grid_eval(g3, &c, &m, &k, PS_COST, pts, 0, three, &ok, &err), 0);
    ck_assert_uint_eq(ok, 0);
    ps_grid *gd = ps_grid_new(0); /* one per online core: at least one */
    ck_assert(gd && ps_grid_threads(gd) >= 1);
    ps_grid_free(gd);
    ps_grid_free(g1);
    ps_grid_free(g3);
    free(ref);
    free(one);
    free(three);
    free(pts);
}
END_TEST

START_TEST(test_grid_first_error)
{
    /* Two impossible points, at 37 and at 90: mics:p=3 on 2 nodes (3 does not divide 4 GPUs) and
     * zero1:p=5 on 4 nodes (nor 8). A loop stops at 37 with its error; the grid reports that
     * one (not 90's, which a second thread may meet first) and 37 points evaluated, on 1 and on 3
     * threads, with 90 before or after 37 in the run order of the threads. */
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e10);
    spec_model m = test_tiny_model(4);
    cost_calib k = test_tiny_calib();
    size_t n;
    ps_point *pts = duo_grid(&c, &m, &n);
    ck_assert_ptr_nonnull(pts);
    ck_assert_uint_ge(n, 100);
    pts[37].nodes = 2;
    pts[37].layout = (spec_layout){.kind = LAYOUT_MICS, .p = 3, .hier = 1};
    pts[90].nodes = 4;
    pts[90].layout = (spec_layout){.kind = LAYOUT_ZERO1, .p = 5, .hier = 1};
    ps_cand *out = calloc(n, sizeof *out), one;
    ck_assert_ptr_nonnull(out);
    sc_err want, got;
    ck_assert_int_ne(ps_eval(&c, &m, &k, PS_THROUGHPUT, PRED_MODEL, 2, &pts[37].layout, &pts[37].training, &one, &want), 0);
    for (int threads = 1; threads <= 3; threads += 2) {
        ps_grid *g = ps_grid_new(threads);
        ck_assert_ptr_nonnull(g);
        size_t ok = 0;
        memset(&got, 0, sizeof got);
        ck_assert_int_eq(ps_grid_eval(g, &c, &m, &k, PS_THROUGHPUT, pts, n, out, &ok, &got), SC_EINPUT);
        ck_assert_uint_eq(ok, 37);
        ck_assert_str_eq(got.text, want.text);
        ck_assert_str_eq(got.source, want.source);
        ps_grid_free(g);
    }
    free(out);
    free(pts);
}
END_TEST

/* ---- best against best (predict/plan.c) and throughput ratios (predict/ratio.c) ---------- */

static int keep_zero3_16(const ps_cand *c, const void *ctx)
{
    (void)ctx;
    return c->pt.layout.kind == LAYOUT_ZERO3 && c->pt.nodes == 16;
}

/* The rival of a winner is its best on the winner's engine. Regression (issue 30 item 1): plan took
 * the highest score of the kind whatever its engine, so a simulated winner met an analytical zero3
 * split scoring 97 that had ranked below the simulated zero3 split (95 simulated; the top --confirm
 * are the analytically best, so a simulated rival split was the analytically better one), and the
 * ratio was taken against that split re-simulated: not the rival's best. */
START_TEST(test_rival_same_engine)
{
    ps_cand all[5] = {mk(100, 1, 16), mk(95, 1, 16), mk(97, 1, 16), mk(99, 1, 8), mk(90, 1, 16)};
    all[0].pt.layout.kind = LAYOUT_MICS;
    for (int i = 1; i < 5; i++)
        all[i].pt.layout.kind = LAYOUT_ZERO3;
    all[0].confirmed = all[1].confirmed = all[3].confirmed = 1; /* 2 and 4: analytical */
    /* simulated winner: the best simulated zero3 on 16 nodes (95), not the analytical 97 (what
     * ps_best_where, the rule before, returns) nor the 99 on 8 nodes */
    ck_assert_ptr_eq(pl_best_rival(all, 5, &all[0], keep_zero3_16, NULL), &all[1]);
    ck_assert_ptr_eq(ps_best_where(all, 5, keep_zero3_16, NULL), &all[2]);
    /* analytical winner: the best analytical zero3 (97) */
    all[0].confirmed = 0;
    ck_assert_ptr_eq(pl_best_rival(all, 5, &all[0], keep_zero3_16, NULL), &all[2]);
    /* no rival on the winner's engine: the best on the other (97: the pair is then put on one engine) */
    all[2].confirmed = all[4].confirmed = 1;
    ck_assert_ptr_eq(pl_best_rival(all, 5, &all[0], keep_zero3_16, NULL), &all[2]);
    all[2].confirmed = all[4].confirmed = 0;
    all[1].confirmed = 0; /* all analytical now but 3 (8 nodes) */
    all[0].confirmed = 1;
    ck_assert_ptr_eq(pl_best_rival(all, 5, &all[0], keep_zero3_16, NULL), &all[2]);
    /* never the winner itself, even when keep() accepts it; none: NULL */
    all[0].pt.layout.kind = LAYOUT_ZERO3;
    all[0].confirmed = 0;
    ck_assert_ptr_eq(pl_best_rival(all, 5, &all[0], keep_zero3_16, NULL), &all[2]);
    ck_assert_ptr_null(pl_best_rival(all, 1, &all[0], keep_zero3_16, NULL));
}
END_TEST

/* speed-up = throughput ratio. Regression (issue 30 item 1): predict divided step times, so
 * megatron:t=2,p=1,cp=2 (4 sequences in 0.034 s: 117.6/s) against megatron:t=2,p=1 (8 sequences
 * in 0.045 s: 177.8/s) printed 0.034 / 0.045 = 0.76x for the row training 1.51x as fast. */
START_TEST(test_speedup_is_throughput)
{
    an_result a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.samples_per_step = 4, a.step_s = 0.034, a.samples_per_s = 4 / 0.034;
    b.samples_per_step = 8, b.step_s = 0.045, b.samples_per_s = 8 / 0.045;
    ck_assert(!ratio_same_batch(&a, &b));
    /* (8 / 0.045) / (4 / 0.034) = 2 x 0.034 / 0.045 = 1.5111 */
    ck_assert_double_eq_tol(ratio_speedup(&a, &b), 2 * 0.034 / 0.045, 1e-12);
    ck_assert_double_eq_tol(ratio_speedup(&b, &a), 0.045 / (2 * 0.034), 1e-12);
    /* the same batch: the step times' ratio, bit for bit (8 sequences: 2 s against 0.5 s = 4x) */
    a.samples_per_step = 8, a.step_s = 2, a.samples_per_s = 4;
    b.step_s = 0.5, b.samples_per_s = 16;
    ck_assert(ratio_same_batch(&a, &b));
    ck_assert(ratio_speedup(&a, &b) == 2.0 / 0.5);
    /* no throughput to divide by: 0, never Inf or NaN */
    a.samples_per_step = 4, a.samples_per_s = 0;
    ck_assert(ratio_speedup(&a, &b) == 0);
}
END_TEST

/* plan's engine work end to end (pl_run) on the duo cluster, checked by its properties: every
 * candidate evaluated is counted once (fits and shown, folded into a twin, or out of memory); the
 * ranking is by score within each engine, simulated rows first; the top --confirm are simulated
 * and the rest not; the verdict's pair is on the winner's engine; and the confirmations on 2
 * threads give what 1 thread gives. With all the HBM kept as headroom nothing fits: no verdict,
 * no reason, the closest candidate kept. */
static void check_plan(const pl_plan *p, int confirm)
{
    const pl_stats *st = pl_stats_of(p);
    size_t n = pl_n(p);
    ck_assert_msg(n >= 2, "only %zu candidates", n);
    ck_assert_int_eq(st->tried, (long)(st->n_oom + n) + st->n_twins);
    for (size_t i = 0; i < n; i++) {
        const ps_cand *c = pl_cand(p, i);
        ck_assert_int_eq(c->confirmed, (int)i < confirm);
        if (i > 0 && c->confirmed == pl_cand(p, i - 1)->confirmed)
            ck_assert(pl_cand(p, i - 1)->score >= c->score);
    }
    ck_assert_ptr_null(pl_cand(p, n));
    ck_assert(pl_why(p)[0]);
    const pl_verdict *v = pl_verdict_of(p);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(v->engine, confirm > 0 ? PRED_SIM : PRED_MODEL);
    ck_assert(v->uncertainty == 0.1 && !v->from_calib);
}

START_TEST(test_plan_run)
{
    spec_cluster c = test_duo_cluster("duo", 1e11, 1e10);
    c.price_usd_per_hour = 36;
    spec_model m = test_tiny_model(4);
    cost_calib k = test_tiny_calib();
    spec_training tr;
    memset(&tr, 0, sizeof tr);
    tr.micro_batch = 1;
    tr.grad_accum = 4;
    tr.precision = PREC_BF16;
    static const int NODES[] = {1, 2};
    pl_request q = {.cluster = &c, .model = &m, .cal = &k, .training = &tr, .nodes = NODES, .n_nodes = 2,
                    .mask = ~0u, .objective = PS_THROUGHPUT, .uncertainty = 0.1, .uncertainty_set = 1, .threads = 1};
    pl_plan *p0, *p1, *p2;
    sc_err err;
    ck_assert_int_eq(pl_run(&q, &p0, &err), 0);
    check_plan(p0, 0);
    q.confirm = 2;
    ck_assert_int_eq(pl_run(&q, &p1, &err), 0);
    check_plan(p1, 2);
    q.threads = 2;
    ck_assert_int_eq(pl_run(&q, &p2, &err), 0);
    ck_assert_uint_eq(pl_n(p1), pl_n(p2));
    for (size_t i = 0; i < pl_n(p1); i++)
        same_cand(pl_cand(p1, i), pl_cand(p2, i), i, "2 threads");
    ck_assert_str_eq(pl_why(p1), pl_why(p2));
    /* the analytical ranking is the same set before confirmation: as many candidates, as many tried */
    ck_assert_uint_eq(pl_n(p0), pl_n(p1));
    ck_assert_int_eq(pl_stats_of(p0)->tried, pl_stats_of(p1)->tried);
    pl_free(p0);
    pl_free(p1);
    pl_free(p2);
    /* all the HBM as headroom: nothing fits */
    q.headroom_bytes = c.gpu.hbm_bytes;
    ck_assert_int_eq(pl_run(&q, &p0, &err), 0);
    ck_assert_uint_eq(pl_n(p0), 0);
    ck_assert_ptr_null(pl_verdict_of(p0));
    ck_assert_str_eq(pl_why(p0), "");
    ck_assert(pl_stats_of(p0)->have_oom && pl_stats_of(p0)->n_oom == (size_t)pl_stats_of(p0)->tried);
    pl_free(p0);
}
END_TEST

Suite *search_suite(void)
{
    Suite *s = suite_create("search");
    TCase *t = tcase_create("search");
    tcase_add_test(t, test_family_mask);
    tcase_add_test(t, test_layouts_duo);
    tcase_add_test(t, test_rank_and_fold);
    tcase_add_test(t, test_headroom);
    tcase_add_test(t, test_objectives);
    tcase_add_test(t, test_verdicts);
    tcase_add_test(t, test_judge_self_is_a_tie);
    tcase_add_test(t, test_fair_ratio_same_engine);
    tcase_add_test(t, test_grid_threads_identical);
    tcase_add_test(t, test_grid_first_error);
    tcase_add_test(t, test_rival_same_engine);
    tcase_add_test(t, test_speedup_is_throughput);
    tcase_add_test(t, test_plan_run);
    suite_add_tcase(s, t);
    return s;
}

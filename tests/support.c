/* support.c — shared test fixtures (see support.h). */
#include "support.h"

#include "../model/analytic.h"
#include "../model/layout.h"
#include "../model/workload.h"
#include "../sim/exec.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

spec_cluster test_duo_cluster(const char *name, double link_Bps, double nic_Bps)
{
    spec_cluster c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    snprintf(c.gpu.name, sizeof c.gpu.name, "toy");
    snprintf(c.gpu.arch, sizeof c.gpu.arch, "ampere");
    c.gpu.peak_flops = 1e12;
    c.gpu.hbm_bytes = 80e9;
    c.gpu.hbm_bw_Bps = 1e12;
    c.gpus_per_node = 2;
    c.fabric.kind = FABRIC_NVSWITCH;
    c.fabric.link_bw_Bps = link_Bps;
    c.fabric.links_per_gpu = 2;
    c.pcie_bw_Bps = 1e10;
    c.nics_per_node = 1;
    c.nic_bw_Bps = nic_Bps;
    c.topology = NET_FAT_TREE;
    c.oversubscription = 1;
    c.nodes_per_leaf = 16;
    return c;
}

spec_model test_tiny_model(int layers)
{
    spec_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "tiny%d", layers);
    m.layers = layers;
    m.hidden = 64;
    m.heads = 1;
    m.kv_heads = 1;
    m.ffn = 256;
    m.seq_len = 16;
    m.vocab = 128;
    return m;
}

cost_calib test_tiny_calib(void)
{
    cost_calib k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "tiny");
    k.gemm_eff.v = 1;
    k.hbm_eff.v = 1;
    k.opt_bytes_per_param.v = 16;
    for (int t = 0; t < N_TIERS; t++)
        k.bw_eff[t].v = 1;
    k.tree_bw_factor.v = 0.92;
    return k;
}

void test_p4d_llama3_8b(spec_cluster *c, spec_model *m, cost_calib *k)
{
    sc_err err;
    ck_assert_msg(spec_load_cluster("configs/clusters/p4d.24xlarge.json", c, &err) == 0, "%s", err.text);
    ck_assert_msg(spec_load_model("configs/models/llama3-8b.json", m, &err) == 0, "%s", err.text);
    if (k)
        cost_calib_defaults(c, k);
}

spec_layout test_parse_layout(const char *s)
{
    spec_layout l;
    sc_err err;
    ck_assert_msg(spec_layout_parse(s, &l, &err) == 0, "%s: %s", s, err.text);
    return l;
}

void test_parse_layout_err(const char *s, const char *want)
{
    spec_layout l;
    sc_err err;
    ck_assert_int_eq(spec_layout_parse(s, &l, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, want);
}

void test_pipe_both(const spec_model *mo, const spec_training *tr, const char *s, int nodes, double nic_Bps,
                    double *an, double *sim)
{
    spec_cluster c = test_duo_cluster("duo", 5e10, nic_Bps);
    cost_calib k = test_tiny_calib();
    k.base_lat_s[ALGO_RING].v = 1e-6; /* sends have a latency the schedule must carry */
    wl w;
    wl_build(mo, tr, &w);
    spec_layout l = test_parse_layout(s);
    sc_err err;
    ck_assert_msg(spec_layout_check(&l, &c, nodes, &err) == 0, "%s", err.text);
    an_result r;
    an_predict(&w, tr, &l, &c, nodes, &k, &r);
    *an = r.step_s;
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, tr, &l, &c, nodes, g);
    ck_assert_int_eq(g->pipelined, 1);
    exec_opts o = {0};
    o.seed = 1;
    exec_result x;
    ck_assert_msg(exec_pipe_run(g, &w, tr, &k, &c, &o, &x, &err) == 0, "%s", err.text);
    *sim = x.step_s;
    free(g);
}

void test_pipe_agree(test_both_fn both, const char *f1b2, const char *gpipe2, const char *f1b4, const char *il2,
                     const char *il4)
{
    double an, sim;
    for (int m = 1; m <= 6; m++) {
        both(f1b2, 2, m, 1e11, &an, &sim);
        ck_assert_msg(fabs(sim - an) <= 1e-9 * an, "%s m=%d: model %.12g sim %.12g", f1b2, m, an, sim);
    }
    both(gpipe2, 2, 4, 1e11, &an, &sim);
    ck_assert_double_eq_tol(sim, an, 1e-9 * an);
    const char *slower[3] = {f1b4, il2, il4};
    const int nodes[3] = {4, 2, 4};
    for (int i = 0; i < 3; i++) {
        both(slower[i], nodes[i], 4, i ? 1e9 : 1e11, &an, &sim);
        ck_assert_msg(sim >= an * (1 - 1e-9), "%s: model %.12g sim %.12g", slower[i], an, sim);
    }
}

void test_engines_run(const lo_graph *g, const an_timed *t, const cost_calib *k, const spec_cluster *c, an_result *ar,
                      exec_result *r)
{
    memset(ar, 0, sizeof *ar);
    an_run(t, ar);
    exec_opts eo;
    sc_err err;
    memset(&eo, 0, sizeof eo);
    ck_assert_msg(exec_run(g, t, k, c, &eo, r, &err) == 0, "%s", err.text);
}

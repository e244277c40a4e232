/* support.c — shared test fixtures (see support.h). */
#include "support.h"

#include <check.h>
#include <stdio.h>
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

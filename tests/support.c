/* support.c — shared test fixtures (see support.h). */
#include "support.h"

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

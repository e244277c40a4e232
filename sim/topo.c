/* topo.c — leaves, rails and dragonfly groups (see topo.h). */
#include "topo.h"

#include <stdio.h>

#include "../model/cost.h"

void topo_shape_make(const spec_cluster *c, int nodes, topo_shape *t)
{
    t->kind = c->topology;
    t->nodes = nodes;
    t->npl = c->nodes_per_leaf;
    t->nics = c->nics_per_node;
    t->pods = (nodes + t->npl - 1) / t->npl;
    t->leaves = t->kind == NET_RAIL ? t->pods * t->nics : t->pods;
    t->spine = t->kind == NET_RAIL ? t->leaves > 1 : t->pods > 1;
    t->up_Bps = cost_net_uplink_nics(c) * c->nic_bw_Bps;
}

int topo_leaf_of(const topo_shape *t, int node, int nic)
{
    int pod = node / t->npl;
    return t->kind == NET_RAIL ? pod * t->nics + nic : pod;
}

void topo_leaf_names(const topo_shape *t, int l, char *up, char *down, size_t n)
{
    char leaf[32];
    if (t->kind == NET_RAIL)
        snprintf(leaf, sizeof leaf, "rail%d.%d", l % t->nics, l / t->nics);
    else
        snprintf(leaf, sizeof leaf, "%s%d", t->kind == NET_DRAGONFLY ? "group" : "leaf", l);
    const char *sw = t->kind == NET_DRAGONFLY ? "global" : "spine";
    snprintf(up, n, "%s>%s", leaf, sw);
    snprintf(down, n, "%s>%s", sw, leaf);
}

/* topo.h — the switches between nodes as the cluster's network.topology wires them: which
 * switch ("leaf": fat-tree leaf, rail leaf of a pod, dragonfly group) NIC k of node n plugs into,
 * whether the leaves meet at a spine (dragonfly: global links), the names and capacity of each
 * leaf's up / down links. Pure arithmetic on the cluster spec, shared by sim/net.c's link
 * construction and routing; the analytical engine costs the same network with cost_group_spread
 * (model/cost.c). Not here: link ids, flows, rates (sim/net.c). */
#ifndef SC_TOPO_H
#define SC_TOPO_H

#include <stddef.h>

#include "../model/spec.h"

typedef struct topo_shape {
    spec_net_topology kind;
    int nodes, npl, nics;
    int pods;   /* groups of nodes_per_leaf nodes (the last may be partial)                   */
    int leaves; /* fat-tree / dragonfly: pods; rail: pods x nics (one leaf per pod and rail)  */
    int spine;  /* leaf up / down links exist: rail always with more than one leaf (cross-rail
                   traffic), fat-tree / dragonfly with more than one pod                     */
    double up_Bps; /* each leaf's up (and down) link before efficiency:
                      cost_net_uplink_nics(c) x nic_bw                                        */
} topo_shape;

void topo_shape_make(const spec_cluster *c, int nodes, topo_shape *t);
/* The leaf NIC `nic` of `node` plugs into, in [0, leaves). */
int topo_leaf_of(const topo_shape *t, int node, int nic);
/* Names of leaf l's links: "leafL>spine" / "spine>leafL", "railK.P>spine" / "spine>railK.P",
 * "groupL>global" / "global>groupL". */
void topo_leaf_names(const topo_shape *t, int l, char *up, char *down, size_t n);

#endif

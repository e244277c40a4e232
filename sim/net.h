/* net.h — the simulated cluster's topology as directional links (NVSwitch / NVLink mesh / PCIe
 * inside a node, NICs, leaf and spine switches between nodes) and flows sharing them max-min
 * fairly, rates recomputed incrementally over the connected component a flow start or end touches.
 * Not here: collectives (coll_), per-step latencies (the collective layer adds calibrated alphas;
 * link latencies here are only switch hops), event scheduling (the executor uses finish times). */
#ifndef SC_NET_H
#define SC_NET_H

#include <stdint.h>

#include "../base/err.h"
#include "../model/spec.h"

/* Longest path between two GPUs, in links (NIC up, leaf up, leaf down, NIC down). */
#define NET_PATH_MAX 4

/* Fraction of datasheet line rate a tier achieves, in (0, 1], applied to every link capacity of
 * that tier (e.g. 0.8; calibration fits them). */
typedef struct net_params {
    double eff_nvlink; /* NVLink / NVSwitch links                                        */
    double eff_pcie;   /* PCIe fabric (GPU <-> host bridge) links                        */
    double eff_net;    /* NIC, leaf and spine links                                      */
} net_params;

typedef struct net net_t;

/* Build the links of `nodes` nodes of cluster c. GPU g (global) = node * gpus_per_node + local.
 *  - NVSwitch: per GPU "nN.gpuI>nvs" and "nN.nvs>gpuI", links_per_gpu * link_bw * eff_nvlink.
 *  - NVLink mesh: "nN.gpuI>gpuJ" per ordered pair with links[I][J] > 0, links[I][J] * link_bw *
 *    eff_nvlink; a pair without one goes through the GPU k maximising min(cap(I,k), cap(k,J))
 *    (lowest k on ties); a mesh needing more than two hops is SC_EINPUT.
 *  - PCIe: per GPU "nN.gpuI>host" and "nN.host>gpuI", pcie_bw * eff_pcie.
 *  - per node and NIC "nN.nicK>leaf" and "nN.leaf>nicK", nic_bw * eff_net, into the switch of
 *    the cluster's network.topology (nodes in pods of nodes_per_leaf):
 *      fat-tree: one leaf per pod; with more than one, per leaf "leafL>spine" / "spine>leafL";
 *      rail: one leaf per (pod, NIC index) (NIC K of every node of a pod on rail leaf K, as DGX
 *        SuperPOD and rail-optimized clouds wire them), always with a spine: "railK.P>spine" /
 *        "spine>railK.P" (cross-rail traffic and other pods go through it);
 *      dragonfly: one group per pod (non-blocking inside), its global links as "groupL>global" /
 *        "global>groupL" when there is more than one group;
 *    each up / down link cost_net_uplink_nics(c) * nic_bw * eff_net (the last leaf keeps full
 *    ports even if partial).
 * Latency: switch_latency_s on each link entering a switch (NIC up: leaf, leaf up: spine, leaf
 * down: the destination leaf), 0 elsewhere. 0 or SC_EINPUT / SC_ERUNTIME with err filled. */
int net_build(const spec_cluster *c, int nodes, const net_params *p, net_t **out, sc_err *err) SC_MUST_CHECK;
/* The quotient of that network by the shift of `unit` nodes (exact symmetry, sim/exec.c): links
 * only for nodes 0..unit-1 and their pods' leaves, the shape (pods, spine, routing) of all
 * `nodes`. A path's source must be a represented GPU (< unit x gpus_per_node); its destination may
 * be any of the cluster's GPUs and is routed as the real one, over the links of its representative
 * (node mod unit). When every node's flows are the shifted copies of the represented nodes' flows,
 * each link then carries exactly what each of its copies carries in the whole network, so the
 * max-min fair rates are the whole network's. unit must divide nodes and, below nodes, be whole
 * pods when the network has a spine, with no in-network optimizer node (its links are shared by
 * all nodes); else SC_EINPUT. net_build is net_build_quotient(c, nodes, nodes, ...). */
int net_build_quotient(const spec_cluster *c, int nodes, int unit, const net_params *p, net_t **out, sc_err *err)
    SC_MUST_CHECK;
/* Links after those above (existing ids unchanged):
 *  - per GPU "nN.gpuI>cpu" and "nN.cpu>gpuI", pcie_bw * eff_pcie (its PCIe link to host memory;
 *    on a PCIe fabric these are the "nN.gpuI>host" / "nN.host>gpuI" links themselves);
 *  - with an in-network optimizer node, its switch port "sw>innet" and "innet>sw" (port_bw *
 *    eff_net, switch latency entering the switch) and its update engine "innet.update"
 *    (opt_params_per_s x 2 B/s by default: 16-bit gradients; net_set_update_rate changes it).
 * Its switch is the leaf with one leaf, else the spine. */
int net_set_update_rate(net_t *net, double bytes_per_s) SC_MUST_CHECK;

/* Endpoints that are not GPUs, for net_path / net_flow_add (the GPU is the other end):
 * HOST: the GPU's own host memory; SWITCH: the optimizer node's switch; INNET: the optimizer
 * node; UPDATE: its update engine (INNET -> UPDATE only). */
#define NET_EP_HOST (-1000)
#define NET_EP_SWITCH (-1001)
#define NET_EP_INNET (-1002)
#define NET_EP_UPDATE (-1003)
/* NVME: the node's NVMe drives through host memory to / from the GPU (its PCIe link);
 * NVME_HOST: the node's drives and host memory only. Links per node "nN.nvme>cpu" (read) and
 * "nN.cpu>nvme" (write) at the cluster's sustained nvme_read / nvme_write rates. */
#define NET_EP_NVME (-1004)
#define NET_EP_NVME_HOST (-1005)
#define NET_EP_IS(x) ((x) <= NET_EP_HOST && (x) >= NET_EP_NVME_HOST)
void net_free(net_t *net);

int net_n_gpus(const net_t *net);
int net_n_links(const net_t *net);
/* Link properties; link in [0, net_n_links). Name as above; capacity B/s; latency s. */
const char *net_link_name(const net_t *net, int link);
double net_link_capacity(const net_t *net, int link);
double net_link_latency(const net_t *net, int link);
/* Bytes the link has carried from time 0 up to `now` (>= the last add/remove), for utilisation. */
double net_link_bytes(const net_t *net, int link, double now);

/* The links from GPU src to GPU dst, in order, into links[0..max). Intra-node paths ignore ch;
 * inter-node paths use NIC (ch % nics) at both ends: NIC up, [leaf up, leaf down if the leaves
 * differ], NIC down (GPUDirect RDMA: the GPU-NIC PCIe hop is not modelled as a link). src == dst
 * gives 0 links. Returns the count, SC_EINPUT for a bad GPU, negative ch or max too small. */
int net_path(const net_t *net, int src, int dst, int ch, int *links, int max);
/* A channel whose inter-node path leaves src through NIC a and reaches dst through NIC b (a != b:
 * cross-rail; on a rail network through the spine). For net_path and net_flow_add. */
#define NET_CH_X (1 << 20)
#define NET_CH_XNIC(a, b) (NET_CH_X + ((a) << 10) + (b))

/* ---- flows --------------------------------------------------------------------------- */
/* Start a flow of `bytes` from src to dst on channel ch at time now (non-decreasing over all
 * add/remove calls). Rates of the flows in its connected component are recomputed max-min fair
 * (water-filling). A flow with no links (src == dst) or no bytes has rate INFINITY and finishes at
 * `now`; it shares nothing. *id is a slot index, reused after net_flow_remove. 0; SC_EINPUT for bad
 * arguments or time going backwards; SC_ERUNTIME when out of memory (nothing changed). */
int net_flow_add(net_t *net, double now, int src, int dst, int ch, double bytes, uint64_t tag,
                 int *id) SC_MUST_CHECK;
/* End flow id at time now (finished or cancelled) and re-share its links. 0 or SC_EINPUT. */
int net_flow_remove(net_t *net, double now, int id) SC_MUST_CHECK;
/* The flows whose rate changed in the last net_flow_add / net_flow_remove / net_solve_full,
 * the added flow included, in no particular order; valid until the next such call. */
void net_changed(const net_t *net, const int **ids, int *n);

int net_flow_live(const net_t *net, int id); /* 1 when id names a flow not yet removed */
/* A hint: flow id's record and clock are about to be read (no effect on any result). */
void net_flow_prefetch(const net_t *net, int id);
int net_n_flows(const net_t *net);           /* live flows                           */
/* Properties of a live flow (NAN / 0 for an id that is not live). */
double net_flow_rate(const net_t *net, int id);                /* B/s                */
double net_flow_remaining(const net_t *net, int id, double now); /* B, >= 0          */
/* When it will finish at its current rate: now + remaining / rate as of the last update, s
 * (INFINITY for a zero rate). */
double net_flow_finish_time(const net_t *net, int id);
/* Bumped every time the flow's rate changes, and never reset when the slot is reused, so
 * (id, version) names one rate epoch of one flow: a completion event carrying an older version
 * is stale. */
uint32_t net_flow_version(const net_t *net, int id);
uint64_t net_flow_tag(const net_t *net, int id);
/* A slot the caller keeps beside the flow: the id of its queued completion event (ev.h), so it
 * can be re-timed in place when the rate changes. -1 when the flow is added; -1 for an id that
 * is not live. net itself never reads it. */
int32_t net_flow_event(const net_t *net, int id);
void net_flow_set_event(net_t *net, int id, int32_t ev);

/* Recompute every rate from scratch at the time of the last add/remove (tests: incremental
 * solving must give the same rates). Flows whose rate changes are reported by net_changed. */
void net_solve_full(net_t *net);

/* Batch: between begin and end, adds and removes (all at one instant) only record what they
 * touch; net_batch_end re-rates the union of the affected components once, and net_changed
 * then lists every flow whose rate changed in the batch. Exact: no time passes inside. */
void net_batch_begin(net_t *net);
int net_batch_end(net_t *net, double now) SC_MUST_CHECK;

#endif

/* coll.h — collectives lowered to flows. A ring collective (all-gather, reduce-scatter,
 * all-reduce; NCCL's pipelined ring, every step's chunk in flight at once) becomes one flow per
 * ring edge (member i -> member i+1 in rank order) carrying the edge bytes of the cost model
 * (busbw factor x S), an edge between nodes split into one flow per NIC (NCCL's channels); its
 * n-1 steps appear as the per-step latency the collective waits before its flows start. Tree
 * all-reduce is lowered on the same edges with the tree's latency and bandwidth factor.
 * Not here: when a collective starts (sim/exec) or how flows share links (sim/net). */
#ifndef SC_COLL_H
#define SC_COLL_H

#include "../model/cost.h"

typedef void (*coll_flow_fn)(void *ctx, int src, int dst, int ch, double bytes);

/* Emit the flows of a ring over members[0..n-1] (global GPU indices, ascending); returns how
 * many flows were emitted. */
int coll_ring_flows(const int *members, int n, int gpus_per_node, int nics, double edge_bytes, coll_flow_fn fn,
                    void *ctx);
/* The same, only the edges leaving members[0..n_src-1] (a quotient simulation emits the flows of
 * its represented ranks, a prefix of the ascending members). */
int coll_ring_flows_from(const int *members, int n, int n_src, int gpus_per_node, int nics, double edge_bytes,
                         coll_flow_fn fn, void *ctx);

/* The same with the node's fabric (NULL: as above). On an NVLink mesh, a member whose ring
 * successor is in its node sends its edge bytes as one flow to each member of its node it has
 * NVLinks to, in proportion to their count (NCCL's rings over every link of the mesh; see
 * coll.c mesh_spread); one linked to none sends to its successor as above. */
int coll_ring_flows_fabric(const int *members, int n, int n_src, int gpus_per_node, int nics, const spec_fabric *fab,
                           double edge_bytes, coll_flow_fn fn, void *ctx);

/* Flows of one point-to-point send of `bytes` from GPU src to GPU dst as NCCL moves it between
 * nodes (src/graph/search.cc ncclTopoGetNetDev, paths.cc PXN): the receiver uses its own NIC(s)
 * (GPU-local NIC: local x nics / gpus_per_node; with more NICs than GPUs, its nics /
 * gpus_per_node NICs, bytes split evenly). With pxn (NCCL >= 2.12 default, NCCL_PXN_DISABLE=0)
 * the sender sends through the NIC of the receiver's rail: over NVLink to the GPU of its node
 * local to that NIC, then from that GPU (two flows, src -> relay and relay -> dst, pipelined
 * as NCCL's proxy does; one when src is that GPU). Without pxn the sender uses its own NIC:
 * cross-rail when the local indices' NICs differ (NET_CH_XNIC), through the spine of a rail
 * network. Inside a node: one flow. Returns how many flows were emitted. */
int coll_p2p_flows(int src, int dst, int gpus_per_node, int nics, int pxn, double bytes, coll_flow_fn fn, void *ctx);

/* Flows of a host or in-network collective (cost.h transports) over members[0..n-1], each
 * moving S = bytes; endpoints NET_EP_* (sim/net.h). Fetch (all-gather): host -> GPU; from the
 * optimizer node: with multicast one flow node -> switch and one switch -> GPU per member, else
 * one node -> GPU per member. Push (reduce-scatter): the reverse, aggregation for multicast;
 * with g->update_Bps > 0 one more flow node -> update engine. All-reduce: both directions at
 * once. GPU ends use NIC (local index % nics). Returns how many flows were emitted. */
int coll_xport_flows(const cost_group *g, cost_coll kind, const int *members, int n, int gpus_per_node, int nics,
                     double bytes, coll_flow_fn fn, void *ctx);

#endif

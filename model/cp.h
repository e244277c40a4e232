/* cp.h — context parallelism (megatron:...,cp=C; zero3:cp=C, torchtitan's fsdp2:dp=D,cp=C): the
 * sequence of every micro-batch split C ways, attention's K/V exchanged among the C ranks
 * (megatron: Transformer Engine's P2P ring, as Megatron-Core uses it; zero3: PyTorch's
 * context_parallel with torchtitan's default all-gather rotation). Two narrow hooks: what one rank computes and keeps (cp_localize,
 * applied after tensor parallelism's split) and the ring's K/V exchange of a block's copy
 * (cp_item). Not here: the grammar and checks (spec_layout.c), the rank order and the
 * gradient group over dp x cp (spec_layout_axes), time (model/cost), memory (model/memory). */
#ifndef SC_CP_H
#define SC_CP_H

#include "layout.h"
#include "workload.h"

/* In place: the workload of one rank of a context-parallel group of cp ranks (cp <= 1: w
 * unchanged, bit for bit). Tokens, activations, element-wise bytes, logits and every linear
 * GEMM's rows / cp; attention's core as cp causal problems of length s / cp per rank (the
 * load-balanced split into 2 cp chunks gives every rank the same share, 1 / cp of the causal
 * work); parameters and model_flops (the replica's) unchanged. */
void cp_localize(wl *w, int cp);

/* In place, after cp_localize, zero3 only (PyTorch's context_parallel): the element-wise HBM
 * traffic its ring adds around the cp SDPA steps of every fused-attention block, per rank:
 * forward (and the recomputed forward) each step's output cast to fp32 and merged into the
 * running fp32 output by its log-sum-exp, and K / V concatenated for the next step; backward
 * dQ / dK / dV accumulated in fp32 and dK / dV concatenated for the next rank (cp.c gives the
 * bytes and their source). cp <= 1 or no fused attention: nothing. */
void cp_torch_ring(wl *w, int cp);
/* The same for a rank of a t-way tensor-parallel group (fsdp2:dp=D,cp=C,t=T): its heads / t
 * (t <= 1: cp_torch_ring's bytes, bit for bit). */
void cp_torch_ring_tp(wl *w, int cp, int t);
/* Its bytes per attention call for T local tokens, query width q and K / V width kv (elements;
 * all heads when repeated), e-byte activations, cp steps: forward, backward. */
double cp_torch_ring_fwd_bytes(double T, double q, double kv, double e, int cp);
double cp_torch_ring_bwd_bytes(double T, double q, double kv, double e, int cp);

/* Memory (model/memory.c, memory_pipe.c): what the ring holds beyond a plain attention call
 * while one block's attention runs, the larger of its forward and its backward: transient, so
 * counted once per rank, at the layer in flight, not per layer. T local tokens, q the query
 * width, kv the K / V width (elements; all heads where repeated), hq the query heads (all / t),
 * e-byte K / V, cp ranks; cp <= 1: 0. cp.c gives each term its source. torch: PyTorch's
 * context_parallel (all-gather rotater, fp32 merges, fp32 dK / dV ring); te: Transformer
 * Engine's P2P ring (AttnFuncWithCPAndKVP2P). */
double cp_torch_ring_peak_bytes(double T, double q, double kv, double hq, double e, int cp);
double cp_te_ring_peak_bytes(double T, double q, double kv, double hq, double e, int cp);
/* The same for one rank of layout l (zero3 / fsdp2: PyTorch's ring; megatron: Transformer
 * Engine's) with lw its localized workload (cp_localize ran): 0 without cp or blocks. */
double cp_ring_mem_bytes(const wl *lw, const spec_layout *l);

/* Append to a block's item of a context-parallel megatron or zero3 graph the exchange of K and V
 * (an all-gather's ring volume over GRP_AX1, run beside attention's core). first_step = 0,
 * Megatron's (Transformer Engine's P2P ring): K / V at kv_heads' width beside every step,
 * the backward's dK / dV as many bytes. first_step = 1, zero3's (PyTorch's context_parallel,
 * rotate method all-gather): K / V at the width SDPA gets (all heads where wl.kv_repeat)
 * beside the first of the cp steps only (paired with 1 / cp of the pass's core: its excess
 * exposed, lo_pair), forward, recompute and backward; the backward's dK / dV in fp32 (cp - 1
 * transfers beside steps 1..cp-1, the last one a tail), on the cp group's own stream (2). Its family file says which. Nothing for other layers or cp = 1; the items it
 * adds to always have room (asserted: lo_graph.h counts LO_MAX_INLINE). lw: the localized workload. */
void cp_item(const lo_graph *g, const wl *lw, lo_item *it, int first_step);

/* The layout rows' checks (layout_row.h; name: the layout's text for the message, err may be
 * NULL). megatron (called from its check): t*p*cp divides the n GPUs, the t*cp ranks of a cp
 * group divide or are a multiple of the g GPUs of a node. zero3: D x cp = n when spelled
 * fsdp2:dp=D,cp=C; cp divides n and divides or is a multiple of g. Both, on the model: the
 * sequence divides into 2 cp chunks (Transformer Engine's and PyTorch's load balancing). */
int cp_check_megatron(const spec_layout *l, int n, int g, const char *name, sc_err *err);
int cp_check_zero3(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err);
int cp_check_model(const spec_layout *l, const spec_model *m, const char *name, sc_err *err);
/* zero3's replica for the batch rule: the cp ranks that share one micro-batch (1 without cp). */
int cp_replicas(const spec_layout *l);

/* Fraction of a block copy's compute that is attention's core (FLOPs, causal masks halving it,
 * as the kernels skip the masked blocks): what the ring's transfers can hide under. */
double cp_core_fraction(const wl_layer *L);

#endif

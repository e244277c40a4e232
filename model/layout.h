/* layout.h — the op graph of one training step per rank: the one contract between "what a
 * layout does" and "how long it takes". Both engines (model/analytic, sim/) run this graph with
 * the same rules and the same cost functions, so they agree wherever there is no contention.
 * The graph's types are in lo_graph.h (what the family files build on); this header is its API.
 * Not here: time (model/cost), memory (model/memory).
 *
 * Shape of the graph. A step is grad_accum micro-steps, then boundary ops. A micro-step is a
 * sequence of items: forward embed, blocks, head; backward head, blocks, embed. An item is one
 * layer copy repeated `count` times, each copy being:
 *     gathers (0-2 collectives, e.g. all-gather of its parameters; hierarchical = 2 in order),
 *     compute (forward, or recompute + backward),
 *     inline collectives (0-LO_MAX_INLINE, e.g. tensor parallelism's all-reduce of partial outputs) that
 *       the layer cannot finish without: issued when a fraction 1 - inline_overlap of the
 *       compute is done, the rest of the compute (e.g. weight-gradient GEMMs) running beside them,
 *     reduces (0-2 collectives, e.g. reduce-scatter of its gradients).
 * Execution rules (every rank has a compute stream and FW_STREAMS FIFO communication streams;
 * the ideal schedule uses stream 0 only, frameworks put reductions on their own streams):
 *   - copies are numbered c = 0, 1, ... across the whole step; with prefetch depth d, the gathers
 *     of copies 0..d-1 are issued at step start, and when compute c-1 ends (the host reaches
 *     copy c) the rank issues the reduces of copy c-1, then the gathers of copy c+d;
 *   - a collective starts when its communication stream is free and it has been issued (and, in
 *     the simulator, when every member of its group has reached it); a reduce on another stream
 *     than the item's previous reduce also waits for that one to end;
 *   - compute c starts when compute c-1 has ended and the gathers of copy c have completed;
 *     it ends when its compute has run and its inline collectives have completed;
 *   - after the last copy: its reduces, then the boundary ops in order, each after the previous
 *     one and after the end of all compute and communication so far.
 * These rules are DeepSpeed's ZeRO-3 prefetch (issue the next layers' all-gathers at a layer's
 * pre-forward hook, reduce-scatter from the post-backward hook) with one NCCL stream. */
#ifndef SC_LAYOUT_H
#define SC_LAYOUT_H

#include "lo_graph.h"

/* Build the graph of layout l for workload w on `nodes` nodes of cluster c. The layout must
 * have passed spec_layout_check. */
void layout_build(const wl *w, const spec_training *t, const spec_layout *l, const spec_cluster *c, int nodes,
                  lo_graph *g);

/* Layer i as one rank of g computes it (w: the workload g was built from). */
const wl_layer *layout_layer(const lo_graph *g, const wl *w, int i);

/* Members of rank r's communicator of this kind, ascending, into out (capacity n_ranks);
 * returns how many. */
int layout_group_members(const lo_graph *g, lo_group_kind kind, int r, int *out);
/* Which group of `kind` rank r belongs to, 0 .. N-1: equal for exactly the ranks that
 * layout_group_members lists together (the simulator indexes its per-group state by it). */
int layout_group_index(const lo_graph *g, lo_group_kind kind, int r);

/* Bytes one rank sends per step under ring algorithms: sum of busbw_factor x S over every
 * collective (the ZeRO paper's communication volume, e.g. ZeRO-3: 3 x 2 B x params x (n-1)/n
 * per micro-step); host / in-network transports count the S a rank fetches or pushes
 * (cost_rank_bytes). by_kind (optional) splits it per collective kind. */
double layout_comm_bytes(const lo_graph *g, double by_kind[N_COLLS]);

/* The same split per communicator kind (e.g. per AxoNN axis); returns the total. */
double layout_comm_bytes_by_group(const lo_graph *g, double by_group[N_GROUPS]);

/* The step's volume as terms, for any grad_accum without the graph (the analytical engine's
 * sweep memo keeps it beside a graph's timings): every collective of a micro-step, of the last
 * micro-step and of the boundary, in the order layout_comm_bytes sums them, with its copies
 * and the bytes one rank moves per copy (cost_rank_bytes). */
#define LO_MAX_VOL_TERMS (2 * LO_MAX_ITEMS * 9 + 4)
typedef struct lo_vol_term {
    double count;          /* copies per micro-step (boundary: 1)                         */
    double bytes;          /* per copy and rank, B                                        */
    cost_coll kind;
    lo_group_kind group;
} lo_vol_term;
typedef struct lo_volume {
    int n_micro, n_last, n_bound; /* terms: micro-step's, then the last's, then the boundary's */
    lo_vol_term term[LO_MAX_VOL_TERMS];
} lo_volume;
void layout_volume(const lo_graph *g, lo_volume *v);
/* layout_comm_bytes of a graph with v's terms and grad_accum micro-steps, bit for bit; by_kind
 * and by_group (optional) receive the splits. */
double layout_volume_bytes(const lo_volume *v, int grad_accum, double by_kind[N_COLLS], double by_group[N_GROUPS]);

/* ---- pipelines (layout_pipe.c) ---- */
/* Blocks of each of the p x v virtual stages: layers / (p v) each, the remainder one more to
 * the virtual stages after the first (which carries the embedding), in order. */
void layout_pipe_split(int layers, int p, int v, int *blocks);
/* Blocks of each virtual stage as layout l splits them: layout_pipe_split, or Megatron-Core's
 * uneven split (split=embed|loss|embed+loss, first=N, last=N; layout_pipe.c). l passed
 * spec_layout_check_model. */
void layout_pipe_split_layout(const spec_layout *l, int layers, int *blocks);
/* The word-embedding copy a tied head (spec_model.tied_embeddings) keeps on the last stage of a
 * megatron pipeline (p > 1), per rank: vocab x hidden / t parameters, stepped by the last stage's
 * optimizer and its gradient all-reduced with the first stage's once per step (layout_pipe.c);
 * 0 untied, without stages, or outside megatron. */
double layout_pipe_tied_params(const wl *w, const spec_layout *l);
/* The ops of stage s in the order its rank runs them (2 m v of them, into out): GPipe: all
 * forwards, then all backwards; 1F1B (PipeDream-Flush, Narayanan et al. SC'21 §2.2): p - s - 1
 * warm-up forwards, then one forward and one backward alternately, then the cool-down
 * backwards; interleaved 1F1B (SC'21 §2.2.2, Megatron-LM schedules.py): micro-batches in groups
 * of p, forwards chunk by chunk within a group (backwards chunks in reverse), (p - s - 1) x 2 +
 * (v - 1) x p warm-up forwards. Returns the count. */
int layout_pipe_order(const lo_pipe *pp, int s, lo_pipe_op *out);
/* The warm-up forwards of stage s in layout_pipe_order (at most m v): GPipe all m v; 1F1B
 * p - s - 1; interleaved 1F1B (p - s - 1) x 2 + (v - 1) x p (Megatron-Core schedules.py,
 * NVIDIA/Megatron-LM@a645f896 (core_v0.7.0) megatron/core/pipeline_parallel/schedules.py
 * L549-551). Its cool-down holds as many backwards. */
int layout_pipe_warmup(const lo_pipe *pp, int s);
/* Virtual stage of chunk c on stage s, and the neighbours of virtual stage k: the one feeding its
 * forward (k - 1) and the one feeding its backward (k + 1); -1 at the ends. */
int layout_pipe_vstage(const lo_pipe *pp, int s, int c);
/* A pipeline boundary collective's NCCL calls: units > 0 (FSDP2: one per FSDP unit, lo_pipe's
 * vstage_units / stage_units), else its buckets (lo_buckets). */
int layout_pipe_calls(double bytes, double bucket, int units);
/* The op graph of one micro-batch through virtual stage k of a pipelined g: its layers
 * (embedding on the first, head on the last), tensor-parallel items, no data-parallel reduce,
 * no boundary. w: the workload g was built from; lw_out receives the stage's layers. */
void layout_pipe_stage(const lo_graph *g, const wl *w, const spec_training *t, int k, lo_graph *out, wl *lw_out);
/* Pipeline bubble fraction of the schedule in closed form (Narayanan et al. SC'21 §2.2):
 * GPipe and 1F1B (p - 1) / (m + p - 1), interleaved (p - 1) / (v m + p - 1) (the bubble shrinks
 * v-fold: (p - 1) / v forward-backward times over m + (p - 1) / v). */
double layout_pipe_bubble(int p, int v, int m);

/* Bytes one rank moves per step between its GPU, its host memory and its node's NVMe under
 * zero3-offload (ZeRO-Offload / ZeRO-Infinity) and zero2-offload; 0 for layouts that offload nothing. */
typedef struct lo_offload_traffic {
    double param_h2d;        /* 16-bit parameter shards fetched to the GPU over PCIe (param=cpu|nvme) */
    double param_nvme_read;  /* of which read from NVMe first (param=nvme)                  */
    double grad_d2h;         /* gradient shards copied to host memory over PCIe              */
    double grad_h2d;         /* accumulated gradient shards brought back to the GPU (zero2-offload
                                with grad_accum > 1: DeepSpeed sums them on the GPU)         */
    double update_h2d;       /* updated parameter shard copied back (param on the GPU; the last
                                sub-group's copy: the rest overlaps the CPU step)              */
    double opt_nvme_read;    /* optimizer states + fp32 gradients read from NVMe (opt=nvme)   */
    double opt_nvme_write;   /* the same written (states back, gradients out)                */
    double param_nvme_write; /* updated 16-bit parameter shard written to NVMe (param=nvme)   */
    double act_d2h, act_h2d; /* activation_offload: checkpointed block inputs out and back      */
} lo_offload_traffic;
void layout_offload_traffic(const lo_graph *g, lo_offload_traffic *out);

const char *layout_group_name(lo_group_kind k);
const char *layout_coll_name(cost_coll k);

#endif

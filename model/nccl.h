/* nccl.h — collectives as NCCL runs them: the algorithm (ring, tree, NVLS, NVLS-tree, PAT) and
 * protocol (LL, LL128, Simple) NCCL would pick for a size and a group, and the time of one
 * collective under that choice: latency = base + steps x the slowest hop's latency (+ the
 * fabric's floor when the group spans nodes), bandwidth = the group's link bandwidth x the
 * protocol's fraction x the algorithm's factor x a per-rank-chunk efficiency x a fall with node
 * count. Structure after NVIDIA/nccl src/graph/tuning.cc (ncclTopoTuneModel: baseLat, hwLat,
 * the per-protocol bandwidth refinements, the algorithm's step counts) and aws-ofi-nccl's EFA
 * platform defaults (Simple only across EFA). Written from that structure, not copied.
 * Not here: the group geometry (cost_group_make), the flows the simulator makes (sim/coll). */
#ifndef SC_NCCL_H
#define SC_NCCL_H

/* Algorithms and protocols, in NCCL's order. */
typedef enum { NCCL_RING, NCCL_TREE, NCCL_NVLS, NCCL_NVLS_TREE, NCCL_PAT, NCCL_N_ALGOS } nccl_algo;
#define NCCL_POW2_N 32 /* chunks of 2^-j bytes, j < 32: 1 byte in up to 2^31 (pieces x ranks) */
typedef enum { NCCL_LL, NCCL_LL128, NCCL_SIMPLE, NCCL_N_PROTOS } nccl_proto;

/* The calibrated constants of the model (SI units). Read from a calibration file's "nccl"
 * object (model/calib.c); on = 0 means the file has none and the plain ring/tree model of
 * cost.c is used instead. */
typedef struct nccl_params {
    int on;
    int nvls;            /* the node's NVSwitch does in-switch reduction (NVLink SHARP: NVSwitch
                            gen 3, H100/H200 HGX); enables NVLS and NVLS-tree                  */
    int simple_only;     /* only the Simple protocol (aws-ofi-nccl sets NCCL_PROTO=simple for the
                            whole process where EFA lacks 128-byte in-order writes: p4d/p4de) */
    int ll128;           /* LL128 usable inside a node (NCCL enables it on NVLink Volta+)     */
    double base_lat_s[NCCL_N_ALGOS][NCCL_N_PROTOS]; /* per collective, s                       */
    double intra_hop_s[NCCL_N_PROTOS];  /* one step over NVLink/PCIe, s                        */
    double net_hop_s[NCCL_N_PROTOS];    /* one step across the network, s                     */
    double net_floor_s;  /* once per collective that spans nodes: the network's completion
                            floor (plugin latency, per fabric and generation), s              */
    double proto_bw[NCCL_N_PROTOS];     /* fraction of the link bandwidth a protocol carries   */
    double tree_bw;      /* tree / NVLS-tree: bandwidth per node-edge relative to the ring's   */
    double nvls_bw;      /* NVLS: per-GPU NVLink bandwidth fraction the in-switch reduction gets */
    double pat_bw;       /* PAT bandwidth relative to ring (tuning.cc .75)                      */
    /* Pipelining: an algorithm reaches bandwidth x 1 / (1 + (c_half / c)^e) with chunk c: the
     * per-rank chunk S/n for ring and PAT (each step moves S/n), the whole buffer S for tree,
     * NVLS and NVLS-tree (every rank streams all of S through a deep pipeline). 0 = none.   */
    double chunk_half_B[NCCL_N_ALGOS];
    double chunk_exp;
    double ring_node_fall; /* ring/PAT network bandwidth / (1 + fall x log2(nodes / 2))        */
    double tree_node_fall; /* tree/NVLS-tree network bandwidth / (1 + fall x log2(nodes / 2)):
                              the 2-node tree (each node a root and a leaf) is the reference */
    int ring_by_node;    /* ring latency counted per node boundary as NCCL's tuning model does:
                            (nsteps - nInterSteps) x intra hop + nInterSteps x net hop, with
                            nInterSteps = nodes - 1 (all-gather, reduce-scatter) or 2 (nodes - 1)
                            (all-reduce) (NVIDIA/nccl@01afd20a src/graph/tuning.cc ncclTopoTuneModel;
                            the same in @5067397c L385-412); 0: every step pays the slowest hop  */
    /* (h 2^j)^chunk_exp for each algorithm's h = chunk_half_B and j < NCCL_POW2_N, filled where a
     * calibration is loaded (nccl_pow2_fill; calib.c) for the chunk efficiency's powers at a
     * chunk of 2^-j bytes (a 1-byte latency's piece over ranks and pieces that are powers of
     * two: the same base every estimate). Used only while pow2_e and pow2_h still equal
     * chunk_exp and chunk_half_B (a caller that edits them after loading gets pow); zeroed
     * (pow2_on = 0): not used. The same pow calls at load, so the same bits. */
    int pow2_on;
    double pow2_e, pow2_h[NCCL_N_ALGOS];
    double pow2[NCCL_N_ALGOS][NCCL_POW2_N];
    int pin_algo;        /* NCCL_ALGO as the run set it: 1 + the nccl_algo every collective uses
                            where it is usable (else NCCL's own choice, as NCCL falls back); 0:
                            free. An input (--nccl-algo), not a calibration key; also honoured
                            by the plain model (ring, or tree for multi-node all-reduce)       */
} nccl_params;

/* NCCL's defaults (tuning.cc constants; no network floor, no chunk or node-count effects):
 * what an "nccl" object's missing keys take. */
void nccl_params_defaults(nccl_params *p);

/* One collective's geometry as this model needs it. kind: 0 all-gather, 1 reduce-scatter,
 * 2 all-reduce (cost_coll order). */
typedef struct nccl_shape {
    int kind;             /* cost_coll; read only through nccl_kind_class                  */
    int n, k, m;          /* ranks, nodes, ranks per node                                  */
    double intra_Bps;     /* per-rank bus bandwidth inside a node after efficiency (INF: none) */
    double net_Bps;       /* per-rank bus bandwidth across nodes after efficiency (INF: none)  */
} nccl_shape;

/* One (algorithm, protocol): usable for this shape? */
/* The model reads a shape's kind only as this class (1: all-reduce, 0: all-gather or
 * reduce-scatter): two kinds of one class on one shape have the same usable pairs, latencies,
 * bytes and times, bit for bit (cost.c's cost_coll_cache shares one table between them). */
static inline int nccl_kind_class(int kind) { return kind == 2; }

int nccl_usable(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr);
/* Latency of one collective, s. */
double nccl_latency(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr);
/* Effective per-rank bandwidth, B/s, that edge bytes move at (protocol, algorithm, chunk, node
 * count applied to the slower of intra and net). */
double nccl_bw(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr, double bytes);
/* Bytes over the busiest edge per rank, as moved at the group's link rate: the nccl-tests bus
 * factor x S for ring and PAT, S per node-edge for tree / NVLS-tree all-reduce and S for NVLS,
 * inflated by (link bandwidth / nccl_bw) so that edge / link rate = the modelled transfer time. */
double nccl_edge_bytes(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr, double bytes);
/* latency + transfer, s. */
double nccl_time(const nccl_params *p, const nccl_shape *s, nccl_algo a, nccl_proto pr, double bytes);
/* NCCL's choice: the usable (algorithm, protocol) of least modelled time (NCCL picks the
 * minimum of its own model per size: tuning.cc / enqueue.cc topoGetAlgoInfo). Returns the time. */
double nccl_best(const nccl_params *p, const nccl_shape *s, double bytes, nccl_algo *a, nccl_proto *pr);
/* The same among one algorithm's protocols (force >= 0: a run pinned with NCCL_ALGO); falls back
 * to nccl_best when that algorithm is not usable for the shape. */
double nccl_best_of(const nccl_params *p, const nccl_shape *s, double bytes, int force, nccl_algo *a, nccl_proto *pr);
/* nccl_best of two sizes at once, the same bits as two calls: usability, latencies and raw
 * bandwidths are the shape's and are taken once (the analytical engine asks each collective's
 * time and its 1-byte latency). */
void nccl_best_pair(const nccl_params *p, const nccl_shape *s, double S1, double S2, double *t1, double *t2);
/* The shape's part of nccl_best (usability, the 15 latencies, the raw bandwidths), taken once and
 * shared by the collectives of one communicator and kind (cost_coll_cache): nccl_best_tab of any
 * size over nccl_tab_of(s) is the bits of nccl_best for it. */
typedef struct nccl_tab {
    double raw[NCCL_N_ALGOS]; /* algo_bw_raw of each usable algorithm, 0 for the others */
    double mul[NCCL_N_ALGOS]; /* algo_bytes per byte of S of each usable one, 0 for the others */
    /* the usable pairs alone, in nccl_best_of's order (algorithm up, Simple first): nc of them */
    int nc;
    unsigned char ca[NCCL_N_ALGOS * NCCL_N_PROTOS], cq[NCCL_N_ALGOS * NCCL_N_PROTOS];
    double cl[NCCL_N_ALGOS * NCCL_N_PROTOS]; /* their latencies, s */
} nccl_tab;
void nccl_tab_of(const nccl_params *p, const nccl_shape *s, nccl_tab *t);
double nccl_best_tab(const nccl_params *p, const nccl_shape *s, const nccl_tab *t, double S);
/* The chunk efficiency's powers (h / c)^chunk_exp met within one estimate, by their base: the
 * collectives of one estimate repeat bases (a reduce-scatter and an all-gather of the same bytes on
 * one communicator, the 1-byte latencies of every kind on it). used = 0 to start; for one
 * nccl_params throughout. nccl_best_tab_m is nccl_best_tab with it (NULL: none), the same bits.
 * Direct-mapped by the base's bits: a slot taken by another base keeps it. */
#define NCCL_POW_N 8
typedef struct nccl_pow_memo {
    unsigned used; /* bit i: slot i holds x[i]^e = y[i] */
    double x[NCCL_POW_N], y[NCCL_POW_N];
} nccl_pow_memo;
/* Fill p's power table for its chunk_exp and chunk_half_B (pow2_on where chunk_exp != 1). */
void nccl_pow2_fill(nccl_params *p);
double nccl_best_tab_m(const nccl_params *p, const nccl_shape *s, const nccl_tab *t, double S, nccl_pow_memo *pm);

const char *nccl_algo_name(nccl_algo a);
const char *nccl_proto_name(nccl_proto p);

#endif

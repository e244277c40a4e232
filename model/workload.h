/* workload.h — what one training micro-step of a model costs per GPU, independent of layout:
 * per layer parameters, GEMM shapes, forward/backward FLOPs, activation bytes and HBM bytes.
 * Identical transformer blocks are one wl_layer with count = layers, so engines can work per
 * distinct layer. Not here: sharding (model/layout, model/memory) or time (model/cost). */
#ifndef SC_WORKLOAD_H
#define SC_WORKLOAD_H

#include "spec.h"

typedef enum { WL_EMBED, WL_BLOCK, WL_HEAD } wl_kind;

/* What a GEMM is in its layer: set once where the workload's GEMMs are built (wl_build), and
 * read by every rule that depends on it (tensor-parallel splits, checkpointing, userbuffer
 * chunks, the frameworks' parameter tensors, attention's kernels) instead of its name.
 * WL_G_OTHER (0, a zeroed GEMM's): a bare GEMM no such rule applies to (calibrate's harness
 * GEMMs, tests); the split rules treat it as column parallel, as they treat lm_head. */
typedef enum {
    WL_G_OTHER = 0,
    WL_G_QKV,     /* Q, K and V projections, fused: column parallel                          */
    WL_G_SCORES,  /* Q K^T per head: attention's core, no parameters                         */
    WL_G_CONTEXT, /* softmax(Q K^T) V per head: attention's core, no parameters              */
    WL_G_PROJ,    /* attention's output projection: row parallel                             */
    WL_G_FC1,     /* the MLP's input projection (GELU): column parallel                      */
    WL_G_GATE_UP, /* SwiGLU's gate and up projections, fused: column parallel                */
    WL_G_FC2,     /* the MLP's output projection: row parallel                               */
    WL_G_HEAD,    /* lm_head, the projection to the vocabulary                               */
    WL_G_N
} wl_gemm_role;

/* One GEMM: C[m x n] = A[m x k] * B[k x n], `batch` independent copies. FLOPs = 2 m n k batch.
 * The role comes first so that an initialiser without field names ({"qkv", m, n, k, batch})
 * does not compile (a string for the role) instead of shifting every shape by one field; with
 * the 12-byte name the struct has no padding (48 bytes: the memo compares layers by bytes). */
typedef struct wl_gemm {
    wl_gemm_role role;
    char name[12]; /* for output: wl_gemm_role_name of the role where wl_build made it */
    double m, n, k, batch;
} wl_gemm;
_Static_assert(sizeof(wl_gemm) == sizeof(wl_gemm_role) + 12 + 4 * sizeof(double), "wl_gemm without padding");

/* The name wl_build gives a GEMM of that role ("qkv", "scores", ..., "lm_head"; "" for
 * WL_G_OTHER or a value out of range). */
const char *wl_gemm_role_name(wl_gemm_role r);
/* Attention's core (scores, context): run fused or as batched GEMMs, no parameters. */
static inline int wl_role_core(wl_gemm_role r) { return r == WL_G_SCORES || r == WL_G_CONTEXT; }
/* Megatron's row-parallel linears (proj, fc2: the contraction split over tensor ranks). */
static inline int wl_role_row(wl_gemm_role r) { return r == WL_G_PROJ || r == WL_G_FC2; }
/* Megatron's column-parallel linears of a block (qkv, fc1, gate_up: the outputs split). */
static inline int wl_role_col(wl_gemm_role r) { return r == WL_G_QKV || r == WL_G_FC1 || r == WL_G_GATE_UP; }

#define WL_MAX_GEMMS 8

typedef struct wl_layer {
    wl_kind kind;
    char name[24];
    int count;            /* identical copies of this layer in the model                     */
    double params;        /* parameters of one copy                                          */
    double fwd_flops;     /* one copy, one micro-batch of micro_batch sequences, FLOP        */
    double bwd_flops;     /* 2 x forward for GEMMs (input and weight gradients), FLOP        */
    double fwd_hbm_bytes; /* HBM traffic of the forward: weights + activations read/written  */
    double act_bytes;     /* activations kept for backward without checkpointing, B          */
    double ckpt_bytes;    /* kept with full checkpointing (the layer input), B               */
    int n_gemm;
    wl_gemm gemm[WL_MAX_GEMMS]; /* forward GEMMs of one copy (backward: same shapes, twice)  */
    /* how the kernels run (model/kernels): "scores" and "context" GEMMs are attention's core,
     * run fused (FlashAttention) when flash, else as two batched GEMMs + element-wise      */
    int flash;            /* fused attention: 0 none, 2 FlashAttention-2, 3 FlashAttention-3  */
    int attn_kernel;      /* spec_attn_kernel of a fused core (AK_DEFAULT: the arch's)        */
    int causal;           /* decoder: causal mask                                            */
    int ckpt;             /* spec_ckpt of the training                                       */
    int gemm_dtype;       /* kern_dtype of the linear layers' GEMMs                          */
    int tc_align8;        /* training.tc_align8: 16-bit GEMMs with m, n or k not a multiple of 8
                             run FP32 math (cuBLAS < 11.0; model/cost.c gemm_math)             */
    int ub_tp;            /* Transformer Engine userbuffers in force (Megatron --tp-comm-overlap,
                             layout_tensor.c lo_tp_ub_mark): the tensor-parallel size t, whose
                             chunks wl_ub_chunks gives; 0: every GEMM runs whole             */
    int ub_atp;           /* 1: PyTorch async TP's micro-pipelined GEMMs instead (torchtitan
                             fsdp2:dp=D,t=T,asynctp=1, layout_tensor.c lo_tp_ub_mark): t chunks
                             for every fused GEMM, the row-parallel forward ones included      */
    double act_core_bytes;/* of act_bytes, attention's s x s tensors (0 when fused), B       */
    double core_fwd_flops;/* attention core (scores + context) forward FLOPs                  */
    /* memory-bound kernels of one copy (norms, rotary, activation, dropout, residuals, loss,
     * unfused softmax), eager or compiled: HBM bytes and kernel launches per pass           */
    double ew_fwd_bytes, ew_bwd_bytes;
    int ew_fwd_kernels, ew_bwd_kernels;
    double core_ew_fwd_bytes; /* of ew_fwd_bytes, the unfused softmax path's (recompute)     */
    double ew_tp_fwd_bytes, ew_tp_bwd_bytes; /* of ew_*_bytes, the part over heads, FFN columns or
                              the vocabulary (rotary, activation, unfused softmax, the loss), which
                              Megatron tensor parallelism splits even without sequence parallelism */
    double ew_param_bytes;  /* of ew_fwd_bytes and of ew_bwd_bytes each, the per-parameter part
                              (autocast's weight casts): split with the weights over tensor ranks,
                              not with the tokens over context-parallel ones (cp.c)          */
    int core_ew_fwd_kernels;
    double fp8_rep_bwd_bytes; /* of ew_bwd_bytes, FP8 casts of output gradients h wide on every
                              tensor rank even under sequence parallelism (workload.c fp8_casts) */
    double fp8_param_bwd_bytes; /* of ew_bwd_bytes, FP8's per-parameter weight copy (torchao:
                              fp8_casts): split with the weights over tensor ranks, not with
                              the tokens over context-parallel ones (cp.c)                  */
    /* checkpointing op (torchtitan's op-level selective AC, wl_build): the fraction of each
     * forward GEMM gemm[i] that the backward recomputes (every second aten.mm; SDPA saved),
     * and the block's stash under it: saved matmul and attention outputs, B (the block's
     * input, ckpt_bytes, kept as well)                                                       */
    double op_rec[WL_MAX_GEMMS];
    double op_act_bytes;
} wl_layer;

#define WL_MAX_LAYERS 4

/* Transformer Engine's userbuffers (Megatron --tp-comm-overlap) run some of a block's GEMMs as
 * chunks along m (the tokens), one GEMM per chunk of m / chunks, one after another
 * (NVIDIA/TransformerEngine@0004dbd0 transformer_engine/pytorch/module/base.py initialize_ub's
 * default methods; comm_gemm_overlap.h split_overlap_ag / split_overlap_rs, m_chunk = m /
 * num_splits, one te_gemm per chunk): ring_exchange (t chunks of m / t, t = L->ub_tp) for
 * the forward of qkv and fc1 (gate_up) and the data gradient of proj and fc2; pipeline
 * (WL_UB_SPLITS chunks) for the forward of proj and fc2; the other data gradients (bulk) and
 * every weight gradient whole. The chunks of gemm g of layer L in its forward (dgrad = 0) or
 * its data gradient (dgrad = 1); 1 = whole (always where L->ub_tp < 2). FP8 the same.
 * PyTorch's async TP (L->ub_atp; layout_tensor.c atp_block) splits the same GEMMs in t chunks
 * each, the forward of proj and fc2 too (_pipelined_produce_and_all2all: one chunk_producer call
 * per rank); the other data gradients and every weight gradient run whole (not fused). */
enum { WL_UB_SPLITS = 4 }; /* num_splits of the pipeline method (base.py above) */
int wl_ub_chunks(const wl_layer *L, const wl_gemm *g, int dgrad);

typedef struct wl {
    spec_model model;
    int micro_batch;        /* sequences per GPU per micro-step                              */
    double elem_bytes;      /* bytes of one parameter/activation element (2 bf16/fp16, 4)   */
    int act_ckpt;
    int n_layers;           /* distinct layers (embed, block, head)                          */
    wl_layer layer[WL_MAX_LAYERS];
    double params;          /* whole model                                                   */
    double model_flops;     /* forward + backward, one micro-step, one GPU, FLOP             */
    double hw_flops;        /* + recomputed forward when checkpointing, FLOP                 */
    double logits_bytes;    /* fp32 logits for the loss, B                                   */
    int fused_ce;           /* 1: logits_bytes is wl_logits_bytes' fused (Liger) form, whose head
                               gradient [V, h] does not shrink with the tokens (cp.c)         */
    int kv_repeat;          /* 1: K and V expanded to all query heads before attention
                               (training repeat_kv): the width PyTorch's ring handles (cp.c)   */
    double tokens;          /* micro_batch x seq_len                                         */
    double hidden_dropout, attention_dropout; /* in effect (wl_dropout): > 0 runs its kernels and
                                                 keeps its 1-byte masks                        */
} wl;

/* The dropout probability a run trains with (attention = 0: hidden dropout, after attention's
 * projection and after the MLP; 1: on the attention probabilities): the training key when
 * given (>= 0), else framework megatron's 0.1 (Megatron-LM arguments.py, Megatron-Core
 * TransformerConfig), else the model family's released configs: 0.1 for a GELU MLP (GPT-2,
 * GPT-3, BERT), 0 for SwiGLU (Llama). workload.c names the commits. */
double wl_dropout(const spec_model *m, const spec_training *t, int attention);
/* The length one fused attention problem covers: training.attn_doc_len (packed documents'
 * E[l^2] / E[l]) where given, below s and the kernel fused, else s (workload.c). */
double wl_attn_doc(const spec_training *t, double s);

/* Build the workload of a model at a micro-batch and training settings. Cannot fail on a
 * validated spec. */
void wl_build(const spec_model *m, const spec_training *t, wl *out);

/* The workload as one rank of a tensor-parallel layout computes it (each kind's row calls its
 * own; layout_kind_localize dispatches for those above the families). Tensor-parallel layouts keep the work per GPU of a micro-step equal to
 * data parallelism's (a replica of q tensor-parallel GPUs runs q x micro_batch sequences) and
 * split every GEMM: tp:t=T (Megatron-LM, Shoeybi et al. 2019 §3): column-parallel QKV and fc1
 * (n / T), row-parallel proj and fc2 (k / T), heads / T, vocabulary-parallel head; norms,
 * residuals and dropout stay replicated (no sequence parallelism), so their activations grow
 * T-fold. axonn:x=X,y=Y,z=Z: Agarwal's 3D product as AxoNN applies it: rows (tokens) over Z,
 * the contraction over the layer's row axis and the outputs over its column axis, the two
 * alternating layer by layer (qkv, fc1, head: rows X, columns Y; proj, fc2: rows Y, columns X);
 * attention over heads / Y and tokens / Z, hence repeated on the X ranks (their inputs are
 * replicated there); activations as the mean of the two axis sizes (X + Y) / 2 times. The
 * parameters of one copy become those one rank holds. wl_localize_tp returns w itself when
 * t <= 1, else out, filled; wl_localize_axonn fills out with the grid's x, y, z. */
const wl *wl_localize_tp(const wl *w, int t, wl *out);
const wl *wl_localize_axonn(const wl *w, const int grid[3], wl *out);

/* FLOPs recomputed in one copy's backward under its checkpointing (full: the forward;
 * selective: attention's core when unfused; op: op_rec of each GEMM). */
double wl_recompute_flops(const wl_layer *l);

/* FSDP's per-micro-step gradient path (issue 27 item 3): HBM bytes its kernels move per
 * parameter of an unsharded layer, for a framework (spec_framework), gradient element size
 * eb (2 or 4), reduction element size rb and shard group size n. See workload.c. */
double wl_grad_path_bytes_per_param(int framework, double eb, double rb, int n);
/* Of those kernels' time on the post-backward stream, the fraction that extends the step
 * (the rest hides under the next layer's backward GEMMs). Measured on one H100 with the path's
 * kernels beside a backward GEMM stream (bench/fsdp_gradpath.py, bench/results/
 * fsdp_gradpath-h100.json grad_path.*.exposed_median: 0.787 with a bf16, 0.788 with an fp32
 * reduction, 7 alternations each). */
#define WL_GRAD_PATH_EXPOSED 0.79
/* AdamW step, HBM bytes per local parameter, by implementation (spec_opt_impl, not default)
 * and kernel launches per parameter tensor (for-loop: each pass per tensor). */
double wl_opt_bytes_per_param(int opt_impl);
int wl_opt_passes(int opt_impl);

/* megatron:t=T (workload_megatron.c): the micro-batch is the model replica's (Megatron-LM's
 * --micro-batch-size), so each rank of the tensor-parallel group computes the same tokens with
 * every GEMM split t ways (Shoeybi et al. 2019 §3); activations per Korthikanti et al. 2022
 * Table 2: with sequence parallelism (sp = 1) all of them / t, without it the replicated part
 * (wl_tp_replicated_act) whole and the rest / t; fp32 logits vocabulary-parallel (/ t). Layer
 * counts are the whole model's: the pipeline split is layout_pipe.c's. Always returns out. */
const wl *wl_localize_megatron(const wl *w, const spec_layout *l, wl *out);

/* fsdp2:dp=D,t=T[,cp=C] (torchtitan's DTensor tensor parallelism, sequence parallel): Megatron's
 * split (above, sp) but for what a block saves: the gathered inputs of wq / wk / wv and w1 / w3 and
 * of the output layer, and op-level checkpointing's saved list (workload_local.c). Returns out. */
const wl *wl_localize_dtensor(const wl *w, const spec_layout *l, wl *out);

/* Bytes per block that tensor parallelism without sequence parallelism replicates on every
 * rank (Korthikanti et al. 2022 §4.2.2: 10 sbh of the 34 for a GPT block). */
double wl_tp_replicated_act(const wl *w);

/* Largest single layer's parameter count (sizes gather buffers). */
double wl_max_layer_params(const wl *w);

/* The cross-entropy implementation a training runs: one home read by the step time
 * (workload.c ew_head: bytes and kernels per vocabulary entry) and by the memory plan
 * (memory_states.c: bytes the loss holds), so the two cannot pick different ones. Order:
 * Megatron's vocab_parallel_cross_entropy (megatron_ce, or framework megatron when not given,
 * and loss_fp32 not off: an outside logits.float() is the copy it makes anyway), fused or not;
 * then loss_fp32 on (torchtitan's loss_parallel under fsdp2 with t > 1, else F.cross_entropy
 * on a fp32 copy); then a fused loss (loss_fusion, or compiled); then loss_fp32 off (eager,
 * 16-bit); else the default. Liger's fused linear cross-entropy (fused_linear_ce) is not one
 * of these: its memory is wl_logits_bytes'. */
typedef enum wl_loss_impl {
    WL_LOSS_DEFAULT,        /* eager upcast inside the loss, no code named                     */
    WL_LOSS_TORCH_FP32,     /* logits.float() then F.cross_entropy (torchtitan, Hugging Face)  */
    WL_LOSS_PARALLEL,       /* torchtitan's loss_parallel (DTensor log_softmax over Shard(-1)) */
    WL_LOSS_MEGATRON,       /* Megatron's vocab_parallel_cross_entropy, unfused                */
    WL_LOSS_MEGATRON_FUSED, /* the same, --cross-entropy-loss-fusion (or compiled)             */
    WL_LOSS_FUSED,          /* one fused cross-entropy kernel (compiled, loss_fusion)          */
    WL_LOSS_EAGER16         /* loss_fp32 off, eager: the loss in the logits' 16-bit dtype      */
} wl_loss_impl;

/* Costs of one implementation per vocabulary entry of a token, e = the logits' element bytes:
 * time (HBM bytes forward / backward, kernels each way) and memory (kept from the forward to
 * the backward, live at the forward's end, live at the backward's start). */
typedef struct wl_loss_cost {
    double fwd_b, bwd_b;          /* HBM bytes per entry, forward and backward */
    int kernels;                  /* kernels forward, and as many backward      */
    double kept, mem_fwd, mem_bwd; /* bytes held per entry                     */
} wl_loss_cost;

/* The implementation training t runs on layout l (l may be NULL: then not loss_parallel). */
wl_loss_impl wl_loss_impl_of(const spec_training *t, const spec_layout *l);

/* Fills o with implementation impl's costs at e-byte logits; returns o. */
const wl_loss_cost *wl_loss_costs(wl_loss_impl impl, double e, wl_loss_cost *o);

/* Bytes the loss holds over T tokens of vocabulary V, hidden h, parameter dtype e bytes: fp32
 * logits [T, V], or with fused (Liger-Kernel's fused linear cross-entropy) one chunk of logits,
 * the input and head-weight gradients it computes in the forward and a fp32 loss per token. */
double wl_logits_bytes(double T, double V, double h, double e, int fused);

#endif

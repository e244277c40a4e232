/* test_fsdp2tp.c — FSDP2 composed with tensor parallelism (torchtitan's fsdp2:dp=D,t=T: zero3
 * with t > 1, model/layout_dp.c and layout_tensor.c's lo_fsdp2_tp_item): the grammar and its
 * canonical name, the checks, one block's collectives by hand (eager and async TP), memory by
 * hand, t = 1 is today's zero3, and the two engines agree where nothing contends. */
#include "suites.h"
#include "support.h"

#include "../model/analytic.h"
#include "../model/cost.h"
#include "../model/framework.h"
#include "../model/layout.h"
#include "../model/layout_kind.h"
#include "../model/memory.h"
#include "../model/memory_states.h"
#include "../model/spec.h"
#include "../model/workload.h"
#include "../sim/exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

Suite *fsdp2tp_suite(void);

#define parse test_parse_layout
#define parse_err test_parse_layout_err

/* The tiny model with 2 heads (head dim 32) so that t = 2 splits them: hidden 64, ffn 256 GeLU,
 * seq 16, vocab 128, 2 blocks; micro-batch 1, bf16, fsdp2, no checkpointing, one micro-step. */
static void tiny2(spec_model *m, spec_training *tr, wl *w)
{
    *m = test_tiny_model(2);
    m->heads = m->kv_heads = 2;
    spec_training_defaults(tr);
    tr->framework = FW_FSDP2;
    tr->act_ckpt = 0;
    tr->grad_accum = 1;
    wl_build(m, tr, w);
}

/* tiny2 run by Megatron (its sequence-parallel graph, layout_tensor.c lo_tp_item) */
static void tiny2_megatron(spec_model *m, spec_training *tr, wl *w)
{
    tiny2(m, tr, w);
    tr->framework = FW_MEGATRON;
    wl_build(m, tr, w);
}

/* l on 2 duo nodes, built and timed into t (the caller frees the graph) */
static lo_graph *build_timed(const wl *w, const spec_training *tr, const spec_layout *l, const spec_cluster *c,
                             const cost_calib *k, an_timed *t)
{
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(w, tr, l, c, 2, g);
    an_time(g, w, k, c, t);
    return g;
}

static const lo_item *first_block(const lo_micro *mi, const wl *w, lo_pass pass)
{
    for (int i = 0; i < mi->n_items; i++)
        if (mi->item[i].pass == pass && w->layer[mi->item[i].layer].kind == WL_BLOCK)
            return &mi->item[i];
    return NULL;
}

static const lo_coll *find(const lo_coll *c, int n, cost_coll kind, lo_group_kind grp)
{
    for (int i = 0; i < n; i++)
        if (c[i].kind == kind && c[i].group == grp)
            return &c[i];
    return NULL;
}

START_TEST(test_grammar)
{
    char buf[64];
    spec_layout l = parse("fsdp2:dp=16,t=8");
    ck_assert_int_eq(l.kind, LAYOUT_ZERO3);
    ck_assert_int_eq(l.dp, 16);
    ck_assert_int_eq(l.t, 8);
    ck_assert_int_eq(l.atp, 0);
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "fsdp2:dp=16,t=8");
    l = parse("fsdp2:t=8,asynctp=1,dp=16"); /* any order; the canonical name has one */
    ck_assert_int_eq(l.atp, 1);
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "fsdp2:dp=16,t=8,asynctp=1");
    l = parse("fsdp2:dp=16,t=8,asynctp=0");
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "fsdp2:dp=16,t=8");
    /* t = 1 is the 1-D spelling, as before */
    l = parse("fsdp2:dp=16,t=1");
    ck_assert_int_eq(l.t, 0);
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "fsdp2:dp=16,cp=1");
    /* the canonical name parses back to the same layout */
    spec_layout a = parse("fsdp2:dp=4,t=2,asynctp=1"), b = parse(spec_layout_str(&a, buf, sizeof buf));
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    parse_err("fsdp2:dp=4,asynctp=1",
              "in \"fsdp2:dp=4,asynctp=1\": asynctp=1 needs tensor parallelism, t > 1 (e.g. \"fsdp2:dp=4,t=2,asynctp=1\")");
    l = parse("fsdp2:dp=4,t=2,cp=2"); /* with context parallelism (tests/test_fsdp2pp.c) */
    ck_assert_str_eq(spec_layout_str(&l, buf, sizeof buf), "fsdp2:dp=4,cp=2,t=2");
    /* a schedule without stages (pipelines: tests/test_fsdp2pp.c) */
    parse_err("fsdp2:dp=4,t=2,schedule=1f1b", "in \"fsdp2:dp=4,t=2,schedule=1f1b\": a pipeline schedule needs pipeline "
                                             "stages, p > 1 (e.g. \"fsdp2:dp=8,t=8,p=8,schedule=1f1b\")");
    parse_err("fsdp2:dp=4,t=0", "in \"fsdp2:dp=4,t=0\": expected t to be a positive integer, got \"0\"");
}
END_TEST

START_TEST(test_checks)
{
    sc_err err;
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10); /* 2 GPUs per node */
    spec_layout l = parse("fsdp2:dp=2,t=2");
    ck_assert_int_eq(spec_layout_check(&l, &duo, 2, &err), 0);
    ck_assert_int_eq(spec_layout_check(&l, &duo, 1, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "fsdp2:dp=2,t=2: expected dp x t = 2 GPUs, got 2 x 2");
    l = parse("fsdp2:dp=1,t=4"); /* a TP group across the two nodes */
    ck_assert_int_eq(spec_layout_check(&l, &duo, 2, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "fsdp2:dp=1,t=4: expected t dividing the 2 GPUs per node (tensor parallelism inside "
                               "a node is modelled), got 4");
    /* the tiny model's 1 head does not split */
    spec_model m = test_tiny_model(2);
    l = parse("fsdp2:dp=2,t=2");
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), SC_EINPUT);
    m.heads = m.kv_heads = 2;
    ck_assert_int_eq(spec_layout_check_model(&l, &m, &err), 0);
    /* frameworks: torchtitan's (fsdp2) and ideal */
    ck_assert_int_eq(fw_check(FW_FSDP2, &l, &err), 0);
    ck_assert_int_eq(fw_check(FW_IDEAL, &l, &err), 0);
    ck_assert_int_eq(fw_check(FW_DEEPSPEED, &l, &err), SC_EINPUT);
    ck_assert_str_eq(err.text, "fsdp2:dp=2,t=2: tensor parallelism over FSDP runs under fsdp2 (torchtitan) or ideal, "
                               "not deepspeed");
    /* one micro-batch per TP group (torchtitan's local batch is per data-parallel rank) */
    ck_assert_int_eq(spec_layout_replicas(&l), 2);
    ck_assert_int_eq(spec_layout_batch_share(&l), 2);
    ck_assert_int_eq(spec_layout_shard(&l, 4), 4); /* states over all D x T ranks */
}
END_TEST

/* One block's collectives on 2 duo nodes (4 GPUs), fsdp2:dp=2,t=2, by hand:
 *  - block parameters: qkv 64 x (64 + 2 x 64) = 12288, proj 64 x 64 = 4096, fc1 and fc2
 *    64 x 256 = 16384 each, two LayerNorms' scale and shift 4 x 64 = 256 (no linear biases):
 *    49408; a TP rank's slice 24704, 2-byte parameters: the FSDP all-gather over the 2 ranks of
 *    the data axis (GRP_AX3) moves a 49408-byte buffer, the reduce-scatter the slice's gradients
 *    as reduced (reduce_elem_bytes each);
 *  - the TP group's activation [16 tokens, 64] x 2 B = 2048 B: forward two all-gathers (before
 *    attention and the MLP) and two reduce-scatters (after proj and fc2) of it, 4096 B and 2
 *    calls each, on GRP_AX0; the backward the same; eager: the compute waits (overlap 0);
 *  - asynctp=1 (layout_tensor.c atp_block): the same bytes. Forward: both all-gathers and both
 *    reduce-scatters fused (micro_pipeline_tp.py), over the copy engines (offload), beside
 *    (t - 1) / t = 1/2 of the linear GEMMs: per rank qkv 2 x 16 x 96 x 64 = 196608 FLOPs, proj
 *    2 x 16 x 64 x 32 = 65536, fc1 and fc2 2 x 16 x 128 x 64 = 262144 each: 786432 of the
 *    layer's forward FLOPs; HBM: the two reduce-scatters' partial sums 2 x 2048 x (1 + 1/2) =
 *    6144 plus the two all-gathers' local shard copies 2 x 2 x 2048 / 2 = 4096: 10240.
 *    Backward (no recompute): the two all-gathers fused with the data gradients of proj and fc2
 *    (65536 + 262144 = 327680 FLOPs, half beside the copies) over the copy engines; the two
 *    reduce-scatters of the summed input gradients not fused: NCCL (not offload), a tail (issued
 *    when the compute ends); HBM: the two local shard copies, 4096. */
START_TEST(test_block_bytes)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2(&m, &tr, &w);
    ck_assert_double_eq_tol(w.layer[1].params, 49408.0, 1e-9);
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    lo_graph *g = malloc(sizeof *g), *ga = malloc(sizeof *ga);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_nonnull(ga);
    spec_layout l = parse("fsdp2:dp=2,t=2"), la = parse("fsdp2:dp=2,t=2,asynctp=1");
    layout_build(&w, &tr, &l, &duo, 2, g);
    layout_build(&w, &tr, &la, &duo, 2, ga);
    int mem[4];
    ck_assert_int_eq(layout_group_members(g, GRP_AX0, 0, mem), 2); /* TP: ranks 0 and 1, one node */
    ck_assert_int_eq(mem[0], 0);
    ck_assert_int_eq(mem[1], 1);
    ck_assert_int_eq(layout_group_members(g, GRP_AX3, 0, mem), 2); /* FSDP: ranks 0 and 2 */
    ck_assert_int_eq(mem[1], 2);
    const double er = g->sched.reduce_elem_bytes;
    for (int p = 0; p < 2; p++) {
        lo_pass pass = p ? LO_BWD : LO_FWD;
        const lo_item *it = first_block(&g->last, &w, pass), *ia = first_block(&ga->last, &w, pass);
        ck_assert_ptr_nonnull(it);
        ck_assert_ptr_nonnull(ia);
        const lo_coll *ag = find(it->gather, it->n_gather, COLL_ALLGATHER, GRP_AX3);
        ck_assert_ptr_nonnull(ag);
        ck_assert_double_eq_tol(ag->bytes, 49408.0, 1e-9);
        ck_assert_ptr_null(find(it->gather, it->n_gather, COLL_ALLGATHER, GRP_WORLD));
        const lo_coll *rs = find(it->reduce, it->n_reduce, COLL_REDUCESCATTER, GRP_AX3);
        if (pass == LO_BWD) {
            ck_assert_ptr_nonnull(rs);
            ck_assert_double_eq_tol(rs->bytes, 24704.0 * er, 1e-9);
        } else {
            ck_assert_ptr_null(rs);
        }
        const lo_coll *tag = find(it->inl, it->n_inline, COLL_ALLGATHER, GRP_AX0);
        const lo_coll *trs = find(it->inl, it->n_inline, COLL_REDUCESCATTER, GRP_AX0);
        ck_assert_ptr_nonnull(tag);
        ck_assert_ptr_nonnull(trs);
        ck_assert_double_eq_tol(tag->bytes, 4096.0, 1e-9);
        ck_assert_double_eq_tol(trs->bytes, 4096.0, 1e-9);
        ck_assert_int_eq(tag->chunks, 2);
        ck_assert_int_eq(trs->chunks, 2);
        ck_assert(!tag->offload && !trs->offload);
        ck_assert(it->inline_overlap == 0);
        const lo_coll *aag = find(ia->inl, ia->n_inline, COLL_ALLGATHER, GRP_AX0);
        const lo_coll *ars = find(ia->inl, ia->n_inline, COLL_REDUCESCATTER, GRP_AX0);
        ck_assert_ptr_nonnull(aag);
        ck_assert_ptr_nonnull(ars);
        ck_assert_int_eq(ia->n_inline, 2);
        ck_assert_double_eq_tol(aag->bytes, 4096.0, 1e-9);
        ck_assert_double_eq_tol(ars->bytes, 4096.0, 1e-9);
        ck_assert_int_eq(aag->chunks, 2);
        ck_assert_int_eq(ars->chunks, 2);
        ck_assert(aag->offload);
        const wl_layer *B = &ga->lw[ia->layer];
        ck_assert_int_eq(B->ub_tp, 2); /* the fused GEMMs in t chunks */
        ck_assert_int_eq(B->ub_atp, 1);
        if (pass == LO_FWD) {
            ck_assert(ars->offload);
            ck_assert_uint_eq(ia->inline_tail, 0);
            /* each fused op's copies paired with its own GEMM: all-gather -> qkv, -> fc1;
             * proj -> reduce-scatter, fc2 -> reduce-scatter; beside (t - 1) / t = 1/2 of it */
            ck_assert_int_eq(ia->n_pair, 4);
            const int want_role[4] = {WL_G_QKV, WL_G_FC1, WL_G_PROJ, WL_G_FC2};
            const lo_coll *want_coll[4] = {aag, aag, ars, ars};
            for (int q = 0; q < 4; q++) {
                ck_assert_int_eq(ia->pair[q].role, want_role[q]);
                ck_assert_ptr_eq(&ia->inl[ia->pair[q].coll], want_coll[q]);
                ck_assert_int_eq(ia->pair[q].pass, LO_PAIR_FWD);
            }
            for (int q = 0; q < 4; q++) { /* t = 2 chunks, one with no copy beside it */
                ck_assert_int_eq(ia->pair[q].chunks, 2);
                ck_assert_int_eq(ia->pair[q].bare, 1);
            }
            ck_assert(ia->inline_overlap == 0); /* nothing but the pairs beside the copies */
            ck_assert_double_eq_tol(ia->hbm_bytes - it->hbm_bytes, 10240.0, 1e-6);
        } else {
            ck_assert(!ars->offload);
            ck_assert_uint_eq(ia->inline_tail, 1u << (ars - ia->inl));
            /* the all-gathers fused with proj's and fc2's data gradients; the tail unpaired */
            ck_assert_int_eq(ia->n_pair, 2);
            ck_assert_int_eq(ia->pair[0].role, WL_G_PROJ);
            ck_assert_int_eq(ia->pair[1].role, WL_G_FC2);
            for (int q = 0; q < 2; q++) {
                ck_assert_ptr_eq(&ia->inl[ia->pair[q].coll], aag);
                ck_assert_int_eq(ia->pair[q].pass, LO_PAIR_DGRAD);
            }
            ck_assert(ia->inline_overlap == 0);
            ck_assert_double_eq_tol(ia->hbm_bytes - it->hbm_bytes, 4096.0, 1e-6);
        }
        ck_assert_int_eq(g->lw[ia->layer].ub_tp, 0); /* eager: whole GEMMs */
    }
    free(g);
    free(ga);
}
END_TEST

/* Float8 linears (precision fp8): the forward's two sequence-parallel all-gathers cast to float8
 * first (torchao's PrepareFloat8ModuleInput): 2 x 2048 B / 2 = 2048 B; the backward's stay at
 * 2 bytes, 4096 B; the reduce-scatters 4096 B either way. */
START_TEST(test_fp8_gathers)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2(&m, &tr, &w);
    tr.precision = PREC_FP8;
    wl_build(&m, &tr, &w);
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    spec_layout l = parse("fsdp2:dp=2,t=2");
    layout_build(&w, &tr, &l, &duo, 2, g);
    const double want_ag[2] = {2048.0, 4096.0};
    for (int p = 0; p < 2; p++) {
        const lo_item *it = first_block(&g->last, &w, p ? LO_BWD : LO_FWD);
        ck_assert_ptr_nonnull(it);
        const lo_coll *ag = find(it->inl, it->n_inline, COLL_ALLGATHER, GRP_AX0);
        const lo_coll *rs = find(it->inl, it->n_inline, COLL_REDUCESCATTER, GRP_AX0);
        ck_assert_ptr_nonnull(ag);
        ck_assert_ptr_nonnull(rs);
        ck_assert_double_eq_tol(ag->bytes, want_ag[p], 1e-9);
        ck_assert_double_eq_tol(rs->bytes, 4096.0, 1e-9);
    }
    free(g);
}
END_TEST

/* Memory of fsdp2:dp=2,t=2 on 4 GPUs, by hand: parameters, gradients and optimizer states
 * sharded over all D x T = 4 ranks (each TP slice over the 2 FSDP ranks): psi x (2, 2, opt) / 4;
 * the gathered layer is a TP slice, half the whole block zero3 gathers; activations with
 * sequence parallelism a rank's 1 / t of all of them (Korthikanti et al. 2022 Table 2:
 * sbh(34/t + 5as/(ht)); the stored inputs, the head's input and the vocabulary-split fp32
 * logits / t): half of zero3's at the same micro-batch. */
START_TEST(test_memory_by_hand)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2(&m, &tr, &w);
    tr.act_ckpt = CKPT_FULL;
    wl_build(&m, &tr, &w);
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    spec_layout l = parse("fsdp2:dp=2,t=2"), z = parse("zero3");
    mem_breakdown a, b;
    mem_plan(&w, &tr, &l, 4, &duo, &a);
    mem_plan(&w, &tr, &z, 4, &duo, &b);
    const double psi = w.params;
    ck_assert_double_eq_tol(a.params, 2 * psi / 4, 1e-6);
    ck_assert_double_eq_tol(a.grads, 2 * psi / 4, 1e-6);
    ck_assert_double_eq_tol(a.optim, mem_optim_bytes(&tr) * psi / 4, 1e-6);
    /* mem2d: DTensor keeps the two gathered inputs (wq/wk/wv's, w1/w3's) whole in the block
     * recomputed during its backward, 2 x (2 - 2/2) x 16 x 64 B, and the head's gathered input,
     * (1 - 1/2) x 2 x 16 x 64 B, beside Megatron's sequence-split half: + 3072 B */
    ck_assert_double_eq_tol(a.activations, b.activations / 2 + 2048 + 1024, 1e-6);
    ck_assert_double_eq_tol(a.gathered, b.gathered / 2, 1e-6);
}
END_TEST

/* The tiny SwiGLU model with 4 heads (head dim 16, kv heads 4): hidden 64, ffn 256, seq 16,
 * vocab 128, 2 blocks; micro-batch 1, bf16 (or prec), checkpointing ckpt. */
static void tiny_swiglu(spec_training *tr, int ckpt, spec_precision prec, wl *w)
{
    spec_model m = test_tiny_model(2);
    m.heads = m.kv_heads = 4;
    m.swiglu = 1;
    spec_training_defaults(tr);
    tr->framework = FW_FSDP2;
    tr->act_ckpt = ckpt;
    tr->precision = prec;
    tr->grad_accum = 1;
    wl_build(&m, tr, w);
}

static const wl_layer *layer_of(const wl *w, wl_kind k)
{
    for (int i = 0; i < w->n_layers; i++)
        if (w->layer[i].kind == k)
            return &w->layer[i];
    return NULL;
}

/* A block's kept bytes (mem_block_kept) under torchtitan's DTensor TP (the fsdp2 row's localize:
 * wl_localize_dtensor) and, in *mega, under Megatron's sequence-parallel split of the same layers. */
static double kept_dtensor(int ckpt, spec_precision prec, const char *layout, double *mega, double *head)
{
    spec_training tr;
    static wl w, a, b; /* large: off the stack */
    tiny_swiglu(&tr, ckpt, prec, &w);
    spec_layout l = parse(layout);
    const wl *dw = layout_kind_localize(&w, &l, l.dp * l.t * (l.cp > 1 ? l.cp : 1), &a);
    spec_layout ml = l;
    ml.sp = 1;
    wl_localize_megatron(&w, &ml, &b);
    *mega = mem_block_kept(layer_of(&b, WL_BLOCK), ckpt);
    *head = layer_of(dw, WL_HEAD)->act_bytes;
    return mem_block_kept(layer_of(dw, WL_BLOCK), ckpt);
}

/* mem2d: what a block keeps per rank under torchtitan's DTensor TP, by hand for tiny_swiglu
 * (T h = 16 x 64 = 1024 elements, 2 B each), against Megatron's split at t = 2 and 4
 * (workload_local.c wl_localize_dtensor has the sources):
 *  none, selective: + the two gathered inputs whole instead of a shard each: 2 x (2 - 2/t) x 1024 B
 *    (2048 at t = 2, 3072 at t = 4);
 *  full: the block's input, a sequence shard: 2 x 1024 / t B (1024, 512);
 *  op: that + q, v [16, 64 / t], SDPA's output [16, 64 / t], w1's [16, 256 / t], w2's partial sum
 *    [16, 64] whole, the two reduce-scatters' outputs [16 / t, 64]: 2 x 16 x ((64 + 64 + 64 + 256)
 *    / t + 64 + 2 x 64 / t) = 11264 at t = 2, 6656 at t = 4 (+ 1024, + 512);
 *  the head: its gathered input whole, 2 x 1024 = 2048 B at any t;
 *  float8: the gathered inputs 1 B: + 2 x (1 - 2/t) x 1024 (0 at t = 2, 1024 at t = 4);
 *  cp = 2: the rank's 8 tokens: half of each. */
START_TEST(test_dtensor_saved_by_hand)
{
    double mg, hd;
    const char *lay[2] = {"fsdp2:dp=1,t=2", "fsdp2:dp=1,t=4"};
    const double t[2] = {2, 4}, op[2] = {11264 + 1024, 6656 + 512};
    for (int i = 0; i < 2; i++) {
        double k = kept_dtensor(CKPT_NONE, PREC_BF16, lay[i], &mg, &hd);
        ck_assert_double_eq_tol(k - mg, 2 * (2 - 2 / t[i]) * 1024, 1e-6);
        ck_assert_double_eq_tol(hd, 2048, 1e-6);
        k = kept_dtensor(CKPT_SELECTIVE, PREC_BF16, lay[i], &mg, &hd);
        ck_assert_double_eq_tol(k - mg, 2 * (2 - 2 / t[i]) * 1024, 1e-6);
        k = kept_dtensor(CKPT_FULL, PREC_BF16, lay[i], &mg, &hd);
        ck_assert_double_eq_tol(k, 2 * 1024 / t[i], 1e-6);
        ck_assert_double_eq_tol(k, mg, 1e-6);
        k = kept_dtensor(CKPT_OP, PREC_BF16, lay[i], &mg, &hd);
        ck_assert_double_eq_tol(k, op[i], 1e-6);
        k = kept_dtensor(CKPT_NONE, PREC_FP8, lay[i], &mg, &hd);
        ck_assert_double_eq_tol(k - mg, 2 * (1 - 2 / t[i]) * 1024, 1e-6);
    }
    double k = kept_dtensor(CKPT_NONE, PREC_BF16, "fsdp2:dp=1,cp=2,t=2", &mg, &hd);
    ck_assert_double_eq_tol(k - mg, 2048 / 2, 1e-6);
    ck_assert_double_eq_tol(hd, 2048 / 2, 1e-6);
    k = kept_dtensor(CKPT_OP, PREC_BF16, "fsdp2:dp=1,cp=2,t=2", &mg, &hd);
    ck_assert_double_eq_tol(k, op[0] / 2, 1e-6);
}
END_TEST

/* The pipelined plan (memory_pipe.c) reads the same localisation: fsdp2:dp=1,t=2,p=2 on 4 GPUs,
 * 1F1B over 4 micro-batches, no checkpointing: stage 0 holds its one block for p = 2 micro-batches
 * in flight, stage 1 its block, the head's gathered input (2048 B) and the fp32 logits
 * [16, 128 / 2] x 4 B = 4096 B for one: the plan's activations are the larger; a block keeps
 * Megatron's split's + 2 x (2 - 2/2) x 1024 = 2048 B (the two gathered inputs, mem2d). */
START_TEST(test_dtensor_pipe_plan)
{
    spec_training tr;
    static wl w;
    tiny_swiglu(&tr, CKPT_NONE, PREC_BF16, &w);
    tr.grad_accum = 4;
    spec_layout l = parse("fsdp2:dp=1,t=2,p=2");
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    mem_breakdown mb;
    mem_plan(&w, &tr, &l, 4, &duo, &mb);
    double mg, hd, blk = kept_dtensor(CKPT_NONE, PREC_BF16, "fsdp2:dp=1,t=2", &mg, &hd);
    ck_assert_double_eq_tol(blk, mg + 2048, 1e-6);
    const double s0 = 2 * blk, s1 = blk + 2048 + 4096;
    ck_assert_double_eq_tol(mb.activations, s0 > s1 ? s0 : s1, 1e-6);
}
END_TEST

/* fsdp2:dp=N,t=1 is today's zero3: the same items, boundary and step. */
START_TEST(test_t1_is_zero3)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2(&m, &tr, &w);
    spec_cluster duo = test_duo_cluster("duo", 5e10, 1e10);
    lo_graph *g0 = calloc(1, sizeof *g0), *g1 = calloc(1, sizeof *g1);
    ck_assert_ptr_nonnull(g0);
    ck_assert_ptr_nonnull(g1);
    spec_layout a = parse("zero3"), b = parse("fsdp2:dp=4,t=1");
    layout_build(&w, &tr, &a, &duo, 2, g0);
    layout_build(&w, &tr, &b, &duo, 2, g1);
    ck_assert(memcmp(&g0->micro, &g1->micro, sizeof g0->micro) == 0);
    ck_assert(memcmp(&g0->last, &g1->last, sizeof g0->last) == 0);
    ck_assert(memcmp(g0->boundary, g1->boundary, sizeof g0->boundary) == 0);
    cost_calib k = test_tiny_calib();
    an_timed t0, t1;
    an_result r0, r1;
    memset(&r0, 0, sizeof r0);
    memset(&r1, 0, sizeof r1);
    an_time(g0, &w, &k, &duo, &t0);
    an_run(&t0, &r0);
    an_time(g1, &w, &k, &duo, &t1);
    an_run(&t1, &r1);
    ck_assert(r0.step_s == r1.step_s);
    free(g0);
    free(g1);
}
END_TEST

/* The engine tests' job: Llama-3 8B on p4d nodes (the default calibration) under torchtitan's
 * fsdp2, two micro-steps, the default training (full checkpointing: spec_training_defaults). */
static void p4d_fsdp2(spec_cluster *c, spec_model *m, cost_calib *k, spec_training *tr, wl *w)
{
    test_p4d_llama3_8b(c, m, k);
    spec_training_defaults(tr);
    tr->framework = FW_FSDP2;
    tr->grad_accum = 2;
    wl_build(m, tr, w);
}

/* fsdp2:dp=2,t=4 and its async-TP twin on one p4d node (NVLink only, the default calibration):
 * the simulator and the analytical engine give the same step; async TP is no slower. */
START_TEST(test_engines_agree)
{
    spec_cluster c;
    spec_model m;
    sc_err err;
    cost_calib k;
    spec_training tr;
    wl w;
    p4d_fsdp2(&c, &m, &k, &tr, &w);
    double step[2];
    const char *names[2] = {"fsdp2:dp=2,t=4", "fsdp2:dp=2,t=4,asynctp=1"};
    for (int i = 0; i < 2; i++) {
        spec_layout l = parse(names[i]);
        ck_assert_int_eq(spec_layout_check(&l, &c, 1, &err), 0);
        lo_graph *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        layout_build(&w, &tr, &l, &c, 1, g);
        an_timed t;
        an_result ar;
        exec_result r;
        an_time(g, &w, &k, &c, &t);
        test_engines_run(g, &t, &k, &c, &ar, &r);
        ck_assert_msg(fabs(r.step_s / ar.step_s - 1) < 1e-3, "%s: sim %.9g model %.9g", names[i], r.step_s, ar.step_s);
        step[i] = ar.step_s;
        free(g);
    }
    ck_assert(step[1] <= step[0]);
}
END_TEST

/* The step of graph g by the analytical engine. */
static double an_step(const lo_graph *g, const wl *w, const cost_calib *k, const spec_cluster *c)
{
    an_timed t;
    an_result r;
    memset(&r, 0, sizeof r);
    an_time(g, w, k, c, &t);
    an_run(&t, &r);
    return r.step_s;
}

/* The step of timed graph g by the analytical engine; *sim_s the simulator's, which must agree
 * within 1 ns (nothing contends in the tests that call it). */
static double engines_step(const lo_graph *g, const an_timed *t, const cost_calib *k, const spec_cluster *c,
                           double *sim_s)
{
    an_result ar;
    exec_result r;
    test_engines_run(g, t, k, c, &ar, &r);
    ck_assert_msg(fabs(r.step_s - ar.step_s) < 1e-9, "sim %.12g model %.12g", r.step_s, ar.step_s);
    *sim_s = r.step_s;
    return ar.step_s;
}

/* Transformer Engine's current scaling under Megatron's sequence parallelism (fp8_recipe
 * current, layout_tensor.c fp8_amax_reduce): tiny2 by Megatron in fp8 on megatron:t=2,p=1, no
 * recomputation. Each block's forward all-reduces the amax of qkv's and fc1's input, its
 * backward that of proj's and fc2's output gradient: one all-reduce of 2 x 4 B (chunks 2) over
 * the tensor group per block pass, a tail (the wait is synchronous). Delayed scaling and sp=0
 * have none. The engines agree (within 1 ns); the all-reduces only add to the step (current's
 * step longer than delayed's, whose casts are cheaper too). */
START_TEST(test_fp8_current_amax_reduce)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2_megatron(&m, &tr, &w);
    tr.precision = PREC_FP8;
    cost_calib k = test_tiny_calib();
    spec_cluster duo = test_duo_cluster("duo", 1e10, 1e10);
    const char *lay[3] = {"megatron:t=2,p=1", "megatron:t=2,p=1", "megatron:t=2,p=1,sp=0"};
    const int rec[3] = {FP8_CURRENT, FP8_DELAYED, FP8_CURRENT};
    double step[3];
    for (int v = 0; v < 3; v++) {
        tr.fp8_recipe = rec[v];
        wl_build(&m, &tr, &w);
        spec_layout l = parse(lay[v]);
        an_timed t;
        lo_graph *g = build_timed(&w, &tr, &l, &duo, &k, &t);
        for (int pass = LO_FWD; pass <= LO_BWD; pass++) {
            const lo_item *it = first_block(&g->last, &w, (lo_pass)pass);
            ck_assert_ptr_nonnull(it);
            const lo_coll *ar = find(it->inl, it->n_inline, COLL_ALLREDUCE, GRP_AX0);
            if (v == 0) {
                ck_assert_ptr_nonnull(ar);
                ck_assert_int_eq(ar->chunks, 2);
                ck_assert_double_eq_tol(ar->bytes, 8.0, 1e-12);
                ck_assert(((it->inline_tail >> (ar - it->inl)) & 1u));
            } else if (v == 1) {
                ck_assert_ptr_null(ar);
            } else { /* sp=0: only Megatron's all-reduce of [16, 64] x 2 B activations */
                for (int i = 0; i < it->n_inline; i++)
                    ck_assert(it->inl[i].kind != COLL_ALLREDUCE || it->inl[i].bytes >= 2048);
            }
        }
        double sim_s;
        step[v] = engines_step(g, &t, &k, &duo, &sim_s); /* the engines agree within 1 ns */
        free(g);
    }
    ck_assert(step[0] > step[1]);
}
END_TEST

/* mend17: the fullest megatron item carries its amax all-reduce (fp8_amax_reduce returned early
 * at 5 inline collectives until 2026-11-28, dropping it here). tiny2 by Megatron in fp8, current
 * scaling, --tp-comm-overlap, full checkpointing, megatron:t=2,p=1,cp=2 on 2 duo
 * nodes (4 GPUs: t 2 x cp 2, one data-parallel replica). A block's backward, by hand from the
 * builders: tpo_block's all-gather, bulk re-gather, reduce-scatter and tail (the recompute is a
 * forward: 4), cp_item's ring (1), then the amax all-reduce: 2 x (backward + recompute) = 4
 * all-reduces of 4 B = 16 B, chunks 4, a tail: 6 in all (LO_MAX_INLINE), the amax last. */
START_TEST(test_fp8_amax_reduce_full_item)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2_megatron(&m, &tr, &w);
    tr.precision = PREC_FP8, tr.fp8_recipe = FP8_CURRENT, tr.tp_comm_overlap = 1, tr.act_ckpt = CKPT_FULL;
    wl_build(&m, &tr, &w);
    cost_calib k = test_tiny_calib();
    spec_cluster duo = test_duo_cluster("duo", 1e10, 1e10);
    spec_layout l = parse("megatron:t=2,p=1,cp=2");
    an_timed t;
    lo_graph *g = build_timed(&w, &tr, &l, &duo, &k, &t);
    const lo_item *it = first_block(&g->last, &w, LO_BWD);
    ck_assert_ptr_nonnull(it);
    ck_assert(it->recompute);
    ck_assert_int_eq(it->n_inline, 6);
    const lo_coll *ar = &it->inl[5];
    ck_assert_int_eq(ar->kind, COLL_ALLREDUCE);
    ck_assert_int_eq(ar->group, GRP_AX0);
    ck_assert_int_eq(ar->chunks, 4);
    ck_assert_double_eq_tol(ar->bytes, 16.0, 1e-12);
    ck_assert(((it->inline_tail >> 5) & 1u));
    ck_assert_int_eq(it->inl[4].group, GRP_AX1); /* the ring before it */
    free(g);
}
END_TEST

/* Bytes of kind `kind` over the TP group (GRP_AX0) among an item's inline collectives. */
static double tp_bytes(const lo_item *it, cost_coll kind)
{
    double b = 0;
    for (int i = 0; i < it->n_inline; i++)
        if (it->inl[i].group == GRP_AX0 && it->inl[i].kind == kind)
            b += it->inl[i].bytes;
    return b;
}

/* Transformer Engine's sequence-parallel all-gathers move fp8 (layout_tensor.c te_fp8_gathers):
 * tiny2 by Megatron on megatron:t=2,p=1 (sp), no recomputation. One [16, 64] activation is
 * 16 x 64 x 2 B = 2048 B; per block (two TE column-parallel linears, two row-parallel ones):
 *  bf16: forward all-gathers 2 x 2048 = 4096 B (the norm outputs), backward 2 x 2048 (the
 *    row-parallel output gradients) + 2 x 2048 (the saved norm outputs re-gathered) = 8192 B;
 *    reduce-scatters 4096 B each pass (with --tp-comm-overlap the forward's split 3/4 in the
 *    pipelined collective, 1/4 in its tail: 3072 + 1024, the same total);
 *  fp8, delayed or current, with or without --tp-comm-overlap: every gathered element 1 B, so
 *    the all-gathers 2048 B forward and 4096 B backward; the reduce-scatters 4096 B as in bf16. */
START_TEST(test_te_fp8_sp_gathers)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2_megatron(&m, &tr, &w);
    spec_cluster duo = test_duo_cluster("duo", 1e10, 1e10);
    spec_layout l = parse("megatron:t=2,p=1");
    /* {precision, fp8_recipe, tp_comm_overlap}: bf16 first, then the four fp8 variants */
    const int v[6][3] = {{PREC_BF16, FP8_DELAYED, 0}, {PREC_BF16, FP8_DELAYED, 1}, {PREC_FP8, FP8_DELAYED, 0},
                         {PREC_FP8, FP8_CURRENT, 0},  {PREC_FP8, FP8_DELAYED, 1}, {PREC_FP8, FP8_CURRENT, 1}};
    for (int i = 0; i < 6; i++) {
        tr.precision = v[i][0];
        tr.fp8_recipe = v[i][1];
        tr.tp_comm_overlap = v[i][2];
        wl_build(&m, &tr, &w);
        lo_graph *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        layout_build(&w, &tr, &l, &duo, 2, g);
        const double e = tr.precision == PREC_FP8 ? 1 : 2; /* bytes per gathered element */
        const lo_item *f = first_block(&g->last, &w, LO_FWD), *b = first_block(&g->last, &w, LO_BWD);
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(b);
        ck_assert_double_eq_tol(tp_bytes(f, COLL_ALLGATHER), 2 * 16 * 64 * e, 1e-9);
        ck_assert_double_eq_tol(tp_bytes(b, COLL_ALLGATHER), 4 * 16 * 64 * e, 1e-9);
        ck_assert_double_eq_tol(tp_bytes(f, COLL_REDUCESCATTER), 4096.0, 1e-9);
        ck_assert_double_eq_tol(tp_bytes(b, COLL_REDUCESCATTER), 4096.0, 1e-9);
        free(g);
    }
}
END_TEST

/* Async TP's properties on fsdp2:dp=2,t=4 (p4d, Llama-3 8B, full checkpointing: the backward
 * reruns the forward's fused ops): (1) every block item moves the eager item's all-gather and
 * reduce-scatter bytes (fusion re-times collectives, it moves no byte more or less); (2) its
 * step is shorter than the same graph with every inline collective fully exposed (inline_overlap
 * 0 and no pairs: issued when the compute ends) and no shorter than with the copy-engine transfers removed
 * (what is left: the compute, the unfused backward reduce-scatters, the FSDP collectives). */
START_TEST(test_atp_bounds)
{
    spec_cluster c;
    spec_model m;
    cost_calib k;
    spec_training tr;
    wl w;
    p4d_fsdp2(&c, &m, &k, &tr, &w);
    ck_assert_int_eq(tr.act_ckpt, CKPT_FULL);
    lo_graph *e = malloc(sizeof *e), *a = malloc(sizeof *a), *x = malloc(sizeof *x);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(x);
    spec_layout le = parse("fsdp2:dp=2,t=4"), la = parse("fsdp2:dp=2,t=4,asynctp=1");
    layout_build(&w, &tr, &le, &c, 1, e);
    layout_build(&w, &tr, &la, &c, 1, a);
    int blocks = 0;
    for (int i = 0; i < a->micro.n_items; i++) {
        const lo_item *ie = &e->micro.item[i], *ia = &a->micro.item[i];
        if (w.layer[ia->layer].kind != WL_BLOCK)
            continue;
        blocks++;
        ck_assert(tp_bytes(ia, COLL_ALLGATHER) > 0);
        ck_assert_double_eq_tol(tp_bytes(ia, COLL_ALLGATHER), tp_bytes(ie, COLL_ALLGATHER), 1e-6);
        ck_assert_double_eq_tol(tp_bytes(ia, COLL_REDUCESCATTER), tp_bytes(ie, COLL_REDUCESCATTER), 1e-6);
    }
    ck_assert_int_eq(blocks, 2); /* the block's forward and backward */
    const double step = an_step(a, &w, &k, &c);
    /* upper bound: nothing beside the compute */
    *x = *a;
    lo_micro *ms[2] = {&x->micro, &x->last};
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < ms[j]->n_items; i++) {
            ms[j]->item[i].inline_overlap = 0;
            ms[j]->item[i].n_pair = 0; /* no copy beside its GEMM either */
        }
    const double exposed = an_step(x, &w, &k, &c);
    ck_assert_msg(step < exposed, "async %.9g, fully exposed %.9g", step, exposed);
    /* lower bound: the copy-engine transfers free */
    *x = *a;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < ms[j]->n_items; i++) {
            lo_item *it = &ms[j]->item[i];
            int n = 0;
            unsigned tail = 0;
            for (int q = 0; q < it->n_inline; q++) {
                if (it->inl[q].offload)
                    continue;
                tail |= ((it->inline_tail >> q) & 1u) << n;
                it->inl[n++] = it->inl[q];
            }
            it->n_inline = n;
            it->inline_tail = tail;
            it->n_pair = 0; /* the paired copies are gone */
        }
    const double free_copies = an_step(x, &w, &k, &c);
    ck_assert_msg(free_copies <= step, "copies free %.9g, async %.9g", free_copies, step);
    free(e);
    free(a);
    free(x);
}
END_TEST

/* The per-pair rule (analytic.c pair_hidden) on the tiny block of test_block_bytes, forward,
 * fsdp2:dp=2,t=2,asynctp=1 on 2 duo nodes, the tiny roofline calibration (gemm_eff 1, no tile,
 * no overhead: a GEMM is 2 m n k / 1e12 FLOP/s, above its bytes at 1e12 B/s). Per rank:
 * qkv 196608 FLOPs = 1.96608e-7 s, proj 65536 = 6.5536e-8 s, fc1 and fc2 262144 = 2.62144e-7 s
 * each; the copies beside (t - 1) / t = 1/2 of each: 9.8304e-8, 3.2768e-8, 1.31072e-7 s.
 * Each pair moves one [16, 64] x 2 B = 2048 B activation, half of it from the peer (ring,
 * (t - 1) / t): 1024 B at the NVSwitch's 2 links x link_Bps. (a) link_Bps 1e10: 5.12e-8 s a
 * pair: proj's reduce-scatter outlasts its 3.2768e-8 s (exposed 1.8432e-8 s), the other three
 * are hidden; so the copies hidden beside the compute are 3 x 5.12e-8 + 3.2768e-8 =
 * 1.86368e-7 s (the block total before atp2 would have hidden all 4 x 5.12e-8). (b) link_Bps
 * 1e11: 5.12e-9 s a pair, all hidden: 4 x 5.12e-9 = 2.048e-8 s. Both engines give the same
 * step (nothing contends). */
START_TEST(test_atp_pairs)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2(&m, &tr, &w);
    cost_calib k = test_tiny_calib();
    const double link[2] = {1e10, 1e11}, pair_s[2] = {5.12e-8, 5.12e-9};
    const double hidden[2] = {3 * 5.12e-8 + 3.2768e-8, 4 * 5.12e-9};
    double step[2][2];
    for (int v = 0; v < 2; v++) {
        spec_cluster duo = test_duo_cluster("duo", link[v], 1e10);
        lo_graph *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        spec_layout l = parse("fsdp2:dp=2,t=2,asynctp=1");
        layout_build(&w, &tr, &l, &duo, 2, g);
        an_timed t;
        an_time(g, &w, &k, &duo, &t);
        const lo_item *ia = first_block(&g->last, &w, LO_FWD);
        ck_assert_ptr_nonnull(ia);
        const an_titem *o = &t.last[ia - g->last.item];
        const wl_layer *B = &g->lw[ia->layer];
        const double gemm[4] = {1.96608e-7, 2.62144e-7, 6.5536e-8, 2.62144e-7}; /* qkv fc1 proj fc2 */
        for (int q = 0; q < 4; q++) {
            ck_assert_double_eq_tol(o->in[ia->pair[q].coll] / 2, pair_s[v], 1e-9 * pair_s[v]);
            ck_assert_double_eq_tol(cost_layer_gemm_time(&k, &duo, B, (wl_gemm_role)ia->pair[q].role, 0, 2),
                                    gemm[q], 1e-9 * gemm[q]);
        }
        ck_assert(o->overlap_s == 0); /* no interference in the tiny calibration */
        ck_assert_double_eq_tol(o->inl_f * o->comp, hidden[v], 1e-9 * hidden[v]);
        /* the engines agree within 1 ns (they differ by a constant 0.2 ns here, the same in
         * (a) and (b)), and the exposed copy moves both steps alike */
        step[v][0] = engines_step(g, &t, &k, &duo, &step[v][1]);
        free(g);
    }
    ck_assert_double_eq_tol(step[0][0] - step[1][0], step[0][1] - step[1][1], 1e-12);
}
END_TEST

/* The same rule beside context parallelism's ring (cp.c cp_item, paired with attention's core
 * since cpdead): fsdp2:dp=1,cp=2,t=2,asynctp=1 on 2 duo nodes (link_Bps 1e10, NIC 1e12 B/s), the tiny block's
 * forward on a rank's 16 / 2 = 8 tokens. Each pair moves 8 x 64 x 2 B = 1024 B, half from the
 * peer: 512 B at 2e10 B/s = 2.56e-8 s; the GEMMs' halves (test_atp_pairs at half the tokens):
 * qkv 4.9152e-8, fc1 and fc2 6.5536e-8 s (hidden), proj 1.6384e-8 s (its reduce-scatter exposed
 * by 9.216e-9 s): 3 x 2.56e-8 + 1.6384e-8 = 9.3184e-8 s of copies hidden. The ring hides only
 * behind its own share of the compute (the attention core's, cp.c), never behind what the pairs
 * leave: what runs beside the compute is min(ring, its share) + 9.3184e-8 s (with the ring
 * shorter than its share: ring + 9.3184e-8 s; summing the two, as before, gave its share). */
START_TEST(test_atp_pairs_cp)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2(&m, &tr, &w);
    cost_calib k = test_tiny_calib();
    spec_cluster duo = test_duo_cluster("duo", 1e10, 1e12);
    sc_err err;
    spec_layout l = parse("fsdp2:dp=1,cp=2,t=2,asynctp=1");
    ck_assert_msg(spec_layout_check(&l, &duo, 2, &err) == 0, "%s", err.text);
    lo_graph *g = malloc(sizeof *g);
    ck_assert_ptr_nonnull(g);
    layout_build(&w, &tr, &l, &duo, 2, g);
    an_timed t;
    an_time(g, &w, &k, &duo, &t);
    const lo_item *ia = first_block(&g->last, &w, LO_FWD);
    ck_assert_ptr_nonnull(ia);
    const an_titem *o = &t.last[ia - g->last.item];
    ck_assert_int_eq(ia->n_pair, 5); /* the ring's with attention's core (cp.c core_pair) */
    ck_assert_int_eq(ia->n_inline, 3);
    const lo_coll *ring = &ia->inl[2];
    ck_assert_int_eq(ring->group, GRP_AX1);
    ck_assert(ia->inline_overlap == 0);
    for (int q = 0; q < 4; q++)
        ck_assert_double_eq_tol(o->in[ia->pair[q].coll] / 2, 2.56e-8, 1e-9 * 2.56e-8);
    /* its share: step 0, 1/2 of the core (1 head of 32 a rank, 8 tokens, 2 problems: scores and
     * context 2 x 8 x 8 x 32 x 2 = 8192 FLOPs each, 1.6384e-8 s): 8.192e-9 s */
    const double share = cost_layer_core_time(&k, &duo, &g->lw[ia->layer], 0, 2) / 2;
    ck_assert_double_eq_tol(share, 8.192e-9, 1e-9 * 8.192e-9);
    /* the ring: 2 x (8 x 2) tokens x (2 kv heads x 32 / 2) x 2 B = 2048 B, half from the peer
     * across the nodes, whose one NIC the node's two cp groups share: 1024 B / 5e11 B/s */
    ck_assert_double_eq_tol(o->in[2], 2.048e-9, 1e-9 * 2.048e-9);
    ck_assert(o->in[2] < share); /* shorter than its share: the rest of the core's share does
                                    not hide proj's 9.216e-9 s */
    const double want = o->in[2] + 9.3184e-8;
    ck_assert_double_eq_tol(o->inl_f * o->comp, want, 1e-9 * want);
    free(g);
}
END_TEST

/* Megatron --tp-comm-overlap (Transformer Engine's userbuffers, layout_tensor.c tpo_block) on the
 * tiny block of test_atp_pairs: megatron:t=2 (sequence parallel) on 2 duo nodes, the tiny
 * roofline calibration (no chunk factor off Hopper, no interference). Per rank the GEMMs are
 * those of test_atp_pairs: qkv 1.96608e-7 s, proj 6.5536e-8, fc1 = fc2 2.62144e-7; a data or
 * weight gradient the same FLOPs as its forward. x = one [16, 64] x 2 B = 2048 B all-gather
 * over the pair, half from the peer at 2 x link_Bps: 1024 / (2 link) s.
 * Forward: ring exchange all-gathers before qkv and fc1 (x each, beside 1/2 of the GEMM: 9.8304e-8,
 * 1.31072e-7 s), pipelined reduce-scatters after proj and fc2 (3/4 x each, beside 3/4 of the GEMM:
 * 4.9152e-8, 1.96608e-7 s), the last quarter a tail. Backward: all-gathers before proj's and fc2's
 * data gradients (x each, beside 1/2: 3.2768e-8, 1.31072e-7 s), bulk re-gathers of qkv's and
 * fc1's saved inputs beside their whole data gradients (x each, 1.96608e-7, 2.62144e-7 s), bulk
 * reduce-scatters beside qkv's and fc1's whole weight gradients (x each, the same times).
 * (a) link 6e9: x = 8.5333e-8 s. Forward: proj's 0.75 x = 6.4e-8 outlasts 4.9152e-8 (1.4848e-8
 * exposed), the rest hidden: 2.75 x + 4.9152e-8 = 2.8381867e-7 s beside the compute (summing
 * the block's copies against all its linear GEMMs, as before, hid all 3.5 x). Backward: proj's
 * data-gradient all-gather outlasts 3.2768e-8: 5 x + 3.2768e-8 = 4.5943467e-7 s.
 * (b) link 2e10: x = 2.56e-8 s, every copy hidden: forward 3.5 x = 8.96e-8 s, backward
 * 6 x = 1.536e-7 s. Both engines give the same step, and turning the overlap off (the same
 * collectives inline, sp_item) is slower at every link speed. */
START_TEST(test_tpo_pairs)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2_megatron(&m, &tr, &w);
    tr.tp_comm_overlap = 1;
    wl_build(&m, &tr, &w);
    cost_calib k = test_tiny_calib();
    const double link[2] = {6e9, 2e10};
    const double x[2] = {1024 / 1.2e10, 2.56e-8};
    const double hid_f[2] = {2.75 * x[0] + 4.9152e-8, 3.5 * x[1]}, hid_b[2] = {5 * x[0] + 3.2768e-8, 6 * x[1]};
    spec_layout l = parse("megatron:t=2,p=1");
    for (int v = 0; v < 2; v++) {
        spec_cluster duo = test_duo_cluster("duo", link[v], 1e10);
        an_timed t;
        lo_graph *g = build_timed(&w, &tr, &l, &duo, &k, &t);
        for (int pass = LO_FWD; pass <= LO_BWD; pass++) {
            const lo_item *it = first_block(&g->last, &w, (lo_pass)pass);
            ck_assert_ptr_nonnull(it);
            const an_titem *o = &t.last[it - g->last.item];
            const int np = pass == LO_FWD ? 4 : 6;
            ck_assert_int_eq(it->n_pair, np);
            ck_assert(it->inline_overlap == 0); /* nothing but the pairs beside the copies */
            /* forward: qkv fc1 (ring: 2 chunks, 1 bare), proj fc2 (pipeline: 4, 1 bare);
             * backward: proj fc2 data gradients (ring), qkv fc1 data gradients (the bulk
             * re-gathers: 1, 0) and weight gradients (the bulk reduce-scatters: 1, 0) */
            const int role[2][6] = {{WL_G_QKV, WL_G_FC1, WL_G_PROJ, WL_G_FC2},
                                    {WL_G_PROJ, WL_G_FC2, WL_G_QKV, WL_G_FC1, WL_G_QKV, WL_G_FC1}};
            const int chunks[2][6] = {{2, 2, 4, 4}, {2, 2, 1, 1, 1, 1}}, bare[2][6] = {{1, 1, 1, 1}, {1, 1, 0, 0, 0, 0}};
            const int ppass[6] = {LO_PAIR_DGRAD, LO_PAIR_DGRAD, LO_PAIR_DGRAD, LO_PAIR_DGRAD, LO_PAIR_WGRAD, LO_PAIR_WGRAD};
            const double share[2] = {0.75, 1}; /* of x, a reduce-scatter pair's copy */
            for (int q = 0; q < np; q++) {
                const lo_pair *p = &it->pair[q];
                ck_assert_int_eq(p->role, role[pass][q]);
                ck_assert_int_eq(p->chunks, chunks[pass][q]);
                ck_assert_int_eq(p->bare, bare[pass][q]);
                ck_assert_int_eq(p->pass, pass == LO_FWD ? LO_PAIR_FWD : ppass[q]);
                /* the bulk re-gather: an all-gather kernel on SMs, not the ring's copy engines */
                ck_assert_int_eq(it->inl[p->coll].offload, q < 2);
                const double want = pass == LO_FWD && q >= 2 ? share[0] * x[v] : x[v];
                double n = 0;
                for (int r = 0; r < np; r++)
                    n += it->pair[r].coll == p->coll;
                ck_assert_double_eq_tol(o->in[p->coll] / n, want, 1e-9 * want);
            }
            const double want = pass == LO_FWD ? hid_f[v] : hid_b[v];
            ck_assert(o->overlap_s == 0);
            ck_assert_double_eq_tol(o->inl_f * o->comp, want, 1e-9 * want);
        }
        double sim_s;
        engines_step(g, &t, &k, &duo, &sim_s); /* the engines agree within 1 ns */
        free(g);
    }
    /* never slower than the overlap off, from copies far longer than their GEMMs to far shorter */
    const double links[4] = {1e8, 6e9, 2e10, 1e12};
    for (int v = 0; v < 4; v++) {
        spec_cluster duo = test_duo_cluster("duo", links[v], 1e10);
        lo_graph *g = malloc(sizeof *g);
        ck_assert_ptr_nonnull(g);
        tr.tp_comm_overlap = 1;
        wl_build(&m, &tr, &w);
        layout_build(&w, &tr, &l, &duo, 2, g);
        const double on = an_step(g, &w, &k, &duo);
        tr.tp_comm_overlap = 0;
        wl_build(&m, &tr, &w);
        layout_build(&w, &tr, &l, &duo, 2, g);
        const double off = an_step(g, &w, &k, &duo);
        ck_assert_msg(on < off, "link %g: on %.12g off %.12g", links[v], on, off);
        free(g);
    }
}
END_TEST

/* The exposed part of test_tpo_pairs (a) (link 6e9, x = 1024 / 1.2e10 s) booked under the kind
 * of the collective whose exposure it is (an_inline_book), not the item's last inline one.
 * Forward block: proj's reduce-scatter pair outlasts its 3/4 GEMM by 0.75 x - 4.9152e-8 =
 * 1.4848e-8 s, fc2's (0.75 x = 6.4e-8 < 1.96608e-7) and the all-gathers (x = 8.5333e-8 < 9.8304e-8,
 * 1.31072e-7) hide; the tail (the last quarter of both reduce-scatters) is its whole time.
 * Backward block: proj's data-gradient all-gather outlasts its half GEMM by x - 3.2768e-8 =
 * 5.2565333e-8 s, every other copy hides: its exposure is all-gather time, none reduce-scatter
 * (until expo14 it went under the item's last inline collective, a reduce-scatter). Booking
 * moves no step (bench/an_identical.sh, bench/sim_identical.sh), and both engines book the same
 * kinds (nothing contends: within 1 ns). */
START_TEST(test_tpo_pairs_kinds)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2_megatron(&m, &tr, &w);
    tr.tp_comm_overlap = 1;
    wl_build(&m, &tr, &w);
    cost_calib k = test_tiny_calib();
    const double x = 1024 / 1.2e10;
    spec_layout l = parse("megatron:t=2,p=1");
    spec_cluster duo = test_duo_cluster("duo", 6e9, 1e10);
    an_timed t;
    lo_graph *g = build_timed(&w, &tr, &l, &duo, &k, &t);
    /* [pass][kind]: the non-tail parts; the forward's tail separately */
    const double want[2][N_COLLS] = {{0, 0.75 * x - 4.9152e-8, 0}, {x - 3.2768e-8, 0, 0}};
    for (int pass = LO_FWD; pass <= LO_BWD; pass++) {
        const lo_item *it = first_block(&g->last, &w, (lo_pass)pass);
        const an_titem *o = &t.last[it - g->last.item];
        double part[N_COLLS] = {0}, tail = 0;
        for (int q = 0; q < o->ni; q++) {
            ck_assert(!((o->iun >> q) & 1u)); /* every copy paired or a tail */
            if (o->itl[q])
                tail += o->ix[q] - o->in[q]; /* a tail: its whole time */
            else
                part[o->ik[q]] += o->ix[q];
        }
        ck_assert(tail == 0);
        for (int c = 0; c < N_COLLS; c++)
            ck_assert_double_eq_tol(part[c], want[pass][c], 1e-9 * x);
        if (pass == LO_BWD) {
            double e[N_COLLS] = {0}, sum = part[0] + part[1] + part[2];
            an_inline_book(o, sum, e); /* the exposure the parts predict: all all-gather */
            ck_assert_double_eq_tol(e[COLL_ALLGATHER], x - 3.2768e-8, 1e-9 * x);
            ck_assert(e[COLL_REDUCESCATTER] == 0 && e[COLL_ALLREDUCE] == 0);
            memset(e, 0, sizeof e);
            an_inline_book(o, 2 * sum, e); /* more (contention): spread over the parts alike */
            ck_assert_double_eq_tol(e[COLL_ALLGATHER], 2 * sum, 1e-12);
        }
    }
    an_result ar;
    exec_result r;
    test_engines_run(g, &t, &k, &duo, &ar, &r);
    for (int c = 0; c < N_COLLS; c++) {
        ck_assert_msg(fabs(r.exposed_s[c] - ar.exposed_s[c]) < 1e-9, "kind %d: sim %.12g model %.12g", c,
                      r.exposed_s[c], ar.exposed_s[c]);
    }
    free(g);
}
END_TEST

/* Megatron's eager sequence parallelism (sp_item, no --tp-comm-overlap) on the tiny block of
 * test_tpo_pairs. The unpaired all-gathers and reduce-scatters of the backward (2 x 2048 B each:
 * 2 x each) keep their share of the compute (inline_overlap: the weight gradients). The
 * backward re-gathers qkv's and fc1's sequence-split saved inputs for their weight gradients
 * (Megatron-LM@d98e8a64 layers.py L667-687): per block an all-gather of 2 x act = 2 x 2048 =
 * 4096 B in 2 chunks, paired with qkv's and fc1's whole data gradients (1.96608e-7, 2.62144e-7
 * s), x each (test_tpo_pairs: 1024 / (2 link) s); the head's input one more, act = 2048 B, beside
 * the head's data gradient. Hidden: min(4 x, share) + min(x, qkv) + min(x, fc1):
 * (a) link 6e9: x = 8.5333e-8 s, all hidden (4 x under the share, checked): 6 x = 5.12e-7 s;
 * (b) link 1e8: x = 5.12e-6 s: the share (4 x over it, checked), and each pair GEMM-bound:
 * share + 1.96608e-7 + 2.62144e-7 = share + 4.58752e-7 s, the rest of each copy exposed. The
 * forward has no re-gather; torchtitan (fsdp2:dp=1,t=2, DTensor saves the gathered input) none
 * either: its backward keeps 4096 B of all-gather. Engines agree. */
START_TEST(test_sp_regather_pairs)
{
    spec_model m;
    spec_training tr;
    wl w;
    tiny2_megatron(&m, &tr, &w);
    cost_calib k = test_tiny_calib();
    const double link[2] = {6e9, 1e8}, x[2] = {1024 / 1.2e10, 1024 / 2e8};
    spec_layout l = parse("megatron:t=2,p=1");
    for (int v = 0; v < 2; v++) {
        spec_cluster duo = test_duo_cluster("duo", link[v], 1e10);
        an_timed t;
        lo_graph *g = build_timed(&w, &tr, &l, &duo, &k, &t);
        ck_assert_int_eq(first_block(&g->last, &w, LO_FWD)->n_pair, 0);
        const lo_item *it = first_block(&g->last, &w, LO_BWD);
        ck_assert_ptr_nonnull(it);
        const an_titem *o = &t.last[it - g->last.item];
        const double share = it->inline_overlap * o->comp;
        ck_assert(v == 0 ? 4 * x[v] < share : 4 * x[v] > share);
        const double hid = v == 0 ? 6 * x[v] : share + 1.96608e-7 + 2.62144e-7;
        ck_assert_int_eq(it->n_inline, 3); /* output-gradient all-gathers, re-gather, reduce-scatters */
        ck_assert_int_eq(it->n_pair, 2);
        const lo_coll *rg = &it->inl[it->pair[0].coll];
        ck_assert_int_eq(it->pair[1].coll, it->pair[0].coll);
        ck_assert_int_eq(rg->kind, COLL_ALLGATHER);
        ck_assert_double_eq_tol(rg->bytes, 4096.0, 1e-9);
        ck_assert_int_eq(rg->chunks, 2);
        ck_assert(!rg->offload);
        const int role[2] = {WL_G_QKV, WL_G_FC1};
        for (int q = 0; q < 2; q++) {
            ck_assert_int_eq(it->pair[q].role, role[q]);
            ck_assert_int_eq(it->pair[q].pass, LO_PAIR_DGRAD);
            ck_assert_int_eq(it->pair[q].chunks, 1);
            ck_assert_int_eq(it->pair[q].bare, 0);
        }
        ck_assert_double_eq_tol(o->in[it->pair[0].coll] / 2, x[v], 1e-9 * x[v]);
        ck_assert_double_eq_tol(o->inl_f * o->comp, hid, 1e-9 * hid);
        for (int i = 0; i < g->last.n_items; i++) { /* the head's backward: its one re-gather */
            const lo_item *h = &g->last.item[i];
            if (h->pass != LO_BWD || w.layer[h->layer].kind != WL_HEAD)
                continue;
            ck_assert_int_eq(h->n_pair, 1);
            ck_assert_int_eq(h->pair[0].role, WL_G_HEAD);
            ck_assert_int_eq(h->pair[0].pass, LO_PAIR_DGRAD);
            ck_assert_double_eq_tol(h->inl[h->pair[0].coll].bytes, 2048.0, 1e-9);
        }
        double sim_s;
        engines_step(g, &t, &k, &duo, &sim_s); /* the engines agree within 1 ns */
        /* torchtitan: no re-gather, no pair; the backward's all-gather bytes stay 4096 B */
        spec_layout lt = parse("fsdp2:dp=1,t=2");
        tr.framework = FW_FSDP2;
        wl_build(&m, &tr, &w);
        layout_build(&w, &tr, &lt, &duo, 2, g);
        const lo_item *ib = first_block(&g->last, &w, LO_BWD);
        ck_assert_int_eq(ib->n_pair, 0);
        ck_assert_double_eq_tol(find(ib->inl, ib->n_inline, COLL_ALLGATHER, GRP_AX0)->bytes, 4096.0, 1e-9);
        tr.framework = FW_MEGATRON;
        wl_build(&m, &tr, &w);
        free(g);
    }
}
END_TEST

Suite *fsdp2tp_suite(void)
{
    Suite *s = suite_create("fsdp2tp");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_grammar);
    tcase_add_test(tc, test_checks);
    tcase_add_test(tc, test_block_bytes);
    tcase_add_test(tc, test_fp8_gathers);
    tcase_add_test(tc, test_memory_by_hand);
    tcase_add_test(tc, test_t1_is_zero3);
    tcase_add_test(tc, test_dtensor_saved_by_hand);
    tcase_add_test(tc, test_dtensor_pipe_plan);
    tcase_add_test(tc, test_engines_agree);
    tcase_add_test(tc, test_fp8_current_amax_reduce);
    tcase_add_test(tc, test_fp8_amax_reduce_full_item);
    tcase_add_test(tc, test_te_fp8_sp_gathers);
    tcase_add_test(tc, test_atp_bounds);
    tcase_add_test(tc, test_atp_pairs);
    tcase_add_test(tc, test_atp_pairs_cp);
    tcase_add_test(tc, test_tpo_pairs);
    tcase_add_test(tc, test_tpo_pairs_kinds);
    tcase_add_test(tc, test_sp_regather_pairs);
    suite_add_tcase(s, tc);
    return s;
}

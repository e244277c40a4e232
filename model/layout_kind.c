/* layout_kind.c — the dispatch table of the layout kinds (nccl-tests' one driver, one testColl
 * per collective): every kind's row from its family file, and the checks, the replica formula,
 * the batch rule and the optimizer shard called through it. Not here: any kind's own rule (the
 * family files: layout_dp.c, layout_tensor.c, layout_pipe.c, layout_offload.c) or the grammar
 * (spec_layout.c). */
#include "layout_kind.h"

#include "layout_ops.h"

static const layout_kind_row *const ROWS[] = {
    [LAYOUT_DDP] = &layout_row_ddp,
    [LAYOUT_ZERO1] = &layout_row_zero1,
    [LAYOUT_ZERO2] = &layout_row_zero2,
    [LAYOUT_ZERO3] = &layout_row_zero3,
    [LAYOUT_MICS] = &layout_row_mics,
    [LAYOUT_HSDP] = &layout_row_hsdp,
    [LAYOUT_ZEROPP] = &layout_row_zeropp,
    [LAYOUT_TP] = &layout_row_tp,
    [LAYOUT_AXONN] = &layout_row_axonn,
    [LAYOUT_ZERO3_OFFLOAD] = &layout_row_zero3_offload,
    [LAYOUT_LUWU] = &layout_row_luwu,
    [LAYOUT_SHARD_GRAD_OP] = &layout_row_shard_grad_op,
    [LAYOUT_HSDP_ZERO2] = &layout_row_hsdp_zero2,
    [LAYOUT_MEGATRON] = &layout_row_megatron,
    [LAYOUT_RAF] = &layout_row_raf,
    [LAYOUT_ZERO2_OFFLOAD] = &layout_row_zero2_offload,
};
#define N_ROWS (int)(sizeof ROWS / sizeof ROWS[0])

const layout_kind_row *layout_kind_row_of(spec_layout_kind k)
{
    return (int)k >= 0 && (int)k < N_ROWS ? ROWS[k] : NULL;
}

static const layout_kind_row NO_ROW = {0};

static const layout_kind_row *row(const spec_layout *l)
{
    const layout_kind_row *r = layout_kind_row_of(l->kind);
    return r ? r : &NO_ROW;
}

int spec_layout_replicas(const spec_layout *l)
{
    const layout_kind_row *r = row(l);
    return r->replicas ? r->replicas(l) : 1;
}

int spec_layout_batch_share(const spec_layout *l) { return row(l)->batch_per_replica ? spec_layout_replicas(l) : 1; }

int spec_layout_shard(const spec_layout *l, int n_ranks)
{
    const layout_kind_row *r = row(l);
    return r->shard ? r->shard(l, n_ranks) : n_ranks;
}

/* spec_layout_check with the layout's name for the message already formatted. */
static int check_named(const spec_layout *l, const spec_cluster *c, int nodes, const char *name, sc_err *err)
{
    if ((long long)nodes * c->gpus_per_node > SPEC_MAX_RANKS || nodes < 1 || c->gpus_per_node < 1)
        return sc_err_set(err, SC_EINPUT, "--nodes", "", "expected at most %d GPUs in all, got %d nodes x %d", SPEC_MAX_RANKS,
                          nodes, c->gpus_per_node);
    const layout_kind_row *r = row(l);
    return r->check ? r->check(l, c, nodes * c->gpus_per_node, c->gpus_per_node, name, err) : 0;
}

int spec_layout_check(const spec_layout *l, const spec_cluster *c, int nodes, sc_err *err)
{
    /* the name is only for a message: a sweep checks a million points a second, almost all
     * fine, so check first without one and format it only to say what is wrong */
    int rc = check_named(l, c, nodes, "", NULL);
    if (!rc || !err)
        return rc;
    char name[64];
    spec_layout_str(l, name, sizeof name);
    return check_named(l, c, nodes, name, err);
}

/* The training keys a layout prices only in part, refused rather than ignored: optimizer_type sgd
 * where the step stays Adam's (below); fsdp_wrap module
 * (FSDP1's nested units: memory.c gathers the largest, zero3's FSDP graph each unit twice in a
 * checkpointed backward, layout_dp.c) only under framework fsdp on zero3 and zero3-offload;
 * activation_offload only with full checkpointing (the only policy whose saved tensors
 * memory_states.h moves) on the layouts whose graphs carry its copies (lo_act_offload_priced);
 * overlap_comm false with DeepSpeed's zero3-offload (priced as on); fp8_recipe (Transformer
 * Engine's scaling recipes) under framework fsdp / fsdp2, whose FP8 is torchao's Float8Linear
 * (workload.c fp8_casts prices its casts whatever the recipe says). */
static int training_keys_check(const spec_layout *l, const spec_training *t, sc_err *err)
{
    char name[64];
    if (t->fsdp_wrap_module > 0 &&
        (t->framework != FW_FSDP || (l->kind != LAYOUT_ZERO3 && l->kind != LAYOUT_ZERO3_OFFLOAD)))
        return sc_err_set(err, SC_EINPUT, "training", "fsdp_wrap",
                          "\"module\" is modelled under framework fsdp with layout zero3 or zero3-offload; got "
                          "framework %s, layout %s",
                          spec_framework_str(t->framework), spec_layout_str(l, name, sizeof name));
    /* optimizer_type sgd: the GPU step's bytes (framework.c; a pipeline stage's too,
     * analytic_pipe.c) and FSDP1 CPUOffload's host step (layout_offload.c); DeepSpeed's and
     * LuWu's offloaded optimizers price their own Adam, in time and host memory */
    if (t->opt_sgd > 0 && spec_layout_states_at(l->kind) != SPEC_AT_GPU &&
        !(t->framework == FW_FSDP && l->kind == LAYOUT_ZERO3_OFFLOAD))
        return sc_err_set(err, SC_EINPUT, "training", "optimizer_type",
                          "sgd is modelled with the optimizer on the GPU, or under framework fsdp's "
                          "zero3-offload; got framework %s, layout %s",
                          spec_framework_str(t->framework), spec_layout_str(l, name, sizeof name));
    /* DeepSpeed zero3-offload's graph (layout_offload.c offload_ds) reduce-scatters beside the
     * backward, as overlap_comm on (stage 3's default, framework.c) has it; off is not priced */
    if (t->framework == FW_DEEPSPEED && l->kind == LAYOUT_ZERO3_OFFLOAD && t->overlap_comm == 0)
        return sc_err_set(err, SC_EINPUT, "training", "overlap_comm",
                          "false is not modelled with layout zero3-offload under framework deepspeed (its "
                          "reduce-scatters run beside the backward, as with overlap_comm true, stage 3's default)");
    if (t->fp8_recipe >= 0 && (t->framework == FW_FSDP || t->framework == FW_FSDP2))
        return sc_err_set(err, SC_EINPUT, "training", "fp8_recipe",
                          "is Transformer Engine's (frameworks megatron, deepspeed); framework %s prices torchao's "
                          "float8 casts, which have no such recipe",
                          spec_framework_str(t->framework));
    if (t->act_offload > 0 && t->act_ckpt != CKPT_FULL)
        return sc_err_set(err, SC_EINPUT, "training", "activation_offload",
                          "true needs activation_checkpointing full (checkpoint_wrapper's saved block inputs); "
                          "got %s", spec_ckpt_str(t->act_ckpt));
    if (t->act_offload > 0 && !lo_act_offload_priced(l))
        return sc_err_set(err, SC_EINPUT, "training", "activation_offload",
                          "true is modelled without pipeline stages, tensor or context parallelism; got layout %s",
                          spec_layout_str(l, name, sizeof name));
    return 0;
}

int spec_layout_check_training(const spec_layout *l, const spec_training *t, sc_err *err)
{
    int rc = training_keys_check(l, t, err);
    if (rc)
        return rc;
    const layout_kind_row *r = row(l);
    if (!r->check_training || !r->check_training(l, t, "", NULL))
        return 0;
    char name[64];
    spec_layout_str(l, name, sizeof name);
    return r->check_training(l, t, name, err);
}

/* A tied head (spec_model.tied_embeddings) on a pipeline outside megatron: refused. Megatron
 * keeps a copy of the word embedding on the last stage and all-reduces its gradient with the
 * first stage's (layout_pipe_tied_params). torchtitan, whose pipeline fsdp2:...,p=P models, has
 * no such group: at the commits the cases cite its Transformer has no tied head (separate
 * tok_embeddings and output, torchtitan/models/llama/model.py L359, L378 at both
 * 9dec370ad26b5f8e9a7333a0e36165018262644b and d4c86e3758a84cf23e2e879ab3c995cba9d5e410) and its
 * split deep-copies the model and sets tok_embeddings to None off the first stage, norm and
 * output off the last (torchtitan/parallelisms/pipeline_llama.py _build_stage, L75-92 at
 * 9dec370, L73-90 at d4c86e3): nothing shares or all-reduces a weight across stages. Its models
 * that tie since refuse the combination (pytorch/torchtitan@b5bcd76c66d0acb1a08b176d9639425bc55e0b2a
 * torchtitan/models/common/decoder.py L168-171, Decoder.Config.update_from_config:
 * NotImplementedError "Weight tying is not supported with Pipeline Parallel."). */
static int tied_pipe_check(const spec_layout *l, const spec_model *m, const char *name, sc_err *err)
{
    if (l->pp <= 1 || l->kind == LAYOUT_MEGATRON || !m->tied_embeddings)
        return 0;
    return sc_err_set(err, SC_EINPUT, "layout", "",
                      "%s: %s ties its LM head to the token embedding (tied_embeddings), which a pipeline outside "
                      "megatron cannot share across stages (torchtitan: weight tying is not supported with "
                      "pipeline parallel); use p=1 or a model with tied_embeddings false",
                      name, m->name);
}

int spec_layout_check_model(const spec_layout *l, const spec_model *m, sc_err *err)
{
    const layout_kind_row *r = row(l);
    char name[64];
    spec_layout_str(l, name, sizeof name);
    int rc = r->check_model ? r->check_model(l, m, name, err) : 0;
    return rc ? rc : tied_pipe_check(l, m, name, err);
}

/* plan's candidate order (layout_kind_candidates): kept as it was, so that ties in its ranking
 * and folding keep the same first candidate. */
static const spec_layout_kind CAND_FIRST[] = {LAYOUT_DDP, LAYOUT_ZERO1, LAYOUT_ZERO2, LAYOUT_ZERO3,
                                              LAYOUT_SHARD_GRAD_OP, LAYOUT_ZEROPP};
static const spec_layout_kind CAND_GROUPED[] = {LAYOUT_MICS, LAYOUT_HSDP, LAYOUT_ZEROPP, LAYOUT_HSDP_ZERO2,
                                                LAYOUT_ZERO1, LAYOUT_ZERO2, LAYOUT_RAF};
static const spec_layout_kind CAND_LAST[] = {LAYOUT_ZERO3_OFFLOAD, LAYOUT_ZERO2_OFFLOAD, LAYOUT_LUWU, LAYOUT_TP,
                                             LAYOUT_AXONN, LAYOUT_MEGATRON};
#define N_OF(a) (int)(sizeof a / sizeof a[0])

/* GPUs can be sharded in groups of p where mics:p can: groups inside one node or spanning whole
 * nodes (layout_dp.c's group check). */
static int partition_ok(const layout_cand_in *in, int p)
{
    spec_layout ml = {.kind = LAYOUT_MICS, .p = p, .hier = 1};
    return !spec_layout_check(&ml, in->c, in->nodes, NULL);
}

static int cands_of(const layout_cand_in *in, unsigned mask, const spec_layout_kind *ks, int nk, int p,
                    spec_layout *out, int n, int max)
{
    for (int i = 0; i < nk; i++) {
        const layout_kind_row *r = layout_kind_row_of(ks[i]);
        if ((mask & (1u << ks[i])) && r && r->candidates)
            n = r->candidates(in, p, out, n, max);
    }
    return n;
}

int layout_kind_candidates(const layout_cand_in *in, unsigned mask, spec_layout *out, int max)
{
    int n = cands_of(in, mask, CAND_FIRST, N_OF(CAND_FIRST), 0, out, 0, max);
    int N = in->nodes * in->c->gpus_per_node;
    for (int p = 2; p < N; p++)
        if (partition_ok(in, p))
            n = cands_of(in, mask, CAND_GROUPED, N_OF(CAND_GROUPED), p, out, n, max);
    return cands_of(in, mask, CAND_LAST, N_OF(CAND_LAST), 0, out, n, max);
}

void layout_kind_canon(spec_layout *l, int N)
{
    const layout_kind_row *r = row(l);
    if (r->canon)
        r->canon(l, N);
}

void layout_kind_explain(const layout_explain_in *x, char *out, size_t len)
{
    const layout_kind_row *r = row(x->l);
    if (len)
        out[0] = 0;
    if (r->explain)
        r->explain(x, out, len);
}

spec_states_at spec_layout_states_at(spec_layout_kind k)
{
    const layout_kind_row *r = layout_kind_row_of(k);
    return r ? r->states_at : SPEC_AT_GPU;
}

unsigned spec_layout_kinds_at(spec_states_at at)
{
    unsigned m = 0;
    for (int k = 0; k < N_ROWS; k++)
        if (spec_layout_states_at((spec_layout_kind)k) == at)
            m |= 1u << k;
    return m;
}

void spec_layout_default_group(spec_layout *l, int gpus_per_node)
{
    if (!l->p && row(l)->group_of_node)
        l->p = gpus_per_node;
}

const wl *layout_kind_localize(const wl *w, const spec_layout *l, int n_ranks, wl *out)
{
    const layout_kind_row *r = row(l);
    return r->localize ? r->localize(w, l, n_ranks, out) : w;
}

/* memory's default table (layout_kind_memory_table): the kinds over all GPUs, in this order. */
static const spec_layout_kind MEM_WHOLE[] = {LAYOUT_DDP, LAYOUT_ZERO1, LAYOUT_ZERO2, LAYOUT_ZERO3};

int layout_kind_memory_table(int mics_p, spec_layout *out, int max)
{
    int n = 0;
    for (int i = 0; i < N_OF(MEM_WHOLE) && n < max; i++)
        out[n++] = (spec_layout){.kind = MEM_WHOLE[i], .hier = 1};
    if (mics_p && n < max)
        out[n++] = (spec_layout){.kind = LAYOUT_MICS, .p = mics_p, .hier = 1};
    return n;
}

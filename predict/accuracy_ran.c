/* accuracy_ran.c — the one table from the suite's "ran" names to the engine's training keys, and
 * writing them into a case's training object (see accuracy_ran.h). Not here: what the engine
 * does with them (model/kernels.c, model/framework.c, model/stack.c). */
#include "accuracy_ran.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* ---- the mapping table ----------------------------------------------------------------------
 * One row per name the suite allows (accuracy_field.c: ACC_ATTENTION_KERNELS, REDUCE, CKPT);
 * engine NULL: the engine has no such name, the value stays unmapped and is counted. The engine's
 * names are model/spec.c's ATTN_KERNELS, reduce_dtype's RD and CKPTS. */
typedef struct ran_row {
    acc_ran_key key;
    const char *ran, *engine;
} ran_row;

static const ran_row ROWS[] = {
    /* attention kernels */
    {ACC_RAN_AK, "unfused", "unfused"},             /* eager softmax(QK^T)V: the engine's unfused      */
    {ACC_RAN_AK, "megatron-fused-softmax", NULL},   /* QK^T and PV GEMMs + a fused softmax kernel: the
                                                       engine has no row for it (neither unfused's
                                                       element-wise passes nor a flash kernel)          */
    {ACC_RAN_AK, "fa1", "fa1"},                     /* the CUDA FlashAttention-1                        */
    {ACC_RAN_AK, "fa1-triton", "triton2022"},       /* the 2022 Triton FlashAttention: the engine calls
                                                       it triton2022 (model/kernels.c)                  */
    {ACC_RAN_AK, "fa2", "fa2"},                     /* FlashAttention-2                                 */
    {ACC_RAN_AK, "fa3", "fa3"},                     /* FlashAttention-3 (Hopper)                        */
    {ACC_RAN_AK, "xformers", "xformers"},           /* xformers memory_efficient_attention              */
    {ACC_RAN_AK, "sdpa", NULL},                     /* SDPA with the backend unstated: which of the
                                                       three the engine would have to guess             */
    {ACC_RAN_AK, "sdpa-flash", "sdpa-flash"},       /* PyTorch SDPA, flash backend                      */
    {ACC_RAN_AK, "sdpa-cudnn", "sdpa-cudnn"},       /* PyTorch SDPA, cuDNN backend                      */
    {ACC_RAN_AK, "sdpa-efficient", "sdpa-efficient"}, /* PyTorch SDPA, memory-efficient backend        */
    {ACC_RAN_AK, "te-cudnn", NULL},                 /* Transformer Engine's cuDNN fused attention: not
                                                       an engine name (sdpa-cudnn is PyTorch's path to
                                                       cuDNN; the same kernel is not established)       */
    {ACC_RAN_AK, "unstated", ""},                   /* nothing to map                                   */
    /* gradient reduction dtype: the engine reads bf16 / fp16 as "param" (the 16-bit parameter dtype) */
    {ACC_RAN_RD, "fp32", "fp32"},                   /* fp32 reduction (bytes and cast)                  */
    {ACC_RAN_RD, "bf16", "bf16"},                   /* 16-bit reduction in bf16                          */
    {ACC_RAN_RD, "fp16", "fp16"},                   /* 16-bit reduction in fp16                          */
    {ACC_RAN_RD, "unstated", ""},                   /* nothing to map                                   */
    /* activation checkpointing */
    {ACC_RAN_CKPT, "none", "none"},                 /* no recomputation                                 */
    {ACC_RAN_CKPT, "full", "full"},                 /* every layer recomputed                           */
    {ACC_RAN_CKPT, "selective", "selective"},       /* attention core recomputed (Korthikanti 2022)      */
    {ACC_RAN_CKPT, "op", "op"},                     /* operator-level selective (torchtitan's "op" SAC)  */
    {ACC_RAN_CKPT, "save_dot_except_mlpwi", "save_dot_except_mlpwi"}, /* MaxText remat policy        */
    {ACC_RAN_CKPT, "save_qkv_proj", "save_qkv_proj"}, /* MaxText remat policy                           */
    {ACC_RAN_CKPT, "partial", NULL},                /* some layers only: the engine has no fraction     */
    {ACC_RAN_CKPT, "unstated", ""},                 /* nothing to map                                   */
};

static const char *const KEY_NAMES[ACC_RAN_N_KEYS] = {"attention_kernel", "reduce_dtype", "checkpointing",
                                                      "framework_version", "stack"};
static const char *const FATE_NAMES[ACC_RAN_N_FATES] = {"none", "mapped", "agrees", "kept", "unmapped"};

const char *acc_ran_key_name(acc_ran_key k) { return k < ACC_RAN_N_KEYS ? KEY_NAMES[k] : "?"; }
const char *acc_ran_fate_name(acc_ran_fate f) { return f < ACC_RAN_N_FATES ? FATE_NAMES[f] : "?"; }

const char *acc_ran_engine_name(acc_ran_key k, const char *ran_value)
{
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++)
        if (ROWS[i].key == k && !strcmp(ROWS[i].ran, ran_value))
            return ROWS[i].engine;
    return NULL;
}

int acc_ran_deepspeed_version(const char *text, char *out, size_t n)
{
    static const char W[] = "deepspeed";
    for (const char *p = text; *p; p++) {
        size_t i = 0;
        while (W[i] && tolower((unsigned char)p[i]) == W[i])
            i++;
        if (W[i] || (p[i] != ' ' && p[i] != '@') || !isdigit((unsigned char)p[i + 1]))
            continue;
        const char *v = p + i + 1;
        size_t k = 0;
        while (isdigit((unsigned char)v[k]) || (v[k] == '.' && isdigit((unsigned char)v[k + 1])))
            k++;
        if (k + 1 > n)
            return -1;
        memcpy(out, v, k);
        out[k] = 0;
        return 0;
    }
    return -1;
}

/* ---- stack families: ran.stack names that are no bundle's -------------------------------------
 * One row per (family, release): release is a piece of the case's ran.framework_version ("" =
 * any); compiled, where not NULL, is the family's bundle for compiled execution. */
typedef struct stack_alias {
    const char *ran, *release, *eager, *compiled;
} stack_alias;

static const stack_alias ALIASES[] = {
    /* torchtitan runs eager unless --training.compile (its default false: configs/stacks/
       torchtitan-eager.json's execution source), so the family's default is the eager bundle */
    {"torchtitan", "", "torchtitan-eager", "torchtitan-compile"},
    /* DeepSpeed 0.6.x is the 2022 line (v0.6.0 2022-03 to v0.7.0 2022-08, PyPI release dates):
       the azure recipes' Megatron-DeepSpeed of that year, before FlashAttention */
    {"megatron-deepspeed", "DeepSpeed 0.6.", "megatron-deepspeed-2022", NULL},
    /* the SC'21 runs (README table at NVIDIA/Megatron-LM@50a4b5fa0280, 2021-04-08) */
    {"megatron-lm", "Megatron-LM 2021-", "megatron-lm-2021", NULL},
    /* Lightning as flash-attention's training/ ran it: the suite's text for those cases
       (validation/flash-attn-training-readme) names the README's torch requirement */
    {"lightning", "the README asks for PyTorch 1.12+", "flash-attn-training-2022", NULL},
};

const char *acc_ran_stack_bundle(const char *ran_stack, const char *framework_version, const char *execution,
                                 const char *stated_stack)
{
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++) {
        const stack_alias *a = &ALIASES[i];
        if (strcmp(a->ran, ran_stack) || !strstr(framework_version, a->release))
            continue;
        if (!a->compiled || !strcmp(execution, "eager"))
            return a->eager;
        if (!strcmp(execution, "compiled"))
            return a->compiled;
        return !strcmp(stated_stack, a->compiled) ? a->compiled : a->eager;
    }
    return NULL;
}

/* ---- writing into the training object -------------------------------------------------------- */

static int set_str(json_t *o, const char *key, const char *v) { return json_object_set_new(o, key, json_string(v)); }

/* The checkpointing the training object states ("" when none): checkpointing, or
 * activation_checkpointing true = full, false = none (model/spec.c). */
static const char *ckpt_stated(const json_t *tr)
{
    const json_t *c = json_object_get(tr, "checkpointing"), *a = json_object_get(tr, "activation_checkpointing");
    if (json_is_string(c))
        return json_string_value(c);
    if (json_is_boolean(a))
        return json_is_true(a) ? "full" : "none";
    return "";
}

/* The attention kernel the object states ("" when none), and whether `want` contradicts it:
 * attention_kernel names one; flash_attention false says unfused, true some fused kernel. */
static acc_ran_fate ak_fate(const json_t *tr, const char *want)
{
    const json_t *ak = json_object_get(tr, "attention_kernel"), *fa = json_object_get(tr, "flash_attention");
    if (json_is_string(ak))
        return strcmp(json_string_value(ak), want) ? ACC_RAN_KEPT : ACC_RAN_AGREES;
    if (json_is_boolean(fa) && json_is_true(fa) != !!strcmp(want, "unfused"))
        return ACC_RAN_KEPT;
    return json_is_false(fa) ? ACC_RAN_AGREES : ACC_RAN_MAPPED; /* false + unfused: said already */
}

/* The fate of one key whose engine value is want ("" or NULL handled by the caller), stated is
 * what the object says ("" = nothing). */
static acc_ran_fate plain_fate(const char *stated, const char *want)
{
    return !stated[0] ? ACC_RAN_MAPPED : strcmp(stated, want) ? ACC_RAN_KEPT : ACC_RAN_AGREES;
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* One of the table's keys: its fate, and the key written when mapped. */
static int apply_table(acc_ran_key k, const char *ran_value, json_t *tr, acc_ran_applied *out)
{
    const char *want = acc_ran_engine_name(k, ran_value);
    if (!want) {
        out->fate[k] = ACC_RAN_UNMAPPED;
        snprintf(out->value[k], sizeof out->value[k], "%s", ran_value);
        return 0;
    }
    if (!want[0])
        return 0;
    snprintf(out->value[k], sizeof out->value[k], "%s", want);
    out->fate[k] = k == ACC_RAN_AK ? ak_fate(tr, want)
                   : k == ACC_RAN_CKPT ? plain_fate(ckpt_stated(tr), want)
                                       : plain_fate(str_of(tr, KEY_NAMES[k]), want);
    return out->fate[k] == ACC_RAN_MAPPED ? set_str(tr, KEY_NAMES[k], want) : 0;
}

int acc_ran_apply(const acc_ran *ran, const char *case_framework, json_t *training, acc_stack_exists_fn exists,
                  const void *ctx, acc_ran_applied *out)
{
    memset(out, 0, sizeof *out);
    if (!ran->given)
        return 0;
    if (apply_table(ACC_RAN_AK, ran->attention_kernel, training, out) ||
        apply_table(ACC_RAN_RD, ran->reduce_dtype, training, out) ||
        apply_table(ACC_RAN_CKPT, ran->checkpointing, training, out))
        return -1;
    /* framework_version: only a DeepSpeed release, only where the case runs DeepSpeed */
    const char *fw = str_of(training, "framework")[0] ? str_of(training, "framework") : case_framework;
    char ver[32];
    if (!strcmp(fw, "deepspeed") && acc_ran_deepspeed_version(ran->framework_version, ver, sizeof ver) == 0) {
        snprintf(out->value[ACC_RAN_FV], sizeof out->value[ACC_RAN_FV], "%s", ver);
        out->fate[ACC_RAN_FV] = plain_fate(str_of(training, "framework_version"), ver);
        if (out->fate[ACC_RAN_FV] == ACC_RAN_MAPPED && set_str(training, "framework_version", ver))
            return -1;
    }
    /* stack: a bundle of exactly that name (configs/stacks/<stack>.json), else the family's
       bundle for the case's release and execution (ALIASES) */
    if (ran->stack[0] && strcmp(ran->stack, "other")) {
        const char *b = exists(ran->stack, ctx) ? ran->stack
                                                : acc_ran_stack_bundle(ran->stack, ran->framework_version,
                                                                       str_of(training, "execution"),
                                                                       str_of(training, "stack"));
        snprintf(out->value[ACC_RAN_STACK], sizeof out->value[ACC_RAN_STACK], "%s", b ? b : ran->stack);
        if (!b || !exists(b, ctx)) {
            snprintf(out->value[ACC_RAN_STACK], sizeof out->value[ACC_RAN_STACK], "%s", ran->stack);
            out->fate[ACC_RAN_STACK] = ACC_RAN_UNMAPPED;
        } else if ((out->fate[ACC_RAN_STACK] = plain_fate(str_of(training, "stack"), b)) == ACC_RAN_MAPPED &&
                   set_str(training, "stack", b))
            return -1;
    }
    return 0;
}

void acc_ran_count(const acc_ran_applied *a, acc_ran_counts *c)
{
    for (int k = 0; k < ACC_RAN_N_KEYS; k++)
        c->n[k][a->fate[k]]++;
}

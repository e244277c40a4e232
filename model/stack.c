/* stack.c — named software stacks (see stack.h). One row in KEYS per training key a bundle may
 * set: its name, the given-bit that protects an explicit setting, and how a value is parsed
 * into spec_training. A new key (reduce_dtype, optimizer implementation, ...) is one row here
 * and its parser. */
#include "stack.h"

#include <jansson.h>
#include <string.h>

#include "../base/jsonrd.h"

static const char *const EXECS[] = {"eager", "compiled", NULL};
static const char *const CKPTS[] = {"none", "full", "selective", "op", "save_dot_except_mlpwi", "save_qkv_proj", NULL};
static const char *const REDUCES[] = {"default", "param", "fp32", NULL};     /* spec_reduce_dtype */
static const char *const OPTS[] = {"default", "fused", "foreach", "forloop", NULL}; /* spec_opt_impl */

static int idx_of(const char *const *names, const char *v)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], v))
            return i;
    return -1;
}

/* Each parser: 0 and t set when v is valid, -1 (t untouched) when not. */
static int set_ak(const char *v, spec_training *t)
{
    int ak = spec_attn_kernel_parse(v);
    if (ak < 0)
        return -1;
    t->attn_kernel = ak;
    t->flash_attention = ak != AK_UNFUSED;
    t->flash_version = ak == AK_FA3 ? 3 : 2;
    return 0;
}
static int set_fw(const char *v, spec_training *t)
{
    int f = spec_framework_parse(v);
    if (f < 0)
        return -1;
    t->framework = (spec_framework)f;
    return 0;
}
static int set_exec(const char *v, spec_training *t)
{
    int e = idx_of(EXECS, v);
    if (e < 0)
        return -1;
    t->execution = e;
    return 0;
}
static int set_ckpt(const char *v, spec_training *t)
{
    int c = idx_of(CKPTS, v);
    if (c < 0)
        return -1;
    t->act_ckpt = c;
    return 0;
}

static int set_rd(const char *v, spec_training *t)
{
    int r = idx_of(REDUCES, v);
    if (r <= 0)
        return -1;
    t->reduce_dtype = r;
    return 0;
}
static int set_opt(const char *v, spec_training *t)
{
    int o = idx_of(OPTS, v);
    if (o <= 0)
        return -1;
    t->opt_impl = o;
    return 0;
}

/* the eager element-wise flags (model/workload.c ew_block): "on" or "off" */
static int set_flag(const char *v, int *f)
{
    if (strcmp(v, "on") && strcmp(v, "off"))
        return -1;
    *f = !strcmp(v, "on");
    return 0;
}
static int set_norm(const char *v, spec_training *t) { return set_flag(v, &t->norm_fp32); }
static int set_rope(const char *v, spec_training *t) { return set_flag(v, &t->rope_fp32); }
static int set_rkv(const char *v, spec_training *t) { return set_flag(v, &t->repeat_kv); }
static int set_loss(const char *v, spec_training *t) { return set_flag(v, &t->loss_fp32); }
static int set_swiglu(const char *v, spec_training *t) { return set_flag(v, &t->swiglu_unfused); }
static int set_tpo(const char *v, spec_training *t) { return set_flag(v, &t->tp_comm_overlap); }
static int set_gelu(const char *v, spec_training *t) { return set_flag(v, &t->gelu_unfused); }
static int set_mask(const char *v, spec_training *t) { return set_flag(v, &t->mask_unfused); }
static int set_amp(const char *v, spec_training *t) { return set_flag(v, &t->autocast); }
static int set_opg(const char *v, spec_training *t) { return set_flag(v, &t->overlap_param_gather); }
static int set_flce(const char *v, spec_training *t) { return set_flag(v, &t->fused_linear_ce); }
static int set_ropeu(const char *v, spec_training *t) { return set_flag(v, &t->rope_unfused); }
static int set_lossf(const char *v, spec_training *t) { return set_flag(v, &t->loss_fusion); }
static int set_mce(const char *v, spec_training *t) { return set_flag(v, &t->megatron_ce); }
static int set_atp(const char *v, spec_training *t) { return set_flag(v, &t->atorch_tp); }
/* grad_clip: torch's per-parameter loop (torch < 2.0), its foreach form, or none */
static int set_clip(const char *v, spec_training *t)
{
    static const char *const CLIPS[] = {"off", "loop", "foreach", NULL};
    int c = idx_of(CLIPS, v);
    if (c < 0)
        return -1;
    t->grad_clip = c == 2 ? SPEC_CLIP_FOREACH : c; /* off 0, loop 1 (model/spec.h) */
    return 0;
}

typedef struct stack_key {
    const char *name;
    unsigned given_bit;
    int (*set)(const char *v, spec_training *t);
    const char *expected; /* for the error message */
} stack_key;

static const stack_key KEYS[] = {
    {"attention_kernel", SPEC_GIVEN_AK, set_ak,
     "fa1, triton2022, xformers, fa2, fa3, sdpa-flash, sdpa-cudnn, sdpa-efficient or unfused"},
    {"framework", SPEC_GIVEN_FW, set_fw, "ideal, deepspeed, fsdp, fsdp2 or megatron"},
    {"execution", SPEC_GIVEN_EXEC, set_exec, "eager or compiled"},
    {"checkpointing", SPEC_GIVEN_CKPT, set_ckpt, "none, full, selective, op, save_dot_except_mlpwi or save_qkv_proj"},
    {"reduce_dtype", SPEC_GIVEN_RD, set_rd, "param or fp32"},
    {"optimizer", SPEC_GIVEN_OPT, set_opt, "fused, foreach or forloop"},
    {"norm_fp32", SPEC_GIVEN_NORM, set_norm, "on or off"},
    {"rope_fp32", SPEC_GIVEN_ROPE, set_rope, "on or off"},
    {"repeat_kv", SPEC_GIVEN_RKV, set_rkv, "on or off"},
    {"loss_fp32", SPEC_GIVEN_LOSS, set_loss, "on or off"},
    {"swiglu_unfused", SPEC_GIVEN_SWIGLU, set_swiglu, "on or off"},
    {"tp_comm_overlap", SPEC_GIVEN_TPO, set_tpo, "on or off"},
    {"gelu_unfused", SPEC_GIVEN_GELU, set_gelu, "on or off"},
    {"mask_unfused", SPEC_GIVEN_MASK, set_mask, "on or off"},
    {"autocast", SPEC_GIVEN_AMP, set_amp, "on or off"},
    {"overlap_param_gather", SPEC_GIVEN_OPG, set_opg, "on or off"},
    {"fused_linear_ce", SPEC_GIVEN_FLCE, set_flce, "on or off"},
    {"rope_unfused", SPEC_GIVEN_ROPEU, set_ropeu, "on or off"},
    {"loss_fusion", SPEC_GIVEN_LOSSF, set_lossf, "on or off"},
    {"megatron_ce", SPEC_GIVEN_MCE, set_mce, "on or off"},
    {"atorch_tp", SPEC_GIVEN_ATP, set_atp, "on or off"},
    {"grad_clip", SPEC_GIVEN_CLIP, set_clip, "off, loop or foreach"},
};
#define N_KEYS (sizeof KEYS / sizeof KEYS[0])

static const stack_key *key_of(const char *k)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (!strcmp(KEYS[i].name, k))
            return &KEYS[i];
    return NULL;
}

/* "key": {"value": "...", "source": "..."} */
static int row_from(jr *r, const char *key, const json_t *o, stack_row *row)
{
    char p[96];
    snprintf(p, sizeof p, "$.%s", key);
    static const char *const rk[] = {"value", "source", NULL};
    int rc;
    if (!json_is_object(o))
        return jr_bad(r, p, "an object {\"value\": ..., \"source\": ...}", o);
    if ((rc = jr_only_keys(r, o, p, rk)) || (rc = jr_str(r, o, p, "value", 1, row->value, sizeof row->value)) ||
        (rc = jr_str(r, o, p, "source", 1, row->source, sizeof row->source)))
        return rc;
    snprintf(row->key, sizeof row->key, "%s", key);
    spec_training probe;
    spec_training_defaults(&probe);
    const stack_key *k = key_of(key);
    if (k->set(row->value, &probe)) {
        snprintf(p, sizeof p, "$.%s.value", key);
        return sc_err_set(r->err, SC_EINPUT, r->src, p, "expected %s, got \"%s\"", k->expected, row->value);
    }
    return 0;
}

static int bundle_from(jr *r, json_t *root, stack_bundle *b)
{
    int rc;
    memset(b, 0, sizeof *b);
    if ((rc = jr_str(r, root, "$", "name", 1, b->name, sizeof b->name)) ||
        (rc = jr_str(r, root, "$", "source", 1, b->source, sizeof b->source)) ||
        (rc = jr_str(r, root, "$", "version", 0, b->version, sizeof b->version)))
        return rc;
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        if (!strcmp(key, "name") || !strcmp(key, "source") || !strcmp(key, "version"))
            continue;
        if (!key_of(key)) {
            /* the keys as far as the message (sc_err text, 256) holds them, then where all are */
            char p[96], known[140] = "";
            for (size_t i = 0; i < N_KEYS; i++) {
                if (strlen(known) + strlen(KEYS[i].name) + 8 >= sizeof known) {
                    snprintf(known + strlen(known), sizeof known - strlen(known), ", ...");
                    break;
                }
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", KEYS[i].name);
            }
            snprintf(p, sizeof p, "$.%.80s", key);
            return sc_err_set(r->err, SC_EINPUT, r->src, p,
                              "expected name, source, version or one of the %d training keys (%s; configs/README.md), "
                              "got an unknown key",
                              (int)N_KEYS, known);
        }
        if (b->n >= STACK_MAX_ROWS)
            return sc_err_set(r->err, SC_EINPUT, r->src, "$", "expected at most %d values", STACK_MAX_ROWS);
        if ((rc = row_from(r, key, v, &b->row[b->n])))
            return rc;
        b->n++;
    }
    return 0;
}

int stack_load(const char *path, stack_bundle *out, sc_err *err)
{
    jr r = {path, err};
    json_t *root;
    int rc = jr_load_root(&r, NULL, &root);
    if (rc)
        return rc;
    rc = json_is_object(root) ? bundle_from(&r, root, out) : jr_bad(&r, "$", "an object", root);
    json_decref(root);
    return rc;
}

void stack_apply(const stack_bundle *b, spec_training *t)
{
    for (int i = 0; i < b->n; i++) {
        const stack_key *k = key_of(b->row[i].key);
        if (k && !(t->given & k->given_bit))
            (void)k->set(b->row[i].value, t); /* checked at load */
    }
}

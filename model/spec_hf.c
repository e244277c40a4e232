/* spec_hf.c — Hugging Face config.json -> spec_model for the common decoder families.
 * Each family reads the keys its transformers Config class defines, with that class's defaults
 * (transformers v4.4x: LlamaConfig, MistralConfig, Qwen2Config, GPTNeoXConfig, MptConfig,
 * GPT2Config, FalconConfig); the dropout probabilities they state go to the training
 * (spec_hf_arg_dropout; knobs35); other keys (rope scaling, token ids) do not change the shape
 * and are ignored. Not here: MoE, multimodal configs, anything not in spec_model. */
#include "spec_hf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/jsonrd.h"

typedef enum { FAM_LLAMA, FAM_MISTRAL, FAM_QWEN2, FAM_NEOX, FAM_MPT, FAM_GPT2, FAM_FALCON } hf_family;

static const struct {
    const char *model_type;
    hf_family fam;
} TYPES[] = {
    {"llama", FAM_LLAMA},         {"mistral", FAM_MISTRAL}, {"qwen2", FAM_QWEN2},
    {"gpt_neox", FAM_NEOX},       {"mpt", FAM_MPT},         {"gpt2", FAM_GPT2},
    {"falcon", FAM_FALCON},       {"RefinedWebModel", FAM_FALCON}, /* Falcon's first releases */
    {"RefinedWeb", FAM_FALCON},
};
#define N_TYPES (sizeof TYPES / sizeof TYPES[0])
#define KNOWN_TYPES "llama, mistral, qwen2, gpt_neox, mpt, gpt2, falcon"

/* The first of keys[] present and not null, as an integer from 1 to max into *out; else *out
 * keeps its default and *used is NULL. A present key of the wrong type or out of range is an
 * error. The bounds are a model spec's (spec_model_check): HF configs allowed 2^30, and the
 * products of such sizes overflowed int (a negative parameter count, exit 0). */
static int hf_int(jr *r, const json_t *o, const char *const *keys, long max, int *out, const char **used)
{
    *used = NULL;
    for (int i = 0; keys[i]; i++) {
        json_t *v = json_object_get(o, keys[i]);
        if (!v || json_is_null(v))
            continue;
        char p[96];
        snprintf(p, sizeof p, "$.%s", keys[i]);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max) {
            char want[64];
            snprintf(want, sizeof want, "an integer from 1 to %ld", max);
            return jr_bad(r, p, want, v);
        }
        *out = (int)json_integer_value(v);
        *used = keys[i];
        return 0;
    }
    return 0;
}

/* *out = a x b, a derived size (an MLP width), computed in 64 bits and held to the bounds of a
 * model spec's ffn; an error at `path` otherwise. */
static int hf_product(jr *r, const char *path, const char *what, int a, int b, int *out)
{
    long long v = (long long)a * b;
    if (v > SPEC_MODEL_MAX_DIM)
        return sc_err_set(r->err, SC_EINPUT, r->src, path, "expected %s (the MLP width) at most %ld, got %d x %d = %lld",
                          what, SPEC_MODEL_MAX_DIM, a, b, v);
    *out = (int)v;
    return 0;
}

/* A boolean key, absent or null = default. */
static int hf_bool(jr *r, const json_t *o, const char *key, int *out)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    char p[96];
    snprintf(p, sizeof p, "$.%s", key);
    if (!json_is_boolean(v))
        return jr_bad(r, p, "true or false", v);
    *out = json_is_true(v);
    return 0;
}

/* Append ", key=value (default)" notes of keys that were not in the file. */
static void note_default(char *buf, size_t n, const char *what, const char *used, long value)
{
    if (used)
        return;
    size_t l = strlen(buf);
    if (l < n)
        snprintf(buf + l, n - l, "%s%s %ld", l ? ", " : "", what, value);
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* The model's name: $._name_or_path's last component, else the file's directory (.../NAME/config.json)
 * or base name. Control characters are refused, as a model spec's $.name refuses them: the name
 * reaches the terminal, the CSV and the plots. */
static int model_name(jr *r, const json_t *root, const char *path, char *out, size_t n)
{
    json_t *v = json_object_get(root, "_name_or_path");
    const char *np = json_string_value(v);
    char buf[512];
    if (np && *np) {
        if (strlen(np) != json_string_length(v) || has_control(np))
            return jr_bad(r, "$._name_or_path", "a string without control characters", v);
        snprintf(buf, sizeof buf, "%s", np);
    } else {
        snprintf(buf, sizeof buf, "%s", path);
        char *slash = strrchr(buf, '/');
        if (slash && !strcmp(slash + 1, "config.json")) {
            *slash = '\0'; /* models/Llama-3-8B/config.json -> Llama-3-8B */
        } else {
            size_t l = strlen(buf);
            if (l > 5 && !strcmp(buf + l - 5, ".json"))
                buf[l - 5] = '\0';
        }
    }
    size_t l = strlen(buf);
    while (l > 1 && buf[l - 1] == '/')
        buf[--l] = '\0';
    const char *base = strrchr(buf, '/');
    const char *name = base && base[1] ? base + 1 : buf;
    size_t len = strlen(name); /* truncated to n - 1 (a copy, not snprintf: no -Wformat-truncation at -O1) */
    if (n) {
        len = len < n - 1 ? len : n - 1;
        memcpy(out, name, len);
        out[len] = '\0';
    }
    return 0;
}

/* Mistral's sliding_window (Jiang et al. 2023, "Mistral 7B" §2: each token attends to the W
 * tokens before it): the window when it is on, else 0 (absent, null, or use_sliding_window false
 * as Qwen2 writes it). Up to W tokens a sequence's attention is full causal attention, which is
 * what shardcast prices; beyond W it is not modelled. */
static int hf_window(const json_t *root)
{
    const json_t *w = json_object_get(root, "sliding_window");
    if (!json_is_integer(w) || json_is_false(json_object_get(root, "use_sliding_window")))
        return 0;
    json_int_t v = json_integer_value(w);
    return v > 0 && v < (1 << 30) ? (int)v : 0;
}

/* The sliding window of the config at path (hf_window), 0 when none or unreadable. */
static int hf_window_of(const char *path)
{
    sc_err err;
    jr r = {path, &err};
    json_t *root;
    if (jr_load_root(&r, NULL, &root))
        return 0;
    int w = hf_window(root);
    json_decref(root);
    return w;
}

/* key names per family: layers, hidden, heads, kv heads, ffn, vocab, seq */
static const char *const L_LAYERS[] = {"num_hidden_layers", NULL}, *const L_HIDDEN[] = {"hidden_size", NULL},
                         *const L_HEADS[] = {"num_attention_heads", NULL},
                         *const L_KV[] = {"num_key_value_heads", NULL},
                         *const L_FFN[] = {"intermediate_size", NULL}, *const L_VOCAB[] = {"vocab_size", NULL},
                         *const L_SEQ[] = {"max_position_embeddings", NULL};
static const char *const G_LAYERS[] = {"n_layer", NULL}, *const G_HIDDEN[] = {"n_embd", NULL},
                         *const G_HEADS[] = {"n_head", NULL}, *const G_FFN[] = {"n_inner", NULL},
                         *const G_SEQ[] = {"n_positions", "n_ctx", NULL};
static const char *const M_LAYERS[] = {"n_layers", NULL}, *const M_HIDDEN[] = {"d_model", NULL},
                         *const M_HEADS[] = {"n_heads", NULL}, *const M_RATIO[] = {"expansion_ratio", NULL},
                         *const M_SEQ[] = {"max_seq_len", NULL};
static const char *const F_LAYERS[] = {"num_hidden_layers", "n_layer", NULL},
                         *const F_HEADS[] = {"num_attention_heads", "n_head", NULL},
                         *const F_KV[] = {"num_kv_heads", "n_head_kv", NULL},
                         *const F_FFN[] = {"ffn_hidden_size", NULL};

/* A config's shape as it is read: the family, its key names, the values (the family's defaults
 * until read), what the summary says about them. */
typedef struct hf_shape {
    hf_family fam;
    const char *const *k_layers, *const *k_hidden, *const *k_heads, *const *k_seq;
    int layers, hidden, heads, kv, ffn, vocab, seq;
    const char *mlp_note, *pos_note;
    char defaults[256], win_note[160];
    double drop[2];             /* hidden, attention dropout (hf_dropout) */
    const char *drop_key[2];    /* the keys they came from, NULL: the class default */
} hf_shape;

/* $.model_type, one of the families shardcast reads, into *t (an index of TYPES). */
static int hf_type(jr *r, json_t *root, size_t *t)
{
    json_t *mt = json_object_get(root, "model_type");
    if (!mt)
        return jr_missing(r, "$.model_type", "a Hugging Face model type (" KNOWN_TYPES ")");
    if (!json_is_string(mt))
        return jr_bad(r, "$.model_type", "a string (" KNOWN_TYPES ")", mt);
    *t = 0;
    while (*t < N_TYPES && strcmp(TYPES[*t].model_type, json_string_value(mt)))
        (*t)++;
    if (*t == N_TYPES)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.model_type",
                          "expected a family shardcast reads (" KNOWN_TYPES "), got \"%.60s\"; write a model spec "
                          "instead (configs/README.md)",
                          json_string_value(mt));
    return 0;
}

/* The family's key names and the transformers Config defaults of each family, m's flags too. */
static void hf_family_defaults(hf_family fam, hf_shape *h, spec_model *m)
{
    h->fam = fam;
    h->k_layers = L_LAYERS, h->k_hidden = L_HIDDEN, h->k_heads = L_HEADS, h->k_seq = L_SEQ;
    h->layers = 32, h->hidden = 4096, h->heads = 32, h->kv = 0, h->ffn = 11008, h->vocab = 32000, h->seq = 2048;
    m->swiglu = 1, m->rmsnorm = 1, m->bias = 0, m->tied_embeddings = 0, m->learned_positions = 0;
    h->mlp_note = "", h->pos_note = "rotary";
    h->defaults[0] = h->win_note[0] = 0;
    switch (fam) {
    case FAM_LLAMA: break;
    case FAM_MISTRAL: h->ffn = 14336, h->kv = 8, h->seq = 131072; break;
    case FAM_QWEN2: h->ffn = 22016, h->vocab = 151936, h->seq = 32768; break;
    case FAM_NEOX:
        h->layers = 44, h->hidden = 6144, h->heads = 64, h->ffn = 24576, h->vocab = 50432;
        m->swiglu = 0, m->rmsnorm = 0, m->bias = 1;
        break;
    case FAM_MPT:
        h->k_layers = M_LAYERS, h->k_hidden = M_HIDDEN, h->k_heads = M_HEADS, h->k_seq = M_SEQ;
        h->layers = 24, h->hidden = 2048, h->heads = 16, h->vocab = 50368;
        m->swiglu = 0, m->rmsnorm = 0, m->tied_embeddings = 1; /* MPT's LM head is the embedding */
        h->pos_note = "ALiBi (no parameters)";
        break;
    case FAM_GPT2:
        h->k_layers = G_LAYERS, h->k_hidden = G_HIDDEN, h->k_heads = G_HEADS, h->k_seq = G_SEQ;
        h->layers = 12, h->hidden = 768, h->heads = 12, h->vocab = 50257, h->seq = 1024;
        m->swiglu = 0, m->rmsnorm = 0, m->bias = 1, m->tied_embeddings = 1, m->learned_positions = 1;
        h->pos_note = "learned";
        break;
    case FAM_FALCON:
        h->k_layers = F_LAYERS, h->k_heads = F_HEADS;
        h->hidden = 4544, h->heads = 71, h->vocab = 65024;
        m->swiglu = 0, m->rmsnorm = 0, m->tied_embeddings = 1;
        break;
    }
}

/* Layers, hidden, heads, vocabulary and sequence (each default noted), the sliding window. */
static int hf_dims(jr *r, json_t *root, hf_shape *h)
{
    const char *used = NULL;
    int rc;
    if ((rc = hf_int(r, root, h->k_layers, SPEC_MODEL_MAX_LAYERS, &h->layers, &used)))
        return rc;
    note_default(h->defaults, sizeof h->defaults, h->k_layers[0], used, h->layers);
    if ((rc = hf_int(r, root, h->k_hidden, SPEC_MODEL_MAX_DIM, &h->hidden, &used)))
        return rc;
    note_default(h->defaults, sizeof h->defaults, h->k_hidden[0], used, h->hidden);
    if ((rc = hf_int(r, root, h->k_heads, SPEC_MODEL_MAX_DIM, &h->heads, &used)))
        return rc;
    note_default(h->defaults, sizeof h->defaults, h->k_heads[0], used, h->heads);
    if ((rc = hf_int(r, root, L_VOCAB, SPEC_MODEL_MAX_DIM, &h->vocab, &used)))
        return rc;
    note_default(h->defaults, sizeof h->defaults, "vocab_size", used, h->vocab);
    if ((rc = hf_int(r, root, h->k_seq, SPEC_MODEL_MAX_DIM, &h->seq, &used)))
        return rc;
    note_default(h->defaults, sizeof h->defaults, h->k_seq[0], used, h->seq);
    int win = hf_window(root);
    if (win > 0 && win < h->seq) { /* full causal attention up to the window: exact there, not beyond */
        snprintf(h->win_note, sizeof h->win_note,
                 "; seq %d = the sliding window (%s %d: sliding-window attention beyond it is not modelled)", win,
                 h->k_seq[0], h->seq);
        h->seq = win;
    }
    return 0;
}

/* The MLP's width: each family's key, or its multiple of the hidden size. */
static int hf_ffn(jr *r, json_t *root, hf_shape *h)
{
    const char *used = NULL;
    int rc = 0;
    switch (h->fam) {
    case FAM_LLAMA: case FAM_MISTRAL: case FAM_QWEN2: case FAM_NEOX:
        if ((rc = hf_int(r, root, L_FFN, SPEC_MODEL_MAX_DIM, &h->ffn, &used)))
            return rc;
        note_default(h->defaults, sizeof h->defaults, "intermediate_size", used, h->ffn);
        break;
    case FAM_GPT2: /* n_inner null: 4 x n_embd */
        if ((rc = hf_int(r, root, G_FFN, SPEC_MODEL_MAX_DIM, &h->ffn, &used)) ||
            (!used && (rc = hf_product(r, "$.n_embd", "4 x n_embd", 4, h->hidden, &h->ffn))))
            return rc;
        break;
    case FAM_MPT: {
        int ratio = 4;
        if ((rc = hf_int(r, root, M_RATIO, SPEC_MODEL_MAX_DIM, &ratio, &used)) ||
            (rc = hf_product(r, used ? "$.expansion_ratio" : "$.d_model", "expansion_ratio x d_model", ratio, h->hidden,
                             &h->ffn)))
            return rc;
        break;
    }
    case FAM_FALCON: /* ffn_hidden_size null: 4 x hidden_size */
        if ((rc = hf_int(r, root, F_FFN, SPEC_MODEL_MAX_DIM, &h->ffn, &used)) ||
            (!used && (rc = hf_product(r, "$.hidden_size", "4 x hidden_size", 4, h->hidden, &h->ffn))))
            return rc;
        break;
    }
    return rc;
}

/* The K/V heads: grouped-query keys, Falcon's multi-query and new architecture (and its ALiBi). */
static int hf_kv(jr *r, json_t *root, hf_shape *h)
{
    const char *used = NULL;
    int rc;
    h->kv = h->kv ? h->kv : h->heads;
    if (h->fam == FAM_LLAMA || h->fam == FAM_MISTRAL || h->fam == FAM_QWEN2) {
        if ((rc = hf_int(r, root, L_KV, SPEC_MODEL_MAX_DIM, &h->kv, &used)))
            return rc;
        if (h->fam == FAM_QWEN2 && !used)
            h->kv = h->heads;
    } else if (h->fam == FAM_FALCON) {
        /* FalconConfig: new_decoder_architecture uses num_kv_heads; else multi_query (default
         * true) means one K/V head, otherwise one per query head. */
        int new_arch = 0, mq = 1;
        if ((rc = hf_bool(r, root, "new_decoder_architecture", &new_arch)) || (rc = hf_bool(r, root, "multi_query", &mq)))
            return rc;
        h->kv = mq ? 1 : h->heads;
        if (new_arch || json_object_get(root, "n_head_kv")) {
            h->kv = h->heads;
            if ((rc = hf_int(r, root, F_KV, SPEC_MODEL_MAX_DIM, &h->kv, &used)))
                return rc;
        }
        int alibi = 0;
        if ((rc = hf_bool(r, root, "alibi", &alibi)))
            return rc;
        if (alibi)
            h->pos_note = "ALiBi (no parameters)";
    }
    return 0;
}

/* Biases, norms and tying: each family's flags. */
static int hf_flags(jr *r, json_t *root, hf_shape *h, spec_model *m)
{
    int rc;
    switch (h->fam) {
    case FAM_LLAMA: case FAM_MISTRAL: {
        int ab = 0, mb = 0;
        if ((rc = hf_bool(r, root, "attention_bias", &ab)) || (rc = hf_bool(r, root, "mlp_bias", &mb)))
            return rc;
        m->bias = ab || mb;
        break;
    }
    case FAM_QWEN2: h->mlp_note = "; q/k/v biases not counted"; break;
    case FAM_NEOX: break;
    case FAM_MPT: {
        int no_bias = 1;
        if ((rc = hf_bool(r, root, "no_bias", &no_bias)))
            return rc;
        m->bias = !no_bias;
        break;
    }
    case FAM_GPT2: break;
    case FAM_FALCON: {
        int b = 0;
        if ((rc = hf_bool(r, root, "bias", &b)))
            return rc;
        m->bias = b;
        break;
    }
    }
    if (h->fam != FAM_MPT && (rc = hf_bool(r, root, "tie_word_embeddings", &m->tied_embeddings)))
        return rc;
    return 0;
}

/* Heads dividing the hidden size, head_dim (when given) their quotient, K/V heads dividing them. */
static int hf_heads_check(jr *r, json_t *root, const hf_shape *h)
{
    if (h->hidden % h->heads)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.num_attention_heads",
                          "expected a divisor of the hidden size %d, got %d", h->hidden, h->heads);
    json_t *hd = json_object_get(root, "head_dim"); /* compared, not multiplied: it may be 2^62 */
    if (hd && json_is_integer(hd) && json_integer_value(hd) != h->hidden / h->heads)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.head_dim",
                          "expected hidden_size / num_attention_heads = %d (shardcast's attention shape), got %lld",
                          h->hidden / h->heads, (long long)json_integer_value(hd));
    if (h->kv < 1 || h->kv > h->heads || h->heads % h->kv)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.num_key_value_heads",
                          "expected a divisor of the %d attention heads, got %d", h->heads, h->kv);
    return 0;
}

/* A probability key of o (0 to below 1), absent or null = the default; *used names it. */
static int hf_prob(jr *r, const json_t *o, const char *path, const char *key, double *out, const char **used)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    int rc = jr_prob(r, o, path, key, out); /* the spec's training keys' reader (jsonrd.c) */
    if (!rc)
        *used = key;
    return rc;
}

/* The dropout the config states, with its Config class's defaults (transformers v4.4x
 * configuration_*.py): LlamaConfig, MistralConfig, Qwen2Config attention_dropout 0.0, and no
 * hidden dropout in their decoder layers; GPTNeoXConfig and FalconConfig hidden_dropout and
 * attention_dropout 0.0; MptConfig resid_pdrop 0.0 and attn_config.attn_pdrop 0.0; GPT2Config
 * resid_pdrop and attn_pdrop 0.1. The embedding output's dropout (embd_pdrop, emb_pdrop) is
 * not modelled (one h-wide kernel per token against a block's two). */
static int hf_dropout(jr *r, json_t *root, hf_shape *h)
{
    const char *hk = NULL, *ak = NULL;
    h->drop[0] = h->drop[1] = h->fam == FAM_GPT2 ? 0.1 : 0.0;
    h->drop_key[0] = h->drop_key[1] = NULL;
    int rc = 0;
    switch (h->fam) {
    case FAM_LLAMA: case FAM_MISTRAL: case FAM_QWEN2:
        rc = hf_prob(r, root, "$", "attention_dropout", &h->drop[1], &ak);
        break;
    case FAM_NEOX: case FAM_FALCON:
        if (!(rc = hf_prob(r, root, "$", "hidden_dropout", &h->drop[0], &hk)))
            rc = hf_prob(r, root, "$", "attention_dropout", &h->drop[1], &ak);
        break;
    case FAM_MPT: {
        json_t *ac = json_object_get(root, "attn_config");
        if (!(rc = hf_prob(r, root, "$", "resid_pdrop", &h->drop[0], &hk)) && json_is_object(ac))
            rc = hf_prob(r, ac, "$.attn_config", "attn_pdrop", &h->drop[1], &ak);
        break;
    }
    case FAM_GPT2:
        if (!(rc = hf_prob(r, root, "$", "resid_pdrop", &h->drop[0], &hk)))
            rc = hf_prob(r, root, "$", "attn_pdrop", &h->drop[1], &ak);
        break;
    }
    h->drop_key[0] = hk, h->drop_key[1] = ak;
    return rc;
}

static int hf_from(jr *r, json_t *root, const char *path, spec_model *m, double *drop, char *summary, size_t sn)
{
    memset(m, 0, sizeof *m);
    size_t t;
    int rc;
    hf_shape h;
    if ((rc = hf_type(r, root, &t)))
        return rc;
    const char *mt = TYPES[t].model_type; /* the config's $.model_type, matched */
    hf_family_defaults(TYPES[t].fam, &h, m);
    if ((rc = hf_dims(r, root, &h)) || (rc = hf_ffn(r, root, &h)) || (rc = hf_kv(r, root, &h)) ||
        (rc = hf_flags(r, root, &h, m)) || (rc = hf_heads_check(r, root, &h)) || (rc = hf_dropout(r, root, &h)))
        return rc;
    if (drop)
        drop[0] = h.drop[0], drop[1] = h.drop[1];
    m->layers = h.layers, m->hidden = h.hidden, m->heads = h.heads, m->kv_heads = h.kv, m->ffn = h.ffn,
    m->vocab = h.vocab;
    m->seq_len = h.seq;
    if ((rc = model_name(r, root, path, m->name, sizeof m->name)))
        return rc;
    if ((rc = spec_model_check(m, r->src, r->err)))
        return rc;
    snprintf(m->source, sizeof m->source, "Hugging Face config.json %.400s ($.model_type \"%s\")", path, mt);
    if (summary && sn)
        snprintf(summary, sn,
                 "%s: %s (%s): layers %d, hidden %d, heads %d, kv_heads %d, ffn %d, vocab %d, seq %d, mlp %s, norm %s, "
                 "bias %s, tied %s, positions %s%s%s%s",
                 path, m->name, mt, h.layers, h.hidden, h.heads, h.kv, h.ffn, h.vocab, h.seq,
                 m->swiglu ? "swiglu" : "gelu", m->rmsnorm ? "rmsnorm" : "layernorm", m->bias ? "yes" : "no",
                 m->tied_embeddings ? "yes" : "no", h.pos_note, h.mlp_note, h.defaults[0] ? "; defaults: " : "",
                 h.defaults);
    if (summary && sn && h.win_note[0]) {
        size_t l = strlen(summary);
        if (l < sn)
            snprintf(summary + l, sn - l, "%s", h.win_note);
    }
    size_t l = summary && sn ? strlen(summary) : sn;
    if (l < sn)
        snprintf(summary + l, sn - l, "; dropout: hidden %g (%s), attention %g (%s)", h.drop[0],
                 h.drop_key[0] ? h.drop_key[0] : "default", h.drop[1], h.drop_key[1] ? h.drop_key[1] : "default");
    return 0;
}

static int hf_parse(const char *json, const char *path, spec_model *out, double *drop, char *summary, size_t n,
                    sc_err *err)
{
    jr r = {path ? path : "<input>", err};
    if (has_control(r.src)) /* the path names the model and is printed with it */
        return sc_err_set(err, SC_EINPUT, r.src, "", "expected a file name without control characters");
    json_t *root;
    int rc = jr_load_root(&r, json, &root);
    if (rc)
        return rc;
    rc = hf_from(&r, root, r.src, out, drop, summary, n);
    json_decref(root);
    return rc;
}

int spec_parse_hf(const char *json, const char *path, spec_model *out, char *summary, size_t n, sc_err *err)
{
    return hf_parse(json, path, out, NULL, summary, n, err);
}

int spec_load_hf(const char *path, spec_model *out, char *summary, size_t n, sc_err *err)
{
    return hf_parse(NULL, path, out, NULL, summary, n, err);
}

int spec_hf_arg(const char *arg, spec_model *out, char *summary, size_t n, sc_err *err)
{
    double drop[2];
    return spec_hf_arg_dropout(arg, out, drop, summary, n, err);
}

int spec_hf_arg_dropout(const char *arg, spec_model *out, double drop[2], char *summary, size_t n, sc_err *err)
{
    char path[4096];
    int seq = 0;
    snprintf(path, sizeof path, "%s", arg);
    char *c = strstr(path, ",seq=");
    if (c) {
        char *end;
        long v = strtol(c + 5, &end, 10);
        if (*end || end == c + 5 || v < 1 || v > (1L << 24))
            return sc_err_set(err, SC_EINPUT, "--model", "", "expected hf:FILE[,seq=N] with N a positive integer, got \"hf:%.200s\"",
                              arg);
        seq = (int)v;
        *c = '\0';
    }
    /* ",sq=4096" or ",seq 4096": an option not spelt ",seq=N" after a file that exists (else
     * "cannot read FILE,sq=4096" would hide the typo) */
    char *comma = strrchr(path, ','), *slash = strrchr(path, '/');
    if (comma && (!slash || comma > slash) && access(path, F_OK)) {
        *comma = '\0';
        int file_there = !access(path, F_OK);
        *comma = ',';
        if (file_there)
            return sc_err_set(err, SC_EINPUT, "--model", "", "expected hf:FILE[,seq=N] (seq the only option), got \"%.60s\" "
                              "after the file in \"hf:%.200s\"", comma, arg);
    }
    int rc = hf_parse(NULL, path, out, drop, summary, n, err);
    if (rc || !seq)
        return rc;
    int win = hf_window_of(path);
    if (win > 0 && seq > win)
        return sc_err_set(err, SC_EINPUT, path, "$.sliding_window",
                          "sliding-window attention (window %d < ,seq=%d) is not modelled: shardcast prices full causal "
                          "attention, exact up to the window; give ,seq=%d or less",
                          win, seq, win);
    out->seq_len = seq;
    if (summary && n) {
        size_t l = strlen(summary);
        if (l < n)
            snprintf(summary + l, n - l, "; trained at seq %d (,seq=%d)", seq, seq);
    }
    return 0;
}

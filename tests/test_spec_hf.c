/* test_spec_hf.c — `--model hf:config.json` (model/spec_hf.c) on the Hugging Face config.json
 * files under tests/fixtures/hf/ (one per family), checked field by field against the Hub
 * configs and, through the workload, against parameter counts derived by hand below; and the
 * "did you mean" suggestion of spec_suggest. Not here: the JSON model spec (test_spec.c). */
#include "suites.h"

#include "../model/spec_hf.h"
#include "../model/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static spec_model hf(const char *dir)
{
    char path[256], msg[600], summary[1024];
    sc_err err;
    spec_model m;
    snprintf(path, sizeof path, "tests/fixtures/hf/%s/config.json", dir);
    ck_assert_msg(spec_load_hf(path, &m, summary, sizeof summary, &err) == 0, "%s", sc_err_str(&err, msg, sizeof msg));
    ck_assert_msg(strstr(summary, "layers ") && strstr(summary, "kv_heads "), "%s", summary);
    return m;
}

static double params(const spec_model *m)
{
    spec_training t;
    spec_training_defaults(&t);
    wl w;
    wl_build(m, &t, &w);
    return w.params;
}

/* Llama 3 8B: embeddings 2 x 128256 x 4096 (untied) = 1,050,673,152; per layer q and o 4096^2
 * each, k and v 4096 x 1024 (8 KV heads of 128) each, SwiGLU 3 x 4096 x 14336, two RMSNorm
 * weights 2 x 4096: 218,112,000 x 32 = 6,979,584,000; final norm 4096. Total 8,030,261,248
 * (the count the Hub shows as 8.03B). */
START_TEST(test_llama3_8b)
{
    spec_model m = hf("Meta-Llama-3-8B");
    ck_assert_int_eq(m.layers, 32);
    ck_assert_int_eq(m.hidden, 4096);
    ck_assert_int_eq(m.heads, 32);
    ck_assert_int_eq(m.kv_heads, 8);
    ck_assert_int_eq(m.ffn, 14336);
    ck_assert_int_eq(m.vocab, 128256);
    ck_assert_int_eq(m.seq_len, 8192);
    ck_assert(m.swiglu && m.rmsnorm && !m.bias && !m.tied_embeddings && !m.learned_positions);
    ck_assert_str_eq(m.name, "Meta-Llama-3-8B"); /* no _name_or_path: the directory */
    ck_assert_double_eq(params(&m), 8030261248.0);
    /* the shipped spec has the same shape */
    spec_model s;
    sc_err err;
    ck_assert_int_eq(spec_load_model("configs/models/llama3-8b.json", &s, &err), 0);
    ck_assert_double_eq(params(&s), 8030261248.0);
}
END_TEST

/* Llama 2 7B: 2 x 32000 x 4096 = 262,144,000; per layer 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096
 * = 202,383,360, x 32 = 6,476,267,520; + 4096 = 6,738,415,616 (the Hub's 6.74B). */
START_TEST(test_llama2_7b)
{
    spec_model m = hf("Llama-2-7b-hf");
    ck_assert_str_eq(m.name, "Llama-2-7b-hf"); /* _name_or_path meta-llama/Llama-2-7b-hf */
    ck_assert_int_eq(m.kv_heads, 32);
    ck_assert_int_eq(m.seq_len, 4096);
    ck_assert_double_eq(params(&m), 6738415616.0);
}
END_TEST

/* Llama 3.1 405B: 126 x (2 x 16384^2 + 2 x 16384 x 1024 + 3 x 16384 x 53248 + 2 x 16384)
 * + 2 x 128256 x 16384 + 16384 = 405,853,388,800; the config's 131072 positions, or ,seq=. */
START_TEST(test_llama31_405b_seq)
{
    spec_model m = hf("Llama-3.1-405B");
    ck_assert_int_eq(m.seq_len, 131072);
    ck_assert_double_eq(params(&m), 405853388800.0);
    char msg[600], summary[1024];
    sc_err err;
    ck_assert_msg(spec_hf_arg("tests/fixtures/hf/Llama-3.1-405B/config.json,seq=8192", &m, summary, sizeof summary,
                              &err) == 0, "%s", sc_err_str(&err, msg, sizeof msg));
    ck_assert_int_eq(m.seq_len, 8192);
    ck_assert_ptr_nonnull(strstr(summary, "trained at seq 8192"));
    ck_assert_int_eq(spec_hf_arg("tests/fixtures/hf/Llama-3.1-405B/config.json,seq=x", &m, NULL, 0, &err), SC_EINPUT);
}
END_TEST

/* knobs35: the dropout each config states, else its Config class's default (spec_hf.c
 * hf_dropout): GPT-2 XL resid_pdrop / attn_pdrop 0.1; Falcon-7B hidden_dropout /
 * attention_dropout 0.0; MPT-7B resid_pdrop 0 and attn_config.attn_pdrop 0; GPT-NeoX-20B states
 * neither (GPTNeoXConfig's 0.0); Llama 3 attention_dropout 0.0 and no hidden dropout. */
START_TEST(test_dropout)
{
    static const struct {
        const char *dir;
        double h, a;
    } want[] = {{"gpt2-xl", 0.1, 0.1}, {"falcon-7b", 0, 0}, {"mpt-7b", 0, 0}, {"gpt-neox-20b", 0, 0},
                {"Meta-Llama-3-8B", 0, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[256], summary[1024], msg[600];
        snprintf(path, sizeof path, "tests/fixtures/hf/%s/config.json", want[i].dir);
        spec_model m;
        double d[2] = {-1, -1};
        sc_err err;
        ck_assert_msg(spec_hf_arg_dropout(path, &m, d, summary, sizeof summary, &err) == 0, "%s",
                      sc_err_str(&err, msg, sizeof msg));
        ck_assert_msg(d[0] == want[i].h && d[1] == want[i].a, "%s: %g / %g", want[i].dir, d[0], d[1]);
        ck_assert_ptr_nonnull(strstr(summary, "; dropout: hidden"));
    }
    spec_model m;
    sc_err err;
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"gpt2\", \"resid_pdrop\": 1.5}", "g.json", &m, NULL, 0, &err),
                     SC_EINPUT);
    ck_assert_str_eq(err.path, "$.resid_pdrop");
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"mpt\", \"attn_config\": {\"attn_pdrop\": -1}}", "p.json", &m, NULL,
                                   0, &err),
                     SC_EINPUT);
    ck_assert_str_eq(err.path, "$.attn_config.attn_pdrop");
}
END_TEST

START_TEST(test_mistral_qwen2)
{
    spec_model m = hf("Mistral-7B-v0.1");
    ck_assert_int_eq(m.kv_heads, 8);
    ck_assert_int_eq(m.ffn, 14336);
    /* sliding_window 4096 < max_position_embeddings 32768: the sequence is the window (full
     * causal attention, exact up to it); a longer ,seq= is refused */
    ck_assert_int_eq(m.seq_len, 4096);
    {
        spec_model w;
        sc_err err;
        ck_assert_int_eq(spec_hf_arg("tests/fixtures/hf/Mistral-7B-v0.1/config.json,seq=8192", &w, NULL, 0, &err),
                         SC_EINPUT);
        ck_assert_str_eq(err.path, "$.sliding_window");
        ck_assert_int_eq(spec_hf_arg("tests/fixtures/hf/Mistral-7B-v0.1/config.json,seq=2048", &w, NULL, 0, &err), 0);
        ck_assert_int_eq(w.seq_len, 2048);
    }
    /* 2 x 32000 x 4096 + 32 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 8192) + 4096
     * = 7,241,732,096 (the Hub's 7.24B) */
    ck_assert_double_eq(params(&m), 7241732096.0);
    m = hf("Qwen2-7B");
    ck_assert_int_eq(m.seq_len, 131072); /* use_sliding_window false: the window does not apply */
    ck_assert_int_eq(m.layers, 28);
    ck_assert_int_eq(m.hidden, 3584);
    ck_assert_int_eq(m.heads, 28);
    ck_assert_int_eq(m.kv_heads, 4);
    ck_assert_int_eq(m.ffn, 18944);
    ck_assert_int_eq(m.vocab, 152064);
    ck_assert(!m.bias && !m.tied_embeddings);
}
END_TEST

START_TEST(test_neox_mpt)
{
    spec_model m = hf("gpt-neox-20b");
    ck_assert_int_eq(m.layers, 44);
    ck_assert_int_eq(m.hidden, 6144);
    ck_assert_int_eq(m.kv_heads, 64);
    ck_assert_int_eq(m.ffn, 24576);
    ck_assert(!m.swiglu && !m.rmsnorm && m.bias && !m.tied_embeddings && !m.learned_positions);
    m = hf("mpt-7b"); /* d_model, n_layers, n_heads, expansion_ratio, max_seq_len, no_bias */
    ck_assert_int_eq(m.layers, 32);
    ck_assert_int_eq(m.hidden, 4096);
    ck_assert_int_eq(m.heads, 32);
    ck_assert_int_eq(m.ffn, 4 * 4096);
    ck_assert_int_eq(m.seq_len, 2048);
    ck_assert_int_eq(m.vocab, 50432);
    ck_assert(!m.bias && m.tied_embeddings && !m.learned_positions);
}
END_TEST

/* GPT-2 XL: wte 50257 x 1600 = 80,411,200; wpe 1024 x 1600 = 1,638,400; per block 12h^2 + 13h
 * = 30,740,800, x 48 = 1,475,558,400; final LayerNorm 3,200: 1,557,611,200 (the Hub's 1.56B). */
START_TEST(test_gpt2_xl)
{
    spec_model m = hf("gpt2-xl");
    ck_assert_int_eq(m.ffn, 6400); /* n_inner absent: 4 x n_embd */
    ck_assert_int_eq(m.seq_len, 1024);
    ck_assert(m.learned_positions && m.tied_embeddings && m.bias);
    ck_assert_double_eq(params(&m), 1557611200.0);
}
END_TEST

START_TEST(test_falcon)
{
    spec_model m = hf("falcon-7b"); /* multi_query: one K/V head */
    ck_assert_int_eq(m.heads, 71);
    ck_assert_int_eq(m.kv_heads, 1);
    ck_assert_int_eq(m.ffn, 4 * 4544);
    ck_assert_int_eq(m.seq_len, 2048); /* FalconConfig default max_position_embeddings */
    ck_assert(!m.swiglu && !m.rmsnorm && !m.bias && m.tied_embeddings);
    m = hf("falcon-40b"); /* new_decoder_architecture: num_kv_heads */
    ck_assert_int_eq(m.heads, 128);
    ck_assert_int_eq(m.kv_heads, 8);
    ck_assert_int_eq(m.layers, 60);
}
END_TEST

START_TEST(test_errors)
{
    spec_model m;
    sc_err err;
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"t5\", \"d_model\": 512}", "x/config.json", &m, NULL, 0, &err),
                     SC_EINPUT);
    ck_assert_str_eq(err.source, "x/config.json");
    ck_assert_str_eq(err.path, "$.model_type");
    ck_assert_ptr_nonnull(strstr(err.text, "got \"t5\""));
    ck_assert_ptr_nonnull(strstr(err.text, "llama"));
    ck_assert_int_eq(spec_parse_hf("{\"hidden_size\": 512}", "y.json", &m, NULL, 0, &err), SC_EINPUT);
    ck_assert_str_eq(err.path, "$.model_type");
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"llama\", \"hidden_size\": \"big\"}", "z.json", &m, NULL, 0, &err),
                     SC_EINPUT);
    ck_assert_str_eq(err.path, "$.hidden_size");
    ck_assert_int_eq(spec_parse_hf("{\"model_type\": \"llama\", \"num_attention_heads\": 32, \"num_key_value_heads\": 5}",
                                   "k.json", &m, NULL, 0, &err),
                     SC_EINPUT);
    ck_assert_str_eq(err.path, "$.num_key_value_heads");
}
END_TEST

START_TEST(test_suggest)
{
    const char *dirs[] = {"configs"};
    char out[64];
    ck_assert_int_eq(spec_suggest("clusters", "p4d.24xlarg", dirs, 1, out, sizeof out), 0);
    ck_assert_str_eq(out, "p4d.24xlarge");
    /* a prefix of p4d.24xlarge (9 edits) and p4de.24xlarge (10): distance 1 each, the fewer edits */
    ck_assert_int_eq(spec_suggest("clusters", "p4d", dirs, 1, out, sizeof out), 0);
    ck_assert_str_eq(out, "p4d.24xlarge");
    /* llama3-70b: "405" -> "70" (substitute 4->7, delete 5) = 2; llama3.1-405b: insert ".1" = 2;
     * llama3-8b: 3; a tie names both in byte order ('-' 0x2d before '.' 0x2e) */
    char two[256];
    ck_assert_int_eq(spec_suggest("models", "llama3-405b", dirs, 1, two, sizeof two), 0);
    ck_assert_str_eq(two, "llama3-70b or llama3.1-405b");
    /* four names one substitution from "xz" (xa, xb, xc, xd): three named, the fourth counted */
    char tmp[] = "/tmp/sc-suggest-XXXXXX", f[300];
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(f, sizeof f, "%s/models", tmp);
    ck_assert_int_eq(mkdir(f, 0700), 0);
    for (char c = 'a'; c <= 'd'; c++) {
        snprintf(f, sizeof f, "%s/models/x%c.json", tmp, c);
        FILE *fp = fopen(f, "w");
        ck_assert_ptr_nonnull(fp);
        fclose(fp);
    }
    const char *tdirs[] = {tmp};
    ck_assert_int_eq(spec_suggest("models", "xz", tdirs, 1, two, sizeof two), 0);
    ck_assert_str_eq(two, "xa, xb, xc or 1 more");
    for (char c = 'a'; c <= 'd'; c++) {
        snprintf(f, sizeof f, "%s/models/x%c.json", tmp, c);
        remove(f);
    }
    snprintf(f, sizeof f, "%s/models", tmp);
    rmdir(f);
    rmdir(tmp);
    ck_assert_int_eq(spec_suggest("models", "gpt3-13x", dirs, 1, out, sizeof out), 0);
    ck_assert_str_eq(out, "gpt3-13b");
    ck_assert_int_eq(spec_suggest("models", "LLama3-8b", dirs, 1, out, sizeof out), 0); /* case */
    ck_assert_str_eq(out, "llama3-8b");
    ck_assert_int_eq(spec_suggest("models", "zzzzzzzz", dirs, 1, out, sizeof out), -1);
    char path[256];
    sc_err err;
    ck_assert_int_eq(spec_resolve("scenarios", "mics-p4d-gpt3-13", dirs, 1, path, sizeof path, &err), SC_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.text, "did you mean mics-p4d-gpt3-13b?"));
}
END_TEST

Suite *spec_hf_suite(void)
{
    Suite *s = suite_create("spec_hf");
    TCase *tc = tcase_create("hf");
    tcase_add_test(tc, test_llama3_8b);
    tcase_add_test(tc, test_llama2_7b);
    tcase_add_test(tc, test_llama31_405b_seq);
    tcase_add_test(tc, test_mistral_qwen2);
    tcase_add_test(tc, test_neox_mpt);
    tcase_add_test(tc, test_gpt2_xl);
    tcase_add_test(tc, test_falcon);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_dropout);
    tcase_add_test(tc, test_suggest);
    suite_add_tcase(s, tc);
    return s;
}

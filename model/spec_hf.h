/* spec_hf.h — a model spec from a Hugging Face transformers config.json (`--model hf:FILE`),
 * for the common decoder families: Llama 2/3, Mistral, Qwen2, GPT-NeoX, MPT, GPT-2, Falcon.
 * Reads only the shape keys each family's transformers Config class defines (with that class's
 * defaults) and ignores the rest; not a general converter (no MoE, no vision towers). */
#ifndef SC_SPEC_HF_H
#define SC_SPEC_HF_H

#include <stddef.h>

#include "spec.h"

/* The prefix that selects this loader on the command line: "hf:path/to/config.json". */
#define SPEC_HF_PREFIX "hf:"

/* Parse a config.json (the file `path`, or `json` when non-NULL, named `path` in errors) into
 * *out. `summary` (may be NULL) receives one line saying what was derived and from which keys
 * the defaults came, for the user to check. Unknown $.model_type is an error naming the file and
 * the families understood. The spec's source names the file; its name is the config's
 * `_name_or_path`, else the directory holding config.json, else the file name. */
int spec_parse_hf(const char *json, const char *path, spec_model *out, char *summary, size_t n, sc_err *err)
    SC_MUST_CHECK;
int spec_load_hf(const char *path, spec_model *out, char *summary, size_t n, sc_err *err) SC_MUST_CHECK;
/* The text after "hf:" on the command line: FILE, or FILE,seq=N to train at sequence length N
 * rather than the config's max_position_embeddings (Llama 3.1: 131072). */
int spec_hf_arg(const char *arg, spec_model *out, char *summary, size_t n, sc_err *err) SC_MUST_CHECK;
/* spec_hf_arg, and the dropout probabilities the config states (its Config class's defaults
 * where it does not): drop[0] hidden (resid_pdrop / hidden_dropout), drop[1] attention
 * (attn_pdrop / attention_dropout), for the training keys of the same names (knobs35). */
int spec_hf_arg_dropout(const char *arg, spec_model *out, double drop[2], char *summary, size_t n, sc_err *err)
    SC_MUST_CHECK;

#endif

/* accuracy_ran.h — what a case's source ran ("ran", accuracy_field.h) turned into the engine's
 * training keys, so that `shardcast accuracy` predicts each case as its source ran it (issue 27
 * item 11): one table maps the suite's names (validation/README.md "What the source ran") to the
 * engine's (model/spec.c: attention_kernel, reduce_dtype, checkpointing; framework_version for
 * DeepSpeed; stack where a configs/stacks bundle of exactly that name exists). A value the case's
 * own training object already states is kept; a name the engine lacks stays unmapped and is
 * counted. Not here: reading "ran" (accuracy_field.c), parsing the training object (model/spec.c)
 * or applying a stack bundle (model/stack.c, called from accuracy.c). */
#ifndef SC_PRED_ACCURACY_RAN_H
#define SC_PRED_ACCURACY_RAN_H

#include <jansson.h>

#include "accuracy_field.h"

typedef enum {
    ACC_RAN_AK,    /* ran.attention_kernel  -> training.attention_kernel            */
    ACC_RAN_RD,    /* ran.reduce_dtype      -> training.reduce_dtype                */
    ACC_RAN_CKPT,  /* ran.checkpointing     -> training.checkpointing               */
    ACC_RAN_FV,    /* ran.framework_version -> training.framework_version (DeepSpeed) */
    ACC_RAN_STACK, /* ran.stack             -> training.stack (a bundle exists)      */
    ACC_RAN_N_KEYS
} acc_ran_key;

typedef enum {
    ACC_RAN_NONE,     /* no "ran", or "unstated" (framework_version: no DeepSpeed release in it,
                         or the case does not run DeepSpeed)                                    */
    ACC_RAN_MAPPED,   /* written into the training object                                      */
    ACC_RAN_AGREES,   /* the training object already says the same                             */
    ACC_RAN_KEPT,     /* the training object says otherwise: it wins                           */
    ACC_RAN_UNMAPPED, /* the engine has no such name (or no bundle of that stack)               */
    ACC_RAN_N_FATES
} acc_ran_fate;

typedef struct acc_ran_applied {
    acc_ran_fate fate[ACC_RAN_N_KEYS];
    char value[ACC_RAN_N_KEYS][32]; /* the engine's value (MAPPED, AGREES, KEPT: the mapped name;
                                       UNMAPPED: the ran name), "" for NONE                     */
} acc_ran_applied;

const char *acc_ran_key_name(acc_ran_key k);   /* "attention_kernel", ... */
const char *acc_ran_fate_name(acc_ran_fate f); /* "mapped", ... */

/* The engine's name for a ran value of key k (AK, RD, CKPT): the name, "" for "unstated", NULL
 * when the engine has no such name. */
const char *acc_ran_engine_name(acc_ran_key k, const char *ran_value);

/* The DeepSpeed release in a free-text ran.framework_version ("DeepSpeed 0.6.2 (...)", "torch
 * 2.1, deepspeed 0.19"): the word deepspeed, a space or '@', then digits and dots, into out;
 * 0, or -1 when the text names none. */
int acc_ran_deepspeed_version(const char *text, char *out, size_t n);

/* The bundle (configs/stacks/<name>) a ran.stack that names no bundle stands for: a stack
 * family ("torchtitan", "megatron-deepspeed", "megatron-lm") by the release its
 * ran.framework_version names, and where the family has an eager and a compiled bundle, by the
 * training's execution ("eager" / "compiled", "" = unstated: then its stack when that is one of
 * the two, else the family's default). NULL when the table has no row for it. */
const char *acc_ran_stack_bundle(const char *ran_stack, const char *framework_version, const char *execution,
                                 const char *stated_stack);

/* Whether a stack bundle of exactly this name is shipped (ctx: the caller's). */
typedef int (*acc_stack_exists_fn)(const char *name, const void *ctx);

/* Write into the case's training object (before it is parsed) what ran states and the object
 * does not: case_framework is the case's "framework" (the training object's own "framework",
 * when it has one, wins). out says the fate of every key. 0, or -1 when out of memory. */
int acc_ran_apply(const acc_ran *ran, const char *case_framework, json_t *training, acc_stack_exists_fn exists,
                  const void *ctx, acc_ran_applied *out);

/* ---- counts over cases, for the report ---------------------------------------------------- */
typedef struct acc_ran_counts {
    int n[ACC_RAN_N_KEYS][ACC_RAN_N_FATES];
} acc_ran_counts;
void acc_ran_count(const acc_ran_applied *a, acc_ran_counts *c);

#endif

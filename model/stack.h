/* stack.h — a named software stack (configs/stacks/<name>.json): the bundle of choices a
 * training stack makes (attention kernel, framework, compiled or eager, checkpointing, ...),
 * each value with its source, applied to a training spec under what the user set explicitly.
 * Not here: what those choices cost (model/kernels, model/framework) or finding the file (cli). */
#ifndef SC_STACK_H
#define SC_STACK_H

#include "../base/err.h"
#include "spec.h"

#define STACK_MAX_ROWS 16

/* One bundle value as the file gives it: "key": {"value": "...", "source": "..."}. */
typedef struct stack_row {
    char key[32];
    char value[64];
    char source[512];
} stack_row;

typedef struct stack_bundle {
    char name[64];
    char source[512];   /* what the stack is (its repository, version) */
    char version[64];   /* framework version the values were read at ("" = none given) */
    int n;
    stack_row row[STACK_MAX_ROWS];
} stack_bundle;

/* Load and check a bundle: every key known (the table in stack.c), every value valid for its
 * key and sourced. Errors name the file and the JSON path (exit 2). */
int stack_load(const char *path, stack_bundle *out, sc_err *err) SC_MUST_CHECK;
/* Apply the bundle's values to t, except keys whose SPEC_GIVEN_* bit is set (explicit). */
void stack_apply(const stack_bundle *b, spec_training *t);

#endif

/* plot_data.h — the data `shardcast plot` hands gnuplot: for each kind, the data file's rows
 * (written to `data`) and the script's variables (gnuplot assignments, written to `vars`), and a
 * default title. Not here: reading files (predict/results, traces/read), running gnuplot. */
#ifndef SC_CLI_PLOT_DATA_H
#define SC_CLI_PLOT_DATA_H

#include <stddef.h>
#include <stdio.h>

#include "../predict/results.h"

/* Columns read when present, whatever the kind: they name series and mark OOM. */
extern const unsigned PD_OPTIONAL_COLS;

/* The four CSV kinds, from a loaded sweep CSV: 0 or SC_EINPUT (err names the file and why). */
int pd_scaling(const res_table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err) SC_MUST_CHECK;
int pd_efficiency(const res_table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err) SC_MUST_CHECK;
int pd_memory(const res_table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err) SC_MUST_CHECK;
int pd_breakdown(const res_table *t, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err) SC_MUST_CHECK;
/* A trace's timeline: the first nranks ranks (by rank number), a compute and a comm row each. */
int pd_timeline(const char *path, int nranks, FILE *data, FILE *vars, char *title, size_t tn, sc_err *err)
    SC_MUST_CHECK;

#endif

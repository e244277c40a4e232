/* gnuplot.h — driving gnuplot for `shardcast plot`: the variables file it reads (gnuplot
 * assignments of numbers, quoted strings and arrays of them), where gnuplot and the plots/ scripts
 * are, and one run with its error caught. Not here: what is plotted (cli/plot.c), the scripts
 * themselves (plots/).
 * Text from the input (layout, model and cluster names, file names) reaches gnuplot only as the
 * value of a single-quoted string assignment written by gp_str / gp_elem_str: gnuplot substitutes
 * neither backquotes nor @macros inside single quotes, and the scripts never `eval` a variable or
 * splice one into a command with @, so no input text is ever read as gnuplot code. */
#ifndef SC_CLI_GNUPLOT_H
#define SC_CLI_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

#include "../base/err.h"

/* name='value'; ('' doubles a quote inside a single-quoted string; control characters: ' '). */
void gp_str(FILE *f, const char *name, const char *val);
/* name=value; (%.10g). */
void gp_num(FILE *f, const char *name, double v);
/* array name[n]; (gnuplot has no empty array: n < 1 declares one element, left undefined; the
 * scripts loop over a count they are given, never over |name|). */
void gp_array(FILE *f, const char *name, int n);
/* name[i]='value'; (1-based, quoted as gp_str) and name[i]=value; (%.10g). */
void gp_elem_str(FILE *f, const char *name, int i, const char *val);
void gp_elem_num(FILE *f, const char *name, int i, double v);

/* gnuplot on PATH, into out; 0 if found. */
int gp_find(char *out, size_t n) SC_MUST_CHECK;
/* plots/<kind>.gp: $SHARDCAST_PLOTS, else beside the binary, else ../share/shardcast/plots. */
int gp_find_script(const char *kind, char *out, size_t n, sc_err *err) SC_MUST_CHECK;
/* Run `gnuplot varsfile script`, its output captured; 0 if it exited 0 (its warnings go to stderr),
 * else SC_ERUNTIME with the last line gnuplot printed. */
int gp_run(const char *gp, const char *script, const char *varsfile, sc_err *err) SC_MUST_CHECK;

#endif

/* gnuplot.h — driving gnuplot for `shardcast plot`: the variables file it reads (gnuplot
 * assignments and word lists), where gnuplot and the plots/ scripts are, and one run with its
 * error caught. Not here: what is plotted (cli/plot.c), the scripts themselves (plots/). */
#ifndef SC_CLI_GNUPLOT_H
#define SC_CLI_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

#include "../base/err.h"

/* Copy s with characters that would break a gnuplot string or word list replaced by '_'. */
void gp_clean(const char *s, char *out, size_t n);
/* name='value'; ('' doubles a quote inside a single-quoted string; control characters: ' '). */
void gp_str(FILE *f, const char *name, const char *val);
/* name=value; (%.10g). */
void gp_num(FILE *f, const char *name, double v);
/* A word for a gnuplot word() list: "text" followed by a space. */
void gp_word(FILE *f, const char *s);

/* gnuplot on PATH, into out; 0 if found. */
int gp_find(char *out, size_t n) SC_MUST_CHECK;
/* plots/<kind>.gp: $SHARDCAST_PLOTS, else beside the binary, else ../share/shardcast/plots. */
int gp_find_script(const char *kind, char *out, size_t n, sc_err *err) SC_MUST_CHECK;
/* Run `gnuplot varsfile script`, its output captured; 0 if it exited 0 (its warnings go to stderr),
 * else SC_ERUNTIME with the last line gnuplot printed. */
int gp_run(const char *gp, const char *script, const char *varsfile, sc_err *err) SC_MUST_CHECK;

#endif

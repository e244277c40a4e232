/* gnuplot.c — driving gnuplot for `shardcast plot` (see gnuplot.h). */
#include "gnuplot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/proc.h"
#include "../base/str.h"
#include "common.h"

/* 'value' as a gnuplot single-quoted string: '' for a quote, a space for a control character (a
 * newline would end the assignment). Inside single quotes gnuplot substitutes nothing: no
 * backquotes, no @macros, no backslash escapes. */
static void quoted(FILE *f, const char *val)
{
    fputc('\'', f);
    for (; *val; val++) {
        unsigned char c = (unsigned char)*val;
        if (c == '\'')
            fputs("''", f);
        else
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    fputc('\'', f);
}

void gp_str(FILE *f, const char *name, const char *val)
{
    fprintf(f, "%s=", name);
    quoted(f, val);
    fputs("; ", f);
}

void gp_num(FILE *f, const char *name, double v) { fprintf(f, "%s=%.10g; ", name, v); }

void gp_array(FILE *f, const char *name, int n) { fprintf(f, "\narray %s[%d]; ", name, n > 0 ? n : 1); }

void gp_elem_str(FILE *f, const char *name, int i, const char *val)
{
    fprintf(f, "%s[%d]=", name, i);
    quoted(f, val);
    fputs("; ", f);
}

void gp_elem_num(FILE *f, const char *name, int i, double v) { fprintf(f, "%s[%d]=%.10g; ", name, i, v); }

int gp_find(char *out, size_t n) { return proc_find_on_path("gnuplot", out, n); }

int gp_find_script(const char *kind, char *out, size_t n, sc_err *err)
{
    const char *env = getenv("SHARDCAST_PLOTS");
    if (env && *env) {
        snprintf(out, n, "%s/%s.gp", env, kind);
        if (access(out, R_OK))
            return sc_err_set(err, SC_ERUNTIME, out, "", "cannot read gnuplot script (set by SHARDCAST_PLOTS): %s",
                              strerror(errno));
        return 0;
    }
    char bin[4096];
    proc_self_dir(NULL, bin, sizeof bin);
    snprintf(out, n, "%.4000s/plots/%s.gp", bin, kind);
    if (access(out, R_OK) == 0)
        return 0;
    snprintf(out, n, "%.4000s/../share/shardcast/plots/%s.gp", bin, kind);
    if (access(out, R_OK) == 0)
        return 0;
    return sc_err_set(err, SC_ERUNTIME, "plot", "",
                      "cannot find the gnuplot script %s.gp in %.1000s/plots or %.1000s/../share/shardcast/plots "
                      "(reinstall, or set SHARDCAST_PLOTS=DIR)",
                      kind, bin, bin);
}

/* Run `gnuplot -e vars script`, its output captured; 0 if it exited 0. On failure the last line
 * gnuplot printed (its error) goes into err. Warnings of a successful run are passed on. */
/* gnuplot reads the variables from a file, then the script: no argument grows with the input
 * (one `-e` argument failed past the kernel's 128 KiB limit on a single argument). */
int gp_run(const char *gp, const char *script, const char *varsfile, sc_err *err)
{
    char msg[8192];
    size_t len = 0;
    int status;
    char *const argv[] = {"gnuplot", (char *)varsfile, (char *)script, NULL};
    if (proc_capture(gp, argv, msg, sizeof msg, &len, &status))
        return sc_err_set(err, SC_ERUNTIME, "gnuplot", "", "cannot run it: %s", strerror(errno));
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (ok) {
        for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n"))
            if (*str_trim(line))
                fprintf(stderr, "shardcast plot: gnuplot: %s\n", line);
        return 0;
    }
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
        msg[--len] = '\0';
    char *last = strrchr(msg, '\n');
    last = last ? last + 1 : msg;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !*last)
        return sc_err_set(err, SC_ERUNTIME, gp, "", "cannot run: exec failed");
    return sc_err_set(err, SC_ERUNTIME, script, "", "gnuplot failed: %.200s", *last ? last : "(no message)");
}

/* plot.c — `shardcast plot`: a sweep CSV (scaling, efficiency, memory, breakdown) or a simulator
 * trace (timeline) to a PNG. C validates the input, writes the numbers gnuplot needs to a temporary
 * data file and runs a script from plots/ after a file of variables; the image goes to a unique
 * temporary beside F.png, is checked (IEND) and renamed on success (base/atomic.h). Not here: how a plot looks (plots/<kind>.gp) or predicting anything. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/atomic.h"
#include "../predict/results.h"
#include "commands.h"
#include "common.h"
#include "gnuplot.h"
#include "plot_data.h"
#include "../traces/read.h"
#include "../traces/schema.h"

static const char HELP[] =
    "usage: shardcast plot results.csv --kind scaling|efficiency|memory|breakdown --out F.png\n"
    "                      [--title T] [--size 1000x600]\n"
    "       shardcast plot --kind timeline trace.json --out F.png [--ranks 4]\n\n"
    "Draws a PNG with gnuplot (pngcairo) from a CSV written by 'shardcast sweep' or a Chrome trace\n"
    "written by 'shardcast predict --trace'. The image is written to a temporary file beside F.png,\n"
    "checked to be a whole PNG and renamed, so a failed plot leaves no file behind.\n\n"
    "kinds:\n"
    "  scaling      samples/s and TFLOPS per GPU vs GPUs, one line per layout (log2 GPU axis)\n"
    "  efficiency   weak-scaling efficiency (%) vs GPUs, one line per layout\n"
    "  memory       memory per GPU (GiB) of each layout against the GPU's HBM, each bar's value\n"
    "               above it (up to 48 bars), OOM marked\n"
    "  breakdown    step time split into compute, exposed all-gather / reduce-scatter /\n"
    "               all-reduce, optimizer and idle, one stacked bar per layout and GPU count\n"
    "  timeline     Gantt chart of the compute and communication streams of the first ranks\n\n"
    "options:\n"
    "  --kind K               one of the kinds above (required)\n"
    "  -o, --out FILE         PNG to write (required)\n"
    "  --title T              plot title (default: what, model and cluster from the input)\n"
    "  --size WxH             image size in pixels (default 1000x600)\n"
    "  --ranks N              timeline: ranks to draw, from rank 0 (default 4)\n\n"
    "Scripts are read from <binary dir>/plots, then <binary dir>/../share/shardcast/plots;\n"
    "SHARDCAST_PLOTS=DIR overrides both. Needs gnuplot on PATH (Debian package gnuplot-nox).\n";

/* ---- small output helpers ------------------------------------------------------------------ */

/* Write all of buf to fd (retrying short writes); 0 or -1 with errno. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* ---- the command -------------------------------------------------------------------------- */

static const char *const KINDS[] = {"scaling", "efficiency", "memory", "breakdown", "timeline"};
#define N_PLOT_KINDS 5

static int parse_size(const char *arg, int *w, int *h, sc_err *err)
{
    char *end;
    long a = strtol(arg, &end, 10), b = -1;
    if (end != arg && (*end == 'x' || *end == 'X')) {
        const char *s = end + 1;
        b = strtol(s, &end, 10);
        if (end == s)
            b = -1;
    }
    if (a < 100 || a > 10000 || b < 100 || b > 10000 || *end)
        return sc_err_set(err, SC_EINPUT, "--size", "", "expected WIDTHxHEIGHT in pixels, each 100 to 10000, got \"%s\"", arg);
    *w = (int)a;
    *h = (int)b;
    return 0;
}

/* What `plot` was asked for, from the command line. */
typedef struct {
    const char *kind_arg, *out, *title_arg, *input;
    int width, height, nranks, ranks_given, kind;
} plot_args;

/* GO: the options are read and the command goes on; any other value is the exit status. */
#define PLOT_GO (-1)

/* --ranks N: 1 to 1024 ranks. */
static int parse_ranks(const char *arg, int *nranks, sc_err *err)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (end == arg || *end || v < 1 || v > 1024)
        return sc_err_set(err, SC_EINPUT, "--ranks", "", "expected an integer from 1 to 1024, got \"%s\"", arg);
    *nranks = (int)v;
    return 0;
}

/* The options and the one input file into a; PLOT_GO or the exit status (--help, a usage error). */
static int plot_options(int argc, char **argv, plot_args *a)
{
    static const struct option opts[] = {{"kind", required_argument, 0, 'k'}, {"out", required_argument, 0, 'o'},
                                         {"title", required_argument, 0, 't'}, {"size", required_argument, 0, 's'},
                                         {"ranks", required_argument, 0, 'r'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    sc_err err;
    optind = 1;
    opterr = 0;
    for (;;) {
        int opt = getopt_long(argc, argv, ":ho:", opts, NULL);
        if (opt == -1)
            break;
        switch (opt) {
        case 'h': fputs(HELP, stdout); return 0;
        case 'k': a->kind_arg = optarg; break;
        case 'o': a->out = optarg; break;
        case 't': a->title_arg = optarg; break;
        case 's':
            if (parse_size(optarg, &a->width, &a->height, &err))
                return cli_fail(&err, SC_EINPUT);
            break;
        case 'r':
            if (parse_ranks(optarg, &a->nranks, &err))
                return cli_fail(&err, SC_EINPUT);
            a->ranks_given = 1;
            break;
        default: return cli_getopt_error("plot", opt, argv, opts);
        }
    }
    if (optind < argc)
        a->input = argv[optind++];
    if (optind < argc) {
        char what[200];
        snprintf(what, sizeof what, "unexpected argument '%.150s' (one input file)", argv[optind]);
        return cli_usage_error("plot", what);
    }
    return PLOT_GO;
}

/* The kind, the input, the output and --ranks checked together; PLOT_GO or the exit status. */
static int plot_check(plot_args *a)
{
    sc_err err;
    if (!a->kind_arg) {
        sc_err_set(&err, SC_EINPUT, "--kind", "", "required: scaling, efficiency, memory, breakdown or timeline");
        return cli_fail(&err, SC_EINPUT);
    }
    a->kind = 0;
    while (a->kind < N_PLOT_KINDS && strcmp(a->kind_arg, KINDS[a->kind]))
        a->kind++;
    if (a->kind == N_PLOT_KINDS) {
        sc_err_set(&err, SC_EINPUT, "--kind", "", "expected scaling, efficiency, memory, breakdown or timeline, got \"%s\"",
                   a->kind_arg);
        return cli_fail(&err, SC_EINPUT);
    }
    int timeline = a->kind == 4;
    if (!a->input)
        return cli_usage_error("plot", timeline ? "expected a trace file (from 'shardcast predict --trace')"
                                                : "expected a CSV file (from 'shardcast sweep')");
    if (!a->out) {
        sc_err_set(&err, SC_EINPUT, "--out", "", "required: the PNG file to write");
        return cli_fail(&err, SC_EINPUT);
    }
    { /* PNG only (pngcairo; the file is checked for its IEND): another extension is refused, not
       * written as a PNG under that name */
        const char *dot = strrchr(a->out, '.'), *slash = strrchr(a->out, '/');
        if (!dot || (slash && dot < slash) || strcasecmp(dot, ".png")) {
            sc_err_set(&err, SC_EINPUT, "--out", "", "expected a .png file (plots are PNG only), got \"%.200s\"", a->out);
            return cli_fail(&err, SC_EINPUT);
        }
    }
    if (a->ranks_given && !timeline) {
        sc_err_set(&err, SC_EINPUT, "--ranks", "", "expected only with --kind timeline, got --kind %s", a->kind_arg);
        return cli_fail(&err, SC_EINPUT);
    }
    return PLOT_GO;
}

/* The input's numbers to fd and its gnuplot variables to fv, the title into title. */
static int plot_numbers(const plot_args *a, FILE *fd, FILE *fv, char *title, size_t title_sz, sc_err *err)
{
    if (a->kind == 4)
        return pd_timeline(a->input, a->nranks, fd, fv, title, title_sz, err);
    static const unsigned NEED[4] = {
        RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_SPS) | RES_BIT(RES_TFLOPS),
        RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_EFF),
        RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_MEM) | RES_BIT(RES_HBM) | RES_BIT(RES_FITS),
        RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_COMPUTE) | RES_BIT(RES_AG) | RES_BIT(RES_RS) | RES_BIT(RES_AR) | RES_BIT(RES_OPT) | RES_BIT(RES_IDLE)};
    static int (*const BUILD[4])(const res_table *, FILE *, FILE *, char *, size_t, sc_err *) = {
        pd_scaling, pd_efficiency, pd_memory, pd_breakdown};
    res_table t;
    int rc = res_csv_load(a->input, NEED[a->kind], PD_OPTIONAL_COLS, &t, err);
    if (!rc) {
        rc = BUILD[a->kind](&t, fd, fv, title, title_sz, err);
        res_table_free(&t);
    }
    return rc;
}

/* The data file, the variables file (with the data file's and the temporary image's names first),
 * gnuplot, then the PNG checked (a full disk gives a truncated image and gnuplot still exits 0) and
 * renamed; the scratch files are removed either way. */
static int plot_render(const char *gp, const char *script, const char *out, const char *data, size_t data_len,
                       const char *vars, sc_err *err)
{
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    char datafile[4200] = "", varsfile[4200] = "";
    at_file *img = NULL;
    int dfd = -1, vfd = -1, rc = 0;
    if ((dfd = at_scratch(tmpdir, "shardcast-plot-data", datafile, sizeof datafile, err)) < 0 ||
        (vfd = at_scratch(tmpdir, "shardcast-plot-vars", varsfile, sizeof varsfile, err)) < 0)
        rc = SC_ERUNTIME;
    if (!rc && (rc = at_begin(out, &img, err)) == 0) {
        char *all = NULL;
        size_t all_len = 0;
        FILE *fa = open_memstream(&all, &all_len);
        if (!fa) {
            rc = sc_err_set(err, SC_ERUNTIME, "plot", "", "out of memory");
        } else {
            gp_str(fa, "datafile", datafile);
            gp_str(fa, "outfile", at_tmp_path(img));
            fputs(vars, fa);
            fputc('\n', fa);
            if (fclose(fa) || !all)
                rc = sc_err_set(err, SC_ERUNTIME, "plot", "", "out of memory");
        }
        if (!rc && (write_all(dfd, data, data_len) || write_all(vfd, all, all_len)))
            rc = sc_err_set(err, SC_ERUNTIME, tmpdir, "", "cannot write a temporary file: %s", strerror(errno));
        free(all);
        if (!rc)
            rc = gp_run(gp, script, varsfile, err);
        if (rc)
            at_abort(img);
        else
            rc = at_commit(img, AT_CHECK_PNG, err);
    }
    if (dfd >= 0) {
        close(dfd);
        at_scratch_remove(datafile);
    }
    if (vfd >= 0) {
        close(vfd);
        at_scratch_remove(varsfile);
    }
    return rc;
}

/* gnuplot and the kind's script found, then plot_render; the exit status. */
static int plot_draw(const plot_args *a, const char *data, size_t data_len, const char *vars)
{
    char gp[4096], script[4200];
    sc_err err;
    int rc;
    if (gp_find(gp, sizeof gp)) {
        fprintf(stderr, "shardcast plot: gnuplot: not found on PATH (install the Debian package gnuplot-nox: "
                        "apt-get install gnuplot-nox)\n");
        return 1;
    }
    if ((rc = gp_find_script(KINDS[a->kind], script, sizeof script, &err)))
        return cli_fail(&err, rc);
    if ((rc = plot_render(gp, script, a->out, data, data_len, vars, &err)))
        return cli_fail(&err, rc);
    return 0;
}

int cmd_plot(int argc, char **argv)
{
    plot_args a = {NULL, NULL, NULL, NULL, 1000, 600, 4, 0, 0};
    int st;
    if ((st = plot_options(argc, argv, &a)) != PLOT_GO || (st = plot_check(&a)) != PLOT_GO)
        return st;

    /* input -> data and variables, all validated before anything is written */
    sc_err err;
    char *data = NULL, *vars = NULL, title[512] = "";
    size_t data_len = 0, vars_len = 0;
    FILE *fd = open_memstream(&data, &data_len), *fv = open_memstream(&vars, &vars_len);
    if (!fd || !fv) {
        if (fd)
            fclose(fd);
        free(data);
        fprintf(stderr, "shardcast plot: out of memory\n");
        return 1;
    }
    int rc = plot_numbers(&a, fd, fv, title, sizeof title, &err);
    if (a.title_arg)
        snprintf(title, sizeof title, "%s", a.title_arg);
    gp_str(fv, "plottitle", title);
    fprintf(fv, "width=%d; height=%d; ", a.width, a.height);
    int bad = fclose(fd) | fclose(fv);
    if (!rc && (bad || !data || !vars)) {
        fprintf(stderr, "shardcast plot: out of memory\n");
        free(data);
        free(vars);
        return 1;
    }
    if (rc) {
        free(data);
        free(vars);
        return cli_fail(&err, rc);
    }
    st = plot_draw(&a, data, data_len, vars);
    free(data);
    free(vars);
    if (st)
        return st;
    char safe[2048]; /* the title comes from the input (a trace's note, a CSV's names) or --title:
                        control characters shown as \xNN, not sent to the terminal */
    cli_escape(title, safe, sizeof safe);
    fprintf(stderr, "plot: %s %dx%d -> %s (\"%s\")\n", KINDS[a.kind], a.width, a.height, a.out, safe);
    return 0;
}

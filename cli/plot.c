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

int cmd_plot(int argc, char **argv)
{
    static const struct option opts[] = {{"kind", required_argument, 0, 'k'}, {"out", required_argument, 0, 'o'},
                                         {"title", required_argument, 0, 't'}, {"size", required_argument, 0, 's'},
                                         {"ranks", required_argument, 0, 'r'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *kind_arg = NULL, *out = NULL, *title_arg = NULL, *input = NULL;
    int width = 1000, height = 600, nranks = 4, ranks_given = 0;
    sc_err err;
    optind = 1;
    opterr = 0;
    for (;;) {
        int opt = getopt_long(argc, argv, ":ho:", opts, NULL);
        if (opt == -1)
            break;
        char what[200];
        switch (opt) {
        case 'h': fputs(HELP, stdout); return 0;
        case 'k': kind_arg = optarg; break;
        case 'o': out = optarg; break;
        case 't': title_arg = optarg; break;
        case 's':
            if (parse_size(optarg, &width, &height, &err))
                return cli_fail(&err, SC_EINPUT);
            break;
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 1024) {
                sc_err_set(&err, SC_EINPUT, "--ranks", "", "expected an integer from 1 to 1024, got \"%s\"", optarg);
                return cli_fail(&err, SC_EINPUT);
            }
            nranks = (int)v;
            ranks_given = 1;
            break;
        }
        case ':':
            snprintf(what, sizeof what, "option '%.150s' needs a value", argv[optind - 1]);
            return cli_usage_error("plot", what);
        default:
            snprintf(what, sizeof what, "unknown option '%.150s'", argv[optind - 1]);
            return cli_usage_error("plot", what);
        }
    }
    if (optind < argc)
        input = argv[optind++];
    if (optind < argc) {
        char what[200];
        snprintf(what, sizeof what, "unexpected argument '%.150s' (one input file)", argv[optind]);
        return cli_usage_error("plot", what);
    }
    if (!kind_arg) {
        sc_err_set(&err, SC_EINPUT, "--kind", "", "required: scaling, efficiency, memory, breakdown or timeline");
        return cli_fail(&err, SC_EINPUT);
    }
    int kind = 0;
    while (kind < N_PLOT_KINDS && strcmp(kind_arg, KINDS[kind]))
        kind++;
    if (kind == N_PLOT_KINDS) {
        sc_err_set(&err, SC_EINPUT, "--kind", "", "expected scaling, efficiency, memory, breakdown or timeline, got \"%s\"",
                   kind_arg);
        return cli_fail(&err, SC_EINPUT);
    }
    int timeline = kind == 4;
    if (!input)
        return cli_usage_error("plot", timeline ? "expected a trace file (from 'shardcast predict --trace')"
                                                : "expected a CSV file (from 'shardcast sweep')");
    if (!out) {
        sc_err_set(&err, SC_EINPUT, "--out", "", "required: the PNG file to write");
        return cli_fail(&err, SC_EINPUT);
    }
    { /* PNG only (pngcairo; the file is checked for its IEND): another extension is refused, not
       * written as a PNG under that name */
        const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
        if (!dot || (slash && dot < slash) || strcasecmp(dot, ".png")) {
            sc_err_set(&err, SC_EINPUT, "--out", "", "expected a .png file (plots are PNG only), got \"%.200s\"", out);
            return cli_fail(&err, SC_EINPUT);
        }
    }
    if (ranks_given && !timeline) {
        sc_err_set(&err, SC_EINPUT, "--ranks", "", "expected only with --kind timeline, got --kind %s", kind_arg);
        return cli_fail(&err, SC_EINPUT);
    }

    /* input -> data and variables, all validated before anything is written */
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
    int rc;
    if (timeline) {
        rc = pd_timeline(input, nranks, fd, fv, title, sizeof title, &err);
    } else {
        static const unsigned NEED[4] = {
            RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_SPS) | RES_BIT(RES_TFLOPS),
            RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_EFF),
            RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_MEM) | RES_BIT(RES_HBM) | RES_BIT(RES_FITS),
            RES_BIT(RES_LAYOUT) | RES_BIT(RES_GPUS) | RES_BIT(RES_COMPUTE) | RES_BIT(RES_AG) | RES_BIT(RES_RS) | RES_BIT(RES_AR) | RES_BIT(RES_OPT) | RES_BIT(RES_IDLE)};
        static int (*const BUILD[4])(const res_table *, FILE *, FILE *, char *, size_t, sc_err *) = {
            pd_scaling, pd_efficiency, pd_memory, pd_breakdown};
        res_table t;
        rc = res_csv_load(input, NEED[kind], PD_OPTIONAL_COLS, &t, &err);
        if (!rc) {
            rc = BUILD[kind](&t, fd, fv, title, sizeof title, &err);
            res_table_free(&t);
        }
    }
    if (title_arg)
        snprintf(title, sizeof title, "%s", title_arg);
    gp_str(fv, "plottitle", title);
    fprintf(fv, "width=%d; height=%d; ", width, height);
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

    /* gnuplot and the script */
    char gp[4096], script[4200];
    if (gp_find(gp, sizeof gp)) {
        free(data);
        free(vars);
        fprintf(stderr, "shardcast plot: gnuplot: not found on PATH (install the Debian package gnuplot-nox: "
                        "apt-get install gnuplot-nox)\n");
        return 1;
    }
    if ((rc = gp_find_script(KINDS[kind], script, sizeof script, &err))) {
        free(data);
        free(vars);
        return cli_fail(&err, rc);
    }

    /* scratch data and variables files, a temporary output beside the target, gnuplot, then the
     * PNG checked (a full disk gives a truncated image and gnuplot still exits 0) and renamed */
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    char datafile[4200] = "", varsfile[4200] = "";
    at_file *img = NULL;
    int dfd = -1, vfd = -1;
    rc = 0;
    if ((dfd = at_scratch(tmpdir, "shardcast-plot-data", datafile, sizeof datafile, &err)) < 0 ||
        (vfd = at_scratch(tmpdir, "shardcast-plot-vars", varsfile, sizeof varsfile, &err)) < 0)
        rc = SC_ERUNTIME;
    if (!rc && (rc = at_begin(out, &img, &err)) == 0) {
        char *all = NULL;
        size_t all_len = 0;
        FILE *fa = open_memstream(&all, &all_len);
        if (!fa) {
            rc = sc_err_set(&err, SC_ERUNTIME, "plot", "", "out of memory");
        } else {
            gp_str(fa, "datafile", datafile);
            gp_str(fa, "outfile", at_tmp_path(img));
            fputs(vars, fa);
            fputc('\n', fa);
            if (fclose(fa) || !all)
                rc = sc_err_set(&err, SC_ERUNTIME, "plot", "", "out of memory");
        }
        if (!rc && (write_all(dfd, data, data_len) || write_all(vfd, all, all_len)))
            rc = sc_err_set(&err, SC_ERUNTIME, tmpdir, "", "cannot write a temporary file: %s", strerror(errno));
        free(all);
        if (!rc)
            rc = gp_run(gp, script, varsfile, &err);
        if (rc)
            at_abort(img);
        else
            rc = at_commit(img, AT_CHECK_PNG, &err);
    }
    free(data);
    if (dfd >= 0) {
        close(dfd);
        at_scratch_remove(datafile);
    }
    if (vfd >= 0) {
        close(vfd);
        at_scratch_remove(varsfile);
    }
    free(vars);
    if (rc)
        return cli_fail(&err, rc);
    char safe[2048]; /* the title comes from the input (a trace's note, a CSV's names) or --title:
                        control characters shown as \xNN, not sent to the terminal */
    cli_escape(title, safe, sizeof safe);
    fprintf(stderr, "plot: %s %dx%d -> %s (\"%s\")\n", KINDS[kind], width, height, out, safe);
    return 0;
}

/* main.c — `shardcast <command> [options]`: dispatch to one file per subcommand.
 * Not here: option parsing of any one command (each command owns its own). */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

#include "../base/atomic.h"
#include "../base/str.h"

#include "commands.h"
#include "common.h"

#ifndef SHARDCAST_VERSION
#define SHARDCAST_VERSION "0.0.0-dev"
#endif

typedef struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cmd;

static const cmd CMDS[] = {
    {"describe", cmd_describe, "parameters, FLOPs and activation memory of a model, per layer"},
    {"memory", cmd_memory, "memory per GPU of each layout: fits, or short by how much"},
    {"predict", cmd_predict, "step time, samples/s, TFLOPS/GPU of layouts on a cluster"},
    {"sweep", cmd_sweep, "predict over a grid of nodes x layouts x micro-batch -> CSV"},
    {"plan", cmd_plan, "recommend a layout and partition size for a cluster and model"},
    {"plot", cmd_plot, "PNG plots of a sweep CSV or a simulator trace (gnuplot)"},
    {"calibrate", cmd_calibrate, "run microbenchmarks and fit the cost model"},
    {"validate", cmd_validate, "compare predictions with measured steps"},
    {"accuracy", cmd_accuracy, "predict published training measurements (validation/): errors per case and source"},
    {"list", cmd_list, "list the shipped clusters, models, scenarios and calibrations"},
};
#define N_CMDS (int)(sizeof CMDS / sizeof CMDS[0])

static void usage(FILE *f)
{
    fprintf(f, "shardcast %s — forecast sharded data-parallel training before renting the cluster\n\n"
               "usage: shardcast <command> [options]\n\ncommands:\n",
            SHARDCAST_VERSION);
    for (int i = 0; i < N_CMDS; i++)
        fprintf(f, "  %-10s %s\n", CMDS[i].name, CMDS[i].summary);
    fprintf(f, "\n'shardcast <command> --help' (or 'shardcast help <command>') shows a command's options.\n"
               "Example: shardcast memory --cluster p4d.24xlarge --nodes 16 --model gpt3-175b "
               "--layout zero3 --layout mics:p=16\n");
}

/* c is no command: said with the commands one typo away ("predcit": predict), or as an unknown
 * option when it starts with '-'; returns 2. */
static int unknown_command(const char *c)
{
    const char *names[N_CMDS + 1];
    for (int i = 0; i < N_CMDS; i++)
        names[i] = CMDS[i].name;
    names[N_CMDS] = NULL;
    char what[300], near[120];
    int nn = c[0] == '-' ? 0 : str_nearest_all(c, names, near, sizeof near);
    snprintf(what, sizeof what, c[0] == '-' ? "unknown option '%.100s'" : "unknown command '%.100s'%s%s%s", c,
             nn ? "; did you mean " : "", nn ? near : "", nn ? "?" : "");
    return cli_usage_error(NULL, what);
}

int main(int argc, char **argv)
{
    /* GSL reports errors as return values (each call site checks them) instead of aborting the
     * process; an interrupted run removes its temporary files. */
    gsl_set_error_handler_off();
    at_install_signal_cleanup();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "help") && argc >= 3) {
        /* "shardcast help predict" / "help calibrate anchor": that command's --help (what
         * follows the subcommand is not read); an unknown one as "shardcast predcit" is said */
        for (int i = 0; i < N_CMDS; i++)
            if (!strcmp(argv[2], CMDS[i].name)) {
                char *av[] = {argv[2], argc >= 4 ? argv[3] : "--help", "--help", NULL};
                return CMDS[i].run(argc >= 4 ? 3 : 2, av);
            }
        return unknown_command(argv[2]);
    }
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(c, "--version") || !strcmp(c, "-V")) {
        printf("shardcast %s\n", SHARDCAST_VERSION);
        return 0;
    }
    for (int i = 0; i < N_CMDS; i++)
        if (!strcmp(c, CMDS[i].name))
            return CMDS[i].run(argc - 1, argv + 1);
    return unknown_command(c);
}

/* commands.h — entry points of the subcommands, one file each under cli/. Each takes the
 * arguments after `shardcast` (argv[0] is the command name) and returns the exit status:
 * 0 ok, 1 runtime failure, 2 bad input. */
#ifndef SC_CLI_COMMANDS_H
#define SC_CLI_COMMANDS_H

#include "../base/err.h"

int cmd_describe(int argc, char **argv) SC_MUST_CHECK;
int cmd_memory(int argc, char **argv) SC_MUST_CHECK;
int cmd_predict(int argc, char **argv) SC_MUST_CHECK;
int cmd_sweep(int argc, char **argv) SC_MUST_CHECK;
int cmd_plan(int argc, char **argv) SC_MUST_CHECK;
int cmd_plot(int argc, char **argv) SC_MUST_CHECK;
int cmd_calibrate(int argc, char **argv) SC_MUST_CHECK;
/* `shardcast calibrate fit` (cli/calfit.c) and `shardcast calibrate import nccl-tests`
 * (cli/calimport.c), dispatched by cmd_calibrate: argv[0] is "fit" / "import". */
int cmd_calibrate_fit(int argc, char **argv) SC_MUST_CHECK;
int cmd_calibrate_import(int argc, char **argv) SC_MUST_CHECK;
/* `shardcast calibrate anchor` (cli/calanchor.c), dispatched the same way. */
int cmd_calibrate_anchor(int argc, char **argv) SC_MUST_CHECK;
int cmd_validate(int argc, char **argv) SC_MUST_CHECK;
int cmd_list(int argc, char **argv) SC_MUST_CHECK;
int cmd_accuracy(int argc, char **argv) SC_MUST_CHECK;

/* Run getopt_long over argv with the shared options plus `extra`; unknown options give the
 * one-line error. Returns 0 to go on, -1 when --help was printed (the command exits 0:
 * cli_args maps it), or the exit status of an error (2). Calls
 * `own(opt, optarg, ctx)` for options in `extra`, which returns 0 or an exit status. */
struct cli_setup;
struct option;
int cli_getopt(int argc, char **argv, const char *cmd, const char *help, const struct option *extra, int n_extra,
               struct cli_setup *s, int (*own)(int opt, const char *arg, void *ctx), void *ctx) SC_MUST_CHECK;
/* cli_getopt, then exactly `positional` arguments after the options (`what` names them in the
 * usage error). Returns 1 when the command must stop, with *status its exit status (0 after
 * --help); 0 to go on. */
int cli_args(int argc, char **argv, const char *cmd, const char *help, const struct option *extra, int n_extra,
             struct cli_setup *s, int (*own)(int opt, const char *arg, void *ctx), void *ctx, int positional,
             const char *what, int *status) SC_MUST_CHECK;

#endif

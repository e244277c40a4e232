/* fuzz_cli.c — argument vectors: the input split at newlines into argv, through the options every
 * command shares (cluster, model, nodes lists, layouts, scenario, training, ds-config, numbers)
 * and the simulator's (--jitter, --straggler, --seed), then loading and checking all they name,
 * as `predict` does before it evaluates anything. */
#include "fuzz_common.h"

#include "../../cli/commands.h"
#include "../../cli/eval.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    stdout = fopen("/dev/null", "w");
    stderr = stdout;
    return 0;
}

static int own(int opt, const char *arg, void *ctx)
{
    sc_err err;
    int rc = cli_sim_opt(ctx, opt, arg, &err);
    return rc < 0 ? 2 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = fz_str(data, size);
    if (!s)
        return 0;
    char *argv[65];
    int argc = 0;
    argv[argc++] = (char *)"predict";
    for (char *p = s, *nl; argc < 64; p = nl + 1) {
        nl = strchr(p, '\n');
        argv[argc++] = p;
        if (!nl)
            break;
        *nl = '\0';
    }
    argv[argc] = NULL;
    static const struct option extra[] = {CLI_SIM_LONGOPTS};
    cli_setup st;
    exec_opts so;
    memset(&so, 0, sizeof so);
    cli_setup_init(&st, "shardcast");
    snprintf(st.config_roots[0], sizeof st.config_roots[0], "%s", fz_configs());
    int rc = cli_getopt(argc, argv, "predict", "", extra, 3, &st, own, &so);
    if (rc == 0) {
        sc_err err;
        FZ_EXPECT(cli_setup_load(&st, NEED_CLUSTER | NEED_MODEL | NEED_NODES | NEED_LAYOUTS, &err));
    }
    free(s);
    return 0;
}

/* fuzz_csv.c — the sweep CSV reader of `shardcast plot` (RFC 4180 quotes, header, numeric rules
 * per column) and the series it builds for each kind; the first byte picks the kind. Runs the real
 * `cmd_plot` with gnuplot off the PATH, so it stops before any output is written. */
#include "fuzz_common.h"

#include "../../cli/commands.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("PATH", "/nonexistent-fuzz", 1); /* no gnuplot: the command ends after reading */
    stdout = fopen("/dev/null", "w");      /* the command's messages, not libFuzzer's */
    stderr = stdout;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const KINDS[] = {"scaling", "efficiency", "memory", "breakdown"};
    if (size < 1)
        return 0;
    const char *path = fz_file(data + 1, size - 1);
    char a0[] = "plot", a2[] = "--kind", a4[] = "--out", a5[] = "/nonexistent-fuzz/out.png", a1[64], a3[16];
    snprintf(a1, sizeof a1, "%s", path);
    snprintf(a3, sizeof a3, "%s", KINDS[data[0] % 4]);
    char *argv[] = {a0, a1, a2, a3, a4, a5, NULL};
    int rc = cmd_plot(6, argv);
    if (rc != 1 && rc != 2) /* 2: bad input; 1: gnuplot not found (the input was read whole) */
        abort();
    return 0;
}

/* fuzz_trace.c — the Chrome trace reader of `shardcast plot --kind timeline` (events, lanes,
 * rank names); the first byte picks --ranks. Runs the real `cmd_plot` with gnuplot off the PATH. */
#include "fuzz_common.h"

#include "../../cli/commands.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    setenv("PATH", "/nonexistent-fuzz", 1);
    stdout = fopen("/dev/null", "w");
    stderr = stdout;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = fz_file(data + 1, size - 1);
    char a0[] = "plot", a2[] = "--kind", a3[] = "timeline", a4[] = "--out", a5[] = "/nonexistent-fuzz/t.png",
         a6[] = "--ranks", a1[64], a7[8];
    snprintf(a1, sizeof a1, "%s", path);
    snprintf(a7, sizeof a7, "%d", 1 + data[0] % 16);
    char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, NULL};
    int rc = cmd_plot(8, argv);
    if (rc != 1 && rc != 2)
        abort();
    return 0;
}

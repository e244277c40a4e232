/* stubs.c — subcommands whose engines are not built yet: they answer --help and otherwise say
 * plainly that they are not implemented, exiting 1. Each moves to its own file when built. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static int not_yet(int argc, char **argv, const char *what)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: shardcast %s ...\n\n%s\n(not yet implemented in this version)\n", argv[0], what);
        return 0;
    }
    fprintf(stderr, "shardcast %s: not yet implemented in this version (see 'shardcast --help' for what is)\n",
            argv[0]);
    return 1;
}

int cmd_calibrate(int argc, char **argv) { return not_yet(argc, argv, "Run microbenchmarks and fit the cost model."); }

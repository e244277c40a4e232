/* list.c — `shardcast list [clusters|models|scenarios|calibrations]`: the shipped configs, with
 * each file's name, so users know what --cluster/--model accept. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common.h"

static const char HELP[] = "usage: shardcast list [clusters|models|scenarios|calibrations|training]\n\n"
                           "Lists shipped configs ($SHARDCAST_CONFIGS first, then configs/ beside the binary).\n";

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int list_kind(const cli_setup *s, const char *kind)
{
    const char *env = getenv("SHARDCAST_CONFIGS");
    const char *roots[3] = {env && *env ? env : NULL, s->config_roots[0], s->config_roots[1]};
    for (int r = 0; r < 3; r++) {
        if (!roots[r])
            continue;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", roots[r], kind);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        char *names[512];
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)) && n < 512) {
            size_t l = strlen(e->d_name);
            if (l > 5 && !strcmp(e->d_name + l - 5, ".json"))
                names[n++] = strndup(e->d_name, l - 5);
        }
        closedir(d);
        qsort(names, (size_t)n, sizeof names[0], cmp);
        printf("%s (%s):\n", kind, dir);
        for (int i = 0; i < n; i++) {
            printf("  %s\n", names[i]);
            free(names[i]);
        }
        return 0;
    }
    printf("%s: none found\n", kind);
    return 0;
}

int cmd_list(int argc, char **argv)
{
    cli_setup s;
    cli_setup_init(&s, argv[0]);
    static const char *const kinds[] = {"clusters", "models", "scenarios", "calibrations", "training"};
    if (argc > 2)
        return cli_usage_error("list", "expected at most one kind");
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(HELP, stdout);
        return 0;
    }
    for (int i = 0; i < 5; i++)
        if (argc == 1 || !strcmp(argv[1], kinds[i]))
            list_kind(&s, kinds[i]);
        else if (argc == 2 && i == 4) {
            int known = 0;
            for (int k = 0; k < 5; k++)
                known |= !strcmp(argv[1], kinds[k]);
            if (!known)
                return cli_usage_error("list", "expected clusters, models, scenarios, calibrations or training");
        }
    return 0;
}

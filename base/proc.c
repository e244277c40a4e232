/* proc.c — child processes (see proc.h). */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int proc_find_on_path(const char *name, char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        int k = snprintf(out, n, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
        struct stat st;
        if (k > 0 && (size_t)k < n && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 0;
        path += len + (colon ? 1 : 0);
    }
    return -1;
}

void proc_self_dir(const char *argv0, char *out, size_t n)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0)
        exe[len] = '\0';
    else
        snprintf(exe, sizeof exe, "%s", argv0 ? argv0 : ".");
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(exe, sizeof exe, ".");
    snprintf(out, n, "%s", exe);
}

int proc_run(char *const *argv)
{
    pid_t pid = fork();
    if (pid < 0)
        return 127;
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 127;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int proc_capture(const char *path, char *const *argv, char *msg, size_t cap, size_t *len_out, int *status)
{
    int pfd[2];
    if (pipe(pfd))
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0)
            dup2(in, 0);
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execv(path, argv);
        _exit(127);
    }
    close(pfd[1]);
    size_t len = 0;
    for (;;) {
        char chunk[4096];
        ssize_t got = read(pfd[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t g = (size_t)got;
        if (len + g >= cap) { /* keep the tail */
            size_t drop = len + g - (cap - 1);
            if (drop > len)
                drop = len;
            memmove(msg, msg + drop, len - drop);
            len -= drop;
            if (g > cap - 1 - len)
                g = cap - 1 - len;
        }
        memcpy(msg + len, chunk + (size_t)got - g, g);
        len += g;
    }
    close(pfd[0]);
    msg[len] = '\0';
    *len_out = len;
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

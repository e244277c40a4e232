/* proc.h — child processes, once: the first executable of a name on PATH, the running binary's
 * own directory, running a program to
 * completion, and running one with its output captured (gnuplot's error is its last line). Used
 * by `shardcast plot` (gnuplot) and `shardcast calibrate run` (the harness, mpirun).
 * Not here: what the programs are or how their output is read. */
#ifndef SC_BASE_PROC_H
#define SC_BASE_PROC_H

#include <stddef.h>

#include "err.h"

/* The first regular, executable file `name` in a directory of $PATH (unset or empty:
 * /usr/local/bin:/usr/bin:/bin; an empty entry is the current directory), into out; 0 if found,
 * -1 if not (or the path does not fit n). */
int proc_find_on_path(const char *name, char *out, size_t n) SC_MUST_CHECK;

/* The directory holding the running binary, into out: /proc/self/exe's, else argv0's (NULL: none),
 * else ".". Where shardcast and the harness look for configs/ and their companion programs. */
void proc_self_dir(const char *argv0, char *out, size_t n);

/* Run argv (argv[0] a path) to completion, sharing stdin/stdout/stderr; its exit status, 128 +
 * the signal that ended it, or 127 if it could not start. */
int proc_run(char *const *argv) SC_MUST_CHECK;

/* Run the program at `path` with arguments argv (argv[0] its name), stdin from /dev/null and stdout + stderr captured into out (the
 * last n - 1 bytes when there are more; NUL-terminated). *status receives waitpid's status.
 * 0 ok; -1 when no pipe or process could be made or the process was lost (errno says why). */
int proc_capture(const char *path, char *const *argv, char *out, size_t n, size_t *len, int *status) SC_MUST_CHECK;

#endif

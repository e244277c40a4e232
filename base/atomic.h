/* atomic.h — whole-or-absent file output, the one way shardcast writes a file: a unique temporary
 * file beside the target (mkstemp: O_CREAT|O_EXCL, so a link there is never followed), every write
 * and close checked, fsync of the file and of its directory, then rename(); any error removes the
 * temporary. Also temporary scratch files for external programs, removal of what a killed run left
 * behind, and a check of external programs' outputs (a PNG must end with its IEND chunk).
 * Not here: what is written (formats belong to their writers). */
#ifndef SC_BASE_ATOMIC_H
#define SC_BASE_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Write len bytes to path, whole or not at all. Errors name path (SC_ERUNTIME). */
int at_write(const char *path, const void *data, size_t len, sc_err *err) SC_MUST_CHECK;

/* Streaming: at_begin creates the temporary file and gives a stream into it; at_commit flushes,
 * checks, fsyncs and renames it over path; at_abort removes it. Exactly one of at_commit/at_abort
 * is called per at_begin (at_commit frees the handle whether or not it succeeds). */
typedef struct at_file at_file;
int at_begin(const char *path, at_file **out, sc_err *err) SC_MUST_CHECK;
FILE *at_stream(at_file *f);
/* The temporary file's name, for an external program that writes the output itself (it must open
 * it without O_APPEND; the name is unique to this run). */
const char *at_tmp_path(const at_file *f);
/* What at_commit checks before the rename. */
enum { AT_CHECK_NONE = 0, AT_CHECK_NONEMPTY = 1, AT_CHECK_PNG = 2 };
int at_commit(at_file *f, int check, sc_err *err) SC_MUST_CHECK;
void at_abort(at_file *f);

/* Check that the file at path is a whole PNG (signature first, IEND chunk last). what names it. */
int at_check_png_fd(int fd, const char *what, sc_err *err) SC_MUST_CHECK;

/* A scratch file (not an output) in dir, named <stem>.sc<pid>.XXXXXX: returns an open fd and its
 * name in path_out; at_scratch_remove unlinks it. Removed as well on SIGINT/SIGTERM/SIGHUP and by
 * the next run after a kill -9 (see at_sweep_stale). */
int at_scratch(const char *dir, const char *stem, char *path_out, size_t n, sc_err *err) SC_MUST_CHECK;
void at_scratch_remove(const char *path);

/* Remove files in dir named <stem>.sc<pid>.XXXXXX whose process no longer exists (what a killed
 * run left behind). Returns the number removed. */
int at_sweep_stale(const char *dir, const char *stem);

/* Remove this process's temporary files when SIGINT, SIGTERM or SIGHUP arrive, then die of the
 * signal as before. Call once from main. */
void at_install_signal_cleanup(void);

#endif

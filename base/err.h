/* err.h — the error value every fallible shardcast function fills (modelled on Jansson's
 * json_error_t): which file, which JSON path (or option), and what was expected vs found.
 * Not a logging facility: nothing here prints; the CLI decides how to show it. */
#ifndef SC_ERR_H
#define SC_ERR_H

/* Return codes: 0 ok; SC_EINPUT for bad input (CLI exits 2); SC_ERUNTIME otherwise (exit 1). */
enum { SC_OK = 0, SC_ERUNTIME = -1, SC_EINPUT = -2 };

/* On a function that returns an error code: the compiler warns when a caller drops it. */
#if defined(__GNUC__) || defined(__clang__)
#define SC_MUST_CHECK __attribute__((warn_unused_result))
#else
#define SC_MUST_CHECK
#endif

/* text's size: a layout parse error lists every layout kind and fsdp2's spelling (model/spec_layout.c
 * layout_hint); a buffer that keeps a copy of text is sized from it, not from a number of its own. */
enum { SC_ERR_TEXT = 512 };

typedef struct sc_err {
    char source[256]; /* file name, option name ("--nodes") or "" */
    char path[128];   /* JSON path ("$.node.nic.bandwidth_Gbps") or "" */
    char text[SC_ERR_TEXT]; /* what was expected and what was found */
} sc_err;

/* Fill err (if non-NULL) and return code; text is printf-style. */
int sc_err_set(sc_err *err, int code, const char *source, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A file that cannot be read, in one wording everywhere (polish15): "PATH: cannot read: WHY",
 * the path as the source (WHY: strerror's words, "is a directory, expected a file", "the file is
 * empty", ...). Returns SC_EINPUT. */
int sc_err_unreadable(sc_err *err, const char *path, const char *why);

/* A file with nothing in it (str_blank), said as such: "PATH: the file is empty, expected WHAT"
 * (polish15: an empty JSON file gave Jansson's "'[' or '{' expected near end of file", an empty
 * nccl-tests log "which collective?"). Returns SC_EINPUT. */
int sc_err_empty(sc_err *err, const char *path, const char *what);

/* Clear err to empty strings. */
void sc_err_clear(sc_err *err);

/* "source: path: text" (parts that are empty are left out) into buf. */
const char *sc_err_str(const sc_err *err, char *buf, unsigned long buflen);

#endif

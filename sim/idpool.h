/* idpool.h — a set of free small integer ids that hands out the lowest one first (a bitmap, one
 * bit per id, and a hint below which no word has a free bit). The simulator's flows are created
 * a collective at a time and end in about that order, so giving each new flow the lowest free
 * slot keeps a collective's records in ascending, mostly adjacent lines, in the order its events
 * will touch them (a stack of freed ids hands them out in whatever order earlier collectives
 * ended). Which id a flow gets is a handle only: no result depends on it. A second bitmap marks
 * the words with a free bit, so finding the lowest costs a few word reads however sparse they are.
 * Not here: what the ids name (the owner's arrays), growing the owner's arrays. */
#ifndef SC_IDPOOL_H
#define SC_IDPOOL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct idp_pool {
    uint64_t *w; /* bit i of w[i / 64]: id i is free                                      */
    uint64_t *s; /* bit k of s[k / 64]: w[k] has a free bit (so a search skips full words
                    64 at a time: a queue that reuses its low ids while high ones stay free
                    would otherwise rescan the same empty words at every take)            */
    int32_t nw;  /* words of w                                                            */
    int32_t lo;  /* no word below lo has a free bit                                       */
    int32_t n;   /* free ids                                                              */
} idp_pool;

/* Room for ids [0, 64 nw) (new ids are not free; the old bits kept). 0, or -1 when out of
 * memory (the pool unchanged). */
static inline int idp_reserve(idp_pool *p, int32_t nw)
{
    if (nw <= p->nw)
        return 0;
    int32_t ns = (nw + 63) / 64, os = (p->nw + 63) / 64;
    uint64_t *w = realloc(p->w, (size_t)nw * sizeof *w);
    if (!w)
        return -1;
    p->w = w;
    uint64_t *s = realloc(p->s, (size_t)ns * sizeof *s);
    if (!s)
        return -1; /* w larger, nw unchanged: still consistent */
    p->s = s;
    memset(w + p->nw, 0, (size_t)(nw - p->nw) * sizeof *w);
    memset(s + os, 0, (size_t)(ns - os) * sizeof *s);
    p->nw = nw;
    return 0;
}

static inline void idp_free_all(idp_pool *p)
{
    free(p->w);
    free(p->s);
    *p = (idp_pool){0};
}

/* Id `id` (below 64 nw, not free) becomes free. */
static inline void idp_put(idp_pool *p, int32_t id)
{
    int32_t k = id >> 6;
    p->w[k] |= UINT64_C(1) << (id & 63);
    p->s[k >> 6] |= UINT64_C(1) << (k & 63);
    if (k < p->lo)
        p->lo = k;
    p->n++;
}

/* The lowest free id, -1 when none (nothing changes but the hint). */
static inline int32_t idp_peek(idp_pool *p)
{
    if (p->n == 0)
        return -1;
    if (!p->w[p->lo]) { /* the first word with a free bit above lo (one exists: n > 0) */
        int32_t j = p->lo >> 6;
        uint64_t m = p->s[j] & (~UINT64_C(0) << (p->lo & 63));
        while (!m)
            m = p->s[++j];
        p->lo = (j << 6) + __builtin_ctzll(m);
    }
    return (p->lo << 6) + __builtin_ctzll(p->w[p->lo]);
}

/* The lowest free id, taken; -1 when none. */
static inline int32_t idp_take(idp_pool *p)
{
    int32_t id = idp_peek(p);
    if (id >= 0) {
        uint64_t *w = &p->w[p->lo];
        *w &= *w - 1; /* its lowest set bit is id's */
        if (!*w)
            p->s[p->lo >> 6] &= ~(UINT64_C(1) << (p->lo & 63));
        p->n--;
    }
    return id;
}

#endif

/* memplan.c - offset planners for buffers with lifetimes in one arena.
 *
 * Every strategy is the same decoder fed with a different order of buffers: each buffer in turn
 * gets an offset among the already placed buffers whose lifetimes overlap its own, either in the
 * smallest gap that fits (TFLite GPU greedy-by-size's rule) or in the lowest gap that fits, and
 * on top of those buffers when no gap fits. The placed buffers overlapping a lifetime come from
 * per-step lists (short-lived buffers, and starts) and a segment tree over blocks of steps
 * (long-lived buffers), so one decode costs O(n log n) plus the number of overlapping pairs
 * visited. `best` keeps the smallest of several orders and gap rules, tries lowest offset first,
 * moves the buffer that sets the arena's top to the front of the order, and searches small
 * instances exhaustively. Rationale and citations: docs/memory.md.
 */
#include "memplan.h"

#include <string.h>

G_DEFINE_QUARK(fp-memplan-error-quark, fp_memplan_error);

static const char *const strategy_names[] = {
#define X(id, name) name,
    FP_MEMPLAN_STRATEGIES(X)
#undef X
};

const char *fp_memplan_strategy_name(fp_memplan_strategy s)
{
    g_assert((unsigned)s < FP_MEMPLAN_COUNT);
    return strategy_names[s];
}

bool fp_memplan_strategy_from_name(const char *name, fp_memplan_strategy *out)
{
    for (unsigned i = 0; i < FP_MEMPLAN_COUNT; i++)
        if (g_strcmp0(name, strategy_names[i]) == 0) {
            *out = (fp_memplan_strategy)i;
            return true;
        }
    return false;
}

bool fp_memplan_align(uint64_t size, uint64_t align, uint64_t *out)
{
    if (align <= 1) {
        *out = size;
        return true;
    }
    uint64_t r = size % align;
    if (r == 0) {
        *out = size;
        return true;
    }
    return g_uint64_checked_add(out, size, align - r);
}

/* ---------------------------------------------------------------- the prepared problem */

/* The nonzero buffers, sizes rounded, steps compressed to 0..T-1 when they are sparse. */
typedef struct {
    size_t n;
    uint32_t *orig; /* index in the caller's array */
    uint64_t *sz;
    uint32_t *first, *last;
    uint32_t T;
    uint64_t total; /* sum of sizes (no overflow: checked) */
    uint64_t load;
    uint32_t peak; /* compressed step of the peak */
} prob;

static void prob_clear(prob *p)
{
    g_free(p->orig);
    g_free(p->sz);
    g_free(p->first);
    g_free(p->last);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Index of x in the sorted array v[0..n) (x is present). */
static uint32_t rank_of(const uint32_t *v, size_t n, uint32_t x)
{
    size_t lo = 0, hi = n;
    while (lo + 1 < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* Renumbers steps 0..T-1 keeping their order, when the step range is much larger than n. */
static void prob_compress(prob *p, uint32_t max_step)
{
    if ((uint64_t)max_step < 2 * (uint64_t)p->n + 16) {
        p->T = max_step + 1;
        return;
    }
    uint32_t *v = g_new(uint32_t, 2 * p->n);
    for (size_t i = 0; i < p->n; i++) {
        v[2 * i] = p->first[i];
        v[2 * i + 1] = p->last[i];
    }
    qsort(v, 2 * p->n, sizeof *v, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < 2 * p->n; i++)
        if (u == 0 || v[u - 1] != v[i])
            v[u++] = v[i];
    for (size_t i = 0; i < p->n; i++) {
        p->first[i] = rank_of(v, u, p->first[i]);
        p->last[i] = rank_of(v, u, p->last[i]);
    }
    p->T = (uint32_t)u;
    g_free(v);
}

/* LOAD over the prepared buffers: difference array over steps. */
static void prob_load(prob *p)
{
    uint64_t *delta_in = g_new0(uint64_t, p->T + 1), *delta_out = g_new0(uint64_t, p->T + 1);
    for (size_t i = 0; i < p->n; i++) {
        delta_in[p->first[i]] += p->sz[i];
        delta_out[p->last[i] + 1] += p->sz[i];
    }
    uint64_t cur = 0;
    p->load = 0;
    p->peak = 0;
    for (uint32_t t = 0; t < p->T; t++) {
        cur = cur + delta_in[t] - delta_out[t]; /* never exceeds total, never below 0 */
        if (cur > p->load) {
            p->load = cur;
            p->peak = t;
        }
    }
    g_free(delta_in);
    g_free(delta_out);
}

static void set_overflow(GError **error, size_t i, uint64_t size)
{
    g_set_error(error, FP_MEMPLAN_ERROR, FP_MEMPLAN_ERROR_OVERFLOW,
                "buffer sizes overflow 64 bits (buffer %zu: %" G_GUINT64_FORMAT " bytes)", i, size);
}

bool fp_memplan_naive_add(fp_memplan_naive *nv, uint64_t size, uint64_t align, uint64_t *offset, GError **error)
{
    size_t i = nv->index++;
    uint64_t s, at = nv->total;
    if (offset)
        *offset = 0;
    if (!size)
        return true;
    if (!fp_memplan_align(size, align, &s) || !g_uint64_checked_add(&nv->total, nv->total, s)) {
        set_overflow(error, i, size);
        return false;
    }
    if (offset)
        *offset = at;
    return true;
}

/* Fills p from the caller's nonzero buffers (sizes rounded, steps compressed when sparse) and
 * computes LOAD; false with an error when the sizes overflow 64 bits. The peak step maps back to
 * the caller's steps through a buffer starting there (see peak_of). */
static bool prob_init(prob *p, const fp_membuf *bufs, size_t n, uint64_t align, GError **error)
{
    memset(p, 0, sizeof *p);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (bufs[i].size)
            k++;
    p->orig = g_new(uint32_t, k + 1);
    p->sz = g_new(uint64_t, k + 1);
    p->first = g_new(uint32_t, k + 1);
    p->last = g_new(uint32_t, k + 1);
    uint32_t max_step = 0;
    for (size_t i = 0; i < n; i++) {
        g_assert(bufs[i].first <= bufs[i].last);
        if (!bufs[i].size)
            continue;
        uint64_t s;
        if (!fp_memplan_align(bufs[i].size, align, &s) || !g_uint64_checked_add(&p->total, p->total, s)) {
            set_overflow(error, i, bufs[i].size);
            prob_clear(p);
            return false;
        }
        p->orig[p->n] = (uint32_t)i;
        p->sz[p->n] = s;
        p->first[p->n] = bufs[i].first;
        p->last[p->n] = bufs[i].last;
        max_step = MAX(max_step, bufs[i].last);
        p->n++;
    }
    prob_compress(p, max_step);
    prob_load(p);
    return true;
}

/* Lifetime-overlapping pairs (i, j), each counted once from the later-placed side's view: what one
 * decode visits at most. O(n + T) by a difference array (live at a step) and a prefix sum of starts. */
static uint64_t prob_pairs(const prob *p)
{
    /* counts never exceed n (< 2^32); live wraps while summing, its running sum never below 0 */
    uint32_t *live = g_new0(uint32_t, (size_t)p->T + 1), *starts = g_new0(uint32_t, (size_t)p->T + 1);
    for (size_t i = 0; i < p->n; i++) {
        live[p->first[i]]++;
        live[p->last[i] + 1]--;
        starts[p->first[i]]++;
    }
    for (uint32_t t = 1; t <= p->T; t++) {
        live[t] += live[t - 1];
        starts[t] += starts[t - 1];
    }
    uint64_t pairs = 0;
    for (size_t i = 0; i < p->n; i++)
        pairs += (uint64_t)live[p->first[i]] + (starts[p->last[i]] - starts[p->first[i]]);
    g_free(live);
    g_free(starts);
    return pairs;
}

/* ---------------------------------------------------------------- the decoder */

typedef enum { GAP_SMALLEST, GAP_LOWEST } gap_policy;

/* A placed buffer's address range. */
typedef struct {
    uint64_t off, end;
} span;

/* A placed long buffer: its address range and lifetime. */
typedef struct {
    uint64_t off, end;
    uint32_t first, last;
} tspan;

/* Buffers living at most SHORT_STEPS steps are listed at every step they cover; longer ones in a
 * segment tree over blocks of SHORT_STEPS steps, which stays small enough to live in cache. */
enum { SHORT_STEPS = 32 };

/* A list (of a step, or of a tree node) is a slice [start, end) of one array, filled up to end.
 * Which buffers a list receives depends only on their lifetimes, not on the order they are placed
 * in, so the slices are laid out once per problem, exactly sized, and each decode only empties
 * them (end = start): no allocation while decoding, no pointer chasing. */
typedef struct {
    uint32_t start, end;
} slice;

typedef struct {
    const prob *p;
    uint32_t leaves;             /* power of two >= number of blocks */
    slice *cover;                /* per step t: short buffers live at t */
    slice *starts;               /* per step t: every placed buffer whose first step is t */
    slice *tree;                 /* 2 * leaves tree nodes: long buffers at that node */
    uint32_t *cover_s, *start_s; /* the lists' buffers (their ranges: off[] of the decode, sz) */
    tspan *tree_s;               /* NULL when no buffer is long: the query skips the tree */
    const uint64_t *off;         /* offsets of the buffers placed so far (the decode's) */
    span *hits;                  /* scratch: the overlapping placed buffers of one query */
    size_t hits_cap;
} placer;

static bool is_short(const prob *p, uint32_t i) { return p->last[i] - p->first[i] < SHORT_STEPS; }

/* Runs body with x set to each canonical tree node covering blocks [first / SHORT_STEPS,
 * last / SHORT_STEPS]. */
#define TREE_RANGE(pl, first, last, x, body)                         \
    do {                                                             \
        size_t l_ = (first) / SHORT_STEPS + (size_t)(pl)->leaves;    \
        size_t r_ = (last) / SHORT_STEPS + (size_t)(pl)->leaves + 1; \
        while (l_ < r_) {                                            \
            if (l_ & 1) {                                            \
                size_t x = l_++;                                     \
                body;                                                \
            }                                                        \
            if (r_ & 1) {                                            \
                size_t x = --r_;                                     \
                body;                                                \
            }                                                        \
            l_ >>= 1;                                                \
            r_ >>= 1;                                                \
        }                                                            \
    } while (0)

/* Turns the counts in s[x].end into slice starts (prefix sums); returns the total. */
static size_t slices_layout(slice *s, size_t lists)
{
    uint64_t at = 0;
    for (size_t x = 0; x < lists; x++) {
        uint32_t c = s[x].end;
        s[x].start = s[x].end = (uint32_t)at;
        at += c;
        g_assert(at < UINT32_MAX);
    }
    return (size_t)at;
}

static void placer_init(placer *pl, const prob *p)
{
    memset(pl, 0, sizeof *pl);
    pl->p = p;
    pl->leaves = 1;
    while (pl->leaves < p->T / SHORT_STEPS + 1)
        pl->leaves *= 2;
    size_t nodes = 2 * (size_t)pl->leaves;
    pl->cover = g_new0(slice, (size_t)p->T + 1);
    pl->starts = g_new0(slice, (size_t)p->T + 1);
    pl->tree = g_new0(slice, nodes);
    /* counts (in .end): short buffers through a difference array over steps */
    int32_t *diff = g_new0(int32_t, (size_t)p->T + 1);
    size_t n_long = 0;
    for (size_t i = 0; i < p->n; i++) {
        pl->starts[p->first[i]].end++;
        if (is_short(p, (uint32_t)i)) {
            diff[p->first[i]]++;
            diff[p->last[i] + 1]--;
        } else {
            n_long++;
            TREE_RANGE(pl, p->first[i], p->last[i], x, pl->tree[x].end++);
        }
    }
    int64_t run = 0;
    for (uint32_t t = 0; t < p->T; t++) {
        run += diff[t];
        pl->cover[t].end = (uint32_t)run;
    }
    g_free(diff);
    pl->cover_s = g_new(uint32_t, slices_layout(pl->cover, p->T) + 1);
    pl->start_s = g_new(uint32_t, slices_layout(pl->starts, p->T) + 1);
    size_t nt = slices_layout(pl->tree, nodes);
    pl->tree_s = n_long ? g_new(tspan, nt + 1) : NULL;
    pl->hits_cap = 64;
    pl->hits = g_new(span, pl->hits_cap);
}

static void placer_clear(placer *pl)
{
    g_free(pl->cover);
    g_free(pl->starts);
    g_free(pl->tree);
    g_free(pl->cover_s);
    g_free(pl->start_s);
    g_free(pl->tree_s);
    g_free(pl->hits);
}

/* Empties the lists for a decode whose offsets go to off. */
static void placer_reset(placer *pl, const uint64_t *off)
{
    pl->off = off;
    for (uint32_t t = 0; t < pl->p->T; t++) {
        pl->cover[t].end = pl->cover[t].start;
        pl->starts[t].end = pl->starts[t].start;
    }
    for (size_t x = 0; pl->tree_s && x < 2 * (size_t)pl->leaves; x++)
        pl->tree[x].end = pl->tree[x].start;
}

/* Records buffer i, placed at pl->off[i]: a short buffer at every step it covers, a long one in the
 * canonical tree nodes of its block range; every buffer in the list of its first step. The step
 * lists hold buffer indexes (4 bytes each: a large graph's lists stay in cache even when buffers
 * are placed in no order of time); the tree's lists hold the ranges and lifetimes. */
static void placer_insert(placer *pl, uint32_t i)
{
    const prob *p = pl->p;
    uint32_t f = p->first[i], l = p->last[i];
    if (is_short(p, i)) {
        for (uint32_t t = f; t <= l; t++)
            pl->cover_s[pl->cover[t].end++] = i;
    } else {
        tspan ts = {pl->off[i], pl->off[i] + p->sz[i], f, l};
        TREE_RANGE(pl, f, l, x, pl->tree_s[pl->tree[x].end++] = ts);
    }
    pl->start_s[pl->starts[f].end++] = i;
}

/* Room for k + more hits. */
static inline void grow_hits(placer *pl, size_t k, size_t more)
{
    if (k + more <= pl->hits_cap)
        return;
    while (k + more > pl->hits_cap)
        pl->hits_cap *= 2;
    pl->hits = g_renew(span, pl->hits, pl->hits_cap);
}

/* Appends the ranges of the buffers of list sl (of array v). */
static inline void hit(placer *pl, size_t *k, slice sl, const uint32_t *v)
{
    uint32_t len = sl.end - sl.start;
    if (!len)
        return;
    grow_hits(pl, *k, len);
    for (uint32_t j = sl.start; j < sl.end; j++) {
        uint32_t x = v[j];
        pl->hits[(*k)++] = (span){pl->off[x], pl->off[x] + pl->p->sz[x]};
    }
}

/* The placed buffers whose lifetimes overlap buffer i's, each once: those live at first[i]
 * (short ones from the step's list, long ones up the block tree) plus those starting in
 * (first[i], last[i]]. */
static size_t placer_query(placer *pl, uint32_t i)
{
    const prob *p = pl->p;
    size_t k = 0;
    uint32_t f = p->first[i];
    hit(pl, &k, pl->cover[f], pl->cover_s);
    for (size_t x = f / SHORT_STEPS + (size_t)pl->leaves; pl->tree_s && x >= 1; x >>= 1) {
        const tspan *v = pl->tree_s + pl->tree[x].start;
        uint32_t len = pl->tree[x].end - pl->tree[x].start;
        grow_hits(pl, k, len);
        for (uint32_t j = 0; j < len; j++)
            if (v[j].first <= f && f <= v[j].last)
                pl->hits[k++] = (span){v[j].off, v[j].end};
    }
    for (uint32_t t = f + 1; t <= p->last[i]; t++)
        hit(pl, &k, pl->starts[t], pl->start_s);
    return k;
}

/* Sorts spans by offset: insertion sort for short runs, else quicksort (median of three) recursing
 * into the smaller part. */
static void sort_spans(span *v, size_t k)
{
    while (k > 16) {
        size_t mid = k / 2;
        uint64_t a = v[0].off, b = v[mid].off, c = v[k - 1].off;
        uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = 0, j = k - 1;
        for (;;) {
            while (v[i].off < pivot)
                i++;
            while (v[j].off > pivot)
                j--;
            if (i >= j)
                break;
            span t = v[i];
            v[i++] = v[j];
            v[j--] = t;
        }
        size_t left = j + 1; /* [0, left) <= pivot <= [left, k) */
        if (left < k - left) {
            sort_spans(v, left);
            v += left;
            k -= left;
        } else {
            sort_spans(v + left, k - left);
            k = left;
        }
    }
    for (size_t i = 1; i < k; i++) {
        span x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1].off > x.off) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* Places the buffers in `order` (a permutation of 0..n-1) and returns the arena. off[] receives
 * offsets indexed by prepared buffer. */
static uint64_t fit_offset(placer *pl, uint32_t i, gap_policy pol);

static uint64_t decode(placer *pl, const uint32_t *order, gap_policy pol, uint64_t *off)
{
    const prob *p = pl->p;
    placer_reset(pl, off);
    uint64_t arena = 0;
    for (size_t o = 0; o < p->n; o++) {
        uint32_t i = order[o];
        off[i] = fit_offset(pl, i, pol);
        arena = MAX(arena, off[i] + p->sz[i]);
        placer_insert(pl, i);
    }
    return arena;
}

/* ---------------------------------------------------------------- orders */

/* Fills order with 0..n-1 sorted by their keys (keys[0][i] most significant, up to keys[words-1][i]),
 * ties by index: what a stable sort of 0..n-1 gives with the comparator the keys encode. LSD radix
 * sort on bytes, skipping the bytes that are the same in every key (most of them: sizes share
 * their low bits, steps and lengths their high ones). */
static void radix_order(size_t n, uint64_t *const *keys, int words, uint32_t *order)
{
    uint32_t *a = order, *spare = g_new(uint32_t, n + 1), *b = spare;
    for (size_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    size_t cnt[256];
    for (int w = words - 1; w >= 0; w--) {
        const uint64_t *k = keys[w];
        uint64_t any = 0, all = ~(uint64_t)0;
        for (size_t i = 0; i < n; i++) {
            any |= k[i];
            all &= k[i];
        }
        for (unsigned sh = 0; sh < 64; sh += 8) {
            if (!(((any ^ all) >> sh) & 0xff))
                continue;
            memset(cnt, 0, sizeof cnt);
            for (size_t i = 0; i < n; i++)
                cnt[(k[i] >> sh) & 0xff]++;
            size_t at = 0;
            for (unsigned d = 0; d < 256; d++) {
                size_t c = cnt[d];
                cnt[d] = at;
                at += c;
            }
            for (size_t i = 0; i < n; i++) {
                uint32_t x = a[i];
                b[cnt[(k[x] >> sh) & 0xff]++] = x;
            }
            uint32_t *t = a;
            a = b;
            b = t;
        }
    }
    if (a != order) {
        memcpy(order, a, n * sizeof *order);
        spare = a;
    }
    g_free(spare);
}

/* The orders `best` and the strategies sort by, each a list of keys (radix_order). */
typedef enum {
    KEY_SIZE_DESC,   /* size, then lifetime length, decreasing; then first step */
    KEY_FIRST,       /* first step; then size, decreasing */
    KEY_LENGTH_DESC, /* lifetime length, decreasing; then as KEY_SIZE_DESC */
    KEY_AREA_DESC,   /* size x steps, decreasing; then as KEY_SIZE_DESC */
    KEY_BREADTH,     /* see order_breadth */
} sort_key;

static inline uint64_t key_len_first(const prob *p, size_t i)
{
    uint32_t len = p->last[i] - p->first[i];
    return (uint64_t)(uint32_t)~len << 32 | p->first[i];
}

/* key_breadth and key_step: the extra keys of KEY_BREADTH (most significant first). */
static void order_keys(const prob *p, sort_key key, const uint64_t *key_breadth, const uint32_t *key_step,
                       uint32_t *order)
{
    size_t n = p->n;
    uint64_t *k[4];
    int words = 0;
    for (int w = 0; w < 4; w++)
        k[w] = NULL;
    switch (key) {
    case KEY_FIRST:
        k[0] = g_new(uint64_t, n + 1);
        k[1] = g_new(uint64_t, n + 1);
        for (size_t i = 0; i < n; i++) {
            k[0][i] = p->first[i];
            k[1][i] = ~p->sz[i];
        }
        words = 2;
        break;
    case KEY_SIZE_DESC:
    case KEY_LENGTH_DESC:
    case KEY_AREA_DESC:
    case KEY_BREADTH: {
        int lead = key == KEY_SIZE_DESC ? 0 : key == KEY_BREADTH ? 2 : 1;
        words = lead + 2;
        for (int w = 0; w < words; w++)
            k[w] = g_new(uint64_t, n + 1);
        for (size_t i = 0; i < n; i++) {
            if (key == KEY_LENGTH_DESC) {
                k[0][i] = (uint32_t) ~(p->last[i] - p->first[i]);
            } else if (key == KEY_AREA_DESC) {
                double area = (double)p->sz[i] * (p->last[i] - p->first[i] + 1); /* > 0: bits order as values */
                uint64_t bits;
                memcpy(&bits, &area, sizeof bits);
                k[0][i] = ~bits;
            } else if (key == KEY_BREADTH) {
                k[0][i] = ~key_breadth[i];
                k[1][i] = key_step[i];
            }
            k[lead][i] = ~p->sz[i];
            k[lead + 1][i] = key_len_first(p, i);
        }
        break;
    }
    }
    radix_order(n, k, words, order);
    for (int w = 0; w < 4; w++)
        g_free(k[w]);
}

static void order_sorted(const prob *p, uint32_t *order, sort_key key) { order_keys(p, key, NULL, NULL, order); }

/* Greedy by breadth (TFLite GPU): steps in decreasing live bytes, each step's buffers by decreasing
 * size. A buffer is taken at the first such step it is live in, i.e. ordered by (the largest
 * breadth over its lifetime, that step, size): range maxima come from a segment tree. */
static void order_breadth(const prob *p, uint32_t *order)
{
    uint32_t leaves = 1;
    while (leaves < p->T)
        leaves *= 2;
    /* tree of (breadth, step) maxima; ties keep the earliest step */
    uint64_t *tb = g_new0(uint64_t, 2 * (size_t)leaves);
    uint32_t *ts = g_new0(uint32_t, 2 * (size_t)leaves);
    uint64_t *din = g_new0(uint64_t, p->T + 1), *dout = g_new0(uint64_t, p->T + 1);
    for (size_t i = 0; i < p->n; i++) {
        din[p->first[i]] += p->sz[i];
        dout[p->last[i] + 1] += p->sz[i];
    }
    uint64_t cur = 0;
    for (uint32_t t = 0; t < leaves; t++) {
        if (t < p->T)
            cur = cur + din[t] - dout[t];
        tb[leaves + t] = t < p->T ? cur : 0;
        ts[leaves + t] = t;
    }
    for (size_t x = leaves - 1; x >= 1; x--) {
        bool left = tb[2 * x] >= tb[2 * x + 1];
        tb[x] = left ? tb[2 * x] : tb[2 * x + 1];
        ts[x] = left ? ts[2 * x] : ts[2 * x + 1];
    }
    uint64_t *key_breadth = g_new(uint64_t, p->n + 1);
    uint32_t *key_step = g_new(uint32_t, p->n + 1);
    for (size_t i = 0; i < p->n; i++) {
        uint64_t bb = 0;
        uint32_t bs = UINT32_MAX;
        size_t l = p->first[i] + (size_t)leaves, r = p->last[i] + (size_t)leaves + 1;
        while (l < r) {
            size_t nodes[2] = {0, 0};
            if (l & 1)
                nodes[0] = l++;
            if (r & 1)
                nodes[1] = --r;
            for (int q = 0; q < 2; q++)
                if (nodes[q] && (tb[nodes[q]] > bb || (tb[nodes[q]] == bb && ts[nodes[q]] < bs))) {
                    bb = tb[nodes[q]];
                    bs = ts[nodes[q]];
                }
            l >>= 1;
            r >>= 1;
        }
        key_breadth[i] = bb;
        key_step[i] = bs;
    }
    order_keys(p, KEY_BREADTH, key_breadth, key_step, order);
    g_free(key_breadth);
    g_free(key_step);
    g_free(tb);
    g_free(ts);
    g_free(din);
    g_free(dout);
}

/* ---------------------------------------------------------------- lowest offset first */

/* Offset the policy picks for buffer i among the placed buffers (as in decode). */
static uint64_t fit_offset(placer *pl, uint32_t i, gap_policy pol)
{
    const prob *p = pl->p;
    size_t k = placer_query(pl, i);
    sort_spans(pl->hits, k);
    uint64_t top = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (size_t j = 0; j < k; j++) {
        const span *h = &pl->hits[j];
        if (h->off > top) {
            uint64_t gap = h->off - top;
            if (gap >= p->sz[i] && gap < best_gap) {
                best = top;
                best_gap = gap;
                if (pol == GAP_LOWEST)
                    break;
            }
        }
        top = MAX(top, h->end);
    }
    return best != UINT64_MAX ? best : top;
}

typedef struct {
    uint64_t off;
    uint32_t len; /* lifetime length */
    uint32_t i;
} lof_item;

static bool lof_less(const lof_item *a, const lof_item *b, const prob *p)
{
    if (a->off != b->off)
        return a->off < b->off;
    if (a->len != b->len)
        return a->len > b->len;
    if (p->sz[a->i] != p->sz[b->i])
        return p->sz[a->i] > p->sz[b->i];
    return a->i < b->i;
}

static void lof_push(lof_item *h, size_t *n, lof_item x, const prob *p)
{
    size_t i = (*n)++;
    h[i] = x;
    while (i > 0 && lof_less(&h[i], &h[(i - 1) / 2], p)) {
        lof_item t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static lof_item lof_pop(lof_item *h, size_t *n, const prob *p)
{
    lof_item top = h[0];
    h[0] = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && lof_less(&h[l], &h[m], p))
            m = l;
        if (r < *n && lof_less(&h[r], &h[m], p))
            m = r;
        if (m == i)
            break;
        lof_item t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

/* Lowest offset first (the best-fit heuristic of Sekiyama et al. 2018): repeatedly places, among
 * all unplaced buffers, the one whose lowest feasible offset is the smallest (ties: longest
 * lifetime, then largest). Lowest feasible offsets only grow as buffers are placed, so a lazy heap
 * holds stale keys that are recomputed when popped. Gives up (returns UINT64_MAX) after `budget`
 * recomputations. order[] receives the placement order. */
static uint64_t lowest_offset_first(placer *pl, uint64_t *off, uint32_t *order, uint64_t budget)
{
    const prob *p = pl->p;
    placer_reset(pl, off);
    lof_item *h = g_new(lof_item, p->n + 1);
    size_t hn = 0, placed = 0;
    for (uint32_t i = 0; i < p->n; i++)
        lof_push(h, &hn, (lof_item){0, p->last[i] - p->first[i], i}, p);
    uint64_t arena = 0;
    while (hn) {
        lof_item it = lof_pop(h, &hn, p);
        if (budget-- == 0) {
            arena = UINT64_MAX;
            break;
        }
        uint64_t o = fit_offset(pl, it.i, GAP_LOWEST);
        if (o != it.off) {
            it.off = o;
            lof_push(h, &hn, it, p);
            continue;
        }
        off[it.i] = o;
        order[placed++] = it.i;
        arena = MAX(arena, o + p->sz[it.i]);
        placer_insert(pl, it.i);
    }
    g_free(h);
    return arena;
}

/* ---------------------------------------------------------------- exact search (small n) */

/* Depth-first search over placement orders with the lowest-fit rule. Placing the buffers of an
 * optimal plan in increasing offset order with lowest-fit never puts one higher than in that
 * plan, so the search over all orders reaches the optimum; equal buffers are tried once per level.
 * Stops at `budget` placements or when LOAD is reached. */
typedef struct {
    const prob *p;
    uint64_t *off, *best_off;
    uint8_t *used;
    uint32_t *stack;
    uint64_t best;
    uint64_t budget;
    bool complete;
} exact_ctx;

static uint64_t lowest_fit(const exact_ctx *c, uint32_t i, size_t depth)
{
    const prob *p = c->p;
    uint64_t cand = 0;
    for (;;) { /* raise cand past every conflicting placed buffer until none conflicts */
        bool moved = false;
        for (size_t d = 0; d < depth; d++) {
            uint32_t h = c->stack[d];
            if (p->first[h] > p->last[i] || p->first[i] > p->last[h])
                continue;
            if (c->off[h] < cand + p->sz[i] && cand < c->off[h] + p->sz[h]) {
                cand = c->off[h] + p->sz[h];
                moved = true;
            }
        }
        if (!moved)
            return cand;
    }
}

static bool same_buffer(const prob *p, uint32_t a, uint32_t b)
{
    return p->sz[a] == p->sz[b] && p->first[a] == p->first[b] && p->last[a] == p->last[b];
}

static void exact_dfs(exact_ctx *c, size_t depth, uint64_t arena)
{
    const prob *p = c->p;
    if (depth == p->n) {
        if (arena < c->best) {
            c->best = arena;
            memcpy(c->best_off, c->off, p->n * sizeof *c->off);
        }
        return;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        if (c->used[i] || c->best <= p->load)
            continue;
        if (c->budget == 0) {
            c->complete = false;
            return;
        }
        bool dup = false;
        for (uint32_t j = 0; j < i && !dup; j++)
            dup = !c->used[j] && same_buffer(p, i, j);
        if (dup)
            continue;
        c->budget--;
        uint64_t o = lowest_fit(c, i, depth);
        uint64_t a = MAX(arena, o + p->sz[i]);
        if (a >= c->best)
            continue;
        c->off[i] = o;
        c->used[i] = 1;
        c->stack[depth] = i;
        exact_dfs(c, depth + 1, a);
        c->used[i] = 0;
    }
}

/* Improves *arena/off when the exhaustive search finds better; returns true if it did. */
static bool exact_search(const prob *p, uint64_t budget, uint64_t *arena, uint64_t *off)
{
    exact_ctx c = {p,
                   g_new(uint64_t, p->n + 1),
                   g_new(uint64_t, p->n + 1),
                   g_new0(uint8_t, p->n + 1),
                   g_new(uint32_t, p->n + 1),
                   *arena,
                   budget,
                   true};
    exact_dfs(&c, 0, 0);
    bool better = c.best < *arena;
    if (better) {
        *arena = c.best;
        memcpy(off, c.best_off, p->n * sizeof *off);
    }
    g_free(c.off);
    g_free(c.best_off);
    g_free(c.used);
    g_free(c.stack);
    return better;
}

/* ---------------------------------------------------------------- strategies */

/* Candidate kept by `best`. */
typedef struct {
    uint64_t arena;
    uint64_t *off;
    uint32_t *order;
    gap_policy pol;
    const char *method;
} candidate;

/* Decodes `order` with `pol`; keeps it in *best if smaller (the offsets are swapped with
 * *scratch_off, the order is copied). */
static void try_order(placer *pl, const uint32_t *order, gap_policy pol, const char *method, candidate *best,
                      uint64_t **scratch_off)
{
    uint64_t a = decode(pl, order, pol, *scratch_off);
    if (a >= best->arena)
        return;
    uint64_t *t = best->off;
    best->off = *scratch_off;
    *scratch_off = t;
    memcpy(best->order, order, pl->p->n * sizeof *order);
    best->arena = a;
    best->pol = pol;
    best->method = method;
}

/* The buffer whose end is the arena top and, among those, the latest in the order. */
static size_t top_position(const prob *p, const candidate *c)
{
    size_t pos = 0;
    for (size_t o = 0; o < p->n; o++) {
        uint32_t i = c->order[o];
        if (c->off[i] + p->sz[i] == c->arena)
            pos = o;
    }
    return pos;
}

/* Iterated greedy: moves the buffer that ends at the arena top to the front of the order and
 * decodes again; plateaus are accepted (they change which buffer is on top), worse orders are not. */
static void bump_search(placer *pl, candidate *best, unsigned rounds, uint64_t **scratch_off)
{
    const prob *p = pl->p;
    uint32_t *order = g_new(uint32_t, p->n + 1);
    memcpy(order, best->order, p->n * sizeof *order);
    uint64_t *off = g_new(uint64_t, p->n + 1);
    memcpy(off, best->off, p->n * sizeof *off);
    candidate cur = {best->arena, off, order, best->pol, best->method};
    for (unsigned r = 0; r < rounds && best->arena > p->load; r++) {
        size_t pos = top_position(p, &cur);
        if (pos == 0)
            break;
        uint32_t moved = cur.order[pos];
        memmove(cur.order + 1, cur.order, pos * sizeof *cur.order);
        cur.order[0] = moved;
        uint64_t a = decode(pl, cur.order, cur.pol, *scratch_off);
        if (a > cur.arena) {
            memmove(cur.order, cur.order + 1, pos * sizeof *cur.order); /* undo */
            cur.order[pos] = moved;
            break;
        }
        uint64_t *t = cur.off;
        cur.off = *scratch_off;
        *scratch_off = t;
        cur.arena = a;
        if (a < best->arena) {
            best->arena = a;
            memcpy(best->off, cur.off, p->n * sizeof *cur.off);
            memcpy(best->order, cur.order, p->n * sizeof *cur.order);
            best->method = "bump";
        }
    }
    g_free(cur.order);
    g_free(cur.off);
}

/* Largest instance searched exhaustively, and the placement budget of that search. */
enum { EXACT_MAX_N = 12 };
#define EXACT_BUDGET 2000000u
/* Above LARGE_N buffers `best` tries three orders only and no iterated search, so that it stays
 * within a few decodes; lowest-offset-first (whose recomputations can reach n^2) runs up to LOF_N. */
enum { LARGE_N = 200000, LOF_N = 50000 };
static unsigned bump_rounds(size_t n) { return n <= 4096 ? 64 : n <= 65536 ? 16 : n <= LARGE_N ? 4 : 0; }

/* Keeps the lowest-offset-first plan when it is smaller. */
static void try_lowest_offset_first(placer *pl, candidate *best, uint64_t **soff, uint32_t *sorder)
{
    const prob *p = pl->p;
    uint64_t a = lowest_offset_first(pl, *soff, sorder, 64 * (uint64_t)p->n);
    if (a >= best->arena)
        return;
    uint64_t *t = best->off;
    best->off = *soff;
    *soff = t;
    memcpy(best->order, sorder, p->n * sizeof *sorder);
    best->arena = a;
    best->pol = GAP_LOWEST;
    best->method = "lowest_offset_first";
}

/* The sorted orders `best` tries, in its order; per gap rule (smallest, lowest) a method name. */
static const struct {
    sort_key key;
    const char *names[2]; /* per gap rule: smallest, lowest */
    bool large;           /* tried on large instances (smallest gap only) */
} best_sorts[] = {
    {KEY_SIZE_DESC, {"greedy_by_size", "size_lowest_fit"}, true},
    {KEY_FIRST, {"best_fit", "first_lowest_fit"}, true},
    {KEY_BREADTH, {"breadth_smallest_gap", "breadth_lowest_fit"}, true},
    {KEY_LENGTH_DESC, {"length_smallest_gap", "length_lowest_fit"}, false},
    {KEY_AREA_DESC, {"area_smallest_gap", "area_lowest_fit"}, false},
};

static void best_sort_order(const prob *p, size_t s, uint32_t *order)
{
    if (best_sorts[s].key == KEY_BREADTH)
        order_breadth(p, order);
    else
        order_sorted(p, order, best_sorts[s].key);
}

/* Tries the sorted order and gap rule called `hint` (a method name of an earlier `best` plan) when
 * the full `best` would try it on this instance; true when that plan reaches LOAD. Since `best` stops
 * at the first plan reaching LOAD and no plan is below LOAD, its arena is then LOAD as well. */
static bool try_hint(const prob *p, placer *pl, const char *hint, candidate *best, uint64_t **soff, uint32_t *sorder)
{
    bool large = p->n > LARGE_N;
    for (size_t s = 0; hint && s < G_N_ELEMENTS(best_sorts); s++)
        for (int pol = 0; pol < (large ? 1 : 2); pol++) {
            if ((large && !best_sorts[s].large) || strcmp(hint, best_sorts[s].names[pol]) != 0)
                continue;
            best_sort_order(p, s, sorder);
            try_order(pl, sorder, (gap_policy)pol, best_sorts[s].names[pol], best, soff);
            return best->arena == p->load;
        }
    return false;
}

/* `best`: the smallest of several orders and both gap rules (greedy by size first, so `best` is
 * never above it), then lowest offset first, iterated moves of the top buffer, and on tiny
 * instances the exhaustive search. Stops as soon as a plan reaches LOAD. With a hint (see try_hint)
 * that reaches LOAD, that plan is kept: same arena, possibly another method and offsets. */
static void plan_best(const prob *p, placer *pl, const char *hint, candidate *best)
{
    uint64_t *soff = g_new(uint64_t, p->n + 1);
    uint32_t *sorder = g_new(uint32_t, p->n + 1);
    if (try_hint(p, pl, hint, best, &soff, sorder)) {
        g_free(soff);
        g_free(sorder);
        return;
    }
    best->arena = UINT64_MAX; /* the hint's plan must not win ties that the usual sequence decides */
    bool large = p->n > LARGE_N;
    for (size_t s = 0; s < G_N_ELEMENTS(best_sorts) && best->arena > p->load; s++) {
        if (large && !best_sorts[s].large)
            continue;
        best_sort_order(p, s, sorder);
        for (int pol = 0; pol < (large ? 1 : 2) && best->arena > p->load; pol++)
            try_order(pl, sorder, (gap_policy)pol, best_sorts[s].names[pol], best, &soff);
    }
    if (best->arena > p->load && p->n <= LOF_N)
        try_lowest_offset_first(pl, best, &soff, sorder);
    if (best->arena > p->load)
        bump_search(pl, best, bump_rounds(p->n), &soff);
    if (best->arena > p->load && p->n <= EXACT_MAX_N && exact_search(p, EXACT_BUDGET, &best->arena, best->off))
        best->method = "exact";
    g_free(soff);
    g_free(sorder);
}

/* The caller's step of the (compressed) peak: LOAD rises only where some buffer starts. */
static uint32_t peak_of(const prob *p, const fp_membuf *bufs)
{
    for (size_t i = 0; i < p->n && p->load; i++)
        if (p->first[i] == p->peak)
            return bufs[p->orig[i]].first;
    return 0;
}

bool fp_memplan_load(const fp_membuf *bufs, size_t n, uint64_t align, uint64_t *load, uint32_t *peak_step,
                     GError **error)
{
    prob p;
    if (!prob_init(&p, bufs, n, align, error))
        return false;
    *load = p.load;
    if (peak_step)
        *peak_step = peak_of(&p, bufs);
    prob_clear(&p);
    return true;
}

/* fp_memplan_plan and fp_memplan_arena: offsets may be NULL, hint is plan_best's. */
static bool plan_impl(const fp_membuf *bufs, size_t n, uint64_t align, fp_memplan_strategy s, const char *hint,
                      uint64_t *offsets, fp_memplan_result *res, GError **error)
{
    g_assert((unsigned)s < FP_MEMPLAN_COUNT);
    prob p;
    if (!prob_init(&p, bufs, n, align, error))
        return false;
    if (offsets)
        memset(offsets, 0, n * sizeof *offsets);
    candidate best = {UINT64_MAX, g_new(uint64_t, p.n + 1), g_new(uint32_t, p.n + 1), GAP_SMALLEST,
                      fp_memplan_strategy_name(s)};
    /* every decode visits the overlapping pairs: with thousands of buffers live at once (a huge
     * fan-out) the plan would take minutes, so the buffers are stacked instead (naive) */
    uint64_t budget = MAX((uint64_t)FP_MEMPLAN_MAX_PAIRS, (uint64_t)FP_MEMPLAN_PAIRS_PER_BUF * p.n);
    bool over_budget = s != FP_MEMPLAN_NAIVE && p.n && prob_pairs(&p) > budget;
    if (over_budget)
        best.method = "naive (over the overlap budget)";
    if (s == FP_MEMPLAN_NAIVE || p.n == 0 || over_budget) {
        uint64_t at = 0;
        for (size_t i = 0; i < p.n; i++) {
            best.off[i] = at;
            at += p.sz[i]; /* no overflow: the total was checked */
        }
        best.arena = at;
    } else {
        placer pl;
        placer_init(&pl, &p);
        uint64_t *soff = g_new(uint64_t, p.n + 1);
        uint32_t *sorder = g_new(uint32_t, p.n + 1);
        if (s == FP_MEMPLAN_GREEDY_BY_SIZE) {
            order_sorted(&p, sorder, KEY_SIZE_DESC);
            try_order(&pl, sorder, GAP_SMALLEST, "greedy_by_size", &best, &soff);
        } else if (s == FP_MEMPLAN_BEST_FIT) {
            order_sorted(&p, sorder, KEY_FIRST);
            try_order(&pl, sorder, GAP_SMALLEST, "best_fit", &best, &soff);
        } else {
            plan_best(&p, &pl, hint, &best);
        }
        g_free(soff);
        g_free(sorder);
        placer_clear(&pl);
    }
    for (size_t i = 0; offsets && i < p.n; i++)
        offsets[p.orig[i]] = best.off[i];
    res->arena = best.arena;
    res->load = p.load;
    res->method = best.method;
    res->peak_step = peak_of(&p, bufs);
    g_free(best.off);
    g_free(best.order);
    prob_clear(&p);
    return true;
}

bool fp_memplan_plan(const fp_membuf *bufs, size_t n, uint64_t align, fp_memplan_strategy s, uint64_t *offsets,
                     fp_memplan_result *res, GError **error)
{
    return plan_impl(bufs, n, align, s, NULL, offsets, res, error);
}

bool fp_memplan_arena(const fp_membuf *bufs, size_t n, uint64_t align, fp_memplan_strategy s, const char *hint,
                      fp_memplan_result *res, GError **error)
{
    return plan_impl(bufs, n, align, s, hint, NULL, res, error);
}

/* ---------------------------------------------------------------- verification */

typedef struct {
    uint32_t step;
    uint32_t buf;
    bool end; /* removal after `step` */
} event;

static int cmp_event(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->step != y->step)
        return x->step > y->step ? 1 : -1;
    if (x->end != y->end)
        return x->end ? 1 : -1; /* insertions at a step before the removals after it */
    return (x->buf > y->buf) - (x->buf < y->buf);
}

typedef struct {
    const uint64_t *off;
    const uint64_t *sz;
} verify_ctx;

/* Keys are buffer indexes; ordered by (offset, index). */
static gint cmp_key(gconstpointer a, gconstpointer b, gpointer data)
{
    const verify_ctx *c = data;
    uint32_t x = GPOINTER_TO_UINT(a) - 1, y = GPOINTER_TO_UINT(b) - 1;
    if (c->off[x] != c->off[y])
        return c->off[x] < c->off[y] ? -1 : 1;
    return (x > y) - (x < y);
}

bool fp_memplan_verify(const fp_membuf *bufs, size_t n, uint64_t align, const uint64_t *offsets, uint64_t *arena,
                       size_t bad[2])
{
    uint64_t *sz = g_new0(uint64_t, n + 1);
    event *ev = g_new(event, 2 * n + 1);
    size_t ne = 0;
    uint64_t top = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        if (!bufs[i].size)
            continue;
        if ((align > 1 && offsets[i] % align) || !fp_memplan_align(bufs[i].size, align, &sz[i]) ||
            !g_uint64_checked_add(&top, offsets[i], sz[i])) {
            ok = false;
            if (bad)
                bad[0] = bad[1] = i;
            break;
        }
        ev[ne++] = (event){bufs[i].first, (uint32_t)i, false};
        ev[ne++] = (event){bufs[i].last, (uint32_t)i, true};
    }
    uint64_t max_top = 0;
    for (size_t i = 0; i < n && ok; i++)
        if (bufs[i].size)
            max_top = MAX(max_top, offsets[i] + sz[i]);
    qsort(ev, ne, sizeof *ev, cmp_event);
    verify_ctx c = {offsets, sz};
    GTree *live = g_tree_new_with_data(cmp_key, &c);
    for (size_t e = 0; e < ne && ok; e++) {
        gpointer key = GUINT_TO_POINTER(ev[e].buf + 1);
        if (ev[e].end) {
            g_tree_remove(live, key);
            continue;
        }
        g_tree_insert(live, key, key);
        GTreeNode *node = g_tree_lookup_node(live, key);
        GTreeNode *nb[2] = {g_tree_node_previous(node), g_tree_node_next(node)};
        for (int q = 0; q < 2 && ok; q++) {
            if (!nb[q])
                continue;
            uint32_t o = GPOINTER_TO_UINT(g_tree_node_key(nb[q])) - 1, i = ev[e].buf;
            if (offsets[o] < offsets[i] + sz[i] && offsets[i] < offsets[o] + sz[o]) {
                ok = false;
                if (bad) {
                    bad[0] = MIN(i, o);
                    bad[1] = MAX(i, o);
                }
            }
        }
    }
    g_tree_destroy(live);
    g_free(ev);
    g_free(sz);
    if (ok && arena)
        *arena = max_top;
    return ok;
}

/* intern.c - the model's intern tables: one copy of each name (fp_intern) and of each immutable
 * array (fp_intern_blob), in the model's arena; and the entry of a name that ir/graph.c finds a
 * graph's value of that name in (intern_internal.h). */
#include "intern_internal.h"

#include <string.h>

/* The intern table of fp_intern_blob: open addressing with linear probing, at most half full;
 * slot i holds a blob of the arena (NULL: empty) and its hash. */
struct fp_blobs {
    size_t cap, n; /* cap a power of two */
    uint64_t *hash;
    const void **data;
    size_t *size;
};

static uint64_t blob_hash(const void *p, size_t size)
{
    const unsigned char *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ size, w;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) { /* 8 bytes a step: dims are 16 bytes each */
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < size; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static void blobs_init(struct fp_blobs *t, size_t cap)
{
    t->cap = cap;
    t->n = 0;
    t->hash = g_new(uint64_t, cap);
    t->data = g_new0(const void *, cap);
    t->size = g_new(size_t, cap);
}

static void blobs_clear(struct fp_blobs *t)
{
    g_free(t->hash);
    g_free(t->data);
    g_free(t->size);
}

/* The slot of (p, size, h): where it is, or the empty slot where it goes. */
static size_t blobs_find(const struct fp_blobs *t, const void *p, size_t size, uint64_t h)
{
    size_t i = (size_t)h & (t->cap - 1);
    while (t->data[i] && (t->hash[i] != h || t->size[i] != size || (size && memcmp(t->data[i], p, size) != 0)))
        i = (i + 1) & (t->cap - 1);
    return i;
}

static void blobs_grow(struct fp_blobs *t)
{
    struct fp_blobs old = *t;
    blobs_init(t, old.cap * 2);
    for (size_t i = 0; i < old.cap; i++)
        if (old.data[i]) {
            size_t j = blobs_find(t, old.data[i], old.size[i], old.hash[i]);
            t->hash[j] = old.hash[i];
            t->data[j] = old.data[i];
            t->size[j] = old.size[i];
            t->n++;
        }
    blobs_clear(&old);
}

/* The intern table of fp_intern: open addressing with linear probing, at most 3/4 full. A slot
 * holds a string's hash (high 32 bits) and its entry's reference + 1 (low 32 bits; 0: empty slot),
 * so that a probe compares hashes without touching the strings. An entry (fp_intern_entry) is the
 * string itself behind a header: its length and the value of that name in one graph of the model
 * (ir/graph.c), so that a lookup that finds a name reads one place besides its slot, and finding a
 * value by name hashes the name once. Entries are packed, 8-byte aligned, in chunks of the arena
 * (never moved): a reference counts 8-byte units from the start of chunk ref >> ENTRY_UNIT_BITS,
 * and an entry too big for a chunk gets a chunk of its own. */
#define ENTRY_UNIT_BITS 13 /* a chunk: 2^13 units of 8 bytes, 64 KiB */
#define ENTRY_CHUNK ((size_t)8 << ENTRY_UNIT_BITS)
#define MAX_CHUNKS (((size_t)1 << (32 - ENTRY_UNIT_BITS)) - 1) /* a reference + 1 fits 32 bits */

struct fp_strings {
    uint64_t *slot; /* slots_alloc */
    size_t cap, n;  /* cap a power of two; n entries */
    char **chunk;   /* chunks of entries; the last one is filled up to `used` bytes */
    size_t n_chunks, used;
};

static inline uint64_t load64(const char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static inline uint64_t load32(const char *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

/* The k bytes at p (1 <= k <= 7) as a little-endian number: two overlapping loads, no call. */
static inline uint64_t load_tail(const char *p, size_t k)
{
    const unsigned char *b = (const unsigned char *)p;
    if (k >= 4)
        return load32(p) | load32(p + k - 4) << (8 * (k - 4));
    return (uint64_t)b[0] | (uint64_t)b[k / 2] << (8 * (k / 2)) | (uint64_t)b[k - 1] << (8 * (k - 1));
}

uint64_t fp_intern_hash(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h = (h ^ load64(s + i)) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (i < n)
        h = (h ^ load_tail(s + i, n - i)) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

/* Whether the n bytes at a and b are equal: names are short, a call to memcmp costs more. */
static inline bool bytes_equal(const char *a, const char *b, size_t n)
{
    if (n > 16)
        return memcmp(a, b, n) == 0;
    if (n >= 8)
        return load64(a) == load64(b) && load64(a + n - 8) == load64(b + n - 8);
    return n == 0 || load_tail(a, n) == load_tail(b, n);
}

/* Whether entry e holds the n bytes at s. */
static inline bool entry_is(const fp_intern_entry *e, const char *s, size_t n)
{
    if (e->len != MIN(n, (size_t)UINT32_MAX))
        return false;
    if (e->len == UINT32_MAX && strlen(e->s) != n) /* (4 GiB names: the length was cut) */
        return false;
    return bytes_equal(e->s, s, n);
}

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

static inline fp_intern_entry *entry_at(const struct fp_strings *t, uint32_t ref)
{
    return (fp_intern_entry *)(t->chunk[ref >> ENTRY_UNIT_BITS] + ((size_t)(ref & ((1u << ENTRY_UNIT_BITS) - 1)) << 3));
}

/* Zeroed slots for cap entries. */
static uint64_t *slots_alloc(size_t cap) { return g_new0(uint64_t, cap); }

static void slots_free(uint64_t *slot, size_t cap)
{
    (void)cap;
    g_free(slot);
}

/* Doubles the slots until `more` strings can be added without growing. */
static void strings_grow(struct fp_strings *t, size_t more)
{
    size_t cap = t->cap * 2;
    while (4 * (t->n + more) > 3 * cap)
        cap *= 2;
    uint64_t *slot = slots_alloc(cap);
    for (size_t i = 0; i < t->cap; i++) {
        uint64_t x = t->slot[i];
        if (!x)
            continue;
        size_t j = (size_t)(x >> 32) & (cap - 1);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = x;
    }
    slots_free(t->slot, t->cap);
    t->slot = slot;
    t->cap = cap;
}

/* A new entry for the n bytes at s (val NULL); *ref set to its reference. */
static fp_intern_entry *entry_new(fp_model *m, const char *s, size_t n, uint32_t *ref)
{
    struct fp_strings *t = m->strings;
    g_assert(n <= SIZE_MAX - sizeof(fp_intern_entry) - 8);
    size_t size = (sizeof(fp_intern_entry) + n + 1 + 7) & ~(size_t)7;
    if (!t->n_chunks || size > ENTRY_CHUNK - t->used) {
        g_assert(t->n_chunks < MAX_CHUNKS);
        if ((t->n_chunks & (t->n_chunks - 1)) == 0) /* a power of two: the array is full */
            t->chunk = g_renew(char *, t->chunk, t->n_chunks ? 2 * t->n_chunks : 1);
        t->chunk[t->n_chunks++] = fp_arena_alloc_raw(m->arena, MAX(size, ENTRY_CHUNK));
        t->used = 0;
    }
    *ref = (uint32_t)((t->n_chunks - 1) << ENTRY_UNIT_BITS | t->used >> 3);
    fp_intern_entry *e = (fp_intern_entry *)(t->chunk[t->n_chunks - 1] + t->used);
    t->used = size > ENTRY_CHUNK ? ENTRY_CHUNK : t->used + size; /* a big one: its chunk is full */
    e->val = NULL;
    e->len = (uint32_t)MIN(n, (size_t)UINT32_MAX);
    memcpy(e->s, s, n);
    e->s[n] = 0;
    return e;
}

fp_intern_entry *fp_intern_entry_hashed(fp_model *m, const char *s, size_t n, uint64_t h, bool add)
{
    struct fp_strings *t = m->strings;
    uint32_t h32 = (uint32_t)h;
    size_t i = (size_t)h & (t->cap - 1);
    for (;; i = (i + 1) & (t->cap - 1)) {
        uint64_t x = t->slot[i];
        if (!x)
            break;
        if ((uint32_t)(x >> 32) != h32)
            continue;
        fp_intern_entry *e = entry_at(t, (uint32_t)x - 1);
        if (entry_is(e, s, n))
            return e;
    }
    if (!add)
        return NULL;
    uint32_t ref;
    fp_intern_entry *e = entry_new(m, s, n, &ref);
    t->n++;
    t->slot[i] = ((uint64_t)h32 << 32) | ((uint64_t)ref + 1);
    if (4 * t->n > 3 * t->cap)
        strings_grow(t, 0);
    return e;
}

fp_intern_entry *fp_intern_entry_of(fp_model *m, const char *s, size_t n, bool add)
{
    return fp_intern_entry_hashed(m, s, n, fp_intern_hash(s, n), add);
}

void fp_intern_prefetch_hash(const fp_model *m, uint64_t h)
{
    const struct fp_strings *t = m->strings;
    PREFETCH(&t->slot[h & (t->cap - 1)]);
}

void fp_intern_reserve(fp_model *m, size_t more)
{
    struct fp_strings *t = m->strings;
    if (4 * (t->n + more) > 3 * t->cap)
        strings_grow(t, more);
}

void fp_intern_tables_new(fp_model *m)
{
    m->strings = g_new0(struct fp_strings, 1);
    m->strings->cap = 256;
    m->strings->slot = slots_alloc(m->strings->cap);
    m->blobs = g_new(struct fp_blobs, 1);
    blobs_init(m->blobs, 256);
}

void fp_intern_tables_free(fp_model *m)
{
    slots_free(m->strings->slot, m->strings->cap);
    g_free(m->strings->chunk);
    g_free(m->strings);
    blobs_clear(m->blobs);
    g_free(m->blobs);
}

const char *fp_intern(fp_model *m, const char *s, gssize len)
{
    size_t n = len < 0 ? strlen(s) : (size_t)len;
    if (len >= 0 && memchr(s, 0, n)) /* embedded NUL: never a name, keep a private copy */
        return fp_arena_strndup(m->arena, s, n);
    return fp_intern_entry_of(m, s, n, true)->s;
}

void fp_intern_prefetch(const fp_model *m, const char *s, size_t len)
{
    fp_intern_prefetch_hash(m, fp_intern_hash(s, len));
}

const void *fp_intern_blob(fp_model *m, const void *p, size_t size)
{
    struct fp_blobs *t = m->blobs;
    uint64_t h = blob_hash(p, size);
    size_t i = blobs_find(t, p, size, h);
    if (t->data[i])
        return t->data[i];
    if (2 * (t->n + 1) > t->cap) {
        blobs_grow(t);
        i = blobs_find(t, p, size, h);
    }
    t->hash[i] = h;
    t->size[i] = size;
    t->data[i] = fp_arena_memdup(m->arena, p, size);
    t->n++;
    return t->data[i];
}

fp_dim *fp_intern_dims(fp_model *m, const fp_dim *dims, int32_t rank)
{
    static const fp_dim none = {0, NULL}; /* scalars: some readers copy MAX(rank, 1) dims */
    if (rank < 0)
        return NULL;
    return (fp_dim *)fp_intern_blob(m, rank ? dims : &none, sizeof *dims * (size_t)MAX(rank, 1));
}

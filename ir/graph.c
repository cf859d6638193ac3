/* graph.c - construction of models, graphs, nodes and values; interning; attribute lookup. */
#include "graph.h"

#include <string.h>

G_DEFINE_QUARK(fp-ir-error-quark, fp_ir_error)

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
    while (t->data[i] &&
           (t->hash[i] != h || t->size[i] != size || (size && memcmp(t->data[i], p, size) != 0)))
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
 * so that a probe compares hashes without touching the strings. An entry is the string itself
 * behind a header: its length and the value of that name in one graph of the model (the first
 * created; fp_graph_value), so that a lookup that finds a name reads one place besides its slot,
 * and finding a value by name hashes the name once. Entries are packed, 8-byte aligned, in chunks
 * of the arena (never moved): a reference counts 8-byte units from the start of chunk
 * ref >> ENTRY_UNIT_BITS, and an entry too big for a chunk gets a chunk of its own. The same
 * struct also holds the slab that values are cut from and a cache of fp_model_opset. */
#define ENTRY_UNIT_BITS 13 /* a chunk: 2^13 units of 8 bytes, 64 KiB */
#define ENTRY_CHUNK ((size_t)8 << ENTRY_UNIT_BITS)
#define MAX_CHUNKS (((size_t)1 << (32 - ENTRY_UNIT_BITS)) - 1) /* a reference + 1 fits 32 bits */
#define VALUE_SLAB 64
/* The lanes of the model's arena (fp_arena_lane) that hold its nodes and its values' slabs: each
 * kind next to its own, which the walks over them read one after the other. */
enum { LANE_NODES, LANE_VALUES };
G_STATIC_ASSERT(LANE_VALUES < FP_ARENA_LANES);

typedef struct {
    fp_value *val; /* the value of this name in val->graph, or NULL */
    uint32_t len;  /* of s, or UINT32_MAX for that length and longer ones */
    char s[];      /* NUL-terminated */
} str_entry;

struct fp_strings {
    uint64_t *slot;       /* slots_alloc */
    size_t cap, n;        /* cap a power of two; n entries */
    char **chunk;         /* chunks of entries; the last one is filled up to `used` bytes */
    size_t n_chunks, used;
    fp_value *slab;       /* values not handed out yet */
    uint32_t slab_left;
    const char *opset_domain; /* fp_node_new's last domain and its opset ... */
    int64_t opset_version;
    const fp_opset *opset_of; /* ... as found in this array of n_opset_of */
    uint32_t n_opset_of;
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

static uint64_t str_hash(const char *s, size_t n)
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
static inline bool entry_is(const str_entry *e, const char *s, size_t n)
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

static inline str_entry *entry_at(const struct fp_strings *t, uint32_t ref)
{
    return (str_entry *)(t->chunk[ref >> ENTRY_UNIT_BITS] + ((size_t)(ref & ((1u << ENTRY_UNIT_BITS) - 1)) << 3));
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
static str_entry *entry_new(fp_model *m, const char *s, size_t n, uint32_t *ref)
{
    struct fp_strings *t = m->strings;
    g_assert(n <= SIZE_MAX - sizeof(str_entry) - 8);
    size_t size = (sizeof(str_entry) + n + 1 + 7) & ~(size_t)7;
    if (!t->n_chunks || size > ENTRY_CHUNK - t->used) {
        g_assert(t->n_chunks < MAX_CHUNKS);
        if ((t->n_chunks & (t->n_chunks - 1)) == 0) /* a power of two: the array is full */
            t->chunk = g_renew(char *, t->chunk, t->n_chunks ? 2 * t->n_chunks : 1);
        t->chunk[t->n_chunks++] = fp_arena_alloc_raw(m->arena, MAX(size, ENTRY_CHUNK));
        t->used = 0;
    }
    *ref = (uint32_t)((t->n_chunks - 1) << ENTRY_UNIT_BITS | t->used >> 3);
    str_entry *e = (str_entry *)(t->chunk[t->n_chunks - 1] + t->used);
    t->used = size > ENTRY_CHUNK ? ENTRY_CHUNK : t->used + size; /* a big one: its chunk is full */
    e->val = NULL;
    e->len = (uint32_t)MIN(n, (size_t)UINT32_MAX);
    memcpy(e->s, s, n);
    e->s[n] = 0;
    return e;
}

/* The entry of the n bytes at s (no NUL among them), whose str_hash is h; added when absent and
 * `add`, else NULL. */
static str_entry *strings_entry_hashed(fp_model *m, const char *s, size_t n, uint64_t h, bool add)
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
        str_entry *e = entry_at(t, (uint32_t)x - 1);
        if (entry_is(e, s, n))
            return e;
    }
    if (!add)
        return NULL;
    uint32_t ref;
    str_entry *e = entry_new(m, s, n, &ref);
    t->n++;
    t->slot[i] = ((uint64_t)h32 << 32) | ((uint64_t)ref + 1);
    if (4 * t->n > 3 * t->cap)
        strings_grow(t, 0);
    return e;
}

static str_entry *strings_entry(fp_model *m, const char *s, size_t n, bool add)
{
    return strings_entry_hashed(m, s, n, str_hash(s, n), add);
}

fp_model *fp_model_new(const char *path, const char *format)
{
    fp_model *m = g_new0(fp_model, 1);
    m->arena = fp_arena_new();
    m->strings = g_new0(struct fp_strings, 1);
    m->strings->cap = 256;
    m->strings->slot = slots_alloc(m->strings->cap);
    m->blobs = g_new(struct fp_blobs, 1);
    blobs_init(m->blobs, 256);
    m->graphs = g_ptr_array_new();
    m->path = fp_intern(m, path ? path : "", -1);
    m->format = fp_intern(m, format ? format : "", -1);
    m->producer_name = m->producer_version = m->domain = m->doc = fp_intern(m, "", 0);
    return m;
}

static void graph_free_indexes(fp_graph *g)
{
    g_ptr_array_free(g->nodes, TRUE);
    g_ptr_array_free(g->values, TRUE);
    g_ptr_array_free(g->inputs, TRUE);
    g_ptr_array_free(g->outputs, TRUE);
    g_ptr_array_free(g->initializers, TRUE);
    if (g->folded)
        g_ptr_array_free(g->folded, TRUE);
    if (g->by_name)
        g_hash_table_destroy(g->by_name);
    g_free(g->use_pool);
    g_free(g->topo);
}

void fp_model_free(fp_model *m)
{
    if (!m)
        return;
    for (guint i = 0; i < m->graphs->len; i++)
        graph_free_indexes(g_ptr_array_index(m->graphs, i));
    g_ptr_array_free(m->graphs, TRUE);
    slots_free(m->strings->slot, m->strings->cap);
    g_free(m->strings->chunk);
    g_free(m->strings);
    blobs_clear(m->blobs);
    g_free(m->blobs);
    fp_arena_free(m->arena);
    g_free(m);
}

const char *fp_intern(fp_model *m, const char *s, gssize len)
{
    size_t n = len < 0 ? strlen(s) : (size_t)len;
    if (len >= 0 && memchr(s, 0, n)) /* embedded NUL: never a name, keep a private copy */
        return fp_arena_strndup(m->arena, s, n);
    return strings_entry(m, s, n, true)->s;
}

void fp_intern_prefetch(const fp_model *m, const char *s, size_t len)
{
    const struct fp_strings *t = m->strings;
    PREFETCH(&t->slot[str_hash(s, len) & (t->cap - 1)]);
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

fp_graph *fp_graph_new(fp_model *m, const char *name, fp_graph *parent, fp_node *owner)
{
    fp_graph *g = fp_arena_alloc(m->arena, sizeof *g);
    g->name = fp_intern(m, name ? name : "", -1);
    g->model = m;
    g->parent = parent;
    g->owner = owner;
    g->depth = parent ? parent->depth + 1 : 0;
    g->nodes = g_ptr_array_new();
    g->values = g_ptr_array_new();
    g->inputs = g_ptr_array_new();
    g->outputs = g_ptr_array_new();
    g->initializers = g_ptr_array_new();
    g_ptr_array_add(m->graphs, g);
    if (!m->main)
        m->main = g;
    return g;
}

void fp_graph_reserve(fp_graph *g, uint32_t n_nodes, uint32_t n_values)
{
    if (!g->nodes->len && n_nodes > 64) {
        g_ptr_array_free(g->nodes, TRUE);
        g->nodes = g_ptr_array_sized_new(n_nodes);
    }
    if (!g->values->len && n_values > 64) {
        g_ptr_array_free(g->values, TRUE);
        g->values = g_ptr_array_sized_new(n_values);
    }
    struct fp_strings *t = g->model->strings;
    if (4 * (t->n + (size_t)n_values) > 3 * t->cap)
        strings_grow(t, n_values);
}

/* The value of entry e in g, or NULL. */
static fp_value *entry_value(const fp_graph *g, const str_entry *e)
{
    if (e->val && e->val->graph == g)
        return e->val;
    return g->by_name ? g_hash_table_lookup(g->by_name, e->s) : NULL;
}

fp_value *fp_graph_find(const fp_graph *g, const char *name)
{
    const str_entry *e = strings_entry(g->model, name, strlen(name), false);
    return e ? entry_value(g, e) : NULL;
}

fp_value *fp_graph_lookup(const fp_graph *g, const char *name)
{
    const str_entry *e = strings_entry(g->model, name, strlen(name), false);
    if (!e)
        return NULL;
    for (; g; g = g->parent) {
        fp_value *v = entry_value(g, e);
        if (v)
            return v;
    }
    return NULL;
}

void fp_graph_forget(fp_graph *g, fp_value *v)
{
    str_entry *e = strings_entry(g->model, v->name, strlen(v->name), false);
    if (e && e->val == v)
        e->val = NULL;
    else if (g->by_name)
        g_hash_table_remove(g->by_name, v->name);
}

/* The value of entry e in g, created when absent (*existed says which). */
static fp_value *entry_value_add(fp_graph *g, str_entry *e, bool *existed)
{
    fp_value *v = entry_value(g, e);
    *existed = v != NULL;
    if (v)
        return v;
    fp_model *m = g->model;
    struct fp_strings *t = m->strings;
    if (!t->slab_left) {
        t->slab = fp_arena_alloc(fp_arena_lane(m->arena, LANE_VALUES), VALUE_SLAB * sizeof *v);
        t->slab_left = VALUE_SLAB;
    }
    v = t->slab++;
    t->slab_left--;
    v->id = g->values->len;
    v->name = e->s;
    v->graph = g;
    v->kind = FP_VALUE_INTERMEDIATE;
    v->type = FP_TYPE_UNKNOWN;
    v->dtype = FP_DT_UNDEFINED;
    v->shape.rank = -1;
    v->decl_shape.rank = -1;
    v->n_sval = -1;
    g_ptr_array_add(g->values, v);
    if (!e->val) {
        e->val = v;
    } else {
        if (!g->by_name)
            g->by_name = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_insert(g->by_name, (gpointer)e->s, v);
    }
    return v;
}

fp_value *fp_graph_value_ex(fp_graph *g, const char *name, size_t len, bool *existed)
{
    return entry_value_add(g, strings_entry(g->model, name, len, true), existed);
}

fp_value *fp_graph_value_len(fp_graph *g, const char *name, size_t len)
{
    bool existed;
    return fp_graph_value_ex(g, name, len, &existed);
}

/* fp_graph_values_len takes names by batches: a batch is hashed and the slots its lookups read
 * first are prefetched, so that the batch waits for memory about once instead of once a name (a
 * large model's table of names is far bigger than the caches). */
#define VALUES_BATCH 16

void fp_graph_values_len(fp_graph *g, size_t n, const char *const *names, const size_t *lens, fp_value **out)
{
    struct fp_strings *t = g->model->strings;
    uint64_t h[VALUES_BATCH];
    bool existed;
    for (size_t b = 0; b < n; b += VALUES_BATCH) {
        size_t k = MIN(n - b, (size_t)VALUES_BATCH);
        for (size_t i = 0; i < k; i++) {
            if (!names[b + i])
                continue;
            h[i] = str_hash(names[b + i], lens[b + i]);
            PREFETCH(&t->slot[h[i] & (t->cap - 1)]);
        }
        /* in order, each after the one before: a name may come twice, and the table may grow */
        for (size_t i = 0; i < k; i++)
            out[b + i] = names[b + i] ? entry_value_add(g, strings_entry_hashed(g->model, names[b + i], lens[b + i],
                                                                                 h[i], true), &existed)
                                      : NULL;
    }
}

fp_value *fp_graph_value(fp_graph *g, const char *name) { return fp_graph_value_len(g, name, strlen(name)); }

fp_value *fp_graph_value_like(fp_graph *g, const char *name, const fp_value *like, fp_dtype dtype)
{
    fp_value *v = fp_graph_value(g, name);
    v->type = FP_TYPE_TENSOR;
    v->dtype = dtype != FP_DT_UNDEFINED ? dtype : like->dtype;
    v->shape = like->shape;
    return v;
}

void fp_node_set_output(fp_node *n, uint32_t port, fp_value *v)
{
    n->outputs[port] = v;
    v->producer = n;
    v->producer_port = port;
}

fp_value *fp_graph_int64_initializer(fp_graph *g, const char *name, const int64_t *vals, uint32_t n)
{
    fp_model *m = g->model;
    fp_value *v = fp_graph_value(g, name);
    fp_dim *dims = fp_arena_calloc(m->arena, 1, sizeof(fp_dim));
    dims[0] = (fp_dim){n, NULL};
    fp_tensor *t = fp_arena_calloc(m->arena, 1, sizeof(fp_tensor));
    *t = (fp_tensor){.dtype = FP_DT_INT64, .where = FP_DATA_INLINE, .shape = {1, dims}, .nbytes = 8 * (uint64_t)n,
                     .data = fp_arena_memdup(m->arena, vals, 8 * (size_t)n)};
    fp_dim *sval = fp_arena_calloc(m->arena, MAX(n, 1), sizeof(fp_dim));
    for (uint32_t i = 0; i < n; i++)
        sval[i] = (fp_dim){vals[i], NULL};
    v->kind = FP_VALUE_INITIALIZER;
    v->type = FP_TYPE_TENSOR;
    v->dtype = v->decl_dtype = FP_DT_INT64;
    v->shape = v->decl_shape = t->shape;
    v->tensor = t;
    v->declared = true;
    v->sval = sval;
    v->n_sval = (int32_t)n;
    return v;
}

int fp_value_ints(const fp_value *v, int64_t *out, int max)
{
    if (!fp_value_is_constant(v))
        return -1;
    const fp_tensor *t = v->tensor && v->tensor->where == FP_DATA_INLINE ? v->tensor : fp_value_fold(v);
    uint64_t numel = 0;
    if (!t || t->where != FP_DATA_INLINE || !fp_shape_numel(&t->shape, &numel) || numel > (uint64_t)max)
        return -1;
    unsigned size = t->dtype == FP_DT_INT64 ? 8 : t->dtype == FP_DT_INT32 ? 4 : 0;
    if (!size || t->nbytes < size * numel)
        return -1;
    for (uint64_t i = 0; i < numel; i++) {
        if (size == 8) {
            memcpy(&out[i], (const uint8_t *)t->data + 8 * i, 8);
        } else {
            int32_t x;
            memcpy(&x, (const uint8_t *)t->data + 4 * i, 4);
            out[i] = x;
        }
    }
    return (int)numel;
}

fp_value *fp_value_interpose(fp_graph *g, fp_value *v, const char *name, fp_dtype dtype,
                             bool (*keeps)(const fp_node *reader))
{
    fp_value *inner = fp_graph_value_like(g, name, v, dtype);
    fp_node_set_output(v->producer, v->producer_port, inner);
    for (guint i = 0; i < g->nodes->len; i++) {
        fp_node *n = g->nodes->pdata[i];
        if ((n->flags & FP_NODE_REMOVED) || (keeps && keeps(n)))
            continue;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] == v)
                n->inputs[k] = inner;
    }
    return inner;
}

G_STATIC_ASSERT(G_ALIGNOF(fp_tensor) > 1); /* fp_value.rare tags a fold by its low bit */

fp_value_ext *fp_value_ext_ensure(fp_value *v)
{
    fp_value_ext *e = fp_value_ext_get(v);
    if (!e) {
        e = fp_arena_alloc(v->graph->model->arena, sizeof *e);
        e->n_elems = -1;
        e->fold = fp_value_fold(v);
        v->rare = (uintptr_t)e;
    }
    return e;
}

void fp_value_set_layout(fp_value *v, const char *layout, const char *origin_layout, const fp_shape *origin_shape)
{
    if (!layout && !origin_layout && !origin_shape && !fp_value_ext_get(v))
        return;
    fp_value_ext *e = fp_value_ext_ensure(v);
    e->layout = layout;
    e->origin_layout = origin_layout;
    e->origin_shape = origin_shape;
}

/* fp_model_opset of the domain of a new node: the same as the last node's in almost every model. */
static int64_t node_opset(fp_model *m, const char *domain)
{
    struct fp_strings *t = m->strings;
    if (t->opset_domain != domain || t->opset_of != m->opsets || t->n_opset_of != m->n_opsets) {
        t->opset_domain = domain;
        t->opset_version = fp_model_opset(m, domain);
        t->opset_of = m->opsets;
        t->n_opset_of = m->n_opsets;
    }
    return t->opset_version;
}

/* fp_node_new_attrs; op_type, domain and a non-empty name already interned when `interned`. */
static fp_node *node_new(fp_graph *g, fp_op op, const char *op_type, const char *domain, bool interned,
                         const char *name, uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs)
{
    fp_model *m = g->model;
    /* one block: the node, its input and output arrays (at least one entry each), its attributes;
     * in the arena's lane, where the nodes follow each other (the walks over them stream) */
    size_t n_in = n_inputs ? n_inputs : 1, n_out = n_outputs ? n_outputs : 1;
    size_t bytes = sizeof(fp_node) + (n_in + n_out) * sizeof(fp_value *);
    g_assert(n_attrs <= (SIZE_MAX - bytes) / sizeof(fp_attr));
    fp_node *n = fp_arena_alloc(fp_arena_lane(m->arena, LANE_NODES), bytes + (size_t)n_attrs * sizeof(fp_attr));
    n->inputs = (fp_value **)(n + 1);
    n->outputs = n->inputs + n_in;
    n->attrs = (fp_attr *)(n->outputs + n_out); /* n_attrs 0: a valid pointer to no attribute */
    n->n_attrs = n_attrs;
    n->id = g->nodes->len;
    n->op = op;
    n->op_type = interned ? op_type : fp_intern(m, op_type ? op_type : fp_op_name(op), -1);
    n->domain = interned ? domain : fp_intern(m, domain ? domain : "", -1);
    n->opset = (int16_t)CLAMP(node_opset(m, n->domain), INT16_MIN, INT16_MAX); /* fp_node.opset */
    if (name && *name) {
        n->name = interned ? name : fp_intern(m, name, -1);
    } else {
        char buf[96];
        g_snprintf(buf, sizeof buf, "%.60s_%u", n->op_type, n->id);
        n->name = fp_intern(m, buf, -1);
    }
    n->graph = g;
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    g_ptr_array_add(g->nodes, n);
    g_clear_pointer(&g->topo, g_free); /* fp_graph_order's cache */
    return n;
}

fp_node *fp_node_new_attrs(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                           uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs)
{
    return node_new(g, op, op_type, domain, false, name, n_inputs, n_outputs, n_attrs);
}

fp_node *fp_node_new_interned(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                              uint32_t n_inputs, uint32_t n_outputs, uint32_t n_attrs)
{
    return node_new(g, op, op_type, domain, true, name, n_inputs, n_outputs, n_attrs);
}

fp_node *fp_node_new(fp_graph *g, fp_op op, const char *op_type, const char *domain, const char *name,
                     uint32_t n_inputs, uint32_t n_outputs)
{
    return fp_node_new_attrs(g, op, op_type, domain, name, n_inputs, n_outputs, 0);
}

fp_node_ext *fp_node_ext_ensure(fp_node *n)
{
    if (!n->ext)
        n->ext = fp_arena_alloc(n->graph->model->arena, sizeof *n->ext);
    return n->ext;
}

fp_node *fp_node_lookup(const fp_model *m, const char *name)
{
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = m->graphs->pdata[gi];
        for (guint i = 0; i < g->nodes->len; i++) {
            fp_node *n = g->nodes->pdata[i];
            if (strcmp(n->name, name) == 0)
                return n;
        }
    }
    return NULL;
}

const fp_attr *fp_node_attr(const fp_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_attrs; i++) /* the first letter spares most strcmp calls */
        if (n->attrs[i].name[0] == name[0] && strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t fp_node_attr_int(const fp_node *n, const char *name, int64_t dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    return a && a->type == FP_ATTR_INT ? a->u.i : dflt;
}

double fp_node_attr_float(const fp_node *n, const char *name, double dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    if (a && a->type == FP_ATTR_FLOAT)
        return a->u.f;
    if (a && a->type == FP_ATTR_INT)
        return (double)a->u.i;
    return dflt;
}

const char *fp_node_attr_string(const fp_node *n, const char *name, const char *dflt)
{
    const fp_attr *a = fp_node_attr(n, name);
    return a && a->type == FP_ATTR_STRING ? a->u.s : dflt;
}

int64_t fp_model_opset(const fp_model *m, const char *domain)
{
    if (!domain)
        domain = "";
    for (uint32_t i = 0; i < m->n_opsets; i++) {
        const char *d = m->opsets[i].domain;
        if (strcmp(d, domain) == 0 || (!*domain && strcmp(d, "ai.onnx") == 0) ||
            (!*d && strcmp(domain, "ai.onnx") == 0))
            return m->opsets[i].version;
    }
    return 0;
}

void fp_model_get_stats(const fp_model *m, fp_model_stats *st)
{
    memset(st, 0, sizeof *st);
    for (guint gi = 0; gi < m->graphs->len; gi++) {
        const fp_graph *g = g_ptr_array_index(m->graphs, gi);
        for (guint i = 0; i < g->nodes->len; i++) {
            const fp_node *n = g_ptr_array_index(g->nodes, i);
            st->nodes += !(n->flags & FP_NODE_REMOVED);
        }
        for (guint i = 0; i < g->initializers->len; i++) {
            const fp_value *v = g_ptr_array_index(g->initializers, i);
            uint64_t numel = 0;
            if (v->tensor && fp_shape_numel(&v->tensor->shape, &numel)) {
                st->params += numel;
                st->param_bytes += v->tensor->nbytes;
            }
        }
    }
}

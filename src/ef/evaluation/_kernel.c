/* ef's run engine: TREC run bytes (or a dict of dicts) in, the judged documents' ranks out.
 *
 * One job, in trec_eval 10.0's terms: read each line "query_id iter doc_id rank score run_id"
 * (columns split on C isspace, '#' comments, blank lines skipped, the score read as strtod reads
 * it), group the lines by query, and give each judged document the number of documents of its
 * query ranked ahead of it: a greater score, or an equal score and a greater doc id byte-wise
 * (precedes(), the one comparator). The measures themselves stay in numpy (ef.measures.bulk).
 *
 * The only caller is ef/evaluation/_hits.py, which formats every error this file reports as a
 * tuple (kind, line, ...) and keeps a pure-Python reference of the same job for the tests.
 * Stable ABI (Py_LIMITED_API 3.11): one build serves every CPython >= 3.11.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>
#include <time.h>

#if defined(_WIN32)
typedef _locale_t c_locale_t;
static c_locale_t c_locale(void) { return _create_locale(LC_NUMERIC, "C"); }
static double strtod_c(const char *s, char **end, c_locale_t loc) { return _strtod_l(s, end, loc); }
#else
#if defined(__APPLE__)
#include <xlocale.h>
#endif
typedef locale_t c_locale_t;
static c_locale_t c_locale(void) { return newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }
static double strtod_c(const char *s, char **end, c_locale_t loc) { return strtod_l(s, end, loc); }
#endif

static c_locale_t the_c_locale;
/* The module's state: the Judged type a Ranker checks its argument against (per module object,
 * so a module imported again, or in a subinterpreter, checks against its own type). */
typedef struct {
    PyObject *judged_type;
    PyObject *real; /* numbers.Real: what a score of another type must be to be read by __float__ here */
} module_state;

/* ---------------------------------------------------------------- growable arrays ---------- */

typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} ints;

static int ints_push(ints *a, int64_t x) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? 2 * a->cap : 256;
        int64_t *v = realloc(a->v, (size_t)cap * sizeof(int64_t));
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* ---------------------------------------------------------------- hashing ----------------- */

/* Set once per process from the address space's layout and the clock: ids crafted to collide in
 * one process do not collide in another. */
static uint64_t hash_seed;

static void multiply(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo);

static inline uint64_t head_of(const char *id, Py_ssize_t len);

/* Eight bytes at a time, each word folded in by a 64x64 -> 128-bit multiply (wyhash's "mum"),
 * both operands keyed by the process's seed. The last word is the id's last 8 bytes (overlapping
 * the words before), or a short id's head: fixed-width loads, as a variable-length copy read back
 * at once stalls the store buffer. */
static uint64_t hash_bytes(const char *p, Py_ssize_t n, uint64_t seed) {
    uint64_t h = seed ^ hash_seed ^ (uint64_t)n, hi, lo, w;
    const char *end = p + n, *start = p;
    for (; n > 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        multiply(w ^ hash_seed, h ^ 0xa0761d6478bd642fULL, &hi, &lo);
        h = hi ^ lo;
    }
    if (end - start < 8) w = head_of(p, n);
    else memcpy(&w, end - 8, 8);
    multiply(w ^ hash_seed, h ^ 0xe7037ed1a0b428dbULL, &hi, &lo);
    return hi ^ lo;
}

static int same_bytes(const char *a, Py_ssize_t na, const char *b, Py_ssize_t nb) {
    return na == nb && memcmp(a, b, (size_t)na) == 0;
}

/* A string table: interned copies of byte strings, each with a value, open addressing; a slot is
 * one cache line's quarter, so a probe touches one line. */
typedef struct {
    char *key; /* NULL: empty */
    Py_ssize_t len;
    uint64_t hash;
    int64_t value;
} slot;

typedef struct {
    slot *s;
    Py_ssize_t n, cap; /* cap: a power of two */
} table;

static int table_init(table *t, Py_ssize_t expected) {
    Py_ssize_t cap = 16;
    while (cap < 2 * expected + 2) cap *= 2;
    t->s = calloc((size_t)cap, sizeof(slot));
    t->n = 0;
    t->cap = cap;
    return t->s ? 0 : -1;
}

static void table_free(table *t) {
    if (t->s)
        for (Py_ssize_t i = 0; i < t->cap; i++) free(t->s[i].key);
    free(t->s);
    memset(t, 0, sizeof *t);
}

/* The slot of (p, n): where it is, or the empty slot where it would go. */
static Py_ssize_t table_slot(const table *t, const char *p, Py_ssize_t n, uint64_t h) {
    Py_ssize_t mask = t->cap - 1, i = (Py_ssize_t)(h & (uint64_t)mask);
    while (t->s[i].key && !(t->s[i].hash == h && same_bytes(t->s[i].key, t->s[i].len, p, n))) i = (i + 1) & mask;
    return i;
}

static int table_grow(table *t) {
    table bigger;
    if (table_init(&bigger, t->cap) < 0) return -1;
    for (Py_ssize_t i = 0; i < t->cap; i++)
        if (t->s[i].key) bigger.s[table_slot(&bigger, t->s[i].key, t->s[i].len, t->s[i].hash)] = t->s[i];
    bigger.n = t->n;
    free(t->s);
    *t = bigger;
    return 0;
}

/* -1 when absent. */
static int64_t table_get(const table *t, const char *p, Py_ssize_t n, uint64_t h) {
    Py_ssize_t i = table_slot(t, p, n, h);
    return t->s[i].key ? t->s[i].value : -1;
}

/* 1 if added, 0 if present (its value left), -1 on no memory. */
static int table_add(table *t, const char *p, Py_ssize_t n, uint64_t h, int64_t value) {
    if (2 * (t->n + 1) > t->cap && table_grow(t) < 0) return -1;
    Py_ssize_t i = table_slot(t, p, n, h);
    if (t->s[i].key) return 0;
    char *copy = malloc(n ? (size_t)n : 1);
    if (!copy) return -1;
    memcpy(copy, p, (size_t)n);
    t->s[i] = (slot){copy, n, h, value};
    t->n++;
    return 1;
}

/* ---------------------------------------------------------------- the comparator ---------- */

/* A ranked document: its score and id, and the id's first 8 bytes as a big-endian number (zeros
 * past its end), which orders most ids without a memcmp. */
typedef struct {
    double score;
    const char *id;
    Py_ssize_t len;
    uint64_t head;
    int64_t judgement; /* the index of its judgement, or -1 (in rank_mapping: its grade's bits) */
} doc;

static inline uint64_t big_endian(const unsigned char *b) {
    return (uint64_t)b[0] << 56 | (uint64_t)b[1] << 48 | (uint64_t)b[2] << 40 | (uint64_t)b[3] << 32 |
           (uint64_t)b[4] << 24 | (uint64_t)b[5] << 16 | (uint64_t)b[6] << 8 | (uint64_t)b[7];
}

static inline uint32_t big_endian4(const unsigned char *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

/* Short ids without a memcpy of variable length: two overlapping 4-byte reads (4 to 7 bytes), or
 * up to three single bytes; never a byte past the id. */
static inline uint64_t head_of(const char *id, Py_ssize_t len) {
    const unsigned char *b = (const unsigned char *)id;
    if (len >= 8) return big_endian(b);
    if (len >= 4) {
        uint64_t tail = big_endian4(b + len - 4) & (((uint64_t)1 << (8 * (len - 4))) - 1);
        return (uint64_t)big_endian4(b) << 32 | tail << (8 * (8 - len));
    }
    uint64_t h = 0;
    if (len > 0) h |= (uint64_t)b[0] << 56;
    if (len > 1) h |= (uint64_t)b[1] << 48;
    if (len > 2) h |= (uint64_t)b[2] << 40;
    return h;
}

/* trec_eval's order: does a rank ahead of b? Score descending, then doc id descending byte-wise.
 * Heads that differ order the ids as their bytes do (a shorter id's zeros sort below any byte of
 * the longer one's, and a zero byte in both ties on to the memcmp). */
static inline int precedes(const doc *a, const doc *b) {
    if (a->score != b->score) return a->score > b->score;
    if (a->head != b->head) return a->head > b->head;
    Py_ssize_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->id, b->id, (size_t)n);
    if (c) return c > 0;
    return a->len > b->len;
}

static int compare_docs(const void *x, const void *y) {
    const doc *a = x, *b = y;
    return precedes(a, b) ? -1 : precedes(b, a) ? 1 : 0;
}

/* How many of the k judged docs (sorted by precedes(); `scores` and `heads` theirs) rank ahead
 * of doc d. `id_of` fills d's id only when its score ties a judged doc's (most docs tie with
 * none). Up to 16 judged docs: a count over all of them without a branch, the tied ones ordered
 * by their heads the same way, bytes compared only on equal heads. More: a binary search by
 * score, then through the tie with precedes(). */
static inline Py_ssize_t judged_ahead(const doc *judged, const double *scores, const uint64_t *heads, Py_ssize_t k,
                                      doc *d, int (*id_of)(doc *, void *), void *arg) {
    double s = d->score;
    Py_ssize_t lo = 0, end = 0; /* judged[lo:end] tie with d */
    if (k > 16) {
        for (Py_ssize_t n = k; n > 0;) {
            Py_ssize_t half = n / 2;
            if (scores[lo + half] > s) lo += half + 1, n -= half + 1;
            else n = half;
        }
        if (lo == k || scores[lo] != s) return lo;
        if (!d->id && id_of(d, arg) < 0) return -1;
        for (Py_ssize_t hi = k; lo < hi;) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (precedes(&judged[mid], d)) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }
    for (Py_ssize_t j = 0; j < k; j++) lo += scores[j] > s;
    if (lo == k || scores[lo] != s) return lo; /* scores descend: scores[lo] <= s */
    if (!d->id && id_of(d, arg) < 0) return -1;
    /* One pass over the tie: the judged docs of a greater head rank ahead; an equal head needs bytes. */
    uint64_t h = d->head;
    Py_ssize_t greater = 0, same = 0;
    for (end = lo; end < k && scores[end] == s; end++) greater += heads[end] > h, same += heads[end] == h;
    lo += greater;
    if (!same) return lo;
    for (; lo < end && heads[lo] == h && precedes(&judged[lo], d);) lo++;
    return lo;
}

/* The hits of one query: for each judged doc of `docs` (judgement >= 0), the number of docs ranked
 * ahead of it. The judged ones are sorted (k log k), then each doc finds by binary search how many
 * judged docs it follows (n log k): a judged doc's rank is how many docs follow fewer judged docs
 * than it does. `scratch` holds k doc copies and k + 1 counts. */
typedef struct {
    doc *judged;
    double *scores; /* the judged docs' scores and heads, in their order */
    uint64_t *heads;
    int64_t *count;
    Py_ssize_t cap;
} scratch;

static int scratch_fit(scratch *s, Py_ssize_t k) {
    if (k <= s->cap && s->count) return 0;
    if (k < 1) k = 1;
    doc *j = realloc(s->judged, (size_t)k * sizeof(doc));
    if (j) s->judged = j;
    double *scores = realloc(s->scores, (size_t)k * sizeof(double));
    if (scores) s->scores = scores;
    uint64_t *heads = realloc(s->heads, (size_t)k * sizeof(uint64_t));
    if (heads) s->heads = heads;
    int64_t *c = realloc(s->count, (size_t)(k + 1) * sizeof(int64_t));
    if (c) s->count = c;
    if (!j || !scores || !heads || !c) return -1;
    s->cap = k;
    return 0;
}

/* The judged docs sorted, their scores listed and their counts zeroed. */
static void scratch_sort(scratch *s, Py_ssize_t k) {
    qsort(s->judged, (size_t)k, sizeof(doc), compare_docs);
    for (Py_ssize_t i = 0; i < k; i++) s->scores[i] = s->judged[i].score, s->heads[i] = s->judged[i].head;
    memset(s->count, 0, (size_t)(k + 1) * sizeof(int64_t));
}

static void scratch_free(scratch *s) { free(s->judged), free(s->scores), free(s->heads), free(s->count); }

typedef struct {
    ints query, rank, judgement; /* one entry per hit */
} hits;

/* The hits of the k judged docs sorted in `s`, from their counts: a judged doc's rank is how many
 * docs follow fewer judged docs than it does (kept when within max_docs). */
static int emit_hits(const scratch *s, Py_ssize_t k, int64_t query, int64_t max_docs, hits *out) {
    int64_t ahead = -1; /* a judged doc does not rank ahead of itself */
    for (Py_ssize_t i = 0; i < k; i++) {
        ahead += s->count[i];
        if (max_docs >= 0 && ahead >= max_docs) continue;
        if (ints_push(&out->query, query) < 0 || ints_push(&out->rank, ahead) < 0 ||
            ints_push(&out->judgement, s->judged[i].judgement) < 0)
            return -1;
    }
    return 0;
}

static int rank_judged(scratch *s, const doc *docs, Py_ssize_t n, Py_ssize_t k, int64_t query, int64_t max_docs,
                       hits *out) {
    if (!k) return 0;
    if (scratch_fit(s, k) < 0) return -1;
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (docs[i].judgement >= 0) s->judged[m++] = docs[i];
    scratch_sort(s, k);
    for (Py_ssize_t i = 0; i < n; i++) {
        doc d = docs[i]; /* its id is set: no callback */
        s->count[judged_ahead(s->judged, s->scores, s->heads, k, &d, NULL, NULL)]++;
    }
    return emit_hits(s, k, query, max_docs, out);
}

/* A str's UTF-8 bytes; a lone surrogate as "surrogatepass" writes it (bytes no UTF-8 file holds,
 * kept alive in the list `keep`), so an id that cannot be in a file still orders and matches. */
static inline const char *utf8_of(PyObject *s, Py_ssize_t *n, PyObject *keep) {
    const char *p = PyUnicode_AsUTF8AndSize(s, n);
    if (p || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return p;
    PyErr_Clear();
    PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
    if (!b) return NULL;
    int failed = PyList_Append(keep, b);
    Py_DECREF(b); /* the list holds it */
    char *buffer;
    if (failed || PyBytes_AsStringAndSize(b, &buffer, n) < 0) return NULL;
    return buffer;
}

/* ---------------------------------------------------------------- the judgements ---------- */

/* The qrels of the evaluated queries: query id -> query index, and each query's judged doc ids
 * (-> the index of the judgement in the flat order the caller gave them) in a small table of its
 * own: the run's lines come grouped by query, so the current query's table stays in cache. */
typedef struct {
    PyObject_HEAD
    table queries;
    table *judged; /* one per query */
    Py_ssize_t n_queries;
    int ready; /* initialised once: a Ranker holds on to the tables */
} Judged;

static int Judged_init(PyObject *self_, PyObject *args, PyObject *kwargs) {
    Judged *self = (Judged *)self_;
    PyObject *query_ids, *doc_ids;
    if (kwargs && PyDict_Size(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Judged takes no keyword arguments");
        return -1;
    }
    /* query_ids: list of str; doc_ids: list (one per query) of lists of str, judgements in order. */
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &query_ids, &PyList_Type, &doc_ids)) return -1;
    Py_ssize_t nq = PyList_Size(query_ids);
    if (PyList_Size(doc_ids) != nq) {
        PyErr_SetString(PyExc_ValueError, "one list of doc ids per query");
        return -1;
    }
    if (self->ready || self->queries.s) {
        PyErr_SetString(PyExc_TypeError, "a Judged is initialised once");
        return -1;
    }
    if (table_init(&self->queries, nq) < 0 || !(self->judged = calloc((size_t)(nq ? nq : 1), sizeof(table)))) {
        PyErr_NoMemory();
        return -1;
    }
    self->n_queries = nq;
    int64_t flat = 0;
    PyObject *keep = PyList_New(0);
    if (!keep) return -1;
    for (Py_ssize_t q = 0; q < nq; q++) {
        Py_ssize_t n;
        const char *p = utf8_of(PyList_GetItem(query_ids, q), &n, keep);
        if (!p) goto fail;
        int added = table_add(&self->queries, p, n, hash_bytes(p, n, 0), q);
        if (added <= 0) {
            if (added < 0) PyErr_NoMemory();
            else PyErr_SetString(PyExc_ValueError, "a query id is given twice");
            goto fail;
        }
        PyObject *docs = PyList_GetItem(doc_ids, q);
        if (!PyList_Check(docs)) {
            PyErr_SetString(PyExc_TypeError, "doc ids must be lists");
            goto fail;
        }
        if (table_init(&self->judged[q], PyList_Size(docs)) < 0) goto no_memory;
        for (Py_ssize_t i = 0; i < PyList_Size(docs); i++, flat++) {
            const char *d = utf8_of(PyList_GetItem(docs, i), &n, keep);
            if (!d) goto fail;
            /* the same id twice: the first judgement counts */
            if (table_add(&self->judged[q], d, n, hash_bytes(d, n, 0), flat) < 0) goto no_memory;
        }
    }
    Py_DECREF(keep);
    self->ready = 1;
    return 0;
no_memory:
    PyErr_NoMemory();
fail:
    Py_DECREF(keep);
    return -1;
}

static void Judged_dealloc(PyObject *self_) {
    Judged *self = (Judged *)self_;
    table_free(&self->queries);
    for (Py_ssize_t q = 0; self->judged && q < self->n_queries; q++) table_free(&self->judged[q]);
    free(self->judged);
    PyTypeObject *type = Py_TYPE(self_);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(self_);
    Py_DECREF(type);
}

static PyType_Slot Judged_slots[] = {
    {Py_tp_doc, "The judgements of the evaluated queries: Judged(query_ids, doc_ids_per_query)."},
    {Py_tp_init, Judged_init},
    {Py_tp_dealloc, Judged_dealloc},
    {0, NULL},
};

static PyType_Spec Judged_spec = {"ef.evaluation._kernel.Judged", sizeof(Judged), 0, Py_TPFLAGS_DEFAULT,
                                  Judged_slots};

/* ---------------------------------------------------------------- numbers ----------------- */

enum { SCORE_OK = 0, SCORE_NOT_A_NUMBER, SCORE_NAN, SCORE_TOO_LARGE };

static const double powers_of_ten[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static void multiply(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 product = (unsigned __int128)a * b;
    *lo = (uint64_t)product, *hi = (uint64_t)(product >> 64);
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *lo = (mid << 32) | (uint32_t)p00;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}

/* 10^q for q in [-22, 22] as a 128-bit fraction: the first 128 bits of its binary expansion from
 * its leading 1, floor(10^q * 2^(127 - b)) with b = floor(log2(10^q)). Made once, at import: for
 * q >= 0, 5^q shifted to the top (5^22 needs 52 bits); for q < 0, 1 / 5^-q by long division, bit
 * by bit (the remainder stays below 2^53). */
static struct {
    uint64_t hi, lo;
    int b;
} tens[45];

static void make_tens(void) {
    for (int q = -22; q <= 22; q++) {
        uint64_t five = 1, hi = 0, lo = 0, r = 1;
        int e = 0;
        for (int i = 0; i < abs(q); i++) five *= 5;
        if (q >= 0) {
            while (!(five << e >> 63)) e++;
            tens[q + 22].hi = five << e, tens[q + 22].lo = 0, tens[q + 22].b = q + 63 - e;
            continue;
        }
        for (; r < five; e++) r <<= 1; /* 1 / 5^-q = 2^-e * 1.xxx */
        for (int bit = 0; bit < 128; bit++, r <<= 1) {
            uint64_t one = r >= five;
            r -= one * five;
            hi = hi << 1 | lo >> 63, lo = lo << 1 | one;
        }
        tens[q + 22].hi = hi, tens[q + 22].lo = lo, tens[q + 22].b = q - e;
    }
}

/* man * 10^q correctly rounded, for 2^53 <= man < 2^64 and q in [-22, 22] (Eisel and Lemire, "Number
 * parsing at a gigabyte per second", 2021, in Nigel Tao's formulation): the top bits of man times a
 * 128-bit 10^q decide the double unless the truncated bits could change it; then 0 is returned and
 * strtod decides. */
static int eisel_lemire(uint64_t man, int q, double *out) {
    int lz = 0;
    uint64_t w = man;
    while (!(w >> 63)) w <<= 1, lz++;
    uint64_t x_hi, x_lo, y_hi, y_lo;
    multiply(w, tens[q + 22].hi, &x_hi, &x_lo);
    if ((x_hi & 0x1FF) == 0x1FF && x_lo + w < x_lo) { /* the truncated product could carry: widen */
        multiply(w, tens[q + 22].lo, &y_hi, &y_lo);
        uint64_t merged_lo = x_lo + y_hi, merged_hi = x_hi + (merged_lo < x_lo);
        if ((merged_hi & 0x1FF) == 0x1FF && merged_lo + 1 == 0 && y_lo + w < y_lo) return 0;
        x_hi = merged_hi, x_lo = merged_lo;
    }
    int msb = (int)(x_hi >> 63);
    uint64_t mantissa = x_hi >> (msb + 9); /* 54 bits: 53 and the rounding bit */
    if (x_lo == 0 && (x_hi & 0x1FF) == 0 && (mantissa & 3) == 1) return 0; /* maybe a tie */
    int exponent = tens[q + 22].b + 11 + msb - lz; /* value ~ mantissa * 2^(exponent - 1) */
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if (mantissa >> 53) mantissa >>= 1, exponent++;
    int biased = exponent + 52 + 1023;
    if (biased < 1 || biased > 2046) return 0;
    uint64_t bits = (mantissa & ~(1ULL << 52)) | ((uint64_t)biased << 52);
    memcpy(out, &bits, sizeof bits);
    return 1;
}

/* Eight bytes as a number whose lowest byte is the first in memory (one load where it is so). */
static inline uint64_t little_endian(const unsigned char *b) {
    return (uint64_t)b[0] | (uint64_t)b[1] << 8 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 24 | (uint64_t)b[4] << 32 |
           (uint64_t)b[5] << 40 | (uint64_t)b[6] << 48 | (uint64_t)b[7] << 56;
}

/* A score token as strtod reads it, whole. Decimals of up to 19 significant digits and a decimal
 * exponent within [-22, 22] are read here exactly: an integer mantissa below 2^53 times or divided
 * by an exact power of ten is one correctly rounded operation (Clinger), a longer one goes through
 * eisel_lemire; every other form, and what eisel_lemire cannot decide, goes to strtod in the "C"
 * locale. */
static int parse_score(const char *p, Py_ssize_t n, double *out) {
    Py_ssize_t i = 0;
    int negative = 0;
    if (i < n && (p[i] == '+' || p[i] == '-')) negative = p[i++] == '-';
    uint64_t mantissa = 0;
    int scale = 0, any = 0;
    const uint64_t nineteen_digits = 1000000000000000000ULL; /* a 20th significant digit: strtod */
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, any = 1) {
        if (mantissa >= nineteen_digits) goto slow;
        mantissa = mantissa * 10 + (uint64_t)(p[i] - '0');
    }
    if (i < n && p[i] == '.') {
        /* Eight digits at a time while the mantissa stays within 19 digits (SWAR, as fast_float). */
        for (i++; i + 8 <= n && mantissa < 100000000000ULL && scale > -400; i += 8, scale -= 8, any = 1) {
            uint64_t v = little_endian((const unsigned char *)p + i); /* the first digit the lowest byte */
            if (((v + 0x4646464646464646ULL) | (v - 0x3030303030303030ULL)) & 0x8080808080808080ULL) break;
            v -= 0x3030303030303030ULL;
            v = v * 10 + (v >> 8);
            v = ((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL +
                 ((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL) >> 32;
            mantissa = mantissa * 100000000ULL + (uint32_t)v;
        }
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, any = 1) {
            if (mantissa >= nineteen_digits) goto slow;
            mantissa = mantissa * 10 + (uint64_t)(p[i] - '0');
            if (--scale < -400) goto slow; /* zeros past any double: strtod, and no overflow */
        }
    }
    if (!any) goto slow;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        int sign = 1, e = 0, e_digits = 0;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) sign = p[i++] == '-' ? -1 : 1;
        for (; i < n && p[i] >= '0' && p[i] <= '9' && e < 10000; i++, e_digits++) e = e * 10 + (p[i] - '0');
        if (!e_digits) goto slow;
        scale += sign * e;
    }
    if (i != n) goto slow;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
    goto slow; /* x87 arithmetic would round twice: strtod decides */
#endif
    double v;
    if (mantissa == 0) {
        v = 0.0;
    } else if (mantissa < (1ULL << 53) && scale >= -22 && scale <= 22) {
        v = scale < 0 ? (double)mantissa / powers_of_ten[-scale] : (double)mantissa * powers_of_ten[scale];
    } else if (scale >= -22 && scale <= 22 && mantissa >= (1ULL << 53)) {
        if (!eisel_lemire(mantissa, scale, &v)) goto slow;
    } else {
        goto slow;
    }
    *out = negative ? -v : v;
    return SCORE_OK;
slow:;
    /* strtod on a NUL-terminated copy. */
    char stack[64];
    char *copy = (size_t)n < sizeof stack ? stack : malloc((size_t)n + 1);
    if (!copy) return -1;
    memcpy(copy, p, (size_t)n);
    copy[n] = 0;
    char *end;
    errno = 0;
    double value = strtod_c(copy, &end, the_c_locale);
    Py_ssize_t used = end - copy;
    Py_ssize_t s = (copy[0] == '+' || copy[0] == '-') ? 1 : 0;
    int literal_infinity = copy[s] == 'i' || copy[s] == 'I';
    if (copy != stack) free(copy);
    if (n == 0 || used != n) return SCORE_NOT_A_NUMBER;
    if (value != value) return SCORE_NAN;
    if (isinf(value) && !literal_infinity) return SCORE_TOO_LARGE; /* HUGE_VAL: 1e400 would tie 1e401 */
    *out = value;
    return SCORE_OK;
}

/* ---------------------------------------------------------------- UTF-8 ------------------- */

static int valid_utf8(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        Py_ssize_t need;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) need = 1, cp = c & 0x1F;
        else if (c >= 0xE0 && c <= 0xEF) need = 2, cp = c & 0x0F;
        else if (c >= 0xF0 && c <= 0xF4) need = 3, cp = c & 0x07;
        else return 0;
        for (Py_ssize_t k = 1; k <= need; k++) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((need == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += need + 1;
    }
    return 1;
}

/* ---------------------------------------------------------------- the file ranker --------- */

/* What went wrong, reported to Python as a tuple (see _hits.py, which words each). */
enum { E_NONE = 0, E_NUL, E_CR, E_COLUMNS, E_SCORE, E_UTF8, E_TWICE, E_UNGROUPED, E_MEMORY };

typedef struct {
    int kind;
    int64_t line, other_line, count;
    Py_ssize_t start, stop;   /* the field at fault, offsets in the buffer */
    Py_ssize_t start2, stop2; /* E_TWICE: the query id */
} fault;

/* A data line: its query and doc ids ([start, stop) in the buffer) and its score. Its number is
 * counted only for an error (line_of): a file held whole keeps 40 bytes a line. */
typedef struct {
    Py_ssize_t q0, q1, d0, d1;
    double score;
} row;

/* The number of the line holding p[offset], p[0] being on line `base`. */
static int64_t line_of(const char *p, Py_ssize_t offset, int64_t base) {
    for (const char *end = p + offset; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) base++;
    return base;
}

/* C isspace() in the "C" locale, split by what each byte does to a line. */
enum { C_TOKEN = 0, C_SPACE, C_CR, C_NUL }; /* ' ' and '\n' are told apart before */
static const unsigned char byte_class[256] = {
    [0] = C_NUL, ['\t'] = C_SPACE, ['\v'] = C_SPACE, ['\f'] = C_SPACE, ['\r'] = C_CR,
};

/* The index of the lowest byte whose top bit is set in `flags` (one is). */
static inline int first_flag(uint64_t flags) {
#if defined(__GNUC__)
    return __builtin_ctzll(flags) >> 3;
#else
    int k = 0;
    while (!(flags >> 8 * k & 0x80)) k++;
    return k;
#endif
}

/* One data line at `p[at]` (the line number `line`): its row, or 0 for a blank or comment line.
 * Sets *next to the start of the next line. Returns 1 (a row), 0 (none), -1 (a fault). Every byte
 * above ' ' is part of a token: eight bytes at a time, a mask flags those at or below it, and only
 * those are looked at, one by one (a space first: the common case). */
static int read_line(const char *p, Py_ssize_t size, Py_ssize_t at, int64_t line, row *r, Py_ssize_t run_id[2],
                     Py_ssize_t *next, fault *f) {
    Py_ssize_t field[6][2], start = at, base = at, j;
    Py_ssize_t fields = 0; /* a count, not an int: a 4 GiB line holds 2^31 tokens */
    uint64_t high = 0, low = 0; /* high: a byte >= 0x80 on the line (the ids' UTF-8 is checked) */
    for (;;) {
        while (!low) {
            unsigned char tail[8]; /* the buffer's last bytes, then bytes of a token */
            const unsigned char *b = (const unsigned char *)p + base;
            if (base + 8 > size) {
                if (base >= size) {
                    j = size;
                    goto end;
                }
                b = memcpy(memset(tail, '!', 8), b, (size_t)(size - base));
            }
            uint64_t w = little_endian(b);
            high |= w;
            low = ~(((w & 0x7F7F7F7F7F7F7F7FULL) + 0x5F5F5F5F5F5F5F5FULL) | w) & 0x8080808080808080ULL;
            base += 8;
        }
        j = base - 8 + first_flag(low);
        low &= low - 1;
        int c = (unsigned char)p[j];
        if (c != ' ') {
            if (c == '\n') goto end;
            c = byte_class[c];
            if (c == C_TOKEN) continue; /* a control byte that is not a space: part of a token */
            if (c == C_NUL || (c == C_CR && j + 1 < size && p[j + 1] != '\n')) {
                f->kind = c == C_NUL ? E_NUL : E_CR, f->line = line;
                return -1;
            }
        }
        if (j > start) {
            if (fields < 6) field[fields][0] = start, field[fields][1] = j;
            fields++;
        }
        start = j + 1;
    }
end:
    if (j > start) {
        if (fields < 6) field[fields][0] = start, field[fields][1] = j;
        fields++;
    }
    *next = j < size ? j + 1 : size;
    if (!fields || p[field[0][0]] == '#') return 0;
    if (fields < 6) {
        f->kind = E_COLUMNS, f->line = line, f->count = fields;
        return -1;
    }
    r->q0 = field[0][0], r->q1 = field[0][1];
    r->d0 = field[2][0], r->d1 = field[2][1];
    run_id[0] = field[5][0], run_id[1] = field[5][1];
    int parsed = parse_score(p + field[4][0], field[4][1] - field[4][0], &r->score);
    if (parsed) {
        if (parsed < 0) {
            f->kind = E_MEMORY;
            return -1;
        }
        f->kind = E_SCORE, f->line = line, f->count = parsed, f->start = field[4][0], f->stop = field[4][1];
        return -1;
    }
    for (int k = 0; k < 3 && (high & 0x8080808080808080ULL); k += 2) {
        if (!valid_utf8((const unsigned char *)p + field[k][0], field[k][1] - field[k][0])) {
            f->kind = E_UTF8, f->line = line, f->start = field[k][0], f->stop = field[k][1];
            return -1;
        }
    }
    return 1;
}

typedef struct {
    PyObject_HEAD
    Judged *judged; /* NULL until initialised */
    Py_ssize_t n_queries;
    int64_t max_docs; /* -1: all */
    int64_t *num_ret;   /* per query index; -1: not in the run */
    hits out;
    table seen;    /* every query id already ranked: seeing one again means the file is not grouped */
    Py_ssize_t *dup;     /* the current query's doc ids by hash (a row index + 1; 0: empty) */
    uint64_t *dup_hash;  /* ... and their hashes: a doc id twice is found by its hash, then its bytes */
    Py_ssize_t dup_cap;
    scratch work;
    doc *docs;
    Py_ssize_t docs_cap;
    int64_t line;     /* the line number at the start of the next feed */
    char *run_id;
    Py_ssize_t run_id_len;
    int has_run_id;
} Ranker;

static int set_run_id(Ranker *self, const char *p, Py_ssize_t n) {
    char *copy = realloc(self->run_id, n ? (size_t)n : 1);
    if (!copy) return -1;
    memcpy(copy, p, (size_t)n);
    self->run_id = copy;
    self->run_id_len = n;
    self->has_run_id = 1;
    return 0;
}

/* Rank one query's rows (all of them, in file order). */
static int rank_query(Ranker *self, const char *p, int64_t base, const row *rows, Py_ssize_t n, fault *f) {
    if (!n) return 0;
    const char *qid = p + rows[0].q0;
    Py_ssize_t qlen = rows[0].q1 - rows[0].q0;
    uint64_t qh = hash_bytes(qid, qlen, 0);
    int added = table_add(&self->seen, qid, qlen, qh, 0);
    if (added < 0) goto no_memory;
    if (!added) {
        f->kind = E_UNGROUPED, f->line = line_of(p, rows[0].q0, base);
        return -1;
    }
    Py_ssize_t cap = 1;
    while (cap < 2 * n + 1) cap *= 2;
    if (cap > self->dup_cap) {
        Py_ssize_t *d = realloc(self->dup, (size_t)cap * sizeof(Py_ssize_t));
        if (d) self->dup = d;
        uint64_t *h = realloc(self->dup_hash, (size_t)cap * sizeof(uint64_t));
        if (h) self->dup_hash = h;
        if (!d || !h) goto no_memory;
        self->dup_cap = cap;
    }
    if (n > self->docs_cap) {
        doc *d = realloc(self->docs, (size_t)n * sizeof(doc));
        if (!d) goto no_memory;
        self->docs = d;
        self->docs_cap = n;
    }
    memset(self->dup, 0, (size_t)cap * sizeof(Py_ssize_t));
    Py_ssize_t mask = cap - 1;
    int64_t query = table_get(&self->judged->queries, qid, qlen, qh);
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *id = p + rows[i].d0;
        Py_ssize_t len = rows[i].d1 - rows[i].d0;
        uint64_t h = hash_bytes(id, len, 0);
        Py_ssize_t at = (Py_ssize_t)(h & (uint64_t)mask);
        for (; self->dup[at]; at = (at + 1) & mask) { /* a doc id twice is an error, in any query */
            const row *other = &rows[self->dup[at] - 1];
            if (self->dup_hash[at] == h && same_bytes(p + other->d0, other->d1 - other->d0, id, len)) {
                f->kind = E_TWICE, f->line = line_of(p, rows[i].q0, base), f->other_line = line_of(p, other->q0, base);
                f->start = rows[i].d0, f->stop = rows[i].d1, f->start2 = rows[i].q0, f->stop2 = rows[i].q1;
                return -1;
            }
        }
        self->dup[at] = i + 1;
        self->dup_hash[at] = h;
        doc *d = &self->docs[i];
        d->score = rows[i].score, d->id = id, d->len = len, d->head = head_of(id, len);
        d->judgement = query >= 0 ? table_get(&self->judged->judged[query], id, len, h) : -1;
        k += d->judgement >= 0;
    }
    if (query < 0) return 0;
    self->num_ret[query] = self->max_docs >= 0 && n > self->max_docs ? self->max_docs : n;
    if (rank_judged(&self->work, self->docs, n, k, query, self->max_docs, &self->out) < 0) goto no_memory;
    return 0;
no_memory:
    f->kind = E_MEMORY;
    return -1;
}

static int same_query(const char *p, const row *a, const row *b) {
    return same_bytes(p + a->q0, a->q1 - a->q0, p + b->q0, b->q1 - b->q0);
}

typedef struct {
    row *v;
    Py_ssize_t n, cap;
} rows;

static int rows_push(rows *a, const row *r) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? 2 * a->cap : 1024;
        row *v = realloc(a->v, (size_t)cap * sizeof(row));
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = *r;
    return 0;
}

/* Read the lines of p[0:size]. Grouped (whole=0): each run of one query's lines is ranked as it
 * ends; unless `final`, the last run waits: *consumed is where its first line starts. Whole: the
 * rows are grouped by query first (in the order queries first appear), then ranked. */
static int feed(Ranker *self, const char *p, Py_ssize_t size, int final, int whole, Py_ssize_t *consumed,
                fault *f) {
    rows all = {0}, one = {0};
    if (!final) { /* whole lines only: a partial last line waits with the last query */
        while (size > 0 && p[size - 1] != '\n') size--;
    }
    Py_ssize_t at = 0, group_start = 0;
    const int64_t base = self->line; /* the line number of p[0] */
    int64_t line = base, group_line = base;
    Py_ssize_t run_id[2], last_run_id[2] = {-1, -1};
    while (at < size) {
        row r;
        Py_ssize_t next;
        int got = read_line(p, size, at, line, &r, run_id, &next, f);
        if (got < 0) goto fail;
        if (got) {
            if (!whole && all.n && !same_query(p, &all.v[0], &r)) {
                if (rank_query(self, p, base, all.v, all.n, f) < 0) goto fail;
                all.n = 0;
                if (last_run_id[0] >= 0 && set_run_id(self, p + last_run_id[0], last_run_id[1] - last_run_id[0]) < 0)
                    goto no_memory;
                group_start = at, group_line = line;
            }
            if (rows_push(&all, &r) < 0) goto no_memory;
            last_run_id[0] = run_id[0], last_run_id[1] = run_id[1];
        } else if (!all.n) {
            group_start = next, group_line = line + 1;
        }
        at = next;
        line++;
    }
    if (whole && all.n) {
        /* Grouped by query id in the order queries first appear, file order kept within: a
         * counting sort of the rows' indices, each group gathered into `one` as it is ranked. */
        table groups = {0};
        ints sizes = {0};
        int64_t *group = malloc((size_t)all.n * sizeof(int64_t)), *order = NULL;
        int status = table_init(&groups, 64) < 0 || !group ? -1 : 0;
        for (Py_ssize_t i = 0; i < all.n && status == 0; i++) {
            const char *q = p + all.v[i].q0;
            Py_ssize_t n = all.v[i].q1 - all.v[i].q0;
            uint64_t h = hash_bytes(q, n, 0);
            int64_t g = table_get(&groups, q, n, h);
            if (g < 0 && (table_add(&groups, q, n, h, g = groups.n) < 0 || ints_push(&sizes, 0) < 0)) status = -1;
            else group[i] = g, sizes.v[g]++;
        }
        if (status == 0 && (order = malloc((size_t)all.n * sizeof(int64_t)))) {
            for (Py_ssize_t g = 0, total = 0; g < sizes.n; g++) {
                int64_t n = sizes.v[g];
                sizes.v[g] = total, total += n;
            }
            for (Py_ssize_t i = 0; i < all.n; i++) order[sizes.v[group[i]]++] = i; /* sizes: each group's end */
        } else {
            status = -1;
        }
        free(group);
        table_free(&groups);
        for (Py_ssize_t g = 0, start = 0; g < sizes.n && status == 0; start = sizes.v[g++]) {
            one.n = 0;
            for (Py_ssize_t j = start; j < sizes.v[g] && status == 0; j++)
                if (rows_push(&one, &all.v[order[j]]) < 0) status = -1;
            if (status == 0 && rank_query(self, p, base, one.v, one.n, f) < 0) status = 1;
        }
        free(order);
        free(sizes.v);
        if (status < 0) goto no_memory;
        if (status > 0) goto fail;
        all.n = 0;
    } else if (all.n && final) {
        if (rank_query(self, p, base, all.v, all.n, f) < 0) goto fail;
        all.n = 0;
    }
    if (all.n) { /* the last query's lines wait for the next feed */
        *consumed = group_start;
        self->line = group_line;
    } else {
        if (last_run_id[0] >= 0 && set_run_id(self, p + last_run_id[0], last_run_id[1] - last_run_id[0]) < 0)
            goto no_memory;
        *consumed = size;
        self->line = line;
    }
    free(all.v), free(one.v);
    return 0;
no_memory:
    f->kind = E_MEMORY;
fail:
    free(all.v), free(one.v);
    return -1;
}

static PyObject *fault_tuple(const fault *f) {
    switch (f->kind) {
    case E_MEMORY:
        return PyErr_NoMemory();
    case E_TWICE:
        return Py_BuildValue("(sLLnnnn)", "twice", (long long)f->line, (long long)f->other_line, f->start, f->stop,
                             f->start2, f->stop2);
    case E_SCORE:
        return Py_BuildValue("(sLLnn)", "score", (long long)f->line, (long long)f->count, f->start, f->stop);
    case E_UTF8:
        return Py_BuildValue("(sLnn)", "utf8", (long long)f->line, f->start, f->stop);
    case E_COLUMNS:
        return Py_BuildValue("(sLL)", "columns", (long long)f->line, (long long)f->count);
    case E_NUL:
        return Py_BuildValue("(sL)", "nul", (long long)f->line);
    case E_CR:
        return Py_BuildValue("(sL)", "cr", (long long)f->line);
    default:
        return Py_BuildValue("(sL)", "ungrouped", (long long)f->line);
    }
}

static int Ranker_init(PyObject *self_, PyObject *args, PyObject *kwargs) {
    Ranker *self = (Ranker *)self_;
    PyObject *judged;
    long long max_docs;
    if (kwargs && PyDict_Size(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Ranker takes no keyword arguments");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "OL", &judged, &max_docs)) return -1;
    PyObject *module = PyType_GetModule(Py_TYPE(self_));
    module_state *state = module ? PyModule_GetState(module) : NULL;
    if (!state) return -1;
    if (!PyObject_TypeCheck(judged, (PyTypeObject *)state->judged_type) || !((Judged *)judged)->ready) {
        PyErr_SetString(PyExc_TypeError, "Ranker(judged, max_docs) takes an initialised Judged");
        return -1;
    }
    if (self->judged) {
        PyErr_SetString(PyExc_TypeError, "a Ranker is initialised once");
        return -1;
    }
    self->judged = (Judged *)Py_NewRef(judged);
    self->max_docs = max_docs;
    Py_ssize_t nq = self->n_queries = self->judged->n_queries;
    self->num_ret = malloc((size_t)(nq ? nq : 1) * sizeof(int64_t));
    if (!self->num_ret) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t q = 0; q < nq; q++) self->num_ret[q] = -1;
    if (table_init(&self->seen, 64) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    self->line = 1;
    return 0;
}

static void Ranker_dealloc(PyObject *self_) {
    Ranker *self = (Ranker *)self_;
    Py_XDECREF((PyObject *)self->judged);
    free(self->num_ret);
    free(self->out.query.v), free(self->out.rank.v), free(self->out.judgement.v);
    table_free(&self->seen);
    free(self->dup), free(self->dup_hash);
    scratch_free(&self->work);
    free(self->docs);
    free(self->run_id);
    PyTypeObject *type = Py_TYPE(self_);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(self_);
    Py_DECREF(type);
}

/* feed(data, final, whole) -> bytes consumed, or a fault tuple. */
static int ranker_ready(Ranker *self) {
    if (self->judged) return 1;
    PyErr_SetString(PyExc_TypeError, "the Ranker is not initialised");
    return 0;
}

static PyObject *Ranker_feed(PyObject *self_, PyObject *args) {
    Ranker *self = (Ranker *)self_;
    if (!ranker_ready(self)) return NULL;
    PyObject *data;
    int final, whole;
    if (!PyArg_ParseTuple(args, "Opp", &data, &final, &whole)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t consumed = 0;
    fault f = {0};
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = feed(self, view.buf, view.len, final, whole, &consumed, &f);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (status < 0) return fault_tuple(&f);
    return PyLong_FromSsize_t(consumed);
}

static PyObject *int_bytes(const int64_t *v, Py_ssize_t n) {
    return PyBytes_FromStringAndSize((const char *)v, n * (Py_ssize_t)sizeof(int64_t));
}

/* A new bytes object of n int64s in *bytes, and its buffer, for the caller to fill before anyone
 * else sees it (no copy of a result made elsewhere); NULL on an error. */
static int64_t *new_ints(PyObject **bytes, Py_ssize_t n) {
    *bytes = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    return *bytes ? (int64_t *)PyBytes_AsString(*bytes) : NULL;
}

/* result() -> (num_ret, hit_query, hit_rank, hit_judgement) as int64 bytes, and the run id bytes or None. */
static PyObject *Ranker_result(PyObject *self_, PyObject *unused) {
    Ranker *self = (Ranker *)self_;
    (void)unused;
    if (!ranker_ready(self)) return NULL;
    PyObject *run_id = self->has_run_id ? PyBytes_FromStringAndSize(self->run_id, self->run_id_len) : Py_NewRef(Py_None);
    if (!run_id) return NULL;
    return Py_BuildValue("(NNNNN)", int_bytes(self->num_ret, self->n_queries),
                         int_bytes(self->out.query.v, self->out.query.n), int_bytes(self->out.rank.v, self->out.rank.n),
                         int_bytes(self->out.judgement.v, self->out.judgement.n), run_id);
}

/* shares_query(other) -> whether a query id was ranked by both (two rankers of one file's halves:
 * then the file is not grouped). */
static PyObject *Ranker_shares_query(PyObject *self_, PyObject *other_) {
    Ranker *self = (Ranker *)self_, *other = (Ranker *)other_;
    if (!ranker_ready(self) || Py_TYPE(other_) != Py_TYPE(self_) || !ranker_ready(other)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "shares_query takes another Ranker");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->seen.cap; i++) {
        const slot *s = &self->seen.s[i];
        if (s->key && table_get(&other->seen, s->key, s->len, s->hash) >= 0) Py_RETURN_TRUE;
    }
    Py_RETURN_FALSE;
}

static PyMethodDef Ranker_methods[] = {
    {"shares_query", Ranker_shares_query, METH_O, "shares_query(other): whether both ranked a query id."},
    {"feed", Ranker_feed, METH_VARARGS, "feed(data, final, whole): rank the queries whose lines are complete."},
    {"result", Ranker_result, METH_NOARGS, "result(): (num_ret, hit_query, hit_rank, hit_judgement, run_id)."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Ranker_slots[] = {
    {Py_tp_doc, "Ranks a TREC run file's judged documents: Ranker(judged, max_docs)."},
    {Py_tp_init, Ranker_init},
    {Py_tp_dealloc, Ranker_dealloc},
    {Py_tp_methods, Ranker_methods},
    {0, NULL},
};

static PyType_Spec Ranker_spec = {"ef.evaluation._kernel.Ranker", sizeof(Ranker), 0, Py_TPFLAGS_DEFAULT,
                                  Ranker_slots};

/* ---------------------------------------------------------------- a file read whole ------- */

/* deal(data, parts, final) -> (lines, consumed, last): the whole lines of `data` (all of it when
 * `final`) dealt into `parts` bytes objects by their first field, every line of a query to the one
 * part its id's first bytes (up to a byte <= ' ') hash to, in file order (none: part 0); nothing
 * is read but that, nothing left out: a fault is found when a part is ranked. `last` is the part
 * of the last line that is not blank or a comment (-1: none). A run too scattered to rank in one
 * window is ranked part by part this way: a part holds whole queries. */
static PyObject *deal(PyObject *module, PyObject *args) {
    Py_buffer view;
    Py_ssize_t parts;
    int final;
    if (!PyArg_ParseTuple(args, "y*np", &view, &parts, &final)) return NULL;
    PyObject *result = NULL, *lines = NULL;
    const char *p = view.buf;
    Py_ssize_t size = view.len, at = 0, last = -1;
    struct {
        char *v;
        Py_ssize_t n, cap;
    } *part = parts > 0 ? calloc((size_t)parts, sizeof *part) : NULL;
    if (!part) {
        if (parts > 0) PyErr_NoMemory();
        else PyErr_SetString(PyExc_ValueError, "parts must be positive");
        goto done;
    }
    if (!final)
        while (size > 0 && p[size - 1] != '\n') size--;
    while (at < size) {
        const char *newline = memchr(p + at, '\n', (size_t)(size - at));
        Py_ssize_t next = newline ? newline - p + 1 : size, q0 = at, q1;
        while (q0 < next && (p[q0] == ' ' || (p[q0] >= '\t' && p[q0] <= '\r' && p[q0] != '\n'))) q0++;
        for (q1 = q0; q1 < next && (unsigned char)p[q1] > ' '; q1++) {}
        Py_ssize_t k = q1 > q0 ? (Py_ssize_t)(hash_bytes(p + q0, q1 - q0, hash_seed) % (uint64_t)parts) : 0;
        Py_ssize_t n = next - at, need = part[k].n + n + 1;
        if (need > part[k].cap) {
            Py_ssize_t cap = part[k].cap ? part[k].cap : 1 << 16;
            while (cap < need) cap *= 2;
            char *v = realloc(part[k].v, (size_t)cap);
            if (!v) {
                PyErr_NoMemory();
                goto done;
            }
            part[k].v = v, part[k].cap = cap;
        }
        memcpy(part[k].v + part[k].n, p + at, (size_t)n);
        part[k].n += n;
        if (p[next - 1] != '\n') part[k].v[part[k].n++] = '\n'; /* the run's last line, unended */
        if (q0 < next && p[q0] != '\n' && p[q0] != '#') last = k;
        at = next;
    }
    lines = PyList_New(parts);
    for (Py_ssize_t k = 0; lines && k < parts; k++) {
        PyObject *bytes = PyBytes_FromStringAndSize(part[k].v ? part[k].v : "", part[k].n);
        if (!bytes || PyList_SetItem(lines, k, bytes) < 0) Py_CLEAR(lines);
    }
    if (lines) result = Py_BuildValue("(Onn)", lines, size, last);
done:
    for (Py_ssize_t k = 0; part && k < parts; k++) free(part[k].v);
    free(part);
    Py_XDECREF(lines);
    PyBuffer_Release(&view);
    return result;
}

/* read_run(data) -> {query_id: {doc_id: score}} or a fault tuple: queries in first-appearance
 * order, docs in file order. */
static PyObject *read_run(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *data;
    if (!PyArg_ParseTuple(args, "O", &data)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    const char *p = view.buf;
    Py_ssize_t size = view.len, at = 0;
    int64_t line = 1;
    fault f = {0};
    PyObject *run = PyDict_New(), *docs = NULL, *query = NULL;
    const row *last = NULL;
    row previous;
    while (run && at < size) {
        row r;
        Py_ssize_t next;
        Py_ssize_t run_id[2];
        int got = read_line(p, size, at, line, &r, run_id, &next, &f);
        if (got < 0) {
            Py_CLEAR(run);
            break;
        }
        if (got) {
            if (!last || !same_query(p, last, &r)) {
                Py_XDECREF(query);
                query = PyUnicode_DecodeUTF8(p + r.q0, r.q1 - r.q0, "strict");
                docs = query ? PyDict_GetItemWithError(run, query) : NULL;
                if (!docs && query && !PyErr_Occurred()) {
                    docs = PyDict_New();
                    if (docs && PyDict_SetItem(run, query, docs) < 0) Py_CLEAR(docs);
                    Py_XDECREF(docs); /* the run holds it */
                }
                if (!docs) {
                    Py_CLEAR(run);
                    break;
                }
            }
            PyObject *id = PyUnicode_DecodeUTF8(p + r.d0, r.d1 - r.d0, "strict");
            PyObject *score = id ? PyFloat_FromDouble(r.score) : NULL;
            /* A doc listed twice leaves the dict's size as it was (one lookup, not two: the
             * value it replaced is dropped with the run). */
            Py_ssize_t had = PyDict_Size(docs);
            int present = !score || PyDict_SetItem(docs, id, score) < 0 ? -1 : PyDict_Size(docs) == had;
            Py_XDECREF(id);
            Py_XDECREF(score);
            if (present) {
                Py_CLEAR(run);
                if (present > 0) {
                    f.kind = E_TWICE, f.line = line, f.other_line = 0;
                    f.start = r.d0, f.stop = r.d1, f.start2 = r.q0, f.stop2 = r.q1;
                }
                break;
            }
            previous = r;
            last = &previous;
        }
        at = next;
        line++;
    }
    Py_XDECREF(query);
    PyBuffer_Release(&view);
    if (run) return run;
    if (PyErr_Occurred()) return NULL;
    return fault_tuple(&f);
}

/* ---------------------------------------------------------------- dicts ------------------- */

/* A score object as a double: float and int (not bool) here, anything else by `convert`, which
 * returns a float or raises naming the doc. NaN and an int beyond a double go to `convert` too. */
static int score_of(PyObject *score, PyObject *convert, PyObject *query_id, PyObject *doc_id, PyObject *keep,
                    PyObject *real_type, double *out) {
    if (PyFloat_Check(score)) {
        *out = PyFloat_AsDouble(score);
        if (*out == *out) return 0;
    } else if (PyLong_Check(score) && !PyBool_Check(score)) {
        *out = PyLong_AsDouble(score);
        if (!(*out == -1.0 && PyErr_Occurred())) return 0;
        PyErr_Clear();
    }
    /* Python code runs from here (a __float__, the converter): what the dicts lend us is kept. */
    if (PyList_Append(keep, doc_id) < 0 || PyList_Append(keep, score) < 0) return -1;
    /* numpy's scalars, Fraction ...: a numbers.Real (not numpy's bool, which is not one) other than
     * bool and int, read by its __float__; anything else, NaN and an infinity go to `convert`. */
    /* A cache of one type, read and written with the GIL held, compared by address only: so a
     * static type (numpy's scalars), never freed. A class's address could pass, once it is freed,
     * to a new type (a str subclass, say), then taken for a Real and its score parsed by float(). */
    static PyTypeObject *last_real;
    int real = Py_TYPE(score) == last_real;
    if (!real && real_type && !PyBool_Check(score) && !PyLong_Check(score)) {
        real = PyObject_IsInstance(score, real_type);
        if (real < 0) return -1;
        if (real && !(PyType_GetFlags(Py_TYPE(score)) & Py_TPFLAGS_HEAPTYPE)) last_real = Py_TYPE(score);
    }
    if (real) {
        PyObject *number = PyNumber_Float(score);
        if (number) {
            *out = PyFloat_AsDouble(number);
            Py_DECREF(number);
            if (*out == *out && !isinf(*out)) return 0; /* an infinity may be a finite number's overflow */
        }
        PyErr_Clear();
    }
    PyObject *value = PyObject_CallFunctionObjArgs(convert, query_id, doc_id, score, NULL);
    if (!value) return -1;
    *out = PyFloat_AsDouble(value);
    Py_DECREF(value);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* A dict's doc id as a doc's bytes and head (judged_ahead's id_of). */
struct id_source {
    PyObject *doc_id, *keep;
};

static inline int id_from_str(doc *d, void *arg) {
    const struct id_source *from = arg;
    if (!(d->id = utf8_of(from->doc_id, &d->len, from->keep))) return -1;
    d->head = head_of(d->id, d->len);
    return 0;
}

/* rank_mapping(run, qrels, query_ids, max_docs, convert, bad_doc) -> (num_ret, hit_query,
 * hit_rank, hit_grade) as bytes (int64, grades as float64). `run` and `qrels` are dicts of dicts;
 * a query of `query_ids` absent from the run has num_ret -1. `convert(query_id, doc_id, score)`
 * reads a score that is not a plain float or int (or raises); `bad_doc(query_id, doc_id)` raises
 * for a doc id that is not a str. */
static PyObject *rank_mapping(PyObject *module, PyObject *args) {
    module_state *state = PyModule_GetState(module);
    PyObject *real_type = state ? state->real : NULL;
    PyObject *run, *qrels, *query_ids, *convert, *bad_doc;
    long long max_docs;
    if (!PyArg_ParseTuple(args, "O!O!O!LOO", &PyDict_Type, &run, &PyDict_Type, &qrels, &PyList_Type, &query_ids,
                          &max_docs, &convert, &bad_doc))
        return NULL;
    Py_ssize_t nq = PyList_Size(query_ids);
    int64_t *num_ret = malloc((size_t)(nq ? nq : 1) * sizeof(int64_t));
    hits out = {0};
    scratch work = {0};
    PyObject *result = NULL, *keep = PyList_New(0);
    if (!keep) return NULL;
    if (!num_ret) {
        Py_DECREF(keep);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t q = 0; q < nq; q++) {
        PyObject *query_id = PyList_GetItem(query_ids, q);
        PyObject *ranking = PyDict_GetItemWithError(run, query_id);
        num_ret[q] = -1;
        if (!ranking) {
            if (PyErr_Occurred()) goto done;
            continue;
        }
        PyObject *judged = PyDict_GetItemWithError(qrels, query_id);
        if (!judged) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, query_id);
            goto done;
        }
        if (!PyDict_Check(ranking) || !PyDict_Check(judged)) {
            PyErr_SetString(PyExc_TypeError, "rank_mapping takes dicts of dicts");
            goto done;
        }
        /* Borrowed from the caller's dicts, which a score's __float__ could change: kept alive. */
        if (PyList_Append(keep, ranking) < 0 || PyList_Append(keep, judged) < 0) goto done;
        Py_ssize_t n = PyDict_Size(ranking);
        num_ret[q] = max_docs >= 0 && n > max_docs ? max_docs : n;
        /* The judged docs the ranking holds, with their scores, sorted: a dict lookup for each
         * judgement, not one for each doc. A bad score here is left for the pass below, which
         * meets every score in the ranking's order and names the first bad one. */
        if (scratch_fit(&work, PyDict_Size(judged)) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t pos = 0, k = 0;
        PyObject *doc_id, *score, *grade;
        while (PyDict_Next(judged, &pos, &doc_id, &grade)) {
            score = PyDict_GetItemWithError(ranking, doc_id);
            if (!score) {
                if (PyErr_Occurred()) goto done;
                continue;
            }
            if (k == work.cap) {
                PyErr_SetString(PyExc_RuntimeError, "the qrels changed while they were read");
                goto done;
            }
            doc *j = &work.judged[k];
            /* The grade is borrowed from `judged`, which a score's __float__ (run by score_of) may
             * change: held until it is read. */
            Py_INCREF(grade);
            if (score_of(score, convert, query_id, doc_id, keep, real_type, &j->score) < 0) {
                Py_DECREF(grade);
                PyErr_Clear();
                continue;
            }
            j->id = utf8_of(doc_id, &j->len, keep);
            if (!j->id || PyList_Append(keep, doc_id) < 0) { /* its UTF-8 lives with it */
                Py_DECREF(grade);
                goto done;
            }
            j->head = head_of(j->id, j->len);
            double g = PyFloat_AsDouble(grade);
            Py_DECREF(grade);
            if (g == -1.0 && PyErr_Occurred()) goto done;
            memcpy(&j->judgement, &g, sizeof g); /* the hit's grade, not an index (see the result) */
            k++;
        }
        scratch_sort(&work, k);
        /* Every doc: its id and score checked, and how many judged docs rank ahead of it. Its
         * id's bytes are needed only when its score ties a judged doc's. */
        pos = 0;
        while (PyDict_Next(ranking, &pos, &doc_id, &score)) {
            if (Py_TYPE(doc_id) != &PyUnicode_Type && !PyUnicode_Check(doc_id)) {
                PyObject *raised = PyObject_CallFunctionObjArgs(bad_doc, query_id, doc_id, NULL);
                Py_XDECREF(raised);
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a doc id that is not a str");
                goto done;
            }
            doc d = {0};
            int plain = Py_TYPE(score) == &PyFloat_Type; /* a float, not NaN: read here */
            if (plain) d.score = PyFloat_AsDouble(score);
            if (!(plain && d.score == d.score) && score_of(score, convert, query_id, doc_id, keep, real_type, &d.score) < 0)
                goto done;
            struct id_source from = {doc_id, keep};
            Py_ssize_t ahead = judged_ahead(work.judged, work.scores, work.heads, k, &d, id_from_str, &from);
            if (ahead < 0) goto done;
            work.count[ahead]++;
        }
        if (emit_hits(&work, k, q, max_docs, &out) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    /* Each hit's "judgement" is its grade's bits: float64 bytes. */
    result = Py_BuildValue("(NNNN)", int_bytes(num_ret, nq), int_bytes(out.query.v, out.query.n),
                           int_bytes(out.rank.v, out.rank.n), int_bytes(out.judgement.v, out.judgement.n));
done:
    Py_DECREF(keep);
    free(num_ret);
    free(out.query.v), free(out.rank.v), free(out.judgement.v);
    scratch_free(&work);
    return result;
}

/* ---------------------------------------------------------------- fusion's columns --------- */

#include "_columns.c" /* ef.fusion's loops: one extension, one door */

/* ---------------------------------------------------------------- the module -------------- */

static PyMethodDef methods[] = {
    {"read_run", read_run, METH_VARARGS, "read_run(data): the run as {query_id: {doc_id: score}}, or a fault."},
    {"deal", deal, METH_VARARGS, "deal(data, parts, final): whole lines dealt into parts by their first field."},
    {"rank_mapping", rank_mapping, METH_VARARGS,
     "rank_mapping(run, qrels, query_ids, max_docs, convert, bad_doc): the hits of a dict run."},
    {"stack_columns", stack_columns, METH_VARARGS, "stack_columns(runs): the lists, entries and pairs of runs."},
    {"stack_text", stack_text, METH_VARARGS, "stack_text(texts): stack_columns of TREC run texts, or None."},
    {"trec_order", trec_order, METH_VARARGS, "trec_order(group, score, doc, heads, ids): trec_eval's order."},
    {"build_run", build_run, METH_VARARGS, "build_run(queries, bounds, ids, doc, score): a run mapping."},
    {"rank_ranked", rank_ranked, METH_VARARGS, "rank_ranked(ks, bounds, ids, doc, judged, max_docs): a RankedRun's hits."},
    {"run_text", run_text, METH_VARARGS, "run_text(names, bounds, ids, doc, score, run_id, json): TREC lines."},
    {"writable", writable, METH_VARARGS, "writable(ids, query): whether write_run accepts every id."},
    {NULL, NULL, 0, NULL},
};

static int exec_module(PyObject *module) {
    if (!the_c_locale) the_c_locale = c_locale();
    if (!tens[22].hi) make_tens();
    if (!the_c_locale) {
        PyErr_SetString(PyExc_OSError, "cannot create the C locale");
        return -1;
    }
    if (!hash_seed) {
        int local;
        hash_seed = ((uint64_t)(uintptr_t)&local * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)time(NULL) ^ 1;
    }
    module_state *state = PyModule_GetState(module);
    PyObject *numbers = PyImport_ImportModule("numbers");
    state->real = numbers ? PyObject_GetAttrString(numbers, "Real") : NULL;
    Py_XDECREF(numbers);
    if (!state->real) return -1;
    PyObject *judged = PyType_FromModuleAndSpec(module, &Judged_spec, NULL);
    if (!judged) return -1;
    state->judged_type = Py_NewRef(judged);
    if (PyModule_AddObject(module, "Judged", judged) < 0) {
        Py_DECREF(judged);
        return -1;
    }
    PyObject *ranker = PyType_FromModuleAndSpec(module, &Ranker_spec, NULL);
    if (!ranker || PyModule_AddObject(module, "Ranker", ranker) < 0) {
        Py_XDECREF(ranker);
        return -1;
    }
    return 0;
}

static PyModuleDef_Slot slots[] = {{Py_mod_exec, exec_module}, {0, NULL}};

static int traverse_module(PyObject *module, visitproc visit, void *arg) {
    module_state *state = PyModule_GetState(module);
    if (state && state->judged_type) Py_VISIT(state->judged_type);
    if (state && state->real) Py_VISIT(state->real);
    return 0;
}

static int clear_module(PyObject *module) {
    module_state *state = PyModule_GetState(module);
    if (state) {
        Py_CLEAR(state->judged_type);
        Py_CLEAR(state->real);
    }
    return 0;
}

static void free_module(void *module) { clear_module((PyObject *)module); }

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "ef.evaluation._kernel", "ef's compiled run engine (see _kernel.c).", sizeof(module_state),
    methods, slots, traverse_module, clear_module, free_module,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModuleDef_Init(&module_def); }

/* ef.fusion's loops over every entry, compiled. ef.fusion works on flat columns (one entry per
 * run, query and doc); these are the loops numpy cannot do without a Python object or a full sort
 * each. Part of the run engine's extension module: included by _kernel.c, whose helpers it uses
 * (utf8_of, head_of, int_bytes, ints). Its only caller is ef.fusion, through the door's `engine`
 * (ef/evaluation/_hits.py); _reference.py holds the same functions in plain Python, the tests'
 * oracle. */

/* A pair's slot in a query's table: the doc id's str hash, the str, the pair's number, and the
 * query whose table it is in (plus one: a slot of another query is empty, so none is cleared). */
typedef struct {
    Py_hash_t hash;
    PyObject *id;
    int64_t pair, query;
} pair_slot;

typedef struct {
    PyObject *docs; /* a run's dict for the query (borrowed from the runs) */
    int64_t run, query, at; /* whose list, and where its entries go */
} run_list;

/* Whether entry i of a list follows entry i - 1 in trec_eval's order, as far as the scores and the
 * heads tell (equal heads: not known, so not in order). */
static inline int follows(const double *score, const int64_t *doc, const int64_t *head, Py_ssize_t i) {
    uint64_t was = (uint64_t)head[doc[i - 1]], is = (uint64_t)head[doc[i]];
    return score[i - 1] > score[i] || (score[i - 1] == score[i] && was > is);
}

/* Sorts the lists by query, stably (a counting sort): query q's lists are by_query[lo:start[q]], lo
 * being start[q - 1] (0 for the first). Returns the size of a table for the most entries one query
 * has (a power of two, at least twice them), or -1 when out of memory (the caller frees both). */
static Py_ssize_t sort_lists(const int64_t *query, const int64_t *size, Py_ssize_t n_lists, Py_ssize_t n_queries,
                             int64_t **start, int64_t **by_query) {
    Py_ssize_t widest = 0, capacity = 16;
    *start = calloc((size_t)n_queries + 1, 8);
    *by_query = malloc((size_t)(n_lists ? n_lists : 1) * 8);
    if (!*start || !*by_query) return -1;
    int64_t *at = *start;
    for (Py_ssize_t k = 0; k < n_lists; k++) at[query[k] + 1] += size[k];
    for (Py_ssize_t q = 0; q < n_queries; q++) widest = at[q + 1] > widest ? at[q + 1] : widest;
    memset(at, 0, ((size_t)n_queries + 1) * 8);
    for (Py_ssize_t k = 0; k < n_lists; k++) at[query[k] + 1]++;
    for (Py_ssize_t q = 0; q < n_queries; q++) at[q + 1] += at[q];
    for (Py_ssize_t k = 0; k < n_lists; k++) (*by_query)[at[query[k]]++] = k;
    while (capacity < 2 * widest) capacity *= 2;
    return capacity;
}

/* stack_columns(runs) -> (queries, ids, pair_query, pair_head, list_run, list_query, list_size, doc, score,
 * ordered),
 * or None where a run is not a dict of dicts of str ids and float scores (exact types: the caller
 * checks and copies anything else). The lists of `runs`, run by run in the dicts' order: each
 * list's run, query (numbered in first-appearance order; `queries` are their ids) and size; each
 * entry's score and pair: each distinct (query, doc id), numbered query by query in order of
 * first appearance, `ids` its doc id, `pair_query` its query and `pair_head` its id's head for
 * trec_order (int64, uint64 and float64 bytes); `ordered` is True when every list is known to be
 * in trec_eval's order already (as a file's usually is: a tie on equal heads is not known). The
 * docs of a query are matched in a table of that query's alone, which stays in cache. */
static PyObject *stack_columns(PyObject *module, PyObject *args) {
    PyObject *runs, *query_index = PyDict_New(), *queries = PyList_New(0), *ids = PyList_New(0), *result = NULL;
    PyObject *keep = PyList_New(0), *doc_bytes = NULL, *score_bytes = NULL;
    run_list *lists = NULL;
    pair_slot *table = NULL;
    int64_t *start = NULL, *by_query = NULL, *doc = NULL;
    double *score = NULL;
    ints pair_query = {0}, pair_head = {0}, list_run = {0}, list_query = {0}, list_size = {0};
    Py_ssize_t n_lists = 0, n = 0;
    int ordered = 1;
    if (!query_index || !queries || !ids || !keep || !PyArg_ParseTuple(args, "O!", &PyList_Type, &runs)) goto done;
    Py_ssize_t n_runs = PyList_Size(runs);
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        PyObject *run = PyList_GetItem(runs, r);
        if (!PyDict_CheckExact(run)) goto plain;
        n_lists += PyDict_Size(run);
    }
    lists = malloc((size_t)(n_lists ? n_lists : 1) * sizeof(run_list));
    if (!lists) goto no_memory;
    Py_ssize_t k = 0;
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        PyObject *run = PyList_GetItem(runs, r), *query_id, *docs;
        for (Py_ssize_t pos = 0; PyDict_Next(run, &pos, &query_id, &docs);) {
            if (!PyUnicode_CheckExact(query_id) || !PyDict_CheckExact(docs)) goto plain;
            if (k == n_lists) goto changed;
            PyObject *known = PyDict_GetItemWithError(query_index, query_id);
            int64_t q = known ? PyLong_AsLongLong(known) : PyList_Size(queries);
            if (!known) {
                PyObject *number = PyLong_FromLongLong(q);
                int failed = PyErr_Occurred() || !number || PyDict_SetItem(query_index, query_id, number) < 0 ||
                             PyList_Append(queries, query_id) < 0;
                Py_XDECREF(number);
                if (failed) goto done;
            }
            Py_ssize_t size = PyDict_Size(docs);
            lists[k++] = (run_list){docs, r, q, n};
            n += size;
            if (ints_push(&list_run, r) < 0 || ints_push(&list_query, q) < 0 || ints_push(&list_size, size) < 0)
                goto no_memory;
        }
    }
    if (k != n_lists) goto changed;
    Py_ssize_t n_queries = PyList_Size(queries);
    Py_ssize_t capacity = sort_lists(list_query.v, list_size.v, n_lists, n_queries, &start, &by_query);
    if (!(doc = new_ints(&doc_bytes, n)) || !(score = (double *)new_ints(&score_bytes, n))) goto done;
    if (capacity < 0 || !(table = calloc((size_t)capacity, sizeof(pair_slot)))) goto no_memory;
    for (Py_ssize_t q = 0, lo = 0; q < n_queries; lo = start[q++]) {
        Py_ssize_t entries = 0, mask = 15;
        for (Py_ssize_t at = lo; at < start[q]; at++) entries += list_size.v[by_query[at]];
        while (mask + 1 < 2 * entries) mask = 2 * mask + 1; /* at least twice the query's entries */
        for (Py_ssize_t at = lo; at < start[q]; at++) {
            run_list *list = &lists[by_query[at]];
            PyObject *doc_id, *value;
            Py_ssize_t i = list->at, end = list->at + list_size.v[by_query[at]];
            for (Py_ssize_t pos = 0; PyDict_Next(list->docs, &pos, &doc_id, &value);) {
                if (!PyUnicode_CheckExact(doc_id) || !PyFloat_CheckExact(value)) goto plain;
                if (i == end) goto changed;
                Py_hash_t hash = PyObject_Hash(doc_id); /* a str's hash is cached: no rehash */
                if (hash == -1) goto done;
                Py_ssize_t h = (Py_ssize_t)((size_t)hash & (size_t)mask);
                for (;; h = (h + 1) & mask) {
                    pair_slot *slot = &table[h];
                    if (slot->query != q + 1) {
                        *slot = (pair_slot){hash, doc_id, pair_query.n, q + 1};
                        Py_ssize_t len;
                        const char *bytes = utf8_of(doc_id, &len, keep);
                        if (!bytes) goto done;
                        if (ints_push(&pair_query, q) < 0 || ints_push(&pair_head, (int64_t)head_of(bytes, len)) < 0)
                            goto no_memory;
                        if (PyList_Append(ids, doc_id) < 0) goto done;
                        break;
                    }
                    if (slot->hash == hash && (slot->id == doc_id || PyUnicode_Compare(slot->id, doc_id) == 0)) break;
                }
                doc[i] = table[h].pair;
                score[i] = PyFloat_AsDouble(value);
                if (i > list->at && ordered) ordered = follows(score, doc, pair_head.v, i);
                i++;
            }
            if (i != end) goto changed;
        }
    }
    result = Py_BuildValue("(OONNNNNNNO)", queries, ids, int_bytes(pair_query.v, pair_query.n),
                           int_bytes(pair_head.v, pair_head.n),
                           int_bytes(list_run.v, list_run.n), int_bytes(list_query.v, list_query.n),
                           int_bytes(list_size.v, list_size.n), doc_bytes, score_bytes,
                           ordered ? Py_True : Py_False);
    doc_bytes = score_bytes = NULL; /* Py_BuildValue's N took them, or freed them on an error */
    goto done;
plain:
    result = Py_NewRef(Py_None);
    goto done;
changed:
    PyErr_SetString(PyExc_RuntimeError, "a run changed while it was read");
    goto done;
no_memory:
    PyErr_NoMemory();
done:
    Py_XDECREF(query_index), Py_XDECREF(queries), Py_XDECREF(ids), Py_XDECREF(keep);
    Py_XDECREF(doc_bytes), Py_XDECREF(score_bytes);
    free(lists), free(table), free(start), free(by_query);
    free(pair_query.v), free(pair_head.v), free(list_run.v), free(list_query.v), free(list_size.v);
    return result;
}

/* A pair's slot in stack_text's table of one query: the doc id's hash and bytes (in the run's
 * text), the pair's number and the query (plus one, as in pair_slot). */
typedef struct {
    uint64_t hash;
    const char *id;
    Py_ssize_t len;
    int64_t pair, query;
} text_slot;

/* stack_text(texts) -> stack_columns([read_run(text) for text in texts]), from TREC run texts
 * (bytes-like) without a dict or a float object made; or None where read_run's dicts are needed:
 * a fault for read_run to name, a doc id twice in a query, or a query whose lines come back after
 * another query's (scattered). Each text is tokenised once, its lines kept list by list (a list:
 * one query's lines of one run) as their doc ids' offsets and scores, 24 bytes a line; then, query
 * by query as in stack_columns, each doc id is matched in a table of that query's alone. */
static PyObject *stack_text(PyObject *module, PyObject *args) {
    PyObject *texts, *queries = PyList_New(0), *ids = PyList_New(0), *result = NULL, *doc_bytes = NULL;
    Py_buffer *views = NULL;
    Py_ssize_t n_runs = 0, n_views = 0;
    ints id_at = {0}, id_end = {0}, bits = {0}; /* each line's doc id (offsets) and score, list after list */
    table codes = {0}; /* query id -> query number */
    ints list_run = {0}, list_query = {0}, list_size = {0}, list_first = {0}, last_run = {0};
    ints pair_query = {0}, pair_head = {0}, pair_list = {0}; /* pair_list: the last list holding the pair */
    int64_t *start = NULL, *by_query = NULL, *doc = NULL;
    text_slot *slots = NULL;
    int ordered = 1;
    if (!queries || !ids || !PyArg_ParseTuple(args, "O!", &PyList_Type, &texts)) goto done;
    n_runs = PyList_Size(texts);
    if (!(views = calloc((size_t)(n_runs ? n_runs : 1), sizeof(Py_buffer))) || table_init(&codes, 64) < 0)
        goto no_memory;
    for (; n_views < n_runs; n_views++)
        if (PyObject_GetBuffer(PyList_GetItem(texts, n_views), &views[n_views], PyBUF_SIMPLE) < 0) goto done;
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        const char *p = views[r].buf;
        Py_ssize_t size = views[r].len, at = 0, next, run_id[2];
        row got, last = {-1, -1, 0, 0, 0.0}; /* last.q0 < 0: no line yet */
        for (int64_t line = 1; at < size; at = next, line++) {
            fault f = {0};
            int kind = read_line(p, size, at, line, &got, run_id, &next, &f);
            if (kind < 0) goto plain;
            if (!kind) continue;
            if (last.q0 < 0 || !same_query(p, &last, &got)) { /* a list starts */
                Py_ssize_t n = got.q1 - got.q0;
                uint64_t h = hash_bytes(p + got.q0, n, 0);
                int64_t q = table_get(&codes, p + got.q0, n, h);
                if (q < 0) {
                    q = PyList_Size(queries);
                    PyObject *query_id = PyUnicode_DecodeUTF8(p + got.q0, n, "strict");
                    if (!query_id) goto plain;
                    int failed = PyList_Append(queries, query_id);
                    Py_DECREF(query_id);
                    if (failed) goto done;
                    if (table_add(&codes, p + got.q0, n, h, q) < 0 || ints_push(&last_run, -1) < 0) goto no_memory;
                } else if (last_run.v[q] == r) {
                    goto plain; /* scattered: read_run gathers the query's lines */
                }
                last_run.v[q] = r;
                if (ints_push(&list_run, r) < 0 || ints_push(&list_query, q) < 0 || ints_push(&list_size, 0) < 0 ||
                    ints_push(&list_first, id_at.n) < 0)
                    goto no_memory;
            }
            list_size.v[list_size.n - 1]++;
            int64_t score_bits;
            memcpy(&score_bits, &got.score, 8);
            if (ints_push(&id_at, got.d0) < 0 || ints_push(&id_end, got.d1) < 0 || ints_push(&bits, score_bits) < 0)
                goto no_memory;
            last = got;
        }
    }
    Py_ssize_t n_queries = PyList_Size(queries), n_lists = list_run.n, n = id_at.n;
    const double *score = (const double *)bits.v; /* the scores, in place */
    Py_ssize_t capacity = sort_lists(list_query.v, list_size.v, n_lists, n_queries, &start, &by_query);
    if (!(doc = new_ints(&doc_bytes, n))) goto done;
    if (capacity < 0 || !(slots = calloc((size_t)capacity, sizeof(text_slot)))) goto no_memory;
    for (Py_ssize_t q = 0, lo = 0; q < n_queries; lo = start[q++]) {
        Py_ssize_t entries = 0, mask = 15;
        for (Py_ssize_t at = lo; at < start[q]; at++) entries += list_size.v[by_query[at]];
        while (mask + 1 < 2 * entries) mask = 2 * mask + 1;
        for (Py_ssize_t at = lo; at < start[q]; at++) {
            int64_t k = by_query[at];
            const char *p = views[list_run.v[k]].buf;
            for (Py_ssize_t i = list_first.v[k]; i < list_first.v[k] + list_size.v[k]; i++) {
                const char *id = p + id_at.v[i];
                Py_ssize_t len = id_end.v[i] - id_at.v[i];
                uint64_t hash = hash_bytes(id, len, 0);
                Py_ssize_t h = (Py_ssize_t)(hash & (uint64_t)mask);
                for (;; h = (h + 1) & mask) {
                    text_slot *slot = &slots[h];
                    if (slot->query != q + 1) {
                        *slot = (text_slot){hash, id, len, pair_query.n, q + 1};
                        PyObject *doc_id = PyUnicode_DecodeUTF8(id, len, "strict");
                        if (!doc_id) goto plain;
                        int failed = PyList_Append(ids, doc_id);
                        Py_DECREF(doc_id);
                        if (failed) goto done;
                        if (ints_push(&pair_query, q) < 0 || ints_push(&pair_head, (int64_t)head_of(id, len)) < 0 ||
                            ints_push(&pair_list, k) < 0)
                            goto no_memory;
                        break;
                    }
                    if (slot->hash == hash && same_bytes(slot->id, slot->len, id, len)) {
                        if (pair_list.v[slot->pair] == k) goto plain; /* twice in the list */
                        pair_list.v[slot->pair] = k;
                        break;
                    }
                }
                doc[i] = slots[h].pair;
                if (i > list_first.v[k] && ordered) ordered = follows(score, doc, pair_head.v, i);
            }
        }
    }
    result = Py_BuildValue("(OONNNNNNNO)", queries, ids, int_bytes(pair_query.v, pair_query.n),
                           int_bytes(pair_head.v, pair_head.n), int_bytes(list_run.v, list_run.n),
                           int_bytes(list_query.v, list_query.n), int_bytes(list_size.v, list_size.n),
                           doc_bytes, int_bytes(bits.v, n), ordered ? Py_True : Py_False);
    doc_bytes = NULL; /* Py_BuildValue's N took it, or freed it on an error */
    goto done;
plain: /* a fault, a doc twice, a scattered query, an id that would not decode: read_run's to say */
    PyErr_Clear();
    result = Py_NewRef(Py_None);
    goto done;
no_memory:
    PyErr_NoMemory();
done:
    for (Py_ssize_t r = 0; r < n_views; r++) PyBuffer_Release(&views[r]);
    Py_XDECREF(queries), Py_XDECREF(ids), Py_XDECREF(doc_bytes);
    free(views), free(id_at.v), free(id_end.v), free(bits.v), table_free(&codes), free(start), free(by_query);
    free(slots);
    free(list_run.v), free(list_query.v), free(list_size.v), free(list_first.v), free(last_run.v);
    free(pair_query.v), free(pair_head.v), free(pair_list.v);
    return result;
}

/* trec_order's doc ids: each code's head (the first 8 bytes of its id, big-endian: see head_of)
 * and, on equal heads, its id's UTF-8 bytes, read from the list `ids` the first time they are
 * needed; without `ids`, heads are codes that order themselves. */
typedef struct {
    const uint64_t *head;
    PyObject *ids, *keep;
    const char **id;
    Py_ssize_t *len;
} tie_ids;

/* Does doc `a` rank ahead of doc `b` when their scores tie? 1 or 0, or -1 on an error. */
static int tie_ahead(tie_ids *t, int64_t a, int64_t b) {
    if (t->head[a] != t->head[b] || !t->ids) return t->head[a] > t->head[b];
    for (int k = 0; k < 2; k++) {
        int64_t code = k ? b : a;
        if (!t->id[code] && !(t->id[code] = utf8_of(PyList_GetItem(t->ids, code), &t->len[code], t->keep))) return -1;
    }
    Py_ssize_t na = t->len[a], nb = t->len[b];
    int c = memcmp(t->id[a], t->id[b], (size_t)(na < nb ? na : nb));
    return c ? c > 0 : na > nb;
}

/* A score as a key whose ascending order is the scores' descending order (-0.0 as 0.0). */
static inline uint64_t descending_key(double score) {
    uint64_t bits;
    score += 0.0;
    memcpy(&bits, &score, 8);
    return bits >> 63 ? bits : ~bits & 0x7FFFFFFFFFFFFFFFULL;
}

typedef struct {
    uint64_t key;
    int64_t index;
} keyed;

static void insertion_sort(keyed *keys, Py_ssize_t m) {
    for (Py_ssize_t i = 1; i < m; i++) {
        keyed x = keys[i];
        Py_ssize_t j = i;
        for (; j > 0 && keys[j - 1].key > x.key; j--) keys[j] = keys[j - 1];
        keys[j] = x;
    }
}

/* keys[0:m] sorted by key, stably, through `spare` (m free slots) and `count` (room for one
 * bucket count per level): a bucket sort on the bits just below those all keys share, about one
 * key a bucket, each bucket of over 32 keys sorted the same way, the rest by insertion. A
 * bucket's keys share 6 or more bits more than its list's did, so there are at most 11 levels. */
static void sort_keys(keyed *keys, keyed *spare, Py_ssize_t m, Py_ssize_t *count) {
    if (m <= 32) {
        insertion_sort(keys, m);
        return;
    }
    uint64_t low = keys[0].key, high = low;
    for (Py_ssize_t i = 1; i < m; i++)
        low = keys[i].key < low ? keys[i].key : low, high = keys[i].key > high ? keys[i].key : high;
    if (low == high) return;
    int spread = 0, bits = 6; /* the bits that differ; about log2(m) of them pick the bucket */
    for (uint64_t differ = high - low; differ; differ >>= 1) spread++;
    while (bits < 12 && ((Py_ssize_t)1 << bits) < m) bits++;
    int shift = spread > bits ? spread - bits : 0;
    Py_ssize_t buckets = (Py_ssize_t)1 << bits;
    memset(count, 0, (size_t)(buckets + 1) * sizeof *count);
    for (Py_ssize_t i = 0; i < m; i++) count[((keys[i].key - low) >> shift) + 1]++;
    for (Py_ssize_t b = 0; b < buckets; b++) count[b + 1] += count[b];
    for (Py_ssize_t i = 0; i < m; i++) spare[count[(keys[i].key - low) >> shift]++] = keys[i];
    /* count[b] is now bucket b's end: bucket b holds spare[count[b - 1]:count[b]] */
    for (Py_ssize_t b = 0, lo = 0; b < buckets; lo = count[b++]) {
        Py_ssize_t size = count[b] - lo;
        if (size > 32) sort_keys(spare + lo, keys + lo, size, count + buckets + 1);
        else if (size > 1) insertion_sort(spare + lo, size);
    }
    memcpy(keys, spare, (size_t)m * sizeof(keyed));
}

/* keys[0:m], whose scores tie, in trec_eval's order by doc, stably: an insertion sort for a short
 * tie, a bottom-up merge sort through `spare` (m free slots) for a long one (a list of constant
 * scores), which an insertion sort would take m^2 / 4 id comparisons for. */
static int sort_tie(keyed *keys, keyed *spare, Py_ssize_t m, const int64_t *doc, tie_ids *t) {
    if (m > 32) {
        keyed *from = keys, *to = spare;
        for (Py_ssize_t width = 1; width < m; width *= 2) {
            for (Py_ssize_t lo = 0; lo < m; lo += 2 * width) {
                Py_ssize_t mid = lo + width < m ? lo + width : m, hi = lo + 2 * width < m ? lo + 2 * width : m;
                Py_ssize_t i = lo, j = mid, o = lo;
                while (i < mid && j < hi) { /* the right one first only when it ranks ahead: stable */
                    int64_t a = doc[from[i].index], b = doc[from[j].index];
                    int ahead = a == b ? 0 : tie_ahead(t, b, a);
                    if (ahead < 0) return -1;
                    to[o++] = ahead ? from[j++] : from[i++];
                }
                while (i < mid) to[o++] = from[i++];
                while (j < hi) to[o++] = from[j++];
            }
            keyed *x = from;
            from = to, to = x;
        }
        if (from != keys) memcpy(keys, from, (size_t)m * sizeof(keyed));
        return 0;
    }
    for (Py_ssize_t i = 1; i < m; i++) {
        keyed x = keys[i];
        Py_ssize_t j = i;
        for (; j > 0; j--) {
            int64_t before = doc[keys[j - 1].index];
            int ahead = before == doc[x.index] ? 0 : tie_ahead(t, doc[x.index], before);
            if (ahead < 0) return -1;
            if (!ahead) break;
            keys[j] = keys[j - 1];
        }
        keys[j] = x;
    }
    return 0;
}

/* Whether `view` holds n 8-byte numbers, aligned (numpy's arrays and bytes objects are). */
static int buffer_of(Py_buffer *view, Py_ssize_t n, const char *name) {
    if (view->len != n * 8 || (uintptr_t)view->buf % 8) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd aligned 8-byte numbers (got %zd bytes)", name, n, view->len);
        return -1;
    }
    return 0;
}

/* trec_order(group, score, doc, heads, ids) -> the permutation (int64 bytes) that orders the
 * entries by group ascending, then score descending, then doc descending: by heads[doc] (uint64),
 * then, on equal heads, by the UTF-8 bytes of ids[doc] (or, with `ids` None, not at all);
 * entries equal in all keep their order. Entries are counted into their groups (stable, one
 * pass); a group out of order is bucket-sorted by score, and each run of equal scores by doc. */
static PyObject *trec_order(PyObject *module, PyObject *args) {
    Py_buffer g, s, d, h;
    PyObject *ids, *result = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*O", &g, &s, &d, &h, &ids)) return NULL;
    Py_ssize_t n = g.len / 8, n_codes = h.len / 8, widest = 0;
    const int64_t *group = g.buf, *doc = d.buf;
    const double *score = s.buf;
    int64_t *out = new_ints(&result, n), *start = NULL;
    keyed *keys = NULL, *spare = NULL;
    Py_ssize_t *count = NULL;
    tie_ids ties = {h.buf, NULL, NULL, NULL, NULL};
    if (!out) goto done;
    if (buffer_of(&g, n, "group") < 0 || buffer_of(&s, n, "score") < 0 || buffer_of(&d, n, "doc") < 0 ||
        buffer_of(&h, n_codes, "heads") < 0)
        goto done;
    if (ids != Py_None) {
        if (!PyList_Check(ids) || PyList_Size(ids) != n_codes) {
            PyErr_SetString(PyExc_TypeError, "ids must be a list of str, one per head, or None");
            goto done;
        }
        ties.ids = ids;
        ties.keep = PyList_New(0);
        ties.id = calloc((size_t)(n_codes ? n_codes : 1), sizeof(char *));
        ties.len = calloc((size_t)(n_codes ? n_codes : 1), sizeof(Py_ssize_t));
        if (!ties.keep || !ties.id || !ties.len) goto no_memory;
    }
    int64_t low = n ? group[0] : 0, high = low;
    int grouped = 1; /* each group's entries together, groups ascending: no need to count them in */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (doc[i] < 0 || doc[i] >= n_codes || score[i] != score[i]) {
            PyErr_SetString(PyExc_ValueError, "a doc code is out of range or a score is NaN");
            goto done;
        }
        low = group[i] < low ? group[i] : low, high = group[i] > high ? group[i] : high;
        grouped &= !i || group[i] >= group[i - 1];
    }
    if (n && (uint64_t)high - (uint64_t)low > 4 * (uint64_t)n) { /* the caller renumbers such groups */
        PyErr_SetString(PyExc_ValueError, "group codes span more than 4 per entry");
        goto done;
    }
    Py_ssize_t span = n ? (Py_ssize_t)(high - low) + 1 : 0;
    start = calloc((size_t)span + 1, 8);
    if (!start) goto no_memory;
    for (Py_ssize_t i = 0; i < n; i++) start[group[i] - low + 1]++;
    for (Py_ssize_t k = 0; k < span; k++) {
        widest = start[k + 1] > widest ? start[k + 1] : widest;
        start[k + 1] += start[k];
    }
    if (grouped) {
        for (Py_ssize_t i = 0; i < n; i++) out[i] = i;
        memmove(start, start + 1, (size_t)span * 8); /* start[k]: group k's end, as after counting in */
    } else {
        for (Py_ssize_t i = 0; i < n; i++) out[start[group[i] - low]++] = i;
    }
    keys = malloc((size_t)(widest ? widest : 1) * sizeof(keyed));
    spare = malloc((size_t)(widest ? widest : 1) * sizeof(keyed));
    count = malloc(13 * ((1 << 12) + 1) * sizeof *count); /* a level's counts, for each of sort_keys' levels */
    if (!keys || !spare || !count) goto no_memory;
    for (Py_ssize_t k = 0, lo = 0; k < span; lo = start[k++]) {
        Py_ssize_t m = start[k] - lo, sorted = 1;
        for (Py_ssize_t i = 0; i < m; i++) {
            int64_t at = out[lo + i];
            keys[i] = (keyed){descending_key(score[at]), at};
            if (i && sorted && keys[i - 1].key >= keys[i].key) {
                int64_t before = doc[keys[i - 1].index];
                int ahead = keys[i - 1].key > keys[i].key ? 0 : before == doc[at] ? 1 : tie_ahead(&ties, before, doc[at]);
                if (ahead < 0) goto done;
                sorted = ahead;
            }
        }
        if (sorted) continue;
        sort_keys(keys, spare, m, count);
        for (Py_ssize_t i = 0, j; i < m; i = j) {
            for (j = i + 1; j < m && keys[j].key == keys[i].key;) j++;
            if (j - i > 1 && sort_tie(keys + i, spare + i, j - i, doc, &ties) < 0) goto done;
        }
        for (Py_ssize_t i = 0; i < m; i++) out[lo + i] = keys[i].index;
    }
    goto done;
no_memory:
    PyErr_NoMemory();
done:
    PyBuffer_Release(&g), PyBuffer_Release(&s), PyBuffer_Release(&d), PyBuffer_Release(&h);
    Py_XDECREF(ties.keep);
    if (PyErr_Occurred()) Py_CLEAR(result);
    free(start), free(keys), free(spare), free(count), free((void *)ties.id), free(ties.len);
    return result;
}

/* Whether bounds (n_queries + 1 int64), doc (int64 codes below n_ids) and score (float64) hold
 * the entries of n_queries queries: the bounds rising within the entries, every code in range. */
static int entries_of(Py_buffer *b, Py_buffer *d, Py_buffer *s, Py_ssize_t n_queries, Py_ssize_t n_ids) {
    Py_ssize_t n = d->len / 8;
    const int64_t *bounds = b->buf, *doc = d->buf;
    if (buffer_of(b, n_queries + 1, "bounds") < 0 || buffer_of(d, n, "doc") < 0 || buffer_of(s, n, "score") < 0)
        return -1;
    for (Py_ssize_t k = 0; k <= n_queries; k++) {
        if (bounds[k] < (k ? bounds[k - 1] : 0) || bounds[k] > n) {
            PyErr_SetString(PyExc_ValueError, "bounds must rise within the entries");
            return -1;
        }
    }
    for (Py_ssize_t i = bounds[0]; i < bounds[n_queries]; i++) { /* the entries read (run_text: a few queries') */
        if (doc[i] < 0 || doc[i] >= n_ids) {
            PyErr_Format(PyExc_ValueError, "doc code %lld is out of range", (long long)doc[i]);
            return -1;
        }
    }
    return 0;
}

/* build_run(queries, bounds, ids, doc, score) -> {queries[k]: {ids[doc[i]]: score[i] for i in
 * bounds[k]..bounds[k + 1]}}: a fused run as the mapping fuse() returns (int64 bounds and codes,
 * float64 scores). */
static PyObject *build_run(PyObject *module, PyObject *args) {
    PyObject *queries, *ids, *out = NULL;
    Py_buffer b, d, s;
    if (!PyArg_ParseTuple(args, "O!y*O!y*y*", &PyList_Type, &queries, &b, &PyList_Type, &ids, &d, &s)) return NULL;
    const int64_t *bounds = b.buf, *doc = d.buf;
    const double *score = s.buf;
    Py_ssize_t n_queries = PyList_Size(queries);
    if (entries_of(&b, &d, &s, n_queries, PyList_Size(ids)) < 0) goto done;
    out = PyDict_New();
    for (Py_ssize_t k = 0; out && k < n_queries; k++) {
        PyObject *inner = PyDict_New(), *value = NULL;
        for (int64_t i = bounds[k]; inner && i < bounds[k + 1]; i++) {
            if (!value || memcmp(&score[i], &score[i - 1], 8)) { /* ties share one float (they are immutable) */
                Py_XDECREF(value);
                value = PyFloat_FromDouble(score[i]);
            }
            /* NULL (IndexError) if a finalizer run by the collector from PyDict_New shrank the list */
            PyObject *id = value ? PyList_GetItem(ids, doc[i]) : NULL;
            if (!id || PyDict_SetItem(inner, id, value) < 0) Py_CLEAR(inner);
        }
        Py_XDECREF(value);
        PyObject *query = inner ? PyList_GetItem(queries, k) : NULL;
        if (!query || PyDict_SetItem(out, query, inner) < 0) Py_CLEAR(out);
        Py_XDECREF(inner);
    }
done:
    PyBuffer_Release(&b), PyBuffer_Release(&d), PyBuffer_Release(&s);
    return out;
}

/* rank_ranked(ks, bounds, ids, doc, judged, max_docs) -> rank_mapping's (num_ret, hit_query,
 * hit_rank, hit_grade) for a run ranked already (a RankedRun's arrays): evaluated query i is the
 * run's query ks[i] (-1: not in the run), entries bounds[k]:bounds[k + 1] in trec_eval's order,
 * so an entry's rank is its place; judged[i] is query i's {doc_id: grade}. One dict lookup an
 * entry, no sort and no dict of the run. */
static PyObject *rank_ranked(PyObject *module, PyObject *args) {
    PyObject *ids, *judged, *grades = NULL, *result = NULL;
    Py_buffer kb, b, d;
    long long max_docs;
    if (!PyArg_ParseTuple(args, "y*y*O!y*O!L", &kb, &b, &PyList_Type, &ids, &d, &PyList_Type, &judged, &max_docs))
        return NULL;
    Py_ssize_t n = PyList_Size(judged), n_queries = b.len / 8 - 1;
    const int64_t *ks = kb.buf, *bounds = b.buf, *doc = d.buf;
    int64_t *num_ret = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    hits out = {0};
    if (!num_ret) {
        PyErr_NoMemory();
        goto done;
    }
    /* entries_of checks bounds and codes; `doc` stands in for the scores a RankedRun's ranks need not read */
    if (buffer_of(&kb, n, "ks") < 0 || n_queries < 0 || entries_of(&b, &d, &d, n_queries, PyList_Size(ids)) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bounds must hold at least one number");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        /* Python code may run below (a str subclass's __eq__, a grade's __float__) and change the
         * caller's arrays or lists: each number is read once and checked where it is used. */
        int64_t k = ks[i], lo = 0, hi = 0;
        if (k >= 0 && k < n_queries) lo = bounds[k], hi = bounds[k + 1];
        num_ret[i] = -1;
        if (k < 0) continue;
        PyObject *given = PyList_GetItem(judged, i);
        if (k >= n_queries || lo < 0 || hi < lo || hi > d.len / 8 || !given || !PyDict_Check(given)) {
            PyErr_SetString(PyExc_ValueError, "rank_ranked takes query numbers in range and a dict per query");
            goto done;
        }
        grades = Py_NewRef(given);
        num_ret[i] = max_docs >= 0 && hi - lo > max_docs ? max_docs : hi - lo;
        for (int64_t j = 0; j < hi - lo; j++) { /* every id checked, as the dicts' path checks every doc */
            PyObject *id = PyList_GetItem(ids, doc[lo + j]); /* NULL (IndexError): the list shrank */
            if (!id || !PyUnicode_Check(id)) {
                if (id) PyErr_Format(PyExc_TypeError, "a RankedRun's doc ids must be str (got %R)", id);
                goto done;
            }
            if (j >= num_ret[i]) continue;
            Py_INCREF(id); /* kept through the lookup, whatever its __eq__ does to the list */
            PyObject *grade = PyDict_GetItemWithError(grades, id);
            Py_DECREF(id);
            if (!grade) {
                if (PyErr_Occurred()) goto done;
                continue;
            }
            Py_INCREF(grade); /* its __float__, if any, may empty the dict */
            double g = PyFloat_AsDouble(grade);
            Py_DECREF(grade);
            int64_t bits;
            memcpy(&bits, &g, 8);
            if (g == -1.0 && PyErr_Occurred()) goto done;
            if (ints_push(&out.query, i) < 0 || ints_push(&out.rank, j) < 0 || ints_push(&out.judgement, bits) < 0) {
                PyErr_NoMemory();
                goto done;
            }
        }
        Py_CLEAR(grades);
    }
    /* As rank_mapping's: each hit's "judgement" is its grade's bits (float64 bytes). */
    result = Py_BuildValue("(NNNN)", int_bytes(num_ret, n), int_bytes(out.query.v, out.query.n),
                           int_bytes(out.rank.v, out.rank.n), int_bytes(out.judgement.v, out.judgement.n));
done:
    Py_XDECREF(grades);
    PyBuffer_Release(&kb), PyBuffer_Release(&b), PyBuffer_Release(&d);
    free(num_ret), free(out.query.v), free(out.rank.v), free(out.judgement.v);
    return result;
}


/* A TREC id write_run accepts: non-empty, valid UTF-8 (no lone surrogate), no whitespace trec_eval
 * splits on and no NUL; a query id must not start with '#' either. Its UTF-8, or NULL. */
static const char *plain_id(PyObject *id, Py_ssize_t *n, int query) {
    const char *p = id && PyUnicode_CheckExact(id) ? PyUnicode_AsUTF8AndSize(id, n) : NULL;
    if (!p) {
        PyErr_Clear();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *n; i++)
        if ((unsigned char)p[i] <= ' ' && strchr(" \t\n\r\v\f", p[i]))
            return NULL; /* a NUL too: strchr finds the terminating one */
    return *n && !(query && p[0] == '#') ? p : NULL;
}

/* writable(ids, query) -> whether every id of the list is one write_run accepts (as a query id). */
static PyObject *writable(PyObject *module, PyObject *args) {
    PyObject *ids;
    int query;
    if (!PyArg_ParseTuple(args, "O!p", &PyList_Type, &ids, &query)) return NULL;
    for (Py_ssize_t i = 0, n; i < PyList_Size(ids); i++)
        if (!plain_id(PyList_GetItem(ids, i), &n, query)) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

typedef struct {
    char *v;
    Py_ssize_t n, size;
} text;

/* Room for n more bytes: where they go, or NULL. */
static char *text_room(text *t, Py_ssize_t n) {
    if (t->n + n > t->size) {
        Py_ssize_t size = 2 * (t->n + n) + 4096;
        char *grown = realloc(t->v, (size_t)size);
        if (!grown) return NULL;
        t->v = grown, t->size = size;
    }
    return t->v + t->n;
}

/* A score as Python's repr spells it, from the shortest digits that read back written in any
 * notation (orjson's JSON, which picks the same digits as repr): positional when the decimal
 * exponent is in [-4, 16), else d.ddde+XX; a whole number keeps ".0". Its length, or -1. */
static int repr_text(const char *t, Py_ssize_t n, char out[32]) {
    char digits[40];
    int nd = 0, point = 0, decpt = 0, len = 0; /* the value is 0.digits x 10^decpt */
    Py_ssize_t i = n > 0 && t[0] == '-';
    if (i) out[len++] = '-';
    for (; i < n && ((t[i] >= '0' && t[i] <= '9') || (t[i] == '.' && !point)); i++) {
        if (t[i] == '.') point = 1;
        else if (nd || t[i] != '0') {
            if (nd == (int)sizeof digits) return -1;
            digits[nd++] = t[i], decpt += !point;
        } else if ((decpt -= point) < -400) return -1; /* a zero before the first digit, after the point */
    }
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        int sign = 1, e = 0;
        if (++i < n && (t[i] == '+' || t[i] == '-')) sign = t[i++] == '-' ? -1 : 1;
        for (; i < n && t[i] >= '0' && t[i] <= '9' && e < 1000; i++) e = e * 10 + t[i] - '0';
        decpt += sign * e;
    }
    if (i != n) return -1;
    while (nd && digits[nd - 1] == '0') nd--;
    if (!nd) return memcpy(out + len, "0.0", 3), len + 3;
    if (nd > 17 || decpt < -323 || decpt > 309) return -1; /* beyond 5e-324 and DBL_MAX: not a double's */
    if (decpt - 1 < -4 || decpt - 1 >= 16) { /* d.ddde-XX */
        out[len++] = digits[0];
        if (nd > 1) out[len++] = '.', memcpy(out + len, digits + 1, (size_t)nd - 1), len += nd - 1;
        int x = decpt - 1 < 0 ? 1 - decpt : decpt - 1;
        out[len++] = 'e', out[len++] = decpt - 1 < 0 ? '-' : '+';
        if (x >= 100) out[len++] = (char)('0' + x / 100);
        out[len++] = (char)('0' + x / 10 % 10), out[len++] = (char)('0' + x % 10);
    } else if (decpt <= 0) { /* 0.000ddd */
        memcpy(out + len, "0.0000", (size_t)(2 - decpt)), len += 2 - decpt;
        memcpy(out + len, digits, (size_t)nd), len += nd;
    } else if (decpt >= nd) { /* ddd00.0 */
        memcpy(out + len, digits, (size_t)nd), memset(out + len + nd, '0', (size_t)(decpt - nd)), len += decpt;
        memcpy(out + len, ".0", 2), len += 2;
    } else { /* dd.ddd */
        memcpy(out + len, digits, (size_t)decpt), out[len + decpt] = '.';
        memcpy(out + len + decpt + 1, digits + decpt, (size_t)(nd - decpt)), len += nd + 1;
    }
    return len;
}

/* run_text(names, bounds, ids, doc, score, run_id, json) -> [str per query] or None: the lines
 * write_run writes for entries already in trec_eval's order ("name Q0 id rank repr(score)
 * run_id\n", ranks from 1 within bounds[k]..bounds[k + 1]), or None where a name or an id is
 * not one write_run accepts or a score is not finite (the caller then lets write_run's checks
 * name it). `json` is orjson's array of the written entries' scores: respelt by repr_text, and
 * a text taken only if it reads back as its score's bits, else Python's repr is asked (dtoa,
 * ~1 us a score, is what made writing slower than reading). */
static PyObject *run_text(PyObject *module, PyObject *args) {
    PyObject *names, *ids, *run_id, *out = NULL;
    Py_buffer b, d, s, j;
    if (!PyArg_ParseTuple(args, "O!y*O!y*y*Uy*", &PyList_Type, &names, &b, &PyList_Type, &ids, &d, &s, &run_id, &j))
        return NULL;
    const int64_t *bounds = b.buf, *doc = d.buf;
    const double *score = s.buf;
    const char *json = j.buf, *json_end = json + j.len;
    Py_ssize_t n_queries = PyList_Size(names), tail_n;
    text line = {NULL, 0, 0};
    const char *tail = PyUnicode_AsUTF8AndSize(run_id, &tail_n);
    if (!tail) goto no_memory_or_error;
    if (entries_of(&b, &d, &s, n_queries, PyList_Size(ids)) < 0) goto no_memory_or_error;
    if (json < json_end && *json == '[') json++;
    out = PyList_New(n_queries);
    for (Py_ssize_t k = 0; out && k < n_queries; k++) {
        Py_ssize_t name_n, id_n;
        const char *name = plain_id(PyList_GetItem(names, k), &name_n, 1);
        if (!name) goto refused;
        line.n = 0;
        for (int64_t i = bounds[k]; i < bounds[k + 1]; i++) {
            const char *id = plain_id(PyList_GetItem(ids, doc[i]), &id_n, 0);
            if (!id || !isfinite(score[i])) goto refused;
            const char *comma = memchr(json, ',', (size_t)(json_end - json));
            const char *token_end = comma ? comma : json_end - (json < json_end && json_end[-1] == ']');
            char repr[32];
            double back;
            int repr_n = json < token_end ? repr_text(json, token_end - json, repr) : -1;
            json = comma ? comma + 1 : json_end;
            if (repr_n < 0 || parse_score(repr, repr_n, &back) != SCORE_OK || memcmp(&back, &score[i], 8)) {
                char *written = PyOS_double_to_string(score[i], 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
                if (!written) goto failed;
                repr_n = (int)strlen(written);
                if (repr_n < (int)sizeof repr) memcpy(repr, written, (size_t)repr_n);
                PyMem_Free(written);
                if (repr_n >= (int)sizeof repr) goto refused; /* a repr is at most 24 bytes */
            }
            char rank[24]; /* " rank " written from its end */
            int rank_n = 1;
            rank[23] = ' ';
            for (int64_t r = i - bounds[k] + 1; r; r /= 10) rank[23 - rank_n++] = (char)('0' + r % 10);
            rank[23 - rank_n++] = ' ';
            char *at = text_room(&line, name_n + 4 + id_n + rank_n + repr_n + 1 + tail_n + 1), *start = at;
            if (!at) {
                PyErr_NoMemory();
                goto failed;
            }
            memcpy(at, name, (size_t)name_n), at += name_n;
            memcpy(at, " Q0 ", 4), at += 4;
            memcpy(at, id, (size_t)id_n), at += id_n;
            memcpy(at, rank + 24 - rank_n, (size_t)rank_n), at += rank_n;
            memcpy(at, repr, (size_t)repr_n), at += repr_n;
            *at++ = ' ';
            memcpy(at, tail, (size_t)tail_n), at += tail_n;
            *at++ = '\n';
            line.n += at - start;
        }
        PyObject *query = PyUnicode_DecodeUTF8(line.v ? line.v : "", line.n, "strict");
        if (!query) goto failed;
        PyList_SetItem(out, k, query);
    }
    goto done;
refused:
    Py_CLEAR(out);
    out = Py_NewRef(Py_None);
    goto done;
failed:
    Py_CLEAR(out);
    goto done;
no_memory_or_error:
    if (!PyErr_Occurred()) PyErr_NoMemory();
done:
    PyBuffer_Release(&b), PyBuffer_Release(&d), PyBuffer_Release(&s), PyBuffer_Release(&j);
    free(line.v);
    return out;
}

/* libFuzzer harness for the run engine's tokeniser and ranker (src/ef/evaluation/_kernel.c).
 *
 * The kernel's reading and ranking (feed) is plain C: this file includes it and drives feed() on
 * arbitrary bytes, cut into two windows as the streaming reader cuts them, grouped and whole, with
 * a few judgements, under AddressSanitizer and UndefinedBehaviorSanitizer. .ci/sanitize builds and
 * runs it for a bounded time:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined $(python3-config --includes) \
 *       tests/fuzz/fuzz_kernel.c -o fuzz_kernel $(python3-config --ldflags --embed)
 */
#include "../../src/ef/evaluation/_kernel.c"

static Judged judged;
static int ready;

static void setup(void) {
    the_c_locale = c_locale();
    table_init(&judged.queries, 4);
    const char *queries[] = {"q1", "q2", "1"};
    for (int q = 0; q < 3; q++) table_add(&judged.queries, queries[q], (Py_ssize_t)strlen(queries[q]), hash_bytes(queries[q], (Py_ssize_t)strlen(queries[q]), 0), q);
    /* Each query's judged doc ids in a table of its own, as Judged_init lays them out. */
    const char *docs[] = {"d1", "d2", "d10", "a", "\xc3\xa9"};
    static Py_ssize_t base[4] = {0, 16, 32, 48};
    judged.base = base;
    judged.n_slots = 48;
    judged.judged = calloc(48, sizeof(slot));
    int64_t flat = 0;
    for (int q = 0; q < 3; q++) {
        for (int d = 0; d < 5; d++, flat++) {
            Py_ssize_t n = (Py_ssize_t)strlen(docs[d]);
            uint64_t h = hash_bytes(docs[d], n, 0);
            Py_ssize_t at = (Py_ssize_t)(h & 15);
            while (judged.judged[base[q] + at].key) at = (at + 1) & 15;
            char *copy = malloc((size_t)n);
            memcpy(copy, docs[d], (size_t)n);
            judged.judged[base[q] + at] = (slot){copy, n, h, flat};
        }
    }
    judged.n_queries = 3;
    ready = 1;
}

static void run(const char *data, size_t size, size_t cut, int whole, int64_t max_docs) {
    Ranker r;
    memset(&r, 0, sizeof r);
    r.judged = &judged;
    r.max_docs = max_docs;
    int64_t num_ret[3] = {-1, -1, -1};
    r.num_ret = num_ret;
    table_init(&r.seen, 64);
    r.line = 1;
    fault f;
    Py_ssize_t consumed = 0;
    /* Two windows, as _hits._rank_file cuts them: the first not final. */
    char *buffer = malloc(size + 1);
    memcpy(buffer, data, size);
    int status = 0;
    if (!whole && cut < size) {
        memset(&f, 0, sizeof f);
        status = feed(&r, buffer, (Py_ssize_t)cut, 0, 0, &consumed, &f);
        if (status == 0) {
            memmove(buffer, buffer + consumed, size - (size_t)consumed);
            size -= (size_t)consumed;
        }
    }
    if (status == 0) {
        memset(&f, 0, sizeof f);
        feed(&r, buffer, (Py_ssize_t)size, 1, whole, &consumed, &f);
    }
    free(buffer);
    free(r.out.query.v), free(r.out.rank.v), free(r.out.judgement.v);
    table_free(&r.seen);
    free(r.dup), free(r.dup_hash);
    scratch_free(&r.work);
    free(r.docs);
    free(r.run_id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!ready) setup();
    if (size < 2) return 0;
    size_t cut = data[0] % (size - 1) + 1;
    int64_t max_docs = (data[1] & 3) == 3 ? -1 : data[1] & 3;
    run((const char *)data + 2, size - 2, cut, 0, max_docs);
    run((const char *)data + 2, size - 2, cut, 1, max_docs);
    /* The score parser alone, on the first field-sized piece. */
    double v;
    size_t n = size - 2 < 40 ? size - 2 : 40;
    parse_score((const char *)data + 2, (Py_ssize_t)n, &v);
    return 0;
}

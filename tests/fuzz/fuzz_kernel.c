/* libFuzzer harness for the run engine's tokeniser and ranker (src/ef/evaluation/_kernel.c).
 *
 * The kernel's reading and ranking (feed) is plain C: this file includes it and drives feed() on
 * arbitrary bytes, cut into two windows as the streaming reader cuts them, grouped and whole, with
 * a few judgements (some ids sharing their first 8 bytes), under AddressSanitizer and
 * UndefinedBehaviorSanitizer, and run_text's score respelling (repr_text) on the same bytes. Each
 * window and score token sits in a heap buffer of exactly its size, so a read past its end (an
 * 8-byte load near a window's end) is caught. .ci/sanitize builds
 * and runs it for a bounded time:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined $(python3-config --includes) \
 *       tests/fuzz/fuzz_kernel.c -o fuzz_kernel $(python3-config --ldflags --embed)
 */
#include "../../src/ef/evaluation/_kernel.c"

static Judged judged;
static int ready;

static void setup(void) {
    the_c_locale = c_locale();
    hash_seed = 0x1234567890abcdefULL;
    make_tens();
    table_init(&judged.queries, 4);
    const char *queries[] = {"q1", "q2", "1"};
    const char *docs[] = {"d1", "d2", "d10", "a", "\xc3\xa9", "doc00000", "doc000000", "abcdefgh1", "abcdefgh"};
    int nd = 9;
    judged.judged = calloc(3, sizeof(table));
    int64_t flat = 0;
    for (int q = 0; q < 3; q++) {
        table_add(&judged.queries, queries[q], (Py_ssize_t)strlen(queries[q]), hash_bytes(queries[q], (Py_ssize_t)strlen(queries[q]), 0), q);
        table_init(&judged.judged[q], nd);
        for (int d = 0; d < nd; d++, flat++) {
            Py_ssize_t n = (Py_ssize_t)strlen(docs[d]);
            table_add(&judged.judged[q], docs[d], n, hash_bytes(docs[d], n, 0), flat);
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
    int status = 0;
    const char *rest = data;
    size_t left = size;
    if (!whole && cut < size) {
        char *first = malloc(cut ? cut : 1); /* exactly the window */
        memcpy(first, data, cut);
        memset(&f, 0, sizeof f);
        status = feed(&r, first, (Py_ssize_t)cut, 0, 0, &consumed, &f);
        free(first);
        if (status == 0) rest = data + consumed, left = size - (size_t)consumed;
    }
    if (status == 0) {
        char *buffer = malloc(left ? left : 1);
        memcpy(buffer, rest, left);
        memset(&f, 0, sizeof f);
        feed(&r, buffer, (Py_ssize_t)left, 1, whole, &consumed, &f);
        free(buffer);
    }
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
    /* The score parser and the hash alone, on exact-size copies. */
    size_t n = size - 2 < 40 ? size - 2 : 40;
    char *piece = malloc(n ? n : 1);
    memcpy(piece, data + 2, n);
    double v;
    parse_score(piece, (Py_ssize_t)n, &v);
    char repr[32]; /* run_text's respelling of a score's digits, on any bytes */
    int repr_n = repr_text(piece, (Py_ssize_t)n, repr);
    if (repr_n > (int)sizeof repr) abort();
    (void)hash_bytes(piece, (Py_ssize_t)n, 0);
    if (n >= 1) (void)hash_bytes(piece + 1, (Py_ssize_t)n - 1, 0);
    free(piece);
    return 0;
}

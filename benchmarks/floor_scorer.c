/* The floor: the least a program can do to rank a TREC run's judged documents, with no checks.
 *
 *     cc -O2 -o floor benchmarks/floor_scorer.c && ./floor QRELS RUN
 *
 * Reads the qrels into a hash table, the run whole, splits each line on whitespace, reads the score
 * with strtod and, query group by query group, counts for each judged document the documents ahead
 * of it (greater score, or equal score and greater id). Prints the judged documents found and the
 * sum of their ranks. No comment lines, no error checks, no measures: benchmarks/bench_engine.py
 * prints its CPU seconds beside ef's, so the distance to the limit is on the page.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *q, *d; size_t qn, dn; } key;
static key *slots;
static size_t mask;

static uint64_t hash(const char *q, size_t qn, const char *d, size_t dn) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < qn; i++) h = (h ^ (unsigned char)q[i]) * 1099511628211ULL;
    h ^= 0xff;
    for (size_t i = 0; i < dn; i++) h = (h ^ (unsigned char)d[i]) * 1099511628211ULL;
    return h;
}

static int judged(const char *q, size_t qn, const char *d, size_t dn) {
    for (size_t i = hash(q, qn, d, dn) & mask; slots[i].q; i = (i + 1) & mask)
        if (slots[i].qn == qn && slots[i].dn == dn && !memcmp(slots[i].q, q, qn) && !memcmp(slots[i].d, d, dn)) return 1;
    return 0;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(*n + 1);
    *n = fread(data, 1, *n, f);
    data[*n] = 0;
    fclose(f);
    return data;
}

static const char *field(const char *p, const char **start, size_t *n) {
    while (*p == ' ' || *p == '\t') p++;
    *start = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
    *n = (size_t)(p - *start);
    return p;
}

typedef struct { double score; const char *d; size_t dn; int judged; } row;

static int ahead(const row *a, const row *b) {
    if (a->score != b->score) return a->score > b->score;
    size_t n = a->dn < b->dn ? a->dn : b->dn;
    int c = memcmp(a->d, b->d, n);
    return c ? c > 0 : a->dn > b->dn;
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    size_t qn, rn;
    char *qrels = slurp(argv[1], &qn), *run = slurp(argv[2], &rn);
    size_t lines = 1;
    for (size_t i = 0; i < qn; i++) lines += qrels[i] == '\n';
    size_t cap = 16;
    while (cap < 2 * lines) cap *= 2;
    slots = calloc(cap, sizeof(key));
    mask = cap - 1;
    for (const char *p = qrels; *p;) {
        key k;
        const char *skip;
        size_t skipped;
        p = field(p, &k.q, &k.qn);
        p = field(p, &skip, &skipped);
        p = field(p, &k.d, &k.dn);
        p = strchr(p, '\n');
        if (k.qn) {
            size_t i = hash(k.q, k.qn, k.d, k.dn) & mask;
            while (slots[i].q) i = (i + 1) & mask;
            slots[i] = k;
        }
        if (!p) break;
        p++;
    }
    row *rows = malloc(sizeof(row) * 1024);
    size_t rows_cap = 1024, n = 0, found = 0;
    long long rank_sum = 0;
    const char *group = NULL;
    size_t group_n = 0;
    for (const char *p = run;;) {
        const char *q = NULL, *skip, *d, *s;
        size_t q_n = 0, skipped, dn, sn;
        if (*p) {
            p = field(p, &q, &q_n);
            p = field(p, &skip, &skipped);
            p = field(p, &d, &dn);
            p = field(p, &skip, &skipped);
            p = field(p, &s, &sn);
        }
        if (!q_n || !group || q_n != group_n || memcmp(q, group, q_n)) {
            for (size_t i = 0; i < n; i++) {
                if (!rows[i].judged) continue;
                long long r = 0;
                for (size_t j = 0; j < n; j++) r += ahead(&rows[j], &rows[i]);
                rank_sum += r;
                found++;
            }
            n = 0;
            group = q, group_n = q_n;
        }
        if (!q_n) break;
        if (n == rows_cap) rows = realloc(rows, sizeof(row) * (rows_cap *= 2));
        rows[n].score = strtod(s, NULL);
        rows[n].d = d, rows[n].dn = dn;
        rows[n].judged = judged(q, q_n, d, dn);
        n++;
        p = strchr(p, '\n');
        if (!p) p = "";
        else p++;
    }
    printf("%zu judged documents found, ranks summing to %lld\n", found, rank_sum);
    return 0;
}

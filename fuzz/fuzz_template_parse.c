/* fuzz_template_parse.c — fuzzes the front of the template engine on its own
 * (template/template_int.h): the lexer must end every token stream with EOF or
 * an error and keep tokens inside the text; whatever parses must print (node.c)
 * to a text that parses again and prints the same (parse, print, re-parse, print
 * again: identical). The input follows Prometheus' variable definitions, as an
 * alert template does, so $labels and $value are declared. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>

#include "template/template_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char PREFIX[] = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}"
                             "{{$externalURL := .ExternalURL}}{{$value := .Value}}";

static void check_tokens(const char *s, size_t n, im_arena_t *arena)
{
    tok_t *toks;
    size_t ntoks;
    if (!tmpl__lex(s, n, arena, &toks, &ntoks)) return;
    if (ntoks == 0 || (toks[ntoks - 1].t != T_EOF && toks[ntoks - 1].t != T_ERROR)) abort();
    for (size_t i = 0; i < ntoks; i++)
        if (toks[i].pos > n || toks[i].len > n - toks[i].pos) abort();
    im_free(toks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    size_t pl = sizeof PREFIX - 1, n = pl + size;
    char *s = im_malloc(n + 1);
    memcpy(s, PREFIX, pl);
    if (size) memcpy(s + pl, data, size);
    s[n] = 0;
    im_arena_t arena;
    im_arena_init(&arena, 16384, 64u << 20);
    check_tokens(s, n, &arena);
    im_err_t err;
    im_err_clear(&err);
    node_t *t1 = tmpl__parse("F", s, n, &arena, &err);
    if (!t1) {
        if (!err.msg[0]) abort(); /* a failed parse always says why */
    } else {
        im_buf_t p1, p2;
        im_buf_init(&p1, 0);
        im_buf_init(&p2, 0);
        tmpl__tree_string(&p1, t1);
        node_t *t2 = tmpl__parse("F", p1.data ? p1.data : "", p1.len, &arena, &err);
        if (!t2) {
            fprintf(stderr, "printed tree does not parse: %s\n--- printed:\n%.*s\n", err.msg,
                    (int)p1.len, p1.data ? p1.data : "");
            abort();
        }
        tmpl__tree_string(&p2, t2);
        if (p1.len != p2.len || (p1.len && memcmp(p1.data, p2.data, p1.len) != 0)) {
            fprintf(stderr, "print differs after re-parse:\n%.*s\n---\n%.*s\n", (int)p1.len,
                    p1.data, (int)p2.len, p2.data ? p2.data : "");
            abort();
        }
        im_buf_free(&p1);
        im_buf_free(&p2);
    }
    im_arena_free(&arena);
    im_free(s);
    return 0;
}

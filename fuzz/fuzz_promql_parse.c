/* fuzz_promql_parse.c — fuzzes the PromQL parser and printer. Any input must
 * parse or fail cleanly (no crash, leak or sanitizer report); an input that
 * parses must print, and the printed text must parse again to an equal AST and
 * print to the same text (parse -> print -> parse is the identity). Each input is
 * tried at the default level (compat 3) and at compat 3 with every PromQL feature
 * flag (experimental functions, fill() modifiers: fuzz_promql_parse.dict). */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>

#include "promql/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int one(const uint8_t *data, size_t size, const promql_lang_t *l)
{
    promql_expr_t *a = NULL;
    im_err_t err;
    im_rc rc = promql_parse_lang((const char *)data, size, l, &a, &err);
    if (rc != IM_OK) {
        if (a) abort();
        if (rc != IM_EPARSE && rc != IM_ELIMIT) abort();
        return 0;
    }
    im_buf_t b1, b2;
    im_buf_init(&b1, 0);
    im_buf_init(&b2, 0);
    if (promql_format(a, &b1) != IM_OK) abort();
    promql_expr_t *b = NULL;
    if (promql_parse_lang(b1.data ? b1.data : "", b1.len, l, &b, &err) != IM_OK) {
        fprintf(stderr, "reparse failed: %.*s\n  printed: %s\n  error: %s\n", (int)size,
                (const char *)data, b1.data, err.msg);
        abort();
    }
    if (!promql_expr_equal(a, b)) {
        fprintf(stderr, "AST differs: %.*s\n  printed: %s\n", (int)size, (const char *)data,
                b1.data);
        abort();
    }
    if (promql_format(b, &b2) != IM_OK) abort();
    if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0) {
        fprintf(stderr, "printing not idempotent: %s -> %s\n", b1.data, b2.data);
        abort();
    }
    im_buf_free(&b1);
    im_buf_free(&b2);
    promql_expr_free(a);
    promql_expr_free(b);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    static const promql_lang_t all = {.compat = 3,
                                      .experimental_functions = true,
                                      .binop_fill_modifiers = true,
                                      .extended_range_selectors = true};
    one(data, size, NULL);
    return one(data, size, &all);
}

/* json.c — JSON string and label-set writers (see json.h). */
#include "util/base.h"

#include "labels/json.h"

void im_json_string(im_buf_t *b, const char *s, size_t len, bool html_safe)
{
    (void)im_buf_putc(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': (void)im_buf_puts(b, "\\\""); continue;
        case '\\': (void)im_buf_puts(b, "\\\\"); continue;
        case '\n': (void)im_buf_puts(b, "\\n"); continue;
        case '\r': (void)im_buf_puts(b, "\\r"); continue;
        case '\t': (void)im_buf_puts(b, "\\t"); continue;
        case '<':
            if (html_safe) {
                (void)im_buf_puts(b, "\\u003c");
                continue;
            }
            break;
        case '>':
            if (html_safe) {
                (void)im_buf_puts(b, "\\u003e");
                continue;
            }
            break;
        case '&':
            if (html_safe) {
                (void)im_buf_puts(b, "\\u0026");
                continue;
            }
            break;
        default: break;
        }
        if (c < 0x20)
            (void)im_buf_printf(b, "\\u%04x", c);
        else
            (void)im_buf_putc(b, (char)c);
    }
    (void)im_buf_putc(b, '"');
}

void im_json_labels(im_buf_t *b, const im_labels_t *ls, bool html_safe)
{
    (void)im_buf_putc(b, '{');
    for (uint32_t i = 0; ls && i < ls->n; i++) {
        if (i) (void)im_buf_putc(b, ',');
        im_json_string(b, ls->l[i].name->s, ls->l[i].name->len, html_safe);
        (void)im_buf_putc(b, ':');
        im_json_string(b, ls->l[i].value->s, ls->l[i].value->len, html_safe);
    }
    (void)im_buf_putc(b, '}');
}

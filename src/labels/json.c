/* json.c — the JSON string and label-set writer (see json.h): copies runs of
 * bytes that need no escaping in one append, so long plain strings stay cheap. */
#include "util/base.h"

#include "labels/json.h"

static const char hexd[] = "0123456789abcdef";

/* Length of a valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t need;
    unsigned min;
    if ((c & 0xe0) == 0xc0)
        need = 2, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        need = 3, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        need = 4, min = 0x10000;
    else
        return 0;
    if (n < need) return 0;
    unsigned cp = c & (0xff >> (need + 1));
    for (size_t i = 1; i < need; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return need;
}

/* What a byte needs: 0 nothing, 1 an escape (control bytes, ", \), 2 an escape
 * when HTML-safe (<, >, &), 3 a UTF-8 check when IM_JSON_UTF8 (>= 0x80). */
static const uint8_t jclass[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

void im_json_string(im_buf_t *b, const char *s, size_t len, unsigned flags)
{
    const unsigned char *p = (const unsigned char *)s;
    /* bit k set: bytes of class k stop the plain run */
    unsigned stop =
        1u << 1 | (flags & IM_JSON_HTML ? 1u << 2 : 0) | (flags & IM_JSON_UTF8 ? 1u << 3 : 0);
    (void)im_buf_putc(b, '"');
    size_t i = 0, start = 0;
    while (i < len) {
        unsigned c = p[i];
        unsigned k = jclass[c];
        if (!(stop >> k & 1)) {
            i++;
            continue;
        }
        const char *esc = NULL;
        size_t n = 1;
        if (k == 3) {
            size_t l = utf8_len(p + i, len - i);
            if (l == 3 && c == 0xe2 && p[i + 1] == 0x80 && (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
                esc = p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
                n = 3;
            } else if (l) {
                i += l;
                continue;
            } else {
                esc = "\\ufffd";
            }
        }
        (void)im_buf_append(b, s + start, i - start);
        if (esc) {
            (void)im_buf_puts(b, esc);
        } else {
            switch (c) {
            case '"': (void)im_buf_puts(b, "\\\""); break;
            case '\\': (void)im_buf_puts(b, "\\\\"); break;
            case '\n': (void)im_buf_puts(b, "\\n"); break;
            case '\r': (void)im_buf_puts(b, "\\r"); break;
            case '\t': (void)im_buf_puts(b, "\\t"); break;
            default: { /* other control bytes and, when HTML-safe, <, >, & */
                char e[7] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15], 0};
                (void)im_buf_puts(b, e);
            }
            }
        }
        i += n;
        start = i;
    }
    (void)im_buf_append(b, s + start, i - start);
    (void)im_buf_putc(b, '"');
}

void im_json_labels(im_buf_t *b, const im_labels_t *ls, unsigned flags)
{
    (void)im_buf_putc(b, '{');
    for (uint32_t i = 0; ls && i < ls->n; i++) {
        if (i) (void)im_buf_putc(b, ',');
        im_json_string(b, ls->l[i].name->s, ls->l[i].name->len, flags);
        (void)im_buf_putc(b, ':');
        im_json_string(b, ls->l[i].value->s, ls->l[i].value->len, flags);
    }
    (void)im_buf_putc(b, '}');
}

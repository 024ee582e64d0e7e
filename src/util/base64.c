/* base64.c — base64 decoding (base64.h). */
#include "util/base64.h"

static int b64v(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

im_rc im_base64_decode(const char *s, size_t n, im_buf_t *out)
{
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
        int v = b64v(c);
        if (v < 0) return IM_EPARSE;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (im_buf_putc(out, (char)((acc >> bits) & 0xFF))) return IM_ELIMIT;
        }
    }
    return IM_OK;
}

/* fmt.c — Go's fmt package as far as Prometheus' templates reach it:
 * printing values (%v), Sprintf with Go's verbs, flags, width and precision and
 * its error forms (%!d(float64=1.5), %!d(MISSING), %!(EXTRA ...)), strconv.Quote,
 * time.Time.String and time.Duration.String. Numbers use the C library where Go
 * and C agree (%e %f %g with a precision, %d, %x) and util/fmtfloat for Go's
 * shortest forms (%v of a float64). */
#include "util/base.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "template/template_int.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

const char *tmpl__type_name(const tv_t *v)
{
    switch (v->k) {
    case TV_INVALID: return "<nil>";
    case TV_NILIF: return "<nil>";
    case TV_BOOL: return "bool";
    case TV_INT: return "int";
    case TV_FLOAT: return "float64";
    case TV_STRING: return "string";
    case TV_HTML: return "template.HTML";
    case TV_STRMAP: return "map[string]string";
    case TV_ANYMAP: return "map[string]interface {}";
    case TV_SAMPLE: return "*template.sample";
    case TV_SAMPLES: return "template.queryResult";
    case TV_DATA:
        return "struct { Labels map[string]string; ExternalLabels map[string]string; ExternalURL "
               "string; Value interface {} }";
    case TV_TIME: return "*time.Time";
    case TV_DURATION: return "time.Duration";
    }
    return "?";
}

static void put_float_v(im_buf_t *out, double f)
{
    char tmp[IM_FLOAT_BUF];
    size_t n = im_fmt_float_go(f, 'g', tmp, sizeof tmp);
    (void)im_buf_append(out, tmp, n);
}

void tmpl__fmt_g4(im_buf_t *out, double v)
{
    if (isnan(v)) {
        (void)im_buf_puts(out, "NaN");
        return;
    }
    if (isinf(v)) {
        (void)im_buf_puts(out, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    (void)im_buf_printf(out, "%.4g", v);
}

void tmpl__fmt_time(im_buf_t *out, int64_t sec, int64_t nsec)
{
    int64_t days = sec / 86400, rem = sec % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int64_t y;
    unsigned mo, d;
    im_civil_from_days(days, &y, &mo, &d);
    (void)im_buf_printf(out, "%04" PRId64 "-%02u-%02u %02d:%02d:%02d", y, mo, d, (int)(rem / 3600),
                        (int)(rem / 60 % 60), (int)(rem % 60));
    if (nsec > 0) {
        char frac[24];
        snprintf(frac, sizeof frac, "%09" PRId64, nsec);
        int n = 9;
        while (n > 0 && frac[n - 1] == '0') n--;
        (void)im_buf_putc(out, '.');
        (void)im_buf_append(out, frac, (size_t)n);
    }
    (void)im_buf_puts(out, " +0000 UTC");
}

/* time.Duration.String: "1h2m3.5s", "1.5ms", "0s". */
void tmpl__fmt_duration(im_buf_t *out, int64_t ns)
{
    char buf[40];
    int w = (int)sizeof buf;
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    bool neg = ns < 0;
    if (u < 1000000000ULL) {
        /* Sub-second: smaller units. */
        int prec = 0;
        const char *unit;
        if (u == 0) {
            (void)im_buf_puts(out, "0s");
            return;
        } else if (u < 1000ULL) {
            unit = "ns";
        } else if (u < 1000000ULL) {
            prec = 3;
            unit = "µs";
        } else {
            prec = 6;
            unit = "ms";
        }
        /* fraction digits */
        char digits[32];
        int nd = snprintf(digits, sizeof digits, "%" PRIu64, u);
        if (neg) (void)im_buf_putc(out, '-');
        if (prec == 0) {
            (void)im_buf_append(out, digits, (size_t)nd);
        } else {
            int ip = nd - prec;
            if (ip <= 0) {
                (void)im_buf_putc(out, '0');
            } else {
                (void)im_buf_append(out, digits, (size_t)ip);
            }
            /* fractional part, leading zeros padded, trailing zeros trimmed */
            char fr[16];
            int fl = 0;
            for (int i = 0; i < prec; i++) {
                int idx = nd - prec + i;
                fr[fl++] = idx >= 0 ? digits[idx] : '0';
            }
            while (fl > 0 && fr[fl - 1] == '0') fl--;
            if (fl > 0) {
                (void)im_buf_putc(out, '.');
                (void)im_buf_append(out, fr, (size_t)fl);
            }
        }
        (void)im_buf_puts(out, unit);
        return;
    }
    buf[--w] = 's';
    /* seconds with fraction */
    uint64_t frac = u % 1000000000ULL;
    u /= 1000000000ULL;
    char fr[10];
    int fl = 0;
    if (frac) {
        snprintf(fr, sizeof fr, "%09" PRIu64, frac);
        fl = 9;
        while (fl > 0 && fr[fl - 1] == '0') fl--;
    }
    char tmp[64];
    int tl = 0;
    uint64_t h = u / 3600, m = u / 60 % 60, s = u % 60;
    if (h) tl += snprintf(tmp + tl, sizeof tmp - (size_t)tl, "%" PRIu64 "h", h);
    if (h || m) tl += snprintf(tmp + tl, sizeof tmp - (size_t)tl, "%" PRIu64 "m", m);
    tl += snprintf(tmp + tl, sizeof tmp - (size_t)tl, "%" PRIu64, s);
    if (neg) (void)im_buf_putc(out, '-');
    (void)im_buf_append(out, tmp, (size_t)tl);
    if (fl) {
        (void)im_buf_putc(out, '.');
        (void)im_buf_append(out, fr, (size_t)fl);
    }
    (void)im_buf_append(out, buf + w, sizeof buf - (size_t)w);
}

static int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || (size_t)len > n) return -1;
    uint32_t v = c & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return -1;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
        v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return -1;
    *cp = v;
    return len;
}

void tmpl__quote(im_buf_t *out, const char *s, size_t n)
{
    (void)im_buf_putc(out, '"');
    size_t i = 0;
    while (i < n) {
        uint32_t cp = 0;
        int l = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (l < 0) {
            (void)im_buf_printf(out, "\\x%02x", (unsigned char)s[i]);
            i++;
            continue;
        }
        i += (size_t)l;
        switch (cp) {
        case '"': (void)im_buf_puts(out, "\\\""); continue;
        case '\\': (void)im_buf_puts(out, "\\\\"); continue;
        case '\a': (void)im_buf_puts(out, "\\a"); continue;
        case '\b': (void)im_buf_puts(out, "\\b"); continue;
        case '\f': (void)im_buf_puts(out, "\\f"); continue;
        case '\n': (void)im_buf_puts(out, "\\n"); continue;
        case '\r': (void)im_buf_puts(out, "\\r"); continue;
        case '\t': (void)im_buf_puts(out, "\\t"); continue;
        case '\v': (void)im_buf_puts(out, "\\v"); continue;
        default: break;
        }
        if (cp < 0x20 || cp == 0x7f)
            (void)im_buf_printf(out, "\\x%02x", cp);
        else if (cp >= 0x80 && cp < 0xa0)
            (void)im_buf_printf(out, "\\u%04x", cp);
        else
            (void)im_buf_append(out, s + i - (size_t)l, (size_t)l);
    }
    (void)im_buf_putc(out, '"');
}

static void print_map(im_buf_t *out, const tmap_t *m)
{
    (void)im_buf_puts(out, "map[");
    for (size_t i = 0; i < m->n; i++) {
        if (i) (void)im_buf_putc(out, ' ');
        (void)im_buf_append(out, m->e[i].key.p, m->e[i].key.len);
        (void)im_buf_putc(out, ':');
        tmpl__print_value(out, &m->e[i].val);
    }
    (void)im_buf_putc(out, ']');
}

static void print_inner(im_buf_t *out, const tv_t *v, bool top)
{
    switch (v->k) {
    case TV_INVALID: (void)im_buf_puts(out, top ? "<no value>" : "<invalid reflect.Value>"); break;
    case TV_NILIF: (void)im_buf_puts(out, "<nil>"); break;
    case TV_BOOL: (void)im_buf_puts(out, v->u.b ? "true" : "false"); break;
    case TV_INT: (void)im_buf_printf(out, "%" PRId64, v->u.i); break;
    case TV_FLOAT: put_float_v(out, v->u.f); break;
    case TV_STRING:
    case TV_HTML: (void)im_buf_append(out, v->u.s.p, v->u.s.len); break;
    case TV_STRMAP:
    case TV_ANYMAP: print_map(out, v->u.m); break;
    case TV_SAMPLE:
        if (!v->u.smp) {
            (void)im_buf_puts(out, "<nil>");
            break;
        }
        (void)im_buf_puts(out, top ? "&{" : "0xc000010000");
        if (!top) break;
        print_map(out, &v->u.smp->labels);
        (void)im_buf_putc(out, ' ');
        put_float_v(out, v->u.smp->v);
        (void)im_buf_putc(out, '}');
        break;
    case TV_SAMPLES:
        (void)im_buf_putc(out, '[');
        for (size_t i = 0; v->u.ss && i < v->u.ss->n; i++) {
            tv_t e = {.k = TV_SAMPLE, .u.smp = v->u.ss->v[i]};
            if (i) (void)im_buf_putc(out, ' ');
            print_inner(out, &e, false);
        }
        (void)im_buf_putc(out, ']');
        break;
    case TV_DATA:
        (void)im_buf_putc(out, '{');
        if (v->u.root) {
            print_map(out, v->u.root->labels);
            (void)im_buf_putc(out, ' ');
            print_map(out, v->u.root->ext_labels);
            (void)im_buf_printf(out, " %s ", v->u.root->external_url);
            put_float_v(out, v->u.root->value);
        }
        (void)im_buf_putc(out, '}');
        break;
    case TV_TIME: {
        double sec = floor(v->u.f);
        tmpl__fmt_time(out, (int64_t)sec, (int64_t)((v->u.f - sec) * 1e9));
        break;
    }
    case TV_DURATION: tmpl__fmt_duration(out, v->u.i); break;
    }
}

void tmpl__print_value(im_buf_t *out, const tv_t *v)
{
    print_inner(out, v, true);
}

static bool is_stringish(const tv_t *v)
{
    return v->k == TV_STRING || v->k == TV_HTML;
}

void tmpl__sprint(im_buf_t *out, const tv_t *args, size_t nargs, bool ln)
{
    for (size_t i = 0; i < nargs; i++) {
        if (i > 0 && (ln || (!is_stringish(&args[i]) && !is_stringish(&args[i - 1]))))
            (void)im_buf_putc(out, ' ');
        tmpl__print_value(out, &args[i]);
    }
    if (ln) (void)im_buf_putc(out, '\n');
}

typedef struct fspec {
    bool minus, plus, sharp, zero, space;
    int width, prec; /* -1 = none */
} fspec_t;

static void pad(im_buf_t *out, const fspec_t *fs, const char *s, size_t n)
{
    /* width counts runes in Go; count UTF-8 lead bytes */
    size_t runes = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) runes++;
    size_t w = fs->width > 0 ? (size_t)fs->width : 0;
    if (runes >= w) {
        (void)im_buf_append(out, s, n);
        return;
    }
    if (fs->minus) {
        (void)im_buf_append(out, s, n);
        for (size_t i = runes; i < w; i++) (void)im_buf_putc(out, ' ');
    } else {
        for (size_t i = runes; i < w; i++) (void)im_buf_putc(out, ' ');
        (void)im_buf_append(out, s, n);
    }
}

/* Builds a C format for numbers from the Go flags. */
static void cfmt(char *f, size_t cap, const fspec_t *fs, const char *len_mod, char verb)
{
    size_t n = 0;
    f[n++] = '%';
    if (fs->minus) f[n++] = '-';
    if (fs->plus) f[n++] = '+';
    if (fs->sharp) f[n++] = '#';
    if (fs->zero && !fs->minus) f[n++] = '0';
    if (fs->space) f[n++] = ' ';
    if (fs->width >= 0) n += (size_t)snprintf(f + n, cap - n, "%d", fs->width);
    if (fs->prec >= 0) n += (size_t)snprintf(f + n, cap - n, ".%d", fs->prec);
    n += (size_t)snprintf(f + n, cap - n, "%s%c", len_mod, verb);
}

/* The format strings below are built by cfmt from parsed Go flags, one
 * conversion each, so the argument type always matches. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void put_cfmt_d(im_buf_t *out, const char *f, double v)
{
    (void)im_buf_printf(out, f, v);
}
static void put_cfmt_ll(im_buf_t *out, const char *f, long long v)
{
    (void)im_buf_printf(out, f, v);
}
#pragma GCC diagnostic pop

static void fmt_float(im_buf_t *out, const fspec_t *fs, double v, char verb)
{
    if (isnan(v) || isinf(v)) {
        const char *s = isnan(v) ? (fs->plus ? "+NaN" : "NaN")
                        : v > 0  ? (fs->space && !fs->plus ? " Inf" : "+Inf")
                                 : "-Inf";
        fspec_t f2 = *fs;
        f2.zero = false;
        pad(out, &f2, s, strlen(s));
        return;
    }
    if ((verb == 'g' || verb == 'G' || verb == 'v') && fs->prec < 0) {
        /* shortest */
        char tmp[IM_FLOAT_BUF];
        size_t n = im_fmt_float_go(v, 'g', tmp, sizeof tmp);
        if (verb == 'G')
            for (size_t i = 0; i < n; i++)
                if (tmp[i] == 'e') tmp[i] = 'E';
        char tmp2[IM_FLOAT_BUF + 2];
        size_t m = 0;
        if (fs->plus && v >= 0 && !signbit(v))
            tmp2[m++] = '+';
        else if (fs->space && !signbit(v))
            tmp2[m++] = ' ';
        memcpy(tmp2 + m, tmp, n);
        m += n;
        if (fs->zero && !fs->minus && fs->width > (int)m) {
            /* zero padding after the sign */
            im_buf_t z;
            im_buf_init(&z, 0);
            size_t sign = (tmp2[0] == '-' || tmp2[0] == '+' || tmp2[0] == ' ') ? 1 : 0;
            (void)im_buf_append(&z, tmp2, sign);
            for (int i = (int)m; i < fs->width; i++) (void)im_buf_putc(&z, '0');
            (void)im_buf_append(&z, tmp2 + sign, m - sign);
            (void)im_buf_append(out, z.data, z.len);
            im_buf_free(&z);
            return;
        }
        pad(out, fs, tmp2, m);
        return;
    }
    if ((verb == 'e' || verb == 'E' || verb == 'f' || verb == 'F') && fs->prec < 0) {
        fspec_t f2 = *fs;
        f2.prec = 6;
        char f[48];
        cfmt(f, sizeof f, &f2, "", verb == 'F' ? 'f' : verb);
        put_cfmt_d(out, f, v);
        return;
    }
    char f[48];
    cfmt(f, sizeof f, fs, "", verb == 'v' ? 'g' : verb == 'F' ? 'f' : verb);
    put_cfmt_d(out, f, v);
}

static void bad_verb(im_buf_t *out, char verb, const tv_t *a)
{
    (void)im_buf_printf(out, "%%!%c(", verb);
    if (a->k == TV_INVALID || a->k == TV_NILIF) {
        (void)im_buf_puts(out, "<nil>)");
        return;
    }
    (void)im_buf_puts(out, tmpl__type_name(a));
    (void)im_buf_putc(out, '=');
    tmpl__print_value(out, a);
    (void)im_buf_putc(out, ')');
}

static void fmt_one(im_buf_t *out, const fspec_t *fs, char verb, const tv_t *a)
{
    char f[48];
    im_buf_t tmp;
    switch (a->k) {
    case TV_BOOL:
        if (verb == 't' || verb == 'v') {
            const char *s = a->u.b ? "true" : "false";
            pad(out, fs, s, strlen(s));
            return;
        }
        bad_verb(out, verb, a);
        return;
    case TV_INT:
    case TV_DURATION:
        if (a->k == TV_DURATION && (verb == 'v' || verb == 's')) {
            im_buf_init(&tmp, 0);
            tmpl__fmt_duration(&tmp, a->u.i);
            pad(out, fs, tmp.data ? tmp.data : "", tmp.len);
            im_buf_free(&tmp);
            return;
        }
        switch (verb) {
        case 'v':
        case 'd':
        case 'x':
        case 'X':
        case 'o':
        case 'c':
        case 'b':
            if (verb == 'c') {
                uint32_t cp = (uint32_t)a->u.i;
                char u[5];
                size_t n = 0;
                if (cp < 0x80) {
                    u[n++] = (char)cp;
                } else if (cp < 0x800) {
                    u[n++] = (char)(0xC0 | (cp >> 6));
                    u[n++] = (char)(0x80 | (cp & 0x3F));
                } else if (cp < 0x10000) {
                    u[n++] = (char)(0xE0 | (cp >> 12));
                    u[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    u[n++] = (char)(0x80 | (cp & 0x3F));
                } else {
                    u[n++] = (char)(0xF0 | (cp >> 18));
                    u[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    u[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    u[n++] = (char)(0x80 | (cp & 0x3F));
                }
                pad(out, fs, u, n);
                return;
            }
            if (verb == 'b') {
                char bits[72];
                int n = 0;
                uint64_t u = a->u.i < 0 ? (uint64_t)0 - (uint64_t)a->u.i : (uint64_t)a->u.i;
                char rev[70];
                int r = 0;
                do {
                    rev[r++] = (char)('0' + (u & 1));
                    u >>= 1;
                } while (u);
                if (a->u.i < 0) bits[n++] = '-';
                while (r) bits[n++] = rev[--r];
                pad(out, fs, bits, (size_t)n);
                return;
            }
            if ((verb == 'x' || verb == 'X' || verb == 'o') && a->u.i < 0) {
                /* Go prints -0x.. with the sign */
                fspec_t f2 = *fs;
                cfmt(f, sizeof f, &f2, "ll", verb);
                (void)im_buf_putc(out, '-');
                put_cfmt_ll(out, f, (long long)((uint64_t)0 - (uint64_t)a->u.i));
                return;
            }
            cfmt(f, sizeof f, fs, "ll", verb == 'v' ? 'd' : verb);
            put_cfmt_ll(out, f, (long long)a->u.i);
            return;
        case 'q': {
            im_buf_init(&tmp, 0);
            (void)im_buf_putc(&tmp, '\'');
            char c = (char)a->u.i;
            if (a->u.i >= 0x20 && a->u.i < 0x7f && c != '\'' && c != '\\')
                (void)im_buf_putc(&tmp, c);
            else
                (void)im_buf_printf(&tmp, "\\x%02x", (unsigned)(a->u.i & 0xff));
            (void)im_buf_putc(&tmp, '\'');
            pad(out, fs, tmp.data, tmp.len);
            im_buf_free(&tmp);
            return;
        }
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G':
        default: bad_verb(out, verb, a); return;
        }
    case TV_FLOAT:
        switch (verb) {
        case 'v':
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G': fmt_float(out, fs, a->u.f, verb); return;
        default: bad_verb(out, verb, a); return;
        }
    case TV_STRING:
    case TV_HTML:
        switch (verb) {
        case 'v':
            if (fs->sharp) {
                im_buf_init(&tmp, 0);
                tmpl__quote(&tmp, a->u.s.p, a->u.s.len);
                pad(out, fs, tmp.data, tmp.len);
                im_buf_free(&tmp);
                return;
            }
            /* fall through */
        case 's': {
            size_t n = a->u.s.len;
            if (fs->prec >= 0) {
                /* precision counts runes */
                size_t runes = 0, i = 0;
                while (i < n && runes < (size_t)fs->prec) {
                    i++;
                    while (i < n && ((unsigned char)a->u.s.p[i] & 0xC0) == 0x80) i++;
                    runes++;
                }
                n = i;
            }
            pad(out, fs, a->u.s.p, n);
            return;
        }
        case 'q':
            im_buf_init(&tmp, 0);
            tmpl__quote(&tmp, a->u.s.p, a->u.s.len);
            pad(out, fs, tmp.data, tmp.len);
            im_buf_free(&tmp);
            return;
        case 'x':
        case 'X':
            im_buf_init(&tmp, 0);
            for (size_t i = 0; i < a->u.s.len; i++) {
                if (fs->space && i) (void)im_buf_putc(&tmp, ' ');
                (void)im_buf_printf(&tmp, verb == 'x' ? "%02x" : "%02X",
                                    (unsigned char)a->u.s.p[i]);
            }
            pad(out, fs, tmp.data ? tmp.data : "", tmp.len);
            im_buf_free(&tmp);
            return;
        default: bad_verb(out, verb, a); return;
        }
    case TV_INVALID:
    case TV_NILIF:
        if (verb == 'v') {
            pad(out, fs, "<nil>", 5);
            return;
        }
        (void)im_buf_printf(out, "%%!%c(<nil>)", verb);
        return;
    default:
        if (verb == 'v' || (verb == 's' && a->k != TV_SAMPLE)) {
            im_buf_init(&tmp, 0);
            tmpl__print_value(&tmp, a);
            pad(out, fs, tmp.data ? tmp.data : "", tmp.len);
            im_buf_free(&tmp);
            return;
        }
        bad_verb(out, verb, a);
        return;
    }
}

void tmpl__sprintf(im_buf_t *out, const char *f, size_t flen, const tv_t *args, size_t nargs)
{
    size_t argi = 0;
    size_t i = 0;
    while (i < flen) {
        if (f[i] != '%') {
            size_t j = i;
            while (j < flen && f[j] != '%') j++;
            (void)im_buf_append(out, f + i, j - i);
            i = j;
            continue;
        }
        i++;
        fspec_t fs = {.width = -1, .prec = -1};
        for (; i < flen; i++) {
            char c = f[i];
            if (c == '-')
                fs.minus = true;
            else if (c == '+')
                fs.plus = true;
            else if (c == '#')
                fs.sharp = true;
            else if (c == '0')
                fs.zero = true;
            else if (c == ' ')
                fs.space = true;
            else
                break;
        }
        if (i < flen && f[i] == '*') {
            i++;
            if (argi < nargs && args[argi].k == TV_INT) {
                fs.width = (int)args[argi].u.i;
                if (fs.width < 0) {
                    fs.minus = true;
                    fs.width = -fs.width;
                }
                if (fs.width > 1000000) fs.width = 1000000;
            } else {
                (void)im_buf_puts(out, "%!(BADWIDTH)");
            }
            argi++;
        } else {
            while (i < flen && f[i] >= '0' && f[i] <= '9') {
                fs.width = (fs.width < 0 ? 0 : fs.width) * 10 + (f[i] - '0');
                if (fs.width > 1000000) fs.width = 1000000;
                i++;
            }
        }
        if (i < flen && f[i] == '.') {
            i++;
            fs.prec = 0;
            if (i < flen && f[i] == '*') {
                i++;
                if (argi < nargs && args[argi].k == TV_INT) {
                    fs.prec = (int)args[argi].u.i;
                    if (fs.prec < 0 || fs.prec > 1000000) fs.prec = -1;
                } else {
                    (void)im_buf_puts(out, "%!(BADPREC)");
                }
                argi++;
            } else {
                while (i < flen && f[i] >= '0' && f[i] <= '9') {
                    fs.prec = fs.prec * 10 + (f[i] - '0');
                    if (fs.prec > 1000000) fs.prec = 1000000;
                    i++;
                }
            }
        }
        if (fs.width > 4096) fs.width = 4096;
        if (fs.prec > 4096) fs.prec = 4096;
        if (i >= flen) {
            (void)im_buf_puts(out, "%!(NOVERB)");
            break;
        }
        /* verb: one UTF-8 rune */
        unsigned char vc = (unsigned char)f[i];
        if (vc >= 0x80) {
            size_t j = i + 1;
            while (j < flen && ((unsigned char)f[j] & 0xC0) == 0x80) j++;
            (void)im_buf_puts(out, "%!");
            (void)im_buf_append(out, f + i, j - i);
            if (argi < nargs) {
                (void)im_buf_printf(out, "(%s=", tmpl__type_name(&args[argi]));
                tmpl__print_value(out, &args[argi]);
                (void)im_buf_putc(out, ')');
                argi++;
            } else {
                (void)im_buf_puts(out, "(MISSING)");
            }
            i = j;
            continue;
        }
        char verb = (char)vc;
        i++;
        if (verb == '%') {
            (void)im_buf_putc(out, '%');
            continue;
        }
        if (verb == 'T' && argi < nargs) {
            const char *tn = tmpl__type_name(&args[argi++]);
            pad(out, &fs, tn, strlen(tn));
            continue;
        }
        if (argi >= nargs) {
            (void)im_buf_printf(out, "%%!%c(MISSING)", verb);
            continue;
        }
        fmt_one(out, &fs, verb, &args[argi++]);
    }
    if (argi < nargs) {
        (void)im_buf_puts(out, "%!(EXTRA ");
        for (size_t k = argi; k < nargs; k++) {
            if (k > argi) (void)im_buf_puts(out, ", ");
            (void)im_buf_printf(out, "%s=", tmpl__type_name(&args[k]));
            tmpl__print_value(out, &args[k]);
        }
        (void)im_buf_putc(out, ')');
    }
}

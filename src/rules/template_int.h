/* template_int.h — private to src/rules/template*.c: the value model of the
 * template executor (Go's reflect values, reduced to what Prometheus' templates
 * can produce) and the fmt / function helpers shared between the files. */
#ifndef IM_RULES_TEMPLATE_INT_H
#define IM_RULES_TEMPLATE_INT_H

#include "rules/template.h"
#include "util/arena.h"
#include "util/base.h"
#include "util/buf.h"

typedef enum tv_kind {
    TV_INVALID = 0, /* Go's invalid reflect.Value: prints "<no value>" */
    TV_NILIF,       /* a nil interface{}: prints "<nil>" */
    TV_BOOL,
    TV_INT,
    TV_FLOAT,
    TV_STRING,
    TV_HTML,     /* html/template.HTML (safeHtml) */
    TV_STRMAP,   /* map[string]string (labels) */
    TV_ANYMAP,   /* map[string]interface {} (args) */
    TV_SAMPLE,   /* *template.sample */
    TV_SAMPLES,  /* template.queryResult */
    TV_DATA,     /* the root data struct */
    TV_TIME,     /* *time.Time (toTime) */
    TV_DURATION, /* time.Duration (toDuration) */
} tv_kind_t;

typedef struct tv tv_t;
typedef struct tmap_entry tmap_entry_t;
typedef struct tmap {
    size_t n;
    tmap_entry_t *e; /* sorted by key */
} tmap_t;
typedef struct tsample {
    tmap_t labels;
    double v;
} tsample_t;
typedef struct troot {
    const tmap_t *labels, *ext_labels;
    const char *external_url;
    double value;
} troot_t;
typedef struct tsamples {
    tsample_t **v;
    size_t n;
} tsamples_t;

struct tv {
    tv_kind_t k;
    union {
        bool b;
        int64_t i; /* INT, DURATION (ns) */
        double f;  /* FLOAT, TIME (seconds) */
        im_sv_t s; /* STRING, HTML */
        const tmap_t *m;
        const tsample_t *smp;
        const tsamples_t *ss;
        const troot_t *root; /* DATA */
    } u;
};
struct tmap_entry {
    im_sv_t key;
    tv_t val;
};

/* Go's type name of a value, as fmt's %T and reflect print it. */
const char *tmpl__type_name(const tv_t *v);
/* fmt.Fprint of one value (%v). */
void tmpl__print_value(im_buf_t *out, const tv_t *v);
/* fmt.Sprintf(format, args...). */
void tmpl__sprintf(im_buf_t *out, const char *f, size_t flen, const tv_t *args, size_t nargs);
/* fmt.Sprint / Sprintln. */
void tmpl__sprint(im_buf_t *out, const tv_t *args, size_t nargs, bool ln);
/* Go's %.4g of a float (with Go's +Inf/-Inf/NaN). */
void tmpl__fmt_g4(im_buf_t *out, double v);
/* time.Time.String() of seconds (UTC). */
void tmpl__fmt_time(im_buf_t *out, int64_t sec, int64_t nsec);
/* time.Duration.String(). */
void tmpl__fmt_duration(im_buf_t *out, int64_t ns);
/* strconv.Quote. */
void tmpl__quote(im_buf_t *out, const char *s, size_t n);

#endif

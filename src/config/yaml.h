/* yaml.h — the one YAML decoder: a small tree with positions, and strict getters.
 *
 * Every YAML file infermon reads (the configuration, rule files, rule unit tests,
 * file_sd files, web configs, simulator scenarios) is parsed by cfg_parse_yaml
 * into a cfg_node_t tree and decoded with the helpers below, so every file has
 * the same rules and the same error texts:
 *
 *   1. A mapping's keys are checked against the caller's list of known keys
 *      (cfg_check_map): an unknown key is "field K not found in WHAT", a repeated
 *      key is "mapping key \"K\" already defined at line N"; both carry the key's
 *      line:column.
 *   2. A null value (empty, ~, null) is treated as absent by every getter.
 *   3. Every error is IM_EPARSE with file:line:column in the im_err_t of the
 *      decoder (cfg_dec_t); the first error wins (callers return on it).
 *   4. The tree is capped at CFG_MAX_NODES nodes and CFG_MAX_DEPTH levels, so an
 *      alias bomb or a deeply nested document is refused, not expanded.
 *
 * A tree is owned by whoever parsed it (cfg_node_free); strings returned by the
 * getters are fresh copies owned by the caller (an earlier value in *out is
 * freed first, so a default can be preloaded). */
#ifndef IM_CONFIG_YAML_H
#define IM_CONFIG_YAML_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

#define CFG_MAX_NODES 1000000
#define CFG_MAX_DEPTH 200

typedef enum cfg_node_type {
    CFG_NODE_SCALAR,
    CFG_NODE_SEQ,
    CFG_NODE_MAP, /* kids alternate key, value */
} cfg_node_type_t;

typedef struct cfg_node {
    cfg_node_type_t type;
    char *str;  /* owned; scalars only (never NULL for a scalar) */
    bool plain; /* scalar was unquoted (null/bool detection) */
    int line, col;
    struct cfg_node **kids; /* owned */
    size_t nkids;
} cfg_node_t;

void cfg_node_free(cfg_node_t *n);
/* Deep copy (positions kept). */
cfg_node_t *cfg_node_clone(const cfg_node_t *n);
/* Parses any YAML (or JSON) text into a tree; *root is NULL for an empty
 * document. Syntax errors carry line:column; name (borrowed, may be NULL) is
 * stored as err->file. */
im_rc cfg_parse_yaml(const char *text, size_t len, const char *name, cfg_node_t **root,
                     im_err_t *err);

/* ---- Strict decoding ---- */

typedef struct cfg_dec {
    const char *file; /* borrowed: the name errors carry, may be NULL */
    im_err_t *err;    /* may be NULL */
} cfg_dec_t;

/* Fills d->err with msg at n's position (0:0 when n is NULL); returns IM_EPARSE. */
im_rc cfg_fail(cfg_dec_t *d, const cfg_node_t *n, const char *fmt, ...) IM_PRINTF(3, 4);
/* True for NULL and for a plain empty, ~ or null scalar. */
bool cfg_is_null(const cfg_node_t *n);
/* "a mapping", "a sequence" or "a scalar". */
const char *cfg_type_name(const cfg_node_t *n);
/* Checks n is a mapping whose keys are all in `known` (NULL-terminated; NULL
 * allows any key) and unique. A null node is an empty mapping. `what` names the
 * section in errors. */
im_rc cfg_check_map(cfg_dec_t *d, const cfg_node_t *n, const char *what, const char *const *known);
/* As cfg_check_map with the known keys given as several NULL-terminated lists
 * (the list of lists itself NULL-terminated), for sections that embed others
 * (e.g. a scrape config embeds the HTTP client keys, cfg_http_client_keys). */
im_rc cfg_check_map_lists(cfg_dec_t *d, const cfg_node_t *n, const char *what,
                          const char *const *const *lists);
/* The value of key in mapping m; NULL when absent, null, or m is not a mapping. */
const cfg_node_t *cfg_get(const cfg_node_t *m, const char *key);
/* The value of key even when it is null (NULL only when absent). */
const cfg_node_t *cfg_get_raw(const cfg_node_t *m, const char *key);

/* Getters: leave *out untouched when the key is absent or null. */
im_rc cfg_get_str(cfg_dec_t *d, const cfg_node_t *m, const char *key, char **out);
im_rc cfg_get_bool(cfg_dec_t *d, const cfg_node_t *m, const char *key, bool *out);
/* A Prometheus duration ("1m30s", "0"); milliseconds. */
im_rc cfg_get_dur(cfg_dec_t *d, const cfg_node_t *m, const char *key, int64_t *out);
im_rc cfg_get_u64(cfg_dec_t *d, const cfg_node_t *m, const char *key, uint64_t *out);
/* A signed decimal integer that fits an int (Go's int in YAML). */
im_rc cfg_get_int(cfg_dec_t *d, const cfg_node_t *m, const char *key, int *out);
/* A float as YAML writes one (1, 0.5, 1e3, .inf, -.Inf, .nan). */
im_rc cfg_get_float(cfg_dec_t *d, const cfg_node_t *m, const char *key, double *out);
/* A size with Go units' base-2 suffixes (see cfg_parse_bytes). */
im_rc cfg_get_bytes(cfg_dec_t *d, const cfg_node_t *m, const char *key, int64_t *out);
/* A sequence of scalars; appends to *out / *nout (owned array of owned strings). */
im_rc cfg_get_strlist(cfg_dec_t *d, const cfg_node_t *m, const char *key, char ***out,
                      size_t *nout);
/* A mapping of string to string; *names / *values are parallel owned arrays in
 * file order (replaced, not appended). */
im_rc cfg_get_strmap(cfg_dec_t *d, const cfg_node_t *m, const char *key, char ***names,
                     char ***values, size_t *n);
/* A mapping of label name to label value, validated as label names and UTF-8
 * values; *out (an owned reference, unref'ed first) is replaced. */
im_rc cfg_get_labels(cfg_dec_t *d, const cfg_node_t *m, const char *key, const im_labels_t **out);

/* Parses a size with Go units' base-2 suffixes ("512KB", "10MiB", "1GB", "0"). */
im_rc cfg_parse_bytes(const char *s, int64_t *out);
/* Frees an array of n owned strings and the array. */
void cfg_strv_free(char **v, size_t n);

/* ---- Writing YAML back (for config dumps) ---- */

/* Appends s as a YAML scalar, quoted when it would not read back as the same string. */
void cfg_emit_str(im_buf_t *o, const char *s);
/* Appends a URL with its userinfo password replaced by "xxxxx", as Go's
 * URL.Redacted: "http://u:pw@h/p" -> "http://u:xxxxx@h/p". */
void cfg_emit_url(im_buf_t *o, const char *u);
/* Appends "<ind spaces>k: v\n" with v through cfg_emit_str. */
void cfg_emit_kv(im_buf_t *o, int ind, const char *k, const char *v);
/* Appends "<ind spaces>k: <duration>\n". */
void cfg_emit_dur(im_buf_t *o, int ind, const char *k, int64_t ms);

#endif

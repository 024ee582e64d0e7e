/* template_int.h — private to src/template/: what the stages of the template
 * engine share. The engine runs in four stages, each its own file and each
 * callable (and fuzzable) on its own:
 *   lex.c    text -> tokens (Go's text/template/parse/lex.go)
 *   parse.c  tokens -> tree of node_t (parse.go), checking functions and variables
 *   node.c   tree -> text (Node.String: error contexts and the round-trip fuzzer)
 *   exec.c   tree + data -> output (exec.go), with the value model below
 * and the functions it calls: funcs.c (Go's builtins, funcs.go), template.c
 * (Prometheus' functions and the public API of template.h) and fmt.c (Go's fmt
 * and strconv as far as templates reach them). All memory of one parse or
 * expansion lives in one arena; nothing here is thread-shared. */
#ifndef IM_TEMPLATE_TEMPLATE_INT_H
#define IM_TEMPLATE_TEMPLATE_INT_H

#include "template/template.h"
#include "util/arena.h"
#include "util/base.h"
#include "util/buf.h"

#define TMPL_MAX_DEPTH      64     /* parse nesting; execution allows 4x */
#define TMPL_MAX_RANGE_ITER 100000 /* iterations of one range */
#define TMPL_MAX_TOKENS     200000 /* tokens of one text */

/* ---- Value model (Go's reflect values, reduced to what Prometheus' templates
 * can produce) ---- */

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

/* ---- Lexer (lex.c) ---- */

typedef enum tok_type {
    T_EOF,
    T_ERROR,
    T_TEXT,
    T_LDELIM,
    T_RDELIM,
    T_SPACE,
    T_IDENT,
    T_FIELD,
    T_VAR,
    T_DOT,
    T_STRING,
    T_RAWSTRING,
    T_CHARCONST,
    T_NUMBER,
    T_BOOL,
    T_NIL,
    T_PIPE,
    T_LPAREN,
    T_RPAREN,
    T_DECLARE,
    T_ASSIGN,
    T_CHAR,
    /* keywords */
    T_KEYWORD,
    T_IF,
    T_ELSE,
    T_END,
    T_RANGE,
    T_WITH,
    T_DEFINE,
    T_TEMPLATE,
    T_BLOCK,
    T_BREAK,
    T_CONTINUE,
} tok_type_t;

typedef struct tok {
    tok_type_t t;
    size_t pos, len; /* in the text (for T_ERROR: into errbuf storage) */
    int line;
    const char *err; /* T_ERROR: arena message */
} tok_t;

/* Lexes the whole text s[0..n) into *toks (im_malloc'd, the caller frees; T_ERROR
 * messages in arena memory). The last token is T_EOF or T_ERROR. Returns false
 * (and frees the tokens) when the text has TMPL_MAX_TOKENS tokens or more. */
bool tmpl__lex(const char *s, size_t n, im_arena_t *arena, tok_t **toks, size_t *ntoks);
/* A byte that continues an identifier (Go's letters and digits, any non-ASCII). */
bool tmpl__is_alnum(unsigned char c);

/* ---- Parse tree (parse.c) ---- */

typedef enum node_type {
    N_LIST,
    N_TEXT,
    N_ACTION,
    N_IF,
    N_RANGE,
    N_WITH,
    N_BREAK,
    N_CONTINUE,
    N_PIPE,
    N_CMD,
    N_FIELD, /* .A.B */
    N_VAR,   /* $x.A.B */
    N_IDENT, /* function name */
    N_DOT,
    N_NIL,
    N_BOOL,
    N_NUMBER,
    N_STRING,
    N_CHAIN,    /* (pipe).A.B */
    N_TEMPLATE, /* {{template "name" pipe}}: text = name, src = its literal, pipe may be
                 * NULL; from {{block}}: list = the body */
    N_DEFINE,   /* text = name, src = its literal, list = body (in the parser's defs) */
    N_END,      /* parse-time only */
    N_ELSE,     /* parse-time only */
} node_type_t;

typedef struct node node_t;
struct node {
    node_type_t t;
    size_t pos; /* byte offset in the text */
    int line;
    /* N_TEXT: text; N_STRING: decoded value; N_NUMBER/N_IDENT: source text */
    im_sv_t text;
    im_sv_t src;   /* source text of the token (strings, numbers) */
    node_t **kids; /* LIST: items; CMD: args; PIPE: cmds */
    size_t nkids;
    size_t cap;
    /* fields for FIELD/VAR/CHAIN: ident parts ("$x" first for VAR) */
    im_sv_t *idents;
    size_t nidents;
    node_t *pipe;  /* ACTION/IF/RANGE/WITH; CHAIN: the operand */
    node_t *list;  /* IF/RANGE/WITH/DEFINE body; TEMPLATE: a block's body */
    node_t *elist; /* else list (may be NULL) */
    node_t **decl; /* PIPE: declared variables (N_VAR) */
    size_t ndecl;
    bool is_assign;
    bool is_block; /* N_DEFINE made by {{block}} (its N_TEMPLATE's list is the body) */
    bool b;
    /* numbers */
    bool is_int, is_float;
    int64_t i64;
    double f64;
};

/* Parses text s[0..n) named name; on success returns the root N_LIST (arena
 * memory, borrowing s) whose elist is the N_LIST of definitions ({{define}},
 * {{block}}); on error NULL with "template: NAME:LINE: msg" (IM_EPARSE) or a
 * token limit error (IM_ELIMIT) in err. */
node_t *tmpl__parse(const char *name, const char *s, size_t n, im_arena_t *arena, im_err_t *err);

/* ---- Printer (node.c) ---- */

/* Go's Node.String of a pipeline, command or operand (error contexts). */
void tmpl__node_string(im_buf_t *b, const node_t *n);
/* The whole tree as template text: the root list, then each definition as
 * {{define "name"}}...{{end}}. Parsing the result again and printing it gives
 * the same text (comments and trim markers are gone after the first parse). */
void tmpl__tree_string(im_buf_t *b, const node_t *root);

/* ---- Executor (exec.c) ---- */

typedef struct var {
    im_sv_t name;
    tv_t v;
} var_t;

typedef struct state {
    const char *name;
    const char *text;
    const tmpl_data_t *data;
    im_arena_t *arena;
    im_buf_t *out;
    im_err_t *err;
    bool failed;
    const node_t *node; /* current node for error context */
    var_t *vars;
    size_t nvars, capvars;
    int depth;
    int brk; /* 1 = break, 2 = continue */
    tmap_t labels, ext_labels;
    const node_t *defs; /* N_LIST of N_DEFINE */
} state_t;

typedef enum ptype { P_ANY, P_STR, P_SAMPLE, P_SAMPLES, P_REFLECT } ptype_t;

typedef struct fcall {
    state_t *s;
    tv_t *args;
    size_t n;
    const node_t *cmd;
    const char *name; /* the function's template name (for errors) */
    int variant;      /* func_def_t.variant: which of a family of functions */
} fcall_t;

typedef tv_t (*tfunc_t)(fcall_t *c);

typedef struct func_def {
    const char *name;
    tfunc_t fn;
    int nparams;   /* fixed params */
    bool variadic; /* last param repeats */
    ptype_t ptypes[4];
    bool lazy;   /* and/or: evaluates args itself */
    int variant; /* for functions that serve several names (f_cmp, f_escape, ...) */
} func_def_t;

/* Go's builtins (funcs.c) and Prometheus' functions (template.c). */
extern const func_def_t tmpl__builtins[];
extern const size_t tmpl__nbuiltins;
extern const func_def_t tmpl__prom_funcs[];
extern const size_t tmpl__nprom_funcs;
/* The function called name, or NULL (the parser checks names with it). */
const func_def_t *tmpl__find_func(const char *name, size_t len);

/* Sets the execution error (the first one wins) with the position and context of
 * s->node, as Go's "template: NAME:LINE:COL: executing ... at <...>: msg". */
void tmpl__xerr(state_t *s, const char *fmt, ...) IM_PRINTF(2, 3);
/* "error calling NAME: msg" at the call's command. */
void tmpl__call_err(fcall_t *c, const char *name, const char *fmt, ...) IM_PRINTF(3, 4);
/* A map of the labels (keys interned by the labels, values copied into the arena). */
void tmpl__labels_to_map(state_t *s, const im_labels_t *ls, tmap_t *m);
/* The value at key in m, or NULL. */
const tv_t *tmpl__map_get(const tmap_t *m, im_sv_t key);
/* Go's truth; *ok = false when the value cannot be tested. */
bool tmpl__truth(const tv_t *v, bool *ok);
/* Pushes a variable (name borrowed from the text). */
void tmpl__push_var(state_t *s, im_sv_t name, tv_t v);
/* Executes the tree n (a list or any node) with dot, writing into s->out. */
void tmpl__walk(state_t *s, tv_t dot, const node_t *n);

#define NOVAL ((tv_t){.k = TV_INVALID})

static inline void *xalloc(state_t *s, size_t n)
{
    void *p = im_arena_alloc(s->arena, n ? n : 1);
    if (!p) im_oom(n);
    return p;
}
static inline tv_t mk_str(state_t *s, const char *p, size_t n)
{
    char *c = xalloc(s, n + 1);
    if (n) memcpy(c, p, n);
    c[n] = 0;
    return (tv_t){.k = TV_STRING, .u.s = {c, n}};
}
/* A string value of b's bytes; frees b. */
static inline tv_t mk_buf_str(state_t *s, im_buf_t *b)
{
    tv_t v = mk_str(s, b->data ? b->data : "", b->len);
    im_buf_free(b);
    return v;
}
static inline tv_t mk_float(double f)
{
    return (tv_t){.k = TV_FLOAT, .u.f = f};
}
static inline tv_t mk_int(int64_t i)
{
    return (tv_t){.k = TV_INT, .u.i = i};
}
static inline tv_t mk_bool(bool b)
{
    return (tv_t){.k = TV_BOOL, .u.b = b};
}

/* ---- fmt (fmt.c) ---- */

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
/* url.QueryEscape (funcs.c: urlquery, and graphLink/tableLink). */
void tmpl__query_escape(im_buf_t *b, im_sv_t s);

#endif

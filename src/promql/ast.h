/* ast.h — the PromQL abstract syntax tree: node kinds, value types, operators,
 * the function table.
 *
 * Contract.
 *  1. A tree comes from promql_parse (parser.h) and is type-checked: every node's
 *     `type` field holds its result type (promql_expr_type), every call's
 *     arguments match its function's signature, every binary expression obeys
 *     Prometheus' rules (vector matching only between instant vectors, set
 *     operators only between vectors, `bool` only on comparisons).
 *  2. Memory. All nodes, arrays and strings of one parse live in one arena owned
 *     by the root node (promql_expr_root_t, reachable through `root->owner`);
 *     promql_expr_free(root) frees all of it, including the compiled matchers
 *     (im_matcher_new) and the references to interned strings the tree holds.
 *     Freeing any node other than the root is not allowed. Pointers into the
 *     tree are valid until the root is freed. The engine may add nodes (e.g.
 *     step-invariant wrappers) by allocating them from promql_expr_arena(root);
 *     nodes it adds must not own matchers or interned strings that are not also
 *     registered with the owner (promql_expr_own_matcher / promql_expr_own_istr).
 *  3. Vector selectors. `matchers` holds every matcher, and when the selector has
 *     a metric name outside braces (`foo{a="b"}`) the implicit `__name__="foo"`
 *     equality matcher is the LAST element (as in Prometheus). `name` is that
 *     metric name or NULL when there is none (`{__name__=~"a.*"}` has name NULL).
 *  4. Offsets are in milliseconds and may be negative (`offset -5m`). For a
 *     matrix selector the offset and @ live in its inner vector selector (as in
 *     Prometheus); a subquery has its own.
 *  5. Positions: `pos_start`/`pos_end` are byte offsets into the query text
 *     ([start, end)) as Prometheus' PositionRange; used for error messages only,
 *     ignored by promql_expr_equal.
 *  6. The function table (promql_functions) is static and lists every function
 *     of Prometheus 2.53, each entry with its signature and its evaluation (a
 *     call node points at its entry, so nothing is looked up by name after
 *     parsing); experimental ones are flagged (Prometheus only accepts them with
 *     --enable-feature=promql-experimental-functions; we always accept them and
 *     let callers that care check the flag).
 *
 * Thread safety: a finished tree is read-only and may be read by many threads. */
#ifndef IM_PROMQL_AST_H
#define IM_PROMQL_AST_H

#include "labels/labels.h"
#include "util/arena.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/intern.h"

/* ---- Language level: Prometheus 2.x or 3.x ----
 *
 * compat 3 (the default, `--promql.compat=3`) is Prometheus 3.14's language and
 * semantics: left-open range selectors and lookback, `.` in regex matchers also
 * matching \n, holt_winters renamed double_exponential_smoothing, the 3.x
 * functions; its experimental parts need the feature flags Prometheus uses
 * (`--enable-feature=promql-experimental-functions`, …). compat 2 is exactly what
 * infermon did before (Prometheus 2.53; experimental 2.53 functions always on).
 * docs/promql.md lists every difference. */
typedef struct promql_lang {
    int compat;                    /* 2 or 3; 0 = the process default */
    bool experimental_functions;   /* promql-experimental-functions (compat 3) */
    bool delayed_name_removal;     /* promql-delayed-name-removal (compat 3) */
    bool extended_range_selectors; /* promql-extended-range-selectors (compat 3) */
    bool binop_fill_modifiers;     /* promql-binop-fill-modifiers (compat 3) */
    /* type-and-unit-labels' PromQL side (compat 3): dropping __name__ also drops
     * __type__ and __unit__. Only promql-test sets it (Prometheus' test engine);
     * ingest does not add those labels. */
    bool type_and_unit_labels;
} promql_lang_t;

/* The level used where none is given (promql_parse, engines whose options leave
 * lang.compat 0): compat 3 with no feature flags until set. Set once at start-up,
 * before any thread parses or evaluates (cli does it from its flags). */
void promql_lang_set_default(const promql_lang_t *l);
promql_lang_t promql_lang_default(void);
/* l with compat 0 replaced by the process default (the flags are taken from l
 * when l->compat is set, else from the default too). */
promql_lang_t promql_lang_resolve(const promql_lang_t *l);
/* Parses a comma-separated --enable-feature list into l (unknown names are an
 * error naming the flag); features this engine does not know about but
 * Prometheus has are refused too, so nothing is accepted and ignored. */
bool promql_lang_enable_features(promql_lang_t *l, const char *list, char *why, size_t whycap);

/* ---- Value types ---- */
typedef enum promql_value_type {
    PROMQL_TYPE_NONE = 0,
    PROMQL_TYPE_SCALAR,
    PROMQL_TYPE_VECTOR, /* instant vector */
    PROMQL_TYPE_MATRIX, /* range vector */
    PROMQL_TYPE_STRING,
} promql_value_type_t;

/* "scalar", "instant vector", "range vector", "string" as Prometheus' error texts
 * name them ("none" for NONE). */
const char *promql_value_type_str(promql_value_type_t t);
/* "scalar", "vector", "matrix", "string": the HTTP API's resultType words. */
const char *promql_value_type_api_str(promql_value_type_t t);

/* ---- Node kinds ---- */
typedef enum promql_node_kind {
    PROMQL_NODE_NUMBER = 1,      /* number literal */
    PROMQL_NODE_STRING,          /* string literal */
    PROMQL_NODE_VECTOR_SELECTOR, /* foo{a="b"} offset 5m @ 123 */
    PROMQL_NODE_MATRIX_SELECTOR, /* foo[5m] */
    PROMQL_NODE_SUBQUERY,        /* expr[5m:1m] */
    PROMQL_NODE_CALL,            /* rate(x[5m]) */
    PROMQL_NODE_AGGREGATE,       /* sum by (a) (x) */
    PROMQL_NODE_BINARY,          /* a + on(b) group_left(c) d */
    PROMQL_NODE_UNARY,           /* -x, +x */
    PROMQL_NODE_PAREN,           /* (x) */
    PROMQL_NODE_STEP_INVARIANT,  /* engine-only wrapper; the parser never makes one */
} promql_node_kind_t;

/* ---- Binary operators, in Prometheus' token order ---- */
typedef enum promql_binop {
    PROMQL_OP_ADD = 1, /* + */
    PROMQL_OP_SUB,     /* - */
    PROMQL_OP_MUL,     /* * */
    PROMQL_OP_DIV,     /* / */
    PROMQL_OP_MOD,     /* % */
    PROMQL_OP_POW,     /* ^ (right-associative) */
    PROMQL_OP_ATAN2,   /* atan2 */
    PROMQL_OP_EQL,     /* == */
    PROMQL_OP_NEQ,     /* != */
    PROMQL_OP_GTR,     /* > */
    PROMQL_OP_LSS,     /* < */
    PROMQL_OP_GTE,     /* >= */
    PROMQL_OP_LTE,     /* <= */
    PROMQL_OP_AND,     /* and */
    PROMQL_OP_OR,      /* or */
    PROMQL_OP_UNLESS,  /* unless */
} promql_binop_t;

/* "+", "atan2", "and", ... */
const char *promql_binop_str(promql_binop_t op);
bool promql_binop_is_comparison(promql_binop_t op); /* == != > < >= <= */
bool promql_binop_is_set(promql_binop_t op);        /* and or unless */
/* Precedence as Prometheus: or 1, and/unless 2, comparisons 3, + - 4,
 * * / % atan2 5, ^ 6. */
int promql_binop_precedence(promql_binop_t op);

/* ---- Aggregation operators ---- */
typedef enum promql_aggop {
    PROMQL_AGG_SUM = 1,
    PROMQL_AGG_AVG,
    PROMQL_AGG_COUNT,
    PROMQL_AGG_MIN,
    PROMQL_AGG_MAX,
    PROMQL_AGG_GROUP,
    PROMQL_AGG_STDDEV,
    PROMQL_AGG_STDVAR,
    PROMQL_AGG_TOPK,         /* param: scalar k */
    PROMQL_AGG_BOTTOMK,      /* param: scalar k */
    PROMQL_AGG_COUNT_VALUES, /* param: string label name */
    PROMQL_AGG_QUANTILE,     /* param: scalar phi */
    PROMQL_AGG_LIMITK,       /* 3.x, experimental; param: scalar k */
    PROMQL_AGG_LIMIT_RATIO,  /* 3.x, experimental; param: scalar ratio in [-1, 1] */
} promql_aggop_t;

const char *promql_aggop_str(promql_aggop_t op); /* "sum", "count_values", ... */
/* Does the operator take a parameter, and of which type (NONE when not)? */
promql_value_type_t promql_aggop_param_type(promql_aggop_t op);

/* ---- Unary operators ---- */
typedef enum promql_unop {
    PROMQL_UNARY_MINUS = 1,
    PROMQL_UNARY_PLUS,
} promql_unop_t;

/* ---- @ modifier ---- */
typedef enum promql_at_kind {
    PROMQL_AT_NONE = 0,
    PROMQL_AT_TIMESTAMP, /* @ <unix seconds>, stored as ms in at_ms */
    PROMQL_AT_START,     /* @ start() */
    PROMQL_AT_END,       /* @ end() */
} promql_at_kind_t;

/* ---- Functions ---- */
#define PROMQL_FUNC_MAX_ARGS 5

/* The evaluator's state and values (promql_int.h): opaque here. */
struct promql_ev;
struct promql_val;
struct promql_call;
typedef struct promql_function promql_function_t;

/* Evaluates a call of the function (call->func is its descriptor) over all
 * steps into *out (uninitialised on entry; on error nothing is left to free). */
typedef im_rc (*promql_func_eval_t)(struct promql_ev *ev, const struct promql_call *call,
                                    struct promql_val *out);

/* One entry per function: what the parser checks a call against and what the
 * evaluator runs for it. */
struct promql_function {
    const char *name; /* static */
    /* Declared argument types. With variadic == 0 exactly nargs arguments are
     * required. With variadic != 0 the last declared argument is optional and may
     * repeat: at least nargs-1 arguments, at most nargs-1+variadic (variadic > 0)
     * or any number (variadic < 0); extra arguments have the last declared type.
     * (Prometheus' convention, so its error texts come out the same.) */
    promql_value_type_t arg_types[PROMQL_FUNC_MAX_ARGS];
    int nargs;
    int variadic;
    promql_value_type_t return_type;
    bool experimental;           /* needs promql-experimental-functions (2.53 and 3.x) */
    bool keeps_name;             /* results keep __name__ (last_over_time, label_*, sort*) */
    promql_func_eval_t eval;     /* never NULL */
    int variant;                 /* which case of a shared eval (range function, sort order, …) */
    double (*per_value)(double); /* element-wise functions: maps each present value */
    uint8_t only_compat;         /* 0: every level; 2 or 3: only at that compat level */
};

/* The table (static, sorted by name; functions.c, next to the implementations)
 * and a lookup by name (NULL if unknown), done once at parse time. */
extern const promql_function_t promql_functions[];
extern const size_t promql_functions_count;
const promql_function_t *promql_function_lookup(const char *name, size_t len);
/* 0 when f is usable at level l, else why not: 1 unknown at that level, 2 needs
 * --enable-feature=promql-experimental-functions. */
int promql_function_usable(const promql_function_t *f, const promql_lang_t *l);

/* ---- Nodes ---- */
typedef struct promql_expr promql_expr_t;
typedef struct promql_expr_owner promql_expr_owner_t;

typedef enum promql_vector_card {
    PROMQL_CARD_ONE_TO_ONE = 0,
    PROMQL_CARD_MANY_TO_ONE,  /* group_left */
    PROMQL_CARD_ONE_TO_MANY,  /* group_right */
    PROMQL_CARD_MANY_TO_MANY, /* set operators */
} promql_vector_card_t;

/* Vector matching of a binary expression between two instant vectors. */
typedef struct promql_vector_matching {
    promql_vector_card_t card;
    bool on;                           /* on(...) rather than ignoring(...) */
    const im_istr_t **matching_labels; /* arena array of interned names; owner holds refs */
    size_t nmatching_labels;
    const im_istr_t **include_labels; /* group_left(...)/group_right(...) labels */
    size_t ninclude_labels;
    /* fill()/fill_left()/fill_right() (3.x, promql-binop-fill-modifiers): the value
     * taken for a missing left/right operand; binop_fill.c. */
    bool has_fill_left, has_fill_right;
    double fill_left, fill_right;
} promql_vector_matching_t;

typedef struct promql_number {
    double value; /* unary minus on a literal is folded in, as in Prometheus */
} promql_number_t;

typedef struct promql_string {
    const char *s; /* arena, unescaped, NUL-terminated (may contain NUL: use len) */
    size_t len;
} promql_string_t;

/* A duration expression that needs the query (Prometheus 3: `x[step() * 2]`,
 * `offset min_of(range(), 1h)`); constant ones are folded by the parser into the
 * plain _ms fields. Values are seconds as in Prometheus; the result is rounded
 * to milliseconds. In the tree's arena. */
typedef enum promql_dur_op {
    PROMQL_DUR_NUM = 1, /* value (seconds) */
    PROMQL_DUR_STEP,    /* step(): the query's step (0 for an instant query) */
    PROMQL_DUR_RANGE,   /* range(): end - start of the query */
    PROMQL_DUR_NEG,
    PROMQL_DUR_ADD,
    PROMQL_DUR_SUB,
    PROMQL_DUR_MUL,
    PROMQL_DUR_DIV,
    PROMQL_DUR_MOD,
    PROMQL_DUR_POW,
    PROMQL_DUR_MIN, /* min_of(a, b) */
    PROMQL_DUR_MAX, /* max_of(a, b) */
    PROMQL_DUR_PAREN,
} promql_dur_op_t;

typedef struct promql_dur {
    promql_dur_op_t op;
    double v;                       /* NUM: seconds */
    bool is_duration;               /* NUM: written as a duration (5m), for printing */
    const struct promql_dur *a, *b; /* operands (NEG/PAREN: a only) */
} promql_dur_t;

/* The value in seconds given the query's step and range (ms). */
double promql_dur_eval(const promql_dur_t *d, int64_t step_ms, int64_t range_ms);

typedef struct promql_vector_selector {
    const im_istr_t *name;   /* metric name outside braces, or NULL; owner holds the ref */
    im_matcher_t **matchers; /* arena array; matchers owned by the root's owner */
    size_t nmatchers;
    int64_t offset_ms;               /* 0 = none; may be negative */
    promql_at_kind_t at;             /* PROMQL_AT_NONE = none */
    int64_t at_ms;                   /* with PROMQL_AT_TIMESTAMP */
    const promql_dur_t *offset_expr; /* non-NULL: offset_ms comes from it at query time */
    /* `x smoothed` (promql-extended-range-selectors, compat 3; never inside a
     * matrix selector): the value interpolated between the samples around the
     * evaluation time (engine.c) */
    bool smoothed;
} promql_vector_selector_t;

/* Prometheus 3's experimental extended range selectors (promql-extended-range-
 * selectors): `x[5m] anchored`, `x[5m] smoothed` (extended_range.c). */
typedef enum promql_range_ext {
    PROMQL_RANGE_PLAIN = 0,
    PROMQL_RANGE_ANCHORED,
    PROMQL_RANGE_SMOOTHED,
} promql_range_ext_t;

typedef struct promql_matrix_selector {
    promql_expr_t *vs;              /* a PROMQL_NODE_VECTOR_SELECTOR: carries offset and @ */
    int64_t range_ms;               /* > 0 */
    const promql_dur_t *range_expr; /* non-NULL: range_ms comes from it at query time */
    promql_range_ext_t ext;
} promql_matrix_selector_t;

typedef struct promql_subquery {
    promql_expr_t *expr; /* instant-vector expression */
    int64_t range_ms;    /* > 0 */
    int64_t step_ms;     /* 0 = default (the engine's default evaluation interval) */
    int64_t offset_ms;   /* may be negative */
    promql_at_kind_t at;
    int64_t at_ms;
    const promql_dur_t *range_expr, *step_expr, *offset_expr; /* as in the selectors */
} promql_subquery_t;

typedef struct promql_call {
    const promql_function_t *func; /* static, from promql_functions */
    promql_expr_t **args;          /* arena array */
    size_t nargs;
} promql_call_t;

typedef struct promql_aggregate {
    promql_aggop_t op;
    promql_expr_t *expr;        /* instant-vector expression */
    promql_expr_t *param;       /* topk/bottomk/quantile/count_values parameter, else NULL */
    bool without;               /* without(...) rather than by(...) */
    const im_istr_t **grouping; /* arena array of interned names, in the order written */
    size_t ngrouping;
} promql_aggregate_t;

typedef struct promql_binary {
    promql_binop_t op;
    promql_expr_t *lhs;
    promql_expr_t *rhs;
    bool return_bool; /* `bool` modifier (comparisons only) */
    /* Non-NULL exactly when both sides are instant vectors (as in Prometheus,
     * where set operators get card MANY_TO_MANY). */
    promql_vector_matching_t *matching;
} promql_binary_t;

typedef struct promql_unary {
    promql_unop_t op;
    promql_expr_t *expr;
} promql_unary_t;

typedef struct promql_paren {
    promql_expr_t *expr;
} promql_paren_t;

typedef struct promql_step_invariant {
    promql_expr_t *expr;
} promql_step_invariant_t;

struct promql_expr {
    promql_node_kind_t kind;
    promql_value_type_t type; /* result type, set by the type check */
    uint32_t pos_start;       /* byte offsets into the query text, [start, end) */
    uint32_t pos_end;
    promql_expr_owner_t *owner; /* non-NULL on the root only */
    union {
        promql_number_t number;
        promql_string_t string;
        promql_vector_selector_t vs;
        promql_matrix_selector_t ms;
        promql_subquery_t sq;
        promql_call_t call;
        promql_aggregate_t agg;
        promql_binary_t bin;
        promql_unary_t unary;
        promql_paren_t paren;
        promql_step_invariant_t si;
    } u;
};

/* Result type of an expression (PROMQL_TYPE_NONE for NULL). */
promql_value_type_t promql_expr_type(const promql_expr_t *e);

/* Frees the whole tree; e must be a root returned by promql_parse (or NULL). */
void promql_expr_free(promql_expr_t *root);

/* The arena of the tree (for the engine's own additions); root only. */
im_arena_t *promql_expr_arena(promql_expr_t *root);
/* Hands a matcher / an interned reference to the root: freed with it. */
void promql_expr_own_matcher(promql_expr_t *root, im_matcher_t *m);
void promql_expr_own_istr(promql_expr_t *root, const im_istr_t *s);

/* Structural equality (positions ignored; numbers compared bit-wise except
 * that any NaN equals any NaN; a selector's matchers compared as a multiset of
 * (type, name, value), since printing sorts them). Used by the round-trip
 * tests and the fuzzer. */
bool promql_expr_equal(const promql_expr_t *a, const promql_expr_t *b);

/* Canonical PromQL, as Prometheus' String(): `sum by (job) (rate(x[5m]))`,
 * matchers sorted and quoted, durations canonical, @ before offset. Appends to
 * out; IM_ELIMIT when out's cap is hit. */
im_rc promql_format(const promql_expr_t *e, im_buf_t *out);

/* Calls fn on e and every descendant, parents first (children in source order);
 * fn returns false to skip a node's children. */
typedef bool (*promql_walk_fn)(const promql_expr_t *e, void *ctx);
void promql_expr_walk(const promql_expr_t *e, promql_walk_fn fn, void *ctx);

#endif

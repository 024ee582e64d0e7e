/* node.c — prints parse trees as template text (Go's Node.String): pipelines,
 * commands and operands for the context of execution errors ("at <...>"), and
 * whole trees for the parse/print round trip (fuzz/fuzz_template_parse.c). */
#include "util/base.h"

#include "template/template_int.h"

static void pipe_string(im_buf_t *b, const node_t *n)
{
    for (size_t i = 0; i < n->ndecl; i++) {
        if (i) (void)im_buf_puts(b, ", ");
        (void)im_buf_append(b, n->decl[i]->src.p, n->decl[i]->src.len);
    }
    if (n->ndecl) (void)im_buf_puts(b, n->is_assign ? " = " : " := ");
    for (size_t i = 0; i < n->nkids; i++) {
        if (i) (void)im_buf_puts(b, " | ");
        tmpl__node_string(b, n->kids[i]);
    }
}

void tmpl__node_string(im_buf_t *b, const node_t *n)
{
    switch (n->t) {
    case N_CMD:
        for (size_t i = 0; i < n->nkids; i++) {
            if (i) (void)im_buf_putc(b, ' ');
            if (n->kids[i]->t == N_PIPE) {
                (void)im_buf_putc(b, '(');
                pipe_string(b, n->kids[i]);
                (void)im_buf_putc(b, ')');
            } else {
                tmpl__node_string(b, n->kids[i]);
            }
        }
        break;
    case N_PIPE: pipe_string(b, n); break;
    case N_FIELD:
    case N_VAR:
    case N_NUMBER:
    case N_STRING: (void)im_buf_append(b, n->src.p, n->src.len); break;
    case N_IDENT: (void)im_buf_append(b, n->text.p, n->text.len); break;
    case N_DOT: (void)im_buf_putc(b, '.'); break;
    case N_TEMPLATE:
        (void)im_buf_puts(b, "{{template ");
        (void)im_buf_append(b, n->src.p, n->src.len);
        if (n->pipe) {
            (void)im_buf_putc(b, ' ');
            pipe_string(b, n->pipe);
        }
        (void)im_buf_puts(b, "}}");
        break;
    case N_NIL: (void)im_buf_puts(b, "nil"); break;
    case N_BOOL: (void)im_buf_puts(b, n->b ? "true" : "false"); break;
    case N_CHAIN:
        if (n->pipe->t == N_PIPE) {
            (void)im_buf_putc(b, '(');
            pipe_string(b, n->pipe);
            (void)im_buf_putc(b, ')');
        } else {
            tmpl__node_string(b, n->pipe);
        }
        (void)im_buf_append(b, n->src.p, n->src.len);
        break;
    default: break;
    }
}

/* ---- Whole trees ---- */

static void list_string(im_buf_t *b, const node_t *list);

static void control_string(im_buf_t *b, const char *kw, const node_t *n)
{
    (void)im_buf_printf(b, "{{%s ", kw);
    pipe_string(b, n->pipe);
    (void)im_buf_puts(b, "}}");
    list_string(b, n->list);
    if (n->elist) {
        (void)im_buf_puts(b, "{{else}}");
        list_string(b, n->elist);
    }
    (void)im_buf_puts(b, "{{end}}");
}

static void tree_node_string(im_buf_t *b, const node_t *n)
{
    switch (n->t) {
    case N_LIST: list_string(b, n); break;
    case N_TEXT:
        /* a text ending in '{' would make "{{" with the next action: print that
         * brace as an action, which parses back to the same output */
        if (n->text.len && n->text.p[n->text.len - 1] == '{') {
            (void)im_buf_append(b, n->text.p, n->text.len - 1);
            (void)im_buf_puts(b, "{{\"{\"}}");
        } else {
            (void)im_buf_append(b, n->text.p, n->text.len);
        }
        break;
    case N_ACTION:
        (void)im_buf_puts(b, "{{");
        pipe_string(b, n->pipe);
        (void)im_buf_puts(b, "}}");
        break;
    case N_IF: control_string(b, "if", n); break;
    case N_RANGE: control_string(b, "range", n); break;
    case N_WITH: control_string(b, "with", n); break;
    case N_BREAK: (void)im_buf_puts(b, "{{break}}"); break;
    case N_CONTINUE: (void)im_buf_puts(b, "{{continue}}"); break;
    case N_TEMPLATE:
        if (!n->list) {
            tmpl__node_string(b, n);
            break;
        }
        /* {{block}}: its body stays in place (a definition parsed on its own
         * would not see the variables around the block) */
        (void)im_buf_puts(b, "{{block ");
        (void)im_buf_append(b, n->src.p, n->src.len);
        (void)im_buf_putc(b, ' ');
        pipe_string(b, n->pipe);
        (void)im_buf_puts(b, "}}");
        list_string(b, n->list);
        (void)im_buf_puts(b, "{{end}}");
        break;
    default: tmpl__node_string(b, n); break;
    }
}

static void list_string(im_buf_t *b, const node_t *list)
{
    for (size_t i = 0; list && i < list->nkids; i++) tree_node_string(b, list->kids[i]);
}

void tmpl__tree_string(im_buf_t *b, const node_t *root)
{
    list_string(b, root);
    const node_t *defs = root->elist;
    for (size_t i = 0; defs && i < defs->nkids; i++) {
        const node_t *d = defs->kids[i];
        if (d->is_block) continue; /* printed where the block is */
        (void)im_buf_puts(b, "{{define ");
        (void)im_buf_append(b, d->src.p, d->src.len);
        (void)im_buf_puts(b, "}}");
        list_string(b, d->list);
        (void)im_buf_puts(b, "{{end}}");
    }
}

/* builtin_int.h — internals of the built-in rules (builtin.c, builtin_engines.c). */
#ifndef IM_LLM_BUILTIN_INT_H
#define IM_LLM_BUILTIN_INT_H

#include "llm/builtin.h"

/* Appends engine e's groups (recording rules and alerts) for thresholds d (all
 * set). */
void llm__builtin_engine_yaml(const llm_builtin_opts_t *d, int e, im_buf_t *b);

#endif

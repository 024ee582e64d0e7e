/* rules_int.h — shared inside src/rules/ only: the link between a manager
 * (manager.c) and its evaluation thread (run.c). */
#ifndef IM_RULES_RULES_INT_H
#define IM_RULES_RULES_INT_H

#include "rules/rules.h"

typedef struct rules__run rules__run_t;

/* The manager's run-state slot (NULL until rules_manager_start). */
rules__run_t **rules__run_slot(rules_manager_t *m);
/* Stops the thread and frees the run state; the manager stays (free calls it). */
void rules__run_end(rules_manager_t *m);

#endif

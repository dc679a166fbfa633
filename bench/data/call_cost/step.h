#ifndef STEP_H_
#define STEP_H_

typedef int (*step_fn)(int x);
int step(int x);
step_fn step_picked(void);
const char *step_target(void);

#endif

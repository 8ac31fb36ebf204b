/*
 * cw_patch.h - between causeway.c (start-up, cw_start, cw_stop) and patch.c (the
 * -fpatchable-function-entry sites).
 */
#ifndef CW_PATCH_H
#define CW_PATCH_H

/* Find the program's and its libraries' patchable entries and put each in its state:
 * a call to the trampoline (on) or one 5-byte nop (off). At start-up only (the
 * process must still be single-threaded). Returns 0 or a negative errno. */
int cw__patch_init(int on);
/* Switch every site on or off (any time after cw__patch_init). */
int cw__patch_set(int on);

#endif

// The value the tests change: rebuildme.answer() returns it.
#include "answer.h"

int rebuildme_answer() { return 1; }

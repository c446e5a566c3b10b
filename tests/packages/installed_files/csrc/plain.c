int plain_answer(void) { return 42; }

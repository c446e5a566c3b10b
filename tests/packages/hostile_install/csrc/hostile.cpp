int hostile_answer() { return 42; }

int tree_a() { return 1; }

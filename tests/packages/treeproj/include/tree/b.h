int tree_b();

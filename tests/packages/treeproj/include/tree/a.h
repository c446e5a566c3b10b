int tree_a();

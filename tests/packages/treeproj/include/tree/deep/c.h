int tree_c();

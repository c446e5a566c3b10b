// Compiled only with -DBROKEN=ON: the undeclared name is a real compile error.
int broken_answer() {
  return undeclared_value + 1;
}

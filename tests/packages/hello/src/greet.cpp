#include "greet.h"

std::string greeting(const std::string& name) { return "hello, " + name; }

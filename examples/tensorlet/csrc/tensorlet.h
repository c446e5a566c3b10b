#pragma once
// Everything a C++ user or extension needs: tensors, the typed operator API,
// operators on tensors, and the registration macros.
#include "autograd/Autograd.h"
#include "core/Tensor.h"
#include "dispatch/Library.h"
#include "generated/Functions.h"
#include "ops/Random.h"
#include "ops/TensorOperators.h"

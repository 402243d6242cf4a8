#include "shardc/Dialect/Ops.h"
#include "shardc/Transforms/Passes.h"

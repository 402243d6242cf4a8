#include "shardc/Transforms/Passes.h"
#include "shardc/Dialect/Ops.h"

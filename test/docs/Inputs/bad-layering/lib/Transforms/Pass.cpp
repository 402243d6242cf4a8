#include "shardc/Dialect/Ops.h"

#include "shardc/Transforms/Passes.h"

"""Run by test_pipeline.py under `mpirun -n 4`: each rank trains the 8-layer
MLP pipelined over pipe=4 on the mpi backend (its rank one stage), and
checks the whole parameters and loss it gets against the simulator's
training of the same model and seed, which must have the same bits."""
import os
import sys

import numpy as np

import shardc

MLP = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                   "mlp8_pipeline.json")

mpi = shardc.compile(MLP, backend="mpi", microbatches=4).train(seed=0)
sim = shardc.compile(MLP, backend="sim", microbatches=4).train(seed=0)
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", -1)))
assert mpi.ok and sim.ok, mpi.mismatches + sim.mismatches
assert mpi.loss == sim.loss, (mpi.loss, sim.loss)
for name, array in sim.parameters.items():
    assert np.array_equal(mpi.parameters[name], array), name
sys.stdout.write(f"rank {rank}: OK max_rel_err={mpi.max_rel_err:.3g}\n")
sys.stdout.flush()

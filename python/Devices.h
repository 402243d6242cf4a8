//===- Devices.h - ShardedEngine's primitives for Python --------*- C++ -*-===//
//
// shardc.launch(fn, num_devices, backend) calls fn once per device; while
// fn runs, the calling thread's current device is that device's
// Communicator, and a shardc.ShardedEngine built then keeps it (as a
// Device) for device_id, num_devices, barrier, send, receive, send_async
// and the collectives. `threads`: one thread per device in this process,
// the GIL released in every communicator call; `mpi`: this rank's device.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PYTHON_DEVICES_H
#define SHARDC_PYTHON_DEVICES_H

#include <pybind11/pybind11.h>

namespace shardc::python {

/// Defines Device, Future, current_device, launch_threads and launch_mpi.
void bindDevices(pybind11::module_ &module);

} // namespace shardc::python

#endif // SHARDC_PYTHON_DEVICES_H

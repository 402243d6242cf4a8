"""The ShardedEngine interface, with shardc's runtime underneath.

Subclass ShardedEngine and write load_checkpoint, forward and backward with
ShardedEngine's primitives; run one instance per device with launch(). An engine
built outside launch() is the only device of a one-device world (ShardedEngine's
SingleDevice runs that way).
"""
from abc import ABC, abstractmethod

import numpy as np

from . import _shardc


class _LoneDevice:
    """The device of an engine built outside launch(): device 0 of 1, where
    every collective returns (a copy of) its input and there is nobody to
    send to."""

    device_id = 0
    num_devices = 1

    def barrier(self):
        pass

    def _no_peer(self, what, peer):
        raise ValueError(f"{what}: device {peer} does not exist or is this "
                         "device (an engine built outside shardc.launch is "
                         "the only device)")

    def send(self, dest_id, arr):
        self._no_peer("send", dest_id)

    def receive(self, src_id, out=None):
        self._no_peer("receive", src_id)

    def send_async(self, src, dst, target_device_id):
        self._no_peer("send_async", target_device_id)

    def _copy(self, arr, axis=0, group=None):
        if group is not None and list(group) != [0]:
            raise ValueError(f"group {list(group)} must be [0]: an engine "
                             "built outside shardc.launch is the only device")
        a = np.array(arr)
        if not -a.ndim <= axis < max(a.ndim, 1):
            raise ValueError(f"axis {axis} is out of range for an array of "
                             f"{a.ndim} dimensions")
        return a

    def all_gather(self, arr, axis=0, group=None):
        return self._copy(arr, axis, group)

    def all_reduce(self, arr, op="sum", group=None):
        if op not in ("sum", "max"):
            raise ValueError(f"all_reduce: op '{op}' is not supported "
                             "('sum' and 'max' are)")
        return self._copy(arr, 0, group)

    def reduce_scatter(self, arr, axis=0, op="sum", group=None):
        self.all_reduce(arr, op, group)
        return self._copy(arr, axis, group)

    def all_to_all(self, arr, axis=0, group=None):
        return self._copy(arr, axis, group)


class ShardedEngine(ABC):
    """The abstract ShardedEngine. The device an instance runs on is the one
    of the launch() call that built it."""

    def __new__(cls, *args, **kwargs):
        # Subclasses need not call super().__init__() (the reference
        # engines do not): the device is bound here, when the instance is created.
        self = super().__new__(cls)
        device = _shardc.current_device()
        self._shardc_device = device if device is not None else _LoneDevice()
        return self

    @property
    def device_id(self) -> int:
        """The rank of the current device."""
        return self._shardc_device.device_id

    @property
    def num_devices(self) -> int:
        """Total number of devices in the cluster (World Size)."""
        return self._shardc_device.num_devices

    def barrier(self) -> None:
        """Blocks until all devices reach this line."""
        self._shardc_device.barrier()

    # --- Point-to-Point Communication ---
    def send(self, dest_id, arr) -> None:
        """Hands `arr` to device `dest_id`; messages between two devices
        arrive in the order they were sent."""
        self._shardc_device.send(dest_id, arr)

    def receive(self, src_id, out=None):
        """The next array device `src_id` sent to this one (copied into
        `out` too when given)."""
        return self._shardc_device.receive(src_id, out)

    def send_async(self, src, dst, target_device_id):
        """Starts sending `src` to `target_device_id` and returns a Future
        at once. The target takes it with receive(), into its own `dst`
        with receive(src_id, out=dst); `dst` here must be None or have
        `src`'s shape."""
        return self._shardc_device.send_async(src, dst, target_device_id)

    # --- Collective Communication ---
    # Each spans every device, as ShardedEngine's do, or with group=[ids] (an
    # extension) the devices listed, in that order: a row or a column of a
    # 2D mesh. Every member must make the same call.
    def all_gather(self, arr, axis: int = 0, *, group=None):
        """Concatenates arrays from all devices along the specified axis."""
        return self._shardc_device.all_gather(arr, axis, group=group)

    def all_reduce(self, arr, op: str = "sum", *, group=None):
        """Reduces arrays from all devices ('sum' or 'max') and broadcasts
        the result."""
        return self._shardc_device.all_reduce(arr, op, group=group)

    def reduce_scatter(self, arr, axis: int = 0, op: str = "sum", *,
                       group=None):
        """all_reduce, then this device's block of `axis`."""
        return self._shardc_device.reduce_scatter(arr, axis, op, group=group)

    def all_to_all(self, arr, axis: int = 0, *, group=None):
        """Scatters chunks of the array to different devices: block i of
        `axis` goes to device i, and the blocks received are concatenated
        along `axis` in device order."""
        return self._shardc_device.all_to_all(arr, axis, group=group)

    # --- Model Lifecycle ---
    @abstractmethod
    def load_checkpoint(self, params) -> None:
        ...

    @abstractmethod
    def forward(self, x):
        ...

    @abstractmethod
    def backward(self, grads):
        ...

    def inference_loop(self, input_stream, output_stream) -> None:
        for x in iter(input_stream):
            output_stream.write(self.forward(x))


def launch(fn, num_devices, backend="threads", timeout=None):
    """Calls fn() once per device, concurrently, and returns the list of its
    results in device order. An engine built inside fn belongs to the
    device that built it.

    backend="threads": one thread per device in this process (the GIL is
    released in every collective and kernel). backend="mpi": this process is
    one rank of `mpirun -n num_devices python3 ...`; fn runs on this rank's
    device and every rank gets every rank's result (results are pickled).

    A failure raises shardc.DeviceError naming the device that failed first
    (threads); under mpi the failing rank reports it and ends the job, as
    the mpi backend does. timeout bounds every wait for another device, in
    seconds (threads: None waits as long as some device still runs; mpi:
    None is 300).
    """
    if backend == "threads":
        return _shardc.launch_threads(fn, num_devices,
                                      0.0 if timeout is None else timeout)
    if backend == "mpi":
        return _shardc.launch_mpi(fn, num_devices,
                                  300.0 if timeout is None else timeout)
    raise ValueError(f"launch: unknown backend '{backend}' (expected "
                     "'threads' or 'mpi')")

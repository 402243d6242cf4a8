"""The exceptions shardc raises; the C++ half raises them too."""


class ShardcError(RuntimeError):
    """A shardc failure; the message carries the diagnostics (with the
    model's file, line and column where there is one)."""


class DeviceError(ShardcError):
    """A failure on one device of a launch or an engine: `device_id` names
    the device that failed first; `__cause__` is its Python exception, if
    one started it."""

    def __init__(self, message, device_id):
        super().__init__(message)
        self.device_id = device_id

"""How talking to the verifier service can fail, apart from the service itself: the client side (`verify/cli.py`,
`verify/executor.py`) and a command the service runs for a client (`verify/forwarded.py`) catch these."""

from __future__ import annotations

__all__ = ["ServiceUnavailable", "ServiceUntrusted", "ServiceDeclined", "ServiceGone", "ServiceError"]


class ServiceUnavailable(Exception):
    """No service answers on the socket: the caller judges in-process."""


class ServiceUntrusted(ServiceUnavailable):
    """The socket or its folder is not this user's alone (another user's, or open to others): never connected to."""


class ServiceDeclined(ServiceUnavailable):
    """The service refused this connection or request (not its owner's, a worker's process, weaker checks than its
    own, another build cache); the message says why. Nothing was judged: the caller judges in-process."""


class ServiceGone(ServiceUnavailable):
    """The service stopped before it answered (it closed or reset the connection mid-request, or cut a reply short):
    what it did not answer was not judged there, so the caller judges it in-process. `done`: the indices of a
    batch's pairs it did answer."""

    def __init__(self, message: str, done: frozenset[int] = frozenset()) -> None:
        super().__init__(message)
        self.done = done


class ServiceError(Exception):
    """The service answered with an error; `kind` is `input` (an unusable input file) or `verifier`."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

"""What can go wrong with one model call, classified so the retry rule can read it.

The tree::

    ProviderError                 every failure of a call; ``retryable`` says whether another attempt may help
    ├── RequestRefused            the provider refused THIS request (a 4xx about the request): not retried
    ├── ContextLengthExceeded     the prompt does not fit the model's window: not retried, its own kind
    ├── RateLimited               429; ``retry_after`` seconds when the provider said so
    ├── UpstreamError             5xx, or a 200 whose reply ended ``finish_reason: error``
    ├── TransportError            timeout, refused or cut connection, a body that stopped mid-way
    ├── MalformedResponse         a 200 whose body is not a chat completion
    └── CallFailed                every attempt of one call failed; carries the last error and the lanes tried

``lane`` is the upstream a router named in its error (OpenRouter's ``error.metadata.provider_name``); the client
asks the next attempt of the same call to avoid it. Messages pass through a :class:`~workbench.loop.secrets.Secret`
redactor before they are built, so no error text carries the API key.
"""

from __future__ import annotations

from collections.abc import Callable


class ProviderError(Exception):
    """One model call failed. ``status`` is the HTTP status when there was one."""

    kind = "provider-error"
    retryable = True

    def __init__(self, message: str, *, status: int | None = None, lane: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.lane = lane
        self.failed_attempts: tuple[object, ...] = ()
        """Earlier failed attempts of the same call (:class:`~workbench.loop.client.Attempt`), set by the client."""

    def redacted(self, redact: Callable[[str], str]) -> ProviderError:
        """This error with ``redact`` applied to its text (so no message carries the API key)."""
        self.message = redact(self.message)
        self.args = (self.message,)
        return self


class RequestRefused(ProviderError):
    """The provider refused the request itself (bad parameters, auth, moderation): the same body would fail again."""

    kind = "refused"
    retryable = False


class ContextLengthExceeded(ProviderError):
    """The request's prompt is longer than the model's context window."""

    kind = "context-length"
    retryable = False


class RateLimited(ProviderError):
    kind = "rate-limited"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = 429,
        lane: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, lane=lane)
        self.retry_after = retry_after


class UpstreamError(ProviderError):
    kind = "upstream"


class TransportError(ProviderError):
    kind = "transport"


class MalformedResponse(ProviderError):
    kind = "malformed"


class CallFailed(ProviderError):
    """All attempts of one call failed. ``last`` is the final attempt's error; ``lanes`` the lanes it avoided."""

    kind = "call-failed"
    retryable = False

    def __init__(self, message: str, *, last: ProviderError, attempts: int, lanes: tuple[str, ...]) -> None:
        super().__init__(message, status=last.status, lane=last.lane)
        self.last = last
        self.attempts = attempts
        self.lanes = lanes

"""Every error ctxlab raises, in one place.

Messages say what happened and what to do about it. Run-time failures carry their data (the
manifest of a failed preparation, the token figures of a budget overrun) so that callers and the
notebook panels can show them without parsing text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxlab.manifest import ContextManifest
    from ctxlab.messages import ProviderUsage, ToolPairProblem
    from ctxlab.models._retry import RetryWait

__all__ = [
    "AgentBusy",
    "BudgetReached",
    "CacheNotWritten",
    "CallStopped",
    "CompressionError",
    "ContextBudgetExceeded",
    "ContextOverflowError",
    "CountStoreError",
    "CountStoreLocked",
    "CtxlabError",
    "CtxlabWarning",
    "ForkError",
    "InvalidConversation",
    "InvalidConversationStart",
    "InvalidToolPairs",
    "MalformedReply",
    "MaxStepsExceeded",
    "MessageFormatError",
    "ModelError",
    "OffloadError",
    "OverBudget",
    "OverloadedError",
    "PreparationError",
    "RateLimitError",
    "RetriesExhausted",
    "SessionLogError",
    "SessionNotFound",
    "SourceError",
    "SourceUnavailable",
    "StateChanged",
    "StateConflict",
    "TokenizerDataError",
    "ToolDefinitionError",
    "UsageError",
    "WorkspaceExists",
    "WriteError",
]


class CtxlabError(Exception):
    """Base class of every error raised by ctxlab."""


class UsageError(CtxlabError, ValueError):
    """The API was called in a way it does not support; the message says how to call it."""


class ForkError(UsageError):
    """A fork cannot be made as asked: a step the session never made, a tool that cannot be
    isolated for a branch, a workspace that cannot be copied, a branch name used twice. The
    message says what to change; nothing of the original session or its files was touched."""


class MessageFormatError(CtxlabError, ValueError):
    """A message or content block is malformed (bad role, unknown block type, missing field)."""

    guessed_format: str | None = None
    """The format the data was read as, when ``load`` detected it rather than being told."""


class TokenizerDataError(CtxlabError):
    """The tokenizer data shipped with ctxlab is missing or fails its checksum."""


class WriteError(CtxlabError, OSError):
    """A file ctxlab was asked to write (a saved transcript, a report, a sweep's results) could
    not be written. What was at that path before is untouched: files are written whole to a
    temporary name beside the target, then renamed over it."""


class CountStoreError(UsageError):
    """A token-count store (`ctxlab.tokens.CountStore`) cannot be used: not a ctxlab count
    store (another application's database, another table shape), damaged, or not writable. The
    file is left as it is; counts are made again without it (name another file to keep them)."""


class CountStoreLocked(CountStoreError):
    """Another process holds the count store locked for longer than the store waits: wait for
    it to finish, or close it, then retry. The store is valid: do not delete it."""


class WorkspaceExists(UsageError, FileExistsError):
    """A folder given for the demo's sample project holds files ctxlab did not put there;
    nothing was written to it."""


class CtxlabWarning(UserWarning):
    """Base class of the warnings ctxlab gives: something was done, but not all of it."""


class CacheNotWritten(CtxlabWarning):
    """A cache could not be written (a full disk, a folder where an entry goes, a read-only
    store): every computed result is still returned; a later run computes what is missing."""


class OffloadError(CtxlabError):
    """Writing offloaded content to the workspace failed, or a path would leave the workspace."""


class PreparationError(CtxlabError):
    """Preparing a model request failed. ``manifest`` describes the failed preparation."""

    def __init__(self, message: str, *, manifest: ContextManifest | None = None) -> None:
        super().__init__(message)
        self.manifest = manifest


class InvalidToolPairs(PreparationError):
    """The conversation has a tool result without its call, or a call without its result."""


class InvalidConversationStart(PreparationError):
    """The request would hold no messages, or start with an assistant turn: providers reject
    both (the Messages API needs a first user message). Its manifest says
    ``invalid_conversation``."""


class ContextBudgetExceeded(PreparationError):
    """The request does not fit the input limit even after every allowed reduction.

    Reducing history cannot help when System, tool schemas or required material alone fill the
    budget: shorten them, raise the limit, or mark material optional.
    """

    def __init__(
        self,
        message: str,
        *,
        estimated_tokens: int,
        input_limit: int,
        manifest: ContextManifest | None = None,
    ) -> None:
        super().__init__(message, manifest=manifest)
        self.estimated_tokens = estimated_tokens
        self.input_limit = input_limit


class StateChanged(PreparationError):
    """The working state changed while a request was being prepared (a compaction or a message
    committed first). Nothing of this preparation was committed; prepare again. Its manifest
    says ``state_conflict``."""


class CompressionError(PreparationError):
    """Summarization failed on every attempt and fallback truncation is disabled.

    The working context was left untouched.
    """


class ModelError(CtxlabError):
    """The model provider failed the request.

    ``status_code`` is the provider's HTTP status when there was one; ``__cause__`` holds the
    provider SDK's own exception; ``retries`` the waits made before it was given up
    (`ctxlab.models.RetryWait`).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retries: tuple[RetryWait, ...] = (),
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retries = retries


class ContextOverflowError(ModelError):
    """The provider rejected the request as longer than the model's context window.

    The agent answers it once per request with overflow recovery (a forced compaction and a retry).
    """


class MalformedReply(ModelError):
    """The provider answered, but its reply does not read as a message (a tool call's input
    nested too deeply, a block of an impossible shape). Nothing was added to the session."""

    usage: ProviderUsage | None = None
    """What the provider billed for the reply that did not read (a summary answer holding no
    JSON object): the call was paid for all the same."""


class RateLimitError(ModelError):
    """The provider is rate-limiting this key (HTTP 429): wait, or lower the request rate."""


class OverloadedError(ModelError):
    """The provider is overloaded (HTTP 529 or 503): retry later."""


class RetriesExhausted(ModelError):
    """A request kept failing for a passing reason (a rate limit, an overloaded or unreachable
    server) after every retry its model allows (``max_retries=``, ``max_wait=``). The message
    names the last status and each wait; ``retries`` holds them, ``__cause__`` the last error
    (a `RateLimitError`, an `OverloadedError`, ...)."""


class OverBudget(UsageError):
    """A call that may spend real dollars was refused before any request: its estimated cost
    passes its ``budget_usd`` cap. ``estimate`` and ``cap`` are the figures (USD); the message
    says what to change (fewer runs, a larger cap, a smaller ``max_steps``)."""

    def __init__(self, message: str, *, estimate: float, cap: float) -> None:
        super().__init__(message)
        self.estimate = estimate
        self.cap = cap


class BudgetReached(CtxlabError):
    """A request was not sent: the dollars already spent under a ``budget_usd`` cap reached it.
    ``spent`` and ``cap`` are the figures (USD)."""

    def __init__(self, message: str, *, spent: float, cap: float) -> None:
        super().__init__(message)
        self.spent = spent
        self.cap = cap


class ToolDefinitionError(CtxlabError, TypeError):
    """A Python function cannot be turned into a tool (a parameter without a usable type, ...)."""


class MaxStepsExceeded(CtxlabError):
    """The agent made ``max_steps`` reasoning requests in one call without replying."""


class AgentBusy(CtxlabError, RuntimeError):
    """The agent is already running a call; wait for it (or stop it) before starting another."""


class CallStopped(CtxlabError):
    """The running call was stopped with ``agent.stop()``; the conversation so far is kept."""


class SourceUnavailable(PreparationError):
    """A context source with the ``fail`` policy failed or timed out; the preparation failed."""


class SourceError(PreparationError):
    """A context source returned malformed material (not blocks, empty or duplicate ids, required
    blocks from an ``omit`` source). The ``omit`` policy does not hide these."""


class InvalidConversation(CtxlabError, ValueError):
    """A message (a model reply, a user message) or a stored state would make the conversation
    invalid: duplicate or unknown tool-call ids, results without their call, calls without their
    results, empty content. Nothing was committed or logged; ``problems`` lists what is wrong."""

    def __init__(self, message: str, *, problems: tuple[ToolPairProblem | str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


class StateConflict(CtxlabError):
    """A task-state change was based on an outdated revision; re-read the state and retry."""


class SessionLogError(CtxlabError):
    """The session log cannot be used: not a ctxlab database, a corrupt file, a wrong schema."""


class SessionNotFound(SessionLogError, LookupError):
    """No session with these ids exists in the log (for this user)."""

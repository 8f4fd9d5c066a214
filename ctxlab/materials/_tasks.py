"""Task state: the todo list, task scope, requirements, subject version and verification results.

Owned apart from the conversation, so compaction never loses it, and projected into every
reasoning request as transient ``TASK_STATE`` material. Changes are new values (the state is
frozen) and bump ``revision``; mutations that take ``expected_revision`` refuse stale writers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxlab.exceptions import StateConflict, UsageError
from ctxlab.util._checks import instance_of, sequence_of, shown

__all__ = ["Requirement", "TaskOptions", "TaskState", "TodoItem", "Verification"]

TodoStatus = Literal["pending", "in_progress", "completed"]
_MARK = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoItem(BaseModel):
    """One entry of the todo list."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str = Field(min_length=1)
    """What to do."""
    status: TodoStatus = "pending"
    """``pending``, ``in_progress`` or ``completed``."""


class Requirement(BaseModel):
    """An acceptance criterion: proposed by the model or the app, decided by a trusted caller."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str
    status: Literal["proposed", "confirmed", "rejected"] = "proposed"


class Verification(BaseModel):
    """The summary of a bounded check (tests, a lint) against a subject version."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    passed: bool
    summary: str = ""
    subject_version: str | None = None
    """The version checked; evidence about another version is stale."""


class TaskOptions(BaseModel):
    """Which task information is projected (all off by default, as in the reference)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    include_requirements: bool = False
    include_verification_results: bool = False
    allow_requirement_proposals: bool = False
    """Gives the model a ``propose_requirement`` tool (and implies requirement projection)."""


_MODE_RULES = {
    "plan": "Plan only: read and think, write the plan; do not change code or run anything that "
    "does. Switch to BUILD when the plan is ready.",
    "build": "Build: carry out the plan, step by step, and keep it current.",
}


class TaskState(BaseModel):
    """The task state of one session."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    todos: tuple[TodoItem, ...] = ()
    scope: str | None = None
    objective: str | None = None
    requirements: tuple[Requirement, ...] = ()
    subject_version: str | None = None
    verifications: tuple[Verification, ...] = ()
    mode: Literal["plan", "build"] | None = None
    """000's PLAN/BUILD mode (None: no mode in use); projected at every model boundary."""
    plan_path: str | None = None
    """Where the plan is kept (e.g. ``PLAN.md``), shown with the mode."""
    revision: int = 0
    """Bumped at every change."""

    def _next(self, expected_revision: int | None = None, **changes: object) -> TaskState:
        if expected_revision is not None and expected_revision != self.revision:
            msg = (
                f"the task state is at revision {self.revision}, not {expected_revision}: it "
                "changed since it was read; read it again and retry"
            )
            raise StateConflict(msg)
        # Validated, not copied: ``model_copy(update=)`` would keep a todo of None or a number
        # as given, and the state would fail only when rendered.
        try:
            return type(self)(**{**dict(self), **changes, "revision": self.revision + 1})
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            msg = (
                f"the task state cannot take {where}: {first['msg']} (got {shown(first['input'])})"
            )
            raise UsageError(msg) from exc

    def with_todos(self, todos: list[TodoItem] | tuple[TodoItem, ...]) -> TaskState:
        """The state with the whole todo list replaced."""
        return self._next(todos=sequence_of(todos, TodoItem, "todos", "a list of TodoItem"))

    def begin(self, scope: str, objective: str) -> TaskState:
        """The state with a task identity and objective."""
        return self._next(scope=scope, objective=objective)

    def propose(self, text: str) -> tuple[TaskState, Requirement]:
        """The state with a new proposed requirement, and that requirement."""
        if not isinstance(text, str):
            msg = f"a requirement is text, got {shown(text)}"
            raise UsageError(msg)
        if not text.strip():
            msg = "a requirement needs text"
            raise UsageError(msg)
        requirement = Requirement(id=f"R{len(self.requirements) + 1}", text=text.strip())
        return self._next(requirements=(*self.requirements, requirement)), requirement

    def decide(self, requirement_id: str, *, accept: bool, expected_revision: int) -> TaskState:
        """The state with a requirement confirmed or rejected (a trusted caller's decision)."""
        if requirement_id not in {r.id for r in self.requirements}:
            known = ", ".join(r.id for r in self.requirements) or "none"
            msg = f"no requirement {requirement_id!r} (known: {known})"
            raise UsageError(msg)
        status = "confirmed" if accept else "rejected"
        requirements = tuple(
            r.model_copy(update={"status": status}) if r.id == requirement_id else r
            for r in self.requirements
        )
        return self._next(expected_revision, requirements=requirements)

    def with_subject_version(self, version: str | None) -> TaskState:
        """The state checking another subject version (None: invalidated)."""
        return self._next(subject_version=version)

    def with_verification(self, verification: Verification) -> TaskState:
        """The state with a verification result (replacing one of the same name)."""
        kept = tuple(v for v in self.verifications if v.name != verification.name)
        return self._next(verifications=(*kept, verification))

    def with_mode(self, mode: Literal["plan", "build"], plan_path: str | None = None) -> TaskState:
        """The state in PLAN or BUILD mode (with the plan's path, kept when not given)."""
        if mode not in ("plan", "build"):
            msg = f"the mode is 'plan' or 'build', got {mode!r}"
            raise UsageError(msg)
        return self._next(mode=mode, plan_path=plan_path or self.plan_path)

    def render_todos(self) -> str:
        """The todo list as the model sees it."""
        if not self.todos:
            return "(empty)"
        return "\n".join(f"{_MARK[t.status]} {t.content}" for t in self.todos)

    def render(self, options: TaskOptions, *, include_todos: bool = True) -> str:
        """The ``TASK_STATE`` projection under ``options`` ('' when there is nothing to show)."""
        instance_of(options, TaskOptions, "options", "TaskOptions (what the projection shows)")
        parts: list[str] = []
        if self.mode is not None:
            mode = f"Mode: {self.mode.upper()}"
            if self.plan_path:
                mode += f" (plan: {self.plan_path})"
            rule = _MODE_RULES[self.mode]
            parts.append(f"{mode}\n{rule}")
        extended = (
            options.include_requirements
            or options.include_verification_results
            or options.allow_requirement_proposals
        )
        if extended and (self.scope or self.objective):
            parts.append(f"Task: {self.scope or '-'}\nObjective: {self.objective or '-'}")
        if include_todos and self.todos:
            parts.append(f"Todo list (revision {self.revision}):\n{self.render_todos()}")
        if (options.include_requirements or options.allow_requirement_proposals) and (
            self.requirements
        ):
            lines = [f"- {r.id} [{r.status}] {r.text}" for r in self.requirements]
            parts.append("Requirements:\n" + "\n".join(lines))
        if options.include_verification_results and (self.verifications or self.subject_version):
            lines = [f"Subject version: {self.subject_version or 'unknown (invalidated)'}"]
            for v in self.verifications:
                current = (
                    v.subject_version is not None and v.subject_version == self.subject_version
                )
                state = "passed" if v.passed else "failed"
                stale = "" if current else " (STALE: checked another version)"
                lines.append(f"- {v.name}: {state}{stale} {v.summary}".rstrip())
            parts.append("Verification:\n" + "\n".join(lines))
        return "\n\n".join(parts)

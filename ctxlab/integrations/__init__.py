"""Adapters that put ctxlab's pipeline between another framework's agent and its model.

- `ctxlab.integrations.pydantic_ai.ContextProcessor`: a pydantic-ai history processor.
- `ctxlab.integrations.langchain.ContextMiddleware`: a LangChain (v1) agent middleware.

Each feeds an `ctxlab.ObservedSession` (open it in a Lab to watch the agent live) and, in
``"manage"`` mode, sends ctxlab's request instead of the framework's. Each module imports its
framework; install it to use the adapter.
"""

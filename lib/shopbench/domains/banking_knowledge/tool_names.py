"""The names of the agent's knowledge-base tools (issue 28): below the data model (which checks tasks
against them) and the retrieval indexes (which serve them)."""

RETRIEVAL_TOOL_NAMES = ("KB_search", "grep")

"""The briefing assistant's conversation log (seed 001 section 5): one JSONL file per day
(`YYYY-MM-DD.jsonl` in ``settings.assistant_log_dir``), one line per question.

Append-safe under concurrent requests: each entry is one ``os.write`` on a descriptor opened with
O_APPEND (atomic positioning on local files), under a process lock, so lines never interleave.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def log_dir(settings: Any) -> Path:
    return Path(settings.assistant_log_dir or Path(settings.sqlite_path).parent / "assistant-logs")


class ConversationLog:
    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self._lock = threading.Lock()

    def path_for(self, when: datetime) -> Path:
        return self.directory / f"{when:%Y-%m-%d}.jsonl"

    def append(self, entry: dict[str, Any]) -> Path:
        when = datetime.fromisoformat(entry["timestamp"]) if entry.get("timestamp") else datetime.now(UTC)
        path = self.path_for(when)
        line = (json.dumps(entry, ensure_ascii=False, default=str) + "\n").encode("utf-8")
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
        return path


def entry_from_state(session_id: str, question: str, state: dict[str, Any], started: datetime, ended: datetime) -> dict[str, Any]:
    """The seed's log entry from the final state."""
    plan = state.get("plan")
    calls = []
    if plan is not None:
        calls.append({
            "name": plan.selected_tool,
            "arguments": plan.arguments,
            "result": state.get("tool_result"),
        })
    ui = state.get("ui_payload") or {}
    return {
        "session_id": session_id,
        "timestamp": started.isoformat(),
        "timestamp_end": ended.isoformat(),
        "duration_seconds": round((ended - started).total_seconds(), 4),
        "question": question,
        "answer": state.get("final_answer"),
        "thinking": state.get("thinking"),
        "tool_calls": calls,
        "metadata": {
            "has_visualizations": bool(ui.get("visualization")),
            "num_tool_calls": len(calls),
            "has_error": bool(state.get("error")),
            "error": state.get("error"),
            "router_path": getattr(state.get("router_decision"), "path", None),
            "tokens": state.get("tokens"),
            "llm_calls": state.get("llm_calls") or [],
        },
    }

"""The engine: pure domain logic of livefreq (pydantic models and functions; no sockets, audio or disk).

Flows are YAML read by `loader` (strict YAML in `flow_yaml`, errors in `flow_errors`, lint in
`flow_lint`) into `models`, held by a `registry`. `session.SessionEngine` plays them, one input at a
time, as a facade over single-purpose parts:

- `routing`: candidates (`candidates`), guards and triggers, the deterministic `router`;
- `readback_policy`: the readback check (`readback`) applied to a state, and bad-readback policy;
- `speaking`: the controller's messages (`messages`, `templates`) and their order;
- `consult`: the LLM router's question and verdict (`router_llm`), fallback and trace;
- `timing`: silence prompts, timer transitions and telemetry holds (records in `timers`);
- `orchestrator`: the one place a session's flow or state changes.

`phraseology` reads and speaks radio values; `scenario`, `airport`, `weather` and `atis` build a
session's variables.
"""

"""What every tool shares."""


class ToolError(Exception):
    """A tool could not answer (unknown airport or place, missing argument): the message is meant
    for the user, and travels in state as `error`."""

"""A radio frequency: a named channel that every receiver tuned to it hears.

A controller transmission made on a `Frequency` goes to the `Playout` of every connection tuned
to it, and a pilot keying the mic there blocks it for all of them: no new controller message
starts while anyone transmits, and a message being spoken is cut. Today each session is alone
on a frequency of its own (`Frequency.of_session`), so one connection is tuned to it; the object
does not assume that, which is what a shared party line needs (several pilots on one frequency).
"""

from __future__ import annotations

from engine.models import ControllerMessage
from gateway.radio.playout import Playout


class Frequency:
    def __init__(self, name: str) -> None:
        self.name = name
        self._receivers: list[Playout] = []
        self._keyed = 0  # pilots transmitting now

    @classmethod
    def of_session(cls, session_id: str) -> Frequency:
        """The private frequency of one session (the controllers a pilot talks to alone)."""
        return cls(f"session:{session_id}")

    @property
    def receivers(self) -> tuple[Playout, ...]:
        return tuple(self._receivers)

    def tune(self, receiver: Playout) -> None:
        """A receiver joins: it hears what is transmitted from now on (held while someone keys)."""
        if receiver not in self._receivers:
            self._receivers.append(receiver)
            if self._keyed:
                receiver.key()

    def leave(self, receiver: Playout) -> None:
        if receiver in self._receivers:
            self._receivers.remove(receiver)
            if self._keyed:
                receiver.unkey()

    def transmit(self, messages: list[ControllerMessage]) -> None:
        """Controller messages on the air: every receiver speaks them, in order."""
        for receiver in self._receivers:
            receiver.enqueue(list(messages))

    @property
    def keyed(self) -> bool:
        return self._keyed > 0

    def key(self) -> list[ControllerMessage]:
        """A pilot keys the mic: every receiver holds its queue; returns the messages cut."""
        self._keyed += 1
        return [cut for receiver in self._receivers if (cut := receiver.key()) is not None]

    def unkey(self) -> None:
        """A pilot releases the mic: the controllers may talk again once nobody transmits."""
        if self._keyed == 0:
            return
        self._keyed -= 1
        if self._keyed == 0:
            for receiver in self._receivers:
                receiver.unkey()

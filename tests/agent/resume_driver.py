"""`kernelmosaic generate` with a registered scripted model and the fake verifier, for the kill-and-resume test.

Usage: python resume_driver.py generate ARGS...  (the script's folder must be importable for agent_kit).
"""

from __future__ import annotations

import sys
import time

from agent_kit import FakeVerifier, candidate

import kernelmosaic.verify.verifier_set as agent_verifiers
from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.models.scripted import register_script

PLAN = [("write_candidate", {"source": candidate("ms=2")}), ("test", {}), ("benchmark", {}),
        ("write_candidate", {"source": candidate("ms=1")}), ("benchmark", {}), ("submit", {})]


def next_reply(messages: list[Message]) -> Message:
    # Decided by the conversation, not by a cursor, so a resumed episode continues where its record ends.
    turn = sum(m.role == "assistant" for m in messages)
    time.sleep(0.15)
    name, args = PLAN[turn]
    return Message(role="assistant", content=f"turn {turn}: {name}", tool_calls=[ToolCall(id=f"call_{turn}", name=name, arguments=args)])


class FakeVerifierSet:
    def __init__(self, base) -> None:
        self.verifier = FakeVerifier()

    def __call__(self, precision: str) -> FakeVerifier:
        return self.verifier

    def device_peaks(self):
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


register_script("resume", lambda: [next_reply] * 20)

if __name__ == "__main__":  # only the driver's own process: tests that import the fake patch it themselves
    from kernelmosaic.cli import app

    agent_verifiers.VerifierSet = FakeVerifierSet  # the local executor's

    app(sys.argv[1:])

"""Why a model call waits: the kinds of waiting, named once for every report that counts them (the
lock-step accounting in benchmarks/waits.py, the oracle's dependency edges in benchmarks/oracle.py,
and an out-of-order scheduler's own waits).

True dependencies (any scheduler must keep them): an agent's own previous answer, a conversation's
turn, what an agent saw or was given (its state came from the other's answers), a slow job's answer
due, a town-wide step (civics phases, memes). The rest are *false*: a wait on agents the waiting
agent did not interact with, near (within reach this tick: a conservative scheduler may have to
keep it) or far (out of reach: no rule needs it)."""

from __future__ import annotations

from enum import Enum


class Wait(Enum):
    OWN = "own chain"  # its own previous answer (the mind asks one question after another)
    CONVERSATION = "conversation turn"  # the other side's line, in a conversation held this tick
    SIGHT = "sight or exchange"  # it perceived the other (or an object the other set), or was given by it
    SLOW_JOB = "slow job due"  # a slow module's answer applied at its due tick
    BARRIER = "global barrier"  # civics phases, memes: a step over the whole town
    NEAR = "near, no interaction"  # within reach (max(vision, hearing) + 2 tiles), yet independent
    FAR = "far, out of reach"  # farther than reach: independent by the rule
    # (an out-of-order scheduler's own, counted by it; lock-step has none of these)
    LOOKAHEAD = "lookahead on a laggard"  # conservative: a slower agent could still come within reach
    REMOTE = "remote read"  # a non-local read (another's public state at the end of the last tick)
    CAP = "cap"  # the bound on how far ahead of the slowest an agent may run
    POOL = "pool full"  # no free slot to send it


TRUE = (Wait.OWN, Wait.CONVERSATION, Wait.SIGHT, Wait.SLOW_JOB, Wait.BARRIER)  # strongest first
FALSE = (Wait.NEAR, Wait.FAR, Wait.LOOKAHEAD)  # "false dependencies": what out of order should remove

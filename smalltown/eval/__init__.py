"""Measuring a town the way the paper did (SPEC 9): interviews, information diffusion,
relationships, coordination, ablations.

Every measure is first computed from the save alone (memories and the event log), so it is
exact, fast and needs no model; answers asked of the agents (through the interview task, on a
copy of the save) are an option laid over it, checked against the same memories.
"""


class EvalError(Exception):
    """Input eval cannot measure (an unknown agent, no declared facts...), said so a user can fix it."""

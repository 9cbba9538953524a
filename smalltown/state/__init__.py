"""What an agent carries between ticks, as plain data, and the one JSON codec the save keeps it in
(`agent.py` `AgentState`, and the parts it is made of: `plan.py`, `known.py`, `commitments.py`,
`social.py`); the economy's holdings replayed from a save's ledger (`ledger.py`); where a save
stands (`saved.py`). The mind acts on these, the engine keeps them, and the front ends and the
measures read them from a save without importing either."""

"""The live TUI's keys and its command palette's entries (the help screen's KEYS say the same in
words; tests/test_tui_keys.py checks that every key here is there, and works)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

# (action, title, what it does): the command palette lists every one of them
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("toggle", "Run / pause", "Start or stop the town's clock; stops a run until or a step to an event (space)"),
    ("step", "Step one tick", "Advance one tick and pause (n)"),
    ("step_agent", "Step to the selected agent's next event", "Run at full speed until it does something (s)"),
    ("until", "Run until a game time…", "At full speed: 17:30, +2h, 2023-02-14 08:00 (g)"),
    ("cancel", "Stop a run until or a step to an event", "And pause (esc)"),
    ("faster", "Faster", "More ticks a second (+)"),
    ("slower", "Slower", "Fewer ticks a second (-)"),
    ("breakpoints", "Breakpoints…", "Pause when an agent talks, reflects, re-plans, calls the model, "
                                    "enters a place, or remembers a text (b)"),
    ("inspect", "Inspect the selected agent", "Summary, plan, memories, retrievals (i)"),
    ("town", "The town's goods", "The chest, everyone's holdings, the ledger, the constitution (T; with an economy)"),
    ("calls", "Model calls", "Every call with its prompt and answers (c)"),
    ("models", "Models", "Which backend answers, and how to add a model (m)"),
    ("timeline", "Timeline", "Events, filterable by agent and kind (t)"),
    ("conversations", "Conversations", "Speaker by speaker (d)"),
    ("day", "The day at a glance", "Every agent across a day: what, where, with whom (D)"),
    ("whisper", "Whisper to the selected agent…", "An inner voice it takes as its own thought (w)"),
    ("interview", "Interview the selected agent…", "Ask in a persona; it remembers (a)"),
    ("edit_object", "Edit an object's state…", "The object under the cursor, or any (e)"),
    ("save", "Save", "Take a snapshot and fold the committed ticks into the save file (ctrl+s)"),
    ("rewind", "Rewind to an earlier time…", "A new save as this one was then; the run so far is kept (r)"),
    ("save_as", "Save as…", "Copy the save to a new file and go on in the copy (S)"),
    ("fork", "Fork to a new file…", "Copy the save as it is now; this run goes on here (F)"),
    ("open", "Open a save or world…", "Close this run and open another (O)"),
    ("perceived", "Show / hide perceived and decided events", "In the event log (p)"),
    ("follow", "Follow the selected agent", "Keep it in the middle of the map (f)"),
    ("belief_layer", "Show / hide the belief layer", "Colour the agents on the map by belief level (L)"),
    ("select(1)", "Select the next agent", "(])"),
    ("select(-1)", "Select the previous agent", "([)"),
    ("help", "Help", "Every key (?)"),
    ("quit", "Quit", "Stop now (the tick in flight is dropped) and close the save (q)"),
)

BINDINGS: list[BindingType] = [
    # not priority: a text field or an open screen gets its keys first
    Binding("space", "toggle", "Run/Pause"),
    Binding("n", "step", "Step"),
    Binding("s", "step_agent", "Agent step"),
    Binding("g", "until", "Until", show=False),
    Binding("escape", "cancel", "Stop the run until", show=False),
    Binding("plus,equals_sign", "faster", "Faster", key_display="+", show=False),
    Binding("minus", "slower", "Slower", key_display="-", show=False),
    Binding("b", "breakpoints", "Breaks"),
    Binding("p", "perceived", "Percepts", show=False),
    Binding("right_square_bracket", "select(1)", "Next agent", key_display="]", show=False),
    Binding("left_square_bracket", "select(-1)", "Prev agent", key_display="[", show=False),
    Binding("f", "follow", "Follow", show=False),
    Binding("L", "belief_layer", "Belief", show=False),
    Binding("i", "inspect", "Inspect"),
    Binding("T", "town", "Town"),  # only in a world with an economy (the app's check_action)…
    Binding("T", "nothing_to_show('town')", show=False),  # …elsewhere this one says why nothing opens
    Binding("c", "calls", "Calls", show=False),
    Binding("m", "models", "Models", show=False),
    Binding("t", "timeline", "Timeline", show=False),
    Binding("d", "conversations", "Conversations", show=False),
    Binding("D", "day", "Day", show=False),
    Binding("w", "whisper", "Whisper", show=False),
    Binding("a", "interview", "Interview", show=False),
    Binding("e", "edit_object", "Edit object", show=False),
    Binding("ctrl+s", "save", "Save", show=False),
    Binding("S", "save_as", "Save as", show=False),
    Binding("F", "fork", "Fork", show=False),
    Binding("O", "open", "Open", show=False),
    Binding("r", "rewind", "Rewind", show=False),
    Binding("question_mark", "help", "Help", key_display="?"),
    Binding("q", "quit", "Quit"),
    # Textual's own ctrl+c only says "press ctrl+q"; users press it to leave (a focused text
    # field still copies with it: not priority)
    Binding("ctrl+c", "interrupt", "Quit", show=False),  # quit; the command exits 130
]

"""Plans at three levels (SPEC 4), as answers become them: the blocks a day's answer is normalised
into (sorted, clipped, gaps filled, long blocks cut into hours, sleep to midnight) and the 5-15
minute actions that exactly fill a block. The plan itself, as data, is state/plan.py's `DayPlan`.
"""

from __future__ import annotations

from smalltown.state.plan import PlanItem
from smalltown.world.model import DAY, SLEEPING


Raw = tuple[int, int, str, str]  # (start minute, minutes, activity, place)


def normalise_blocks(raw: list[Raw], start: int, before: list[PlanItem] | None = None,
                     sleep_until: int = 0, home: str = "") -> list[PlanItem]:
    """The blocks kept from `before`, then the answered ones from `start` on: sorted, clipped so
    they never overlap, gaps filled by stretching the previous block, long blocks cut into
    hour-long ones, sleep to midnight. A plan always covers the whole day, whatever the answer."""
    blocks = list(before or [])
    if not blocks and sleep_until > 0:
        blocks.append(PlanItem(0, sleep_until, SLEEPING, place=home))
    t = blocks[-1].end if blocks else 0
    t = max(t, start)
    for b_start, minutes, activity, place in sorted(raw, key=lambda b: b[0]):
        b_start = max(b_start, t)
        end = min(b_start + minutes, DAY)
        if end - b_start < 5:
            continue
        if b_start > t and blocks:  # a gap: the previous activity goes on over it
            _extend_last(blocks, b_start)
        elif b_start > t:  # nothing before it (a re-plan at midnight): asleep until it, as a day's plan is
            blocks.append(PlanItem(t, b_start - t, SLEEPING, place=home))
        blocks.extend(_hours(b_start, end, activity, place))
        if activity != SLEEPING and b_start + minutes > DAY:
            blocks[-1].runs_on = b_start + minutes - DAY  # a night's work: it goes on tomorrow
        t = end
    if t < DAY:
        if blocks and blocks[-1].activity == SLEEPING:
            blocks[-1].minutes += DAY - t
        else:
            blocks.append(PlanItem(t, DAY - t, SLEEPING, place=home))
    return blocks


def _extend_last(blocks: list[PlanItem], to: int) -> None:
    """Stretch the last block to end at `to`, cut into hours again if it grew long."""
    last = blocks.pop()
    if last.activity == SLEEPING or last.address or last.actions is not None:
        last.minutes = to - last.start  # already under way: just longer
        blocks.append(last)
    else:
        blocks.extend(_hours(last.start, to, last.activity, last.place))


def _hours(start: int, end: int, activity: str, place: str) -> list[PlanItem]:
    """Cut a long block into hour-long ones (the last may run to 89 minutes); sleep stays whole."""
    if activity == SLEEPING or end - start < 90:
        return [PlanItem(start, end - start, activity, place=place)]
    out = []
    while end - start >= 90:
        out.append(PlanItem(start, 60, activity, place=place))
        start += 60
    out.append(PlanItem(start, end - start, activity, place=place))
    return out


def fit_actions(raw: list[tuple[str, int, str]], block: PlanItem, default: str) -> tuple[list[PlanItem], str]:
    """5-15 minute actions (activity, minutes, object address) that exactly fill `block`, from the
    answer: each clamped to 5-15, the last ones trimmed or the block's activity added so the sum is
    right (at the last action's object, or `default`). Returns the note of what was fixed ("" when
    the answer was usable as it was)."""
    notes = []
    out: list[PlanItem] = []
    t = block.start
    for activity, minutes, address in raw:
        m = max(5, min(15, minutes))
        if m != minutes:
            notes.append(f"{minutes} minutes clamped to {m}")
        m = min(m, block.end - t)
        if m < 5:
            _absorb(out, t, m, block.activity, out[-1].address if out else default)
            notes.append("trimmed to fit the block")
            t += m
            break
        out.append(PlanItem(t, m, activity, address))
        t += m
        if t >= block.end:
            break
    while t < block.end:  # too short: go on with the block's own activity
        m = min(15, block.end - t)
        _absorb(out, t, m, block.activity, out[-1].address if out else default)
        t += m
        notes.append("padded to fill the block")
    if raw and sum(m for _, m, _ in raw) != block.minutes:
        notes.insert(0, f"actions summed to {sum(m for _, m, _ in raw)} minutes, not {block.minutes}")
    return out, "; ".join(dict.fromkeys(notes))


def _absorb(out: list[PlanItem], t: int, m: int, activity: str, address: str) -> None:
    """Add `m` minutes at `t`: as an action of its own when it can be one (5+), else into the
    previous action, split in two if that would pass 15."""
    if m >= 5 or not out:
        out.append(PlanItem(t, m, activity, address))
        return
    last = out[-1]
    total = last.minutes + m
    if total <= 15:
        last.minutes = total
    else:
        last.minutes = total - 5
        out.append(PlanItem(last.end, 5, activity, address))

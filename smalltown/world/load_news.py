"""A world's news: its [[facts]] and [[gatherings]], checked against its agents and places; and
its scripted [[lines]]."""

from __future__ import annotations

from datetime import datetime, timedelta

from smalltown.world.errors import Problem
from smalltown.world.names import places, suggestion
from smalltown.world.model import Persona, Fact, Gathering, ScriptedLine, Sector
from smalltown.world.schema import WorldIn
from smalltown.world.toml_lines import TomlLines


def news(source: str, doc: WorldIn, lines: TomlLines, agents: list[Persona], sectors: dict[str, Sector],
          problems: list[Problem]) -> tuple[list[Fact], list[Gathering]]:
    """[[facts]] and [[gatherings]]: what `smalltown eval town` measures. A fact's keywords must
    find it in the seed memories of exactly the agents said to know it at the start, so a
    diffusion count never rests on keywords that miss (or over-reach)."""
    wline = lines.line_of
    by_name = {a.name: a for a in agents}
    facts: list[Fact] = []
    for k, fdoc in enumerate(doc.facts):
        fpath = ("facts", k)
        if any(f.name == fdoc.name for f in facts):
            problems.append(Problem(source, wline(fpath + ("name",)), f"duplicate fact name {fdoc.name!r}"))
        empty = [kw for kw in fdoc.keywords if any(not alt.strip() for alt in kw.split("|"))]
        for kw in empty:
            problems.append(Problem(source, wline(fpath + ("keywords",)),
                f"fact {fdoc.name!r}: keyword {kw!r} is blank or has a blank alternative"))
        subject = fdoc.subject
        if subject is None:  # the one who knows it and whose name starts it: "Ann Lee is hosting ..."
            subject = next((n for n in fdoc.known_by if fdoc.text.startswith(n)
                            and not fdoc.text[len(n):len(n) + 1].isalnum()), None)
        elif subject not in by_name:
            problems.append(Problem(source, wline(fpath + ("subject",)),
                f"fact {fdoc.name!r}: unknown subject {subject!r} (no such agent)"))
        fact = Fact(fdoc.name, fdoc.text, tuple(k.strip() for k in fdoc.keywords),
                    fdoc.question or f"Did you know that {fdoc.text.rstrip('.')}?", tuple(fdoc.known_by),
                    subject)
        facts.append(fact)
        for name in fdoc.known_by:
            if name not in by_name:
                problems.append(Problem(source, wline(fpath + ("known_by",)),
                    f"fact {fdoc.name!r}: unknown agent {name!r} in known_by"))
        for a in agents if not empty else ():
            seeded = any(fact.about(m) for m in a.seed_memories)
            if seeded and a.name not in fdoc.known_by:
                problems.append(Problem(source, wline(fpath + ("known_by",)),
                    f"fact {fdoc.name!r}: {a.name}'s description matches its keywords, but known_by "
                    f"does not list {a.name} (add the name, or make the keywords narrower)"))
            elif not seeded and a.name in fdoc.known_by:
                problems.append(Problem(source, wline(fpath + ("known_by",)),
                    f"fact {fdoc.name!r}: known_by lists {a.name}, but no phrase of {a.name}'s "
                    f"description matches the keywords {list(fact.keywords)}"))
    gatherings: list[Gathering] = []
    fact_names = {f.name for f in facts}
    for k, gdoc in enumerate(doc.gatherings):
        gpath = ("gatherings", k)
        place = gdoc.place.replace(": ", ":").strip()
        sector, _, arena = place.partition(":")
        if sector not in sectors or (arena and arena not in sectors[sector].arenas):
            problems.append(Problem(source, wline(gpath + ("place",)),
                f"gathering {gdoc.name!r}: unknown place {gdoc.place!r} (a sector, or 'sector:arena')"
                + suggestion(place, places(sectors))))
        start, end = gdoc.start.replace(tzinfo=None), gdoc.end.replace(tzinfo=None)
        if end <= start:
            problems.append(Problem(source, wline(gpath + ("end",)),
                f"gathering {gdoc.name!r}: end {end:%Y-%m-%d %H:%M} is not after start {start:%Y-%m-%d %H:%M}"))
        if gdoc.host is not None and gdoc.host not in by_name:
            problems.append(Problem(source, wline(gpath + ("host",)),
                f"gathering {gdoc.name!r}: unknown host {gdoc.host!r} (no such agent)"))
        if gdoc.fact is not None and gdoc.fact not in fact_names:
            problems.append(Problem(source, wline(gpath + ("fact",)),
                f"gathering {gdoc.name!r}: unknown fact {gdoc.fact!r} (declare it in [[facts]])"))
        if any(g.name == gdoc.name for g in gatherings):
            problems.append(Problem(source, wline(gpath + ("name",)), f"duplicate gathering name {gdoc.name!r}"))
        gatherings.append(Gathering(gdoc.name, place, start, end, gdoc.host, gdoc.fact))
    return facts, gatherings


def scripted_lines(source: str, doc: WorldIn, lines: TomlLines, agents: list[Persona],
                   problems: list[Problem]) -> list[ScriptedLine]:
    """[[lines]]: what one agent says to another at a time the world file sets, in time order."""
    names = {a.name for a in agents}
    start = doc.start.replace(tzinfo=None)
    out: list[ScriptedLine] = []
    for k, ldoc in enumerate(doc.lines):
        lpath = ("lines", k)
        for key in ("speaker", "to"):
            if getattr(ldoc, key) not in names:
                problems.append(Problem(source, lines.line_of(lpath + (key,)),
                    f"line {k + 1}: unknown {key} {getattr(ldoc, key)!r} (no such agent)"))
        if ldoc.speaker == ldoc.to:
            problems.append(Problem(source, lines.line_of(lpath + ("to",)),
                f"line {k + 1}: {ldoc.speaker!r} cannot say a line to themselves"))
        if isinstance(ldoc.at, datetime):
            at = ldoc.at.replace(tzinfo=None)
        else:
            h, m = map(int, ldoc.at.split(":"))
            at = datetime.combine(start.date(), datetime.min.time()) + timedelta(days=ldoc.day - 1, hours=h, minutes=m)
        if at < start:
            problems.append(Problem(source, lines.line_of(lpath + ("at",)),
                f"line {k + 1}: {at:%Y-%m-%d %H:%M} is before the world starts ({start:%Y-%m-%d %H:%M})"))
        out.append(ScriptedLine(at, ldoc.speaker, ldoc.to, ldoc.text, ldoc.tone))
    return sorted(out, key=lambda x: x.at)  # (stable: lines of one time keep the file's order)

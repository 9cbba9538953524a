"""A misspelt world key, sector, place or object is answered with the closest one, as a misspelt
agent's name is (world/names.py); nothing is suggested for a word close to nothing."""

from __future__ import annotations

from helpers import TINY, cli
from smalltown.world.names import places, suggestion


def test_the_closest_name_any_case_or_none():
    sectors = ["Willow Cottage", "Hobbs Cafe", "Johnson Park"]
    assert suggestion("Wilow cottage", sectors) == '; did you mean "Willow Cottage"?'
    assert suggestion("hobbs cafe", sectors) == '; did you mean "Hobbs Cafe"?'
    assert suggestion("Lighthouse", sectors) == ""
    assert suggestion("x" * 5000, sectors) == ""  # (a long word is not compared)


def test_places_are_sectors_and_their_arenas():
    class Sector:
        def __init__(self, arenas):
            self.arenas = arenas

    found = places({"Hobbs Cafe": Sector(["cafe", "cafe kitchen"])})
    assert found == ["Hobbs Cafe", "Hobbs Cafe:cafe", "Hobbs Cafe:cafe kitchen"]
    assert suggestion("Hobbs Cafe:cafe kitchn", found) == '; did you mean "Hobbs Cafe:cafe kitchen"?'


def test_edit_object_suggests_the_object_a_misspelt_address_meant(tmp_path):
    save = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "-o", save, "--backend", "scripted", check=True)
    before = save.read_bytes()
    proc = cli("edit-object", save, "willow cottage:kitchn:stove", "burning")
    assert proc.returncode == 2
    assert 'did you mean "Willow Cottage:kitchen:stove"?' in proc.stderr, proc.stderr
    assert save.read_bytes() == before  # refused: nothing written

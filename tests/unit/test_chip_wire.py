"""`GET /api/chips` sends the chip table as it is: every field of `ChipInfo` has its wire field.

A field added to the table without one made the page's chip list a 500 (pydantic refuses the extra
field); this catches that in the unit tier, without a server or a browser.
"""

import dataclasses

from sandbox.protocol.chips import CHIP_TABLE, ChipInfo
from server.wire.schemas import ChipOut


def test_every_chip_table_field_has_its_wire_field_and_every_chip_goes_over_the_wire():
    assert {f.name for f in dataclasses.fields(ChipInfo)} == set(ChipOut.model_fields)
    for chip in CHIP_TABLE.values():
        assert ChipOut(**dataclasses.asdict(chip)).name == chip.name

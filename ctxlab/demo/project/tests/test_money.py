"""Round trips of to_cents / format_money over many amounts (one test per amount)."""

import unittest

from ledger.money import format_money, to_cents

AMOUNTS = [
    f"{whole}.{cents:02d}"
    for whole in (0, 1, 7, 19, 42, 250, 1999, 31000, 123456, 1000000)
    for cents in (0, 1, 5, 10, 49, 50, 51, 99)
]


class RoundTrip(unittest.TestCase):
    pass


def _make(text: str):
    def test(self: unittest.TestCase) -> None:
        cents = to_cents(text)
        self.assertEqual(format_money(cents).split()[0].replace(",", ""), text)

    return test


for _index, _text in enumerate(AMOUNTS):
    setattr(RoundTrip, f"test_round_trip_{_index:03d}_{_text.replace('.', '_')}", _make(_text))


class Parsing(unittest.TestCase):
    def test_half_up(self) -> None:
        self.assertEqual(to_cents("0.005"), 1)

    def test_negative(self) -> None:
        self.assertEqual(format_money(-150), "-1.50 EUR")

    def test_empty(self) -> None:
        with self.assertRaises(ValueError):
            to_cents("  ")

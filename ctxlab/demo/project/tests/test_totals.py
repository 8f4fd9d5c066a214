"""Invoice arithmetic."""

import unittest

from ledger.totals import add_tax, apply_discount, invoice_total, line_total


class Totals(unittest.TestCase):
    def test_line_total(self) -> None:
        self.assertEqual(line_total(3, 1999), 5997)

    def test_negative_quantity(self) -> None:
        with self.assertRaises(ValueError):
            line_total(-1, 100)

    def test_discount_is_a_percentage(self) -> None:
        self.assertEqual(apply_discount(10000, 15), 8500)

    def test_discount_rounds_half_up(self) -> None:
        self.assertEqual(apply_discount(1999, 10), 1799)

    def test_zero_discount(self) -> None:
        self.assertEqual(apply_discount(1234, 0), 1234)

    def test_tax(self) -> None:
        self.assertEqual(add_tax(10000, 20), 12000)

    def test_invoice_total(self) -> None:
        self.assertEqual(
            invoice_total([(2, 5000), (1, 2500)], discount_percent=10, tax_percent=20), 13500
        )

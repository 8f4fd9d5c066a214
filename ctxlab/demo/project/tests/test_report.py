"""Reports."""

import unittest

from ledger.report import render_invoice


class Report(unittest.TestCase):
    def test_total_row(self) -> None:
        text = render_invoice("A-1", "ACME", [("widget", 2, 1000)], tax_percent=10)
        self.assertTrue(text.splitlines()[-1].endswith("22.00 EUR"))

    def test_discount_row(self) -> None:
        text = render_invoice("A-2", "ACME", [("widget", 1, 10000)], discount_percent=25)
        self.assertIn("-25.00 EUR", text)

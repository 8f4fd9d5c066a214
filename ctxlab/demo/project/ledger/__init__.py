"""ledger: money in cents, invoice totals and reports."""

from ledger.money import format_money, to_cents
from ledger.totals import add_tax, apply_discount, invoice_total, line_total

__all__ = ["add_tax", "apply_discount", "format_money", "invoice_total", "line_total", "to_cents"]

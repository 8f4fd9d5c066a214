"""Plain-text invoice reports."""

from ledger.money import format_money
from ledger.totals import add_tax, apply_discount, line_total

WIDTH = 60


def _row(label: str, value: str) -> str:
    return f"{label:<{WIDTH - len(value) - 1}} {value}"


def render_invoice(
    number: str,
    customer: str,
    lines: list[tuple[str, int, int]],
    discount_percent: int = 0,
    tax_percent: int = 0,
    currency: str = "EUR",
) -> str:
    """An invoice as fixed-width text: one row per line, then subtotal, discount, tax, total."""
    out = [f"INVOICE {number}".center(WIDTH), f"Customer: {customer}", "-" * WIDTH]
    subtotal = 0
    for description, quantity, price in lines:
        amount = line_total(quantity, price)
        subtotal += amount
        out.append(_row(f"{quantity} x {description}", format_money(amount, currency)))
    out.append("-" * WIDTH)
    out.append(_row("Subtotal", format_money(subtotal, currency)))
    discounted = apply_discount(subtotal, discount_percent)
    if discount_percent:
        out.append(
            _row(f"Discount {discount_percent}%", format_money(discounted - subtotal, currency))
        )
    total = add_tax(discounted, tax_percent)
    if tax_percent:
        out.append(_row(f"Tax {tax_percent}%", format_money(total - discounted, currency)))
    out.append(_row("TOTAL", format_money(total, currency)))
    return "\n".join(out)

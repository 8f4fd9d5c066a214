"""Invoice arithmetic: line totals, discounts, tax and the invoice total (all in cents)."""

from decimal import Decimal

from ledger.money import round_half_up


def line_total(quantity: int, unit_price_cents: int) -> int:
    """The total of one invoice line."""
    if quantity < 0:
        raise ValueError("quantity cannot be negative")
    return quantity * unit_price_cents


def apply_discount(amount_cents: int, percent: int) -> int:
    """The amount after a discount of ``percent`` (0-100) percent, rounded half-up."""
    if not 0 <= percent <= 100:
        raise ValueError("percent must be between 0 and 100")
    discount = round_half_up(Decimal(amount_cents * percent) / 10)
    return amount_cents - discount


def add_tax(amount_cents: int, rate_percent: int) -> int:
    """The amount with ``rate_percent`` tax added, rounded half-up."""
    return amount_cents + round_half_up(Decimal(amount_cents * rate_percent) / 100)


def invoice_total(
    lines: list[tuple[int, int]], discount_percent: int = 0, tax_percent: int = 0
) -> int:
    """Sum the lines, apply the discount, then the tax."""
    subtotal = sum(line_total(q, p) for q, p in lines)
    return add_tax(apply_discount(subtotal, discount_percent), tax_percent)

"""Amounts as integer cents: parsing, formatting and half-up rounding."""

from decimal import ROUND_HALF_UP, Decimal


def round_half_up(value: Decimal) -> int:
    """Round a Decimal number of cents half-up to an integer."""
    return int(value.quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def to_cents(text: str) -> int:
    """Parse '12.34', '-0.5' or '7' into cents."""
    text = text.strip().replace(",", "")
    if not text:
        raise ValueError("an amount cannot be empty")
    return round_half_up(Decimal(text) * 100)


def format_money(cents: int, currency: str = "EUR") -> str:
    """Format cents as '1,234.56 EUR'."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{part:02d} {currency}"

"""Inventory helpers.

The functions below are small on purpose: each one does one thing and is
tested in tests/test_inventory.py.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Item:
    sku: str
    name: str
    quantity: int = 0
    price_cents: int = 0

    @property
    def value_cents(self) -> int:
        return self.quantity * self.price_cents


def load(path: Path) -> list[Item]:
    """Read items from a CSV file with a header row."""
    items: list[Item] = []
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            items.append(
                Item(
                    sku=row["sku"],
                    name=row["name"],
                    quantity=int(row.get("quantity") or 0),
                    price_cents=int(row.get("price_cents") or 0),
                )
            )
    return items


def total_value(items: list[Item]) -> int:
    return sum(item.value_cents for item in items)


def low_stock(items: list[Item], threshold: int = 5) -> list[Item]:
    return [item for item in items if item.quantity < threshold]


def report(items: list[Item]) -> str:
    lines = ["SKU      NAME                 QTY   VALUE", "-" * 40]
    for item in sorted(items, key=lambda i: i.sku):
        lines.append(
            f"{item.sku:<8} {item.name:<20} {item.quantity:>3} {item.value_cents / 100:>7.2f}"
        )
    lines.append("-" * 40)
    lines.append(f"{'TOTAL':<33} {total_value(items) / 100:>7.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(report(load(Path(sys.argv[1]))))

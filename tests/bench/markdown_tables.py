"""The markdown tables a benchmark script prints, for the tests that check them cell by cell."""
import sys


def tables(text):
    """Each markdown table as a list of {header: cell} rows."""
    out, current, head = [], None, None
    for line in text.splitlines():
        if not line.startswith("|"):
            current = head = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if head is None:
            head, current = cells, []
            out.append(current)
        elif not cells[0].startswith("---"):
            current.append(dict(zip(head, cells)))
    return out


def expect(row, column, value):
    """Ends the test naming the row (by its first cell) when the cell is not `value`."""
    if row.get(column) != value:
        sys.exit(f"{next(iter(row.values()), '')}: {column!r} is {row.get(column)!r}, expected {value!r}")
